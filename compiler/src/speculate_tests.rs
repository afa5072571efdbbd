//! Speculative decoding is lossless: on random dense and mixture models, with drafts that miss
//! and drafts that cannot, the tokens are greedy decoding's, bit for bit.

use crate::checkpoint::test_models::random_checkpoint;
use crate::checkpoint::Checkpoint;
use crate::forward::{greedy, Batch, Dense, Feed, ForwardError, Slot};
use crate::speculate::{generate, Accept, Draft, SpeculateError, Speculator, TreeNode};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{LlamaConfig, MoeConfig};
use lacuna_spec::speculation::TreeShape;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Larger than `tiny` so that drafts have room to be wrong: 3 blocks, 48 tokens.
fn models() -> Vec<Checkpoint> {
    let dense = LlamaConfig { layers: 3, vocab: 48, context: 96, ..LlamaConfig::tiny() };
    let moe = LlamaConfig { moe: LlamaConfig::tiny_moe().moe, ..dense.clone() };
    let unit = LlamaConfig {
        moe: Some(MoeConfig { gating: lacuna_spec::graph::Gating::UnitTopK, top_k: 1, ..moe.moe.clone().unwrap() }),
        ..dense.clone()
    };
    vec![random_checkpoint(&dense, 3), random_checkpoint(&moe, 4), random_checkpoint(&unit, 5)]
}

fn prompts(vocab: usize, n: usize) -> Vec<Vec<TokenId>> {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    (0..n).map(|i| (0..1 + i % 5).map(|_| TokenId(rng.random_range(0..vocab as u32))).collect()).collect()
}

#[test]
fn tree_decoding_gives_exactly_the_greedy_tokens_for_every_shape_and_draft() {
    for ckpt in models() {
        let layers = ckpt.graph.config.layers;
        for prompt in prompts(ckpt.graph.config.vocab, 6) {
            let want = greedy(&ckpt, &prompt, 20, &mut Dense).unwrap();
            for shape in ["0x1", "1x1", "3x2", "4x4", "2x16"] {
                for draft in ["0", "0,2", &format!("0-{}", layers - 1)] {
                    let draft = Draft::parse(draft, layers).unwrap();
                    let shape: TreeShape = shape.parse().unwrap();
                    let (got, steps) = generate(&ckpt, &prompt, 20, shape, &draft, &mut Dense, None).unwrap();
                    assert_eq!(
                        got,
                        want,
                        "{} {shape} draft {draft} prompt {prompt:?}",
                        ckpt.graph.config.moe.is_some()
                    );
                    assert!(steps.iter().all(|s| s.tree.len() <= shape.max_nodes()));
                    if shape.depth == 0 {
                        assert_eq!(steps.len(), 20, "one token a step without a tree");
                    }
                }
            }
        }
    }
}

#[test]
fn a_draft_that_is_the_whole_target_is_accepted_to_the_full_depth() {
    for ckpt in models() {
        let layers = ckpt.graph.config.layers;
        // Width 1: a beam wider than one may drop the greedy path for a more probable one.
        let shape = TreeShape { depth: 3, width: 1 };
        let whole = Draft::first(layers, layers).unwrap();
        let (_, steps) = generate(&ckpt, &[TokenId(1), TokenId(2)], 24, shape, &whole, &mut Dense, None).unwrap();
        assert!(
            steps.iter().all(|s| s.path.len() == 4),
            "{:?}",
            steps.iter().map(|s| s.path.len()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_tree_node_gets_the_logits_of_its_path_decoded_one_token_at_a_time() {
    for ckpt in models() {
        let text: Vec<TokenId> = [3, 7, 1, 9, 4, 4, 2].map(TokenId).to_vec();
        // The prompt is text[..2]; teacher forcing along text[3..] from root text[2].
        let draft = Draft::first(1, 3).unwrap();
        let mut s = Speculator::new(&ckpt, TreeShape { depth: 4, width: 3 }, &draft).unwrap();
        let prefilled = s.prefill(&text[..2], &mut Dense, None).unwrap();
        let tree = chain_with_decoys(text[2], &text[3..], 48);
        let out = s.verify(tree, Accept::Follow(&text[3..]), &mut Dense, None).unwrap();
        assert_eq!(out.tokens(), text[2..].to_vec(), "teacher forcing follows the text");
        let mut b = Batch::new(&ckpt, 1);
        for (i, &t) in text.iter().enumerate() {
            let logits = b.step(&[(0, t)], &mut Dense).unwrap().remove(0);
            let tree_or_chain = if i < 2 { &prefilled[i] } else { &out.logits[i - 2] };
            assert_eq!(&logits, tree_or_chain, "position {i}");
        }
        assert_eq!(s.position(), text.len());
    }
}

#[test]
fn bad_drafts_prompts_and_contexts_are_refused() {
    let ckpt = &models()[0];
    let shape = TreeShape { depth: 1, width: 1 };
    for bad in ["", "3", "0-3", "2-1", "a", "0,,1", "-1"] {
        assert!(matches!(Draft::parse(bad, 3), Err(SpeculateError::DraftBlocks(..))), "{bad}");
    }
    assert!(Draft::first(0, 3).is_err() && Draft::first(4, 3).is_err());
    assert!(Speculator::new(ckpt, shape, &Draft::parse("0-4", 5).unwrap()).is_err(), "a draft for another depth");
    assert_eq!(Draft::parse("0,2-3,1", 5).unwrap().to_string(), "0-3");
    let mut s = Speculator::new(ckpt, shape, &Draft::first(1, 3).unwrap()).unwrap();
    assert_eq!(s.prefill(&[], &mut Dense, None), Err(SpeculateError::EmptyPrompt));
    assert!(matches!(
        s.prefill(&[TokenId(48)], &mut Dense, None),
        Err(SpeculateError::Forward(ForwardError::BadToken(48, 48)))
    ));
    let mut b = Batch::new(ckpt, 1);
    let feed = |position, context: Vec<Slot>| Feed { seq: 0, token: TokenId(1), position, context };
    let n = ckpt.graph.nodes.len();
    assert_eq!(b.feed(&[feed(1, vec![])], &mut Dense, None, n, &[]).err(), Some(ForwardError::BadContext(1, 0, 0)));
    assert_eq!(b.feed(&[feed(1, vec![Slot(3)])], &mut Dense, None, n, &[]).err(), Some(ForwardError::NoSlot(3)));
    // A slot that skipped the second block cannot be attended to there.
    let (slots, _) = b.feed(&[feed(0, vec![])], &mut Dense, None, n, &[false, true, false]).unwrap();
    assert!(matches!(b.feed(&[feed(1, slots)], &mut Dense, None, n, &[]), Err(ForwardError::NoSlot(0))));
}

/// A tree holding `root` then `text` as a chain, each chain node with a decoy sibling (the next
/// token id, modulo `vocab`): teacher forcing along `text` walks its full depth.
pub(crate) fn chain_with_decoys(root: TokenId, text: &[TokenId], vocab: u32) -> Vec<TreeNode> {
    let node = |parent, token, depth| TreeNode { parent: Some(parent), token, depth, p: 0.5 };
    let mut tree = vec![TreeNode { parent: None, token: root, depth: 0, p: 1.0 }];
    let mut chain = 0;
    for (i, &t) in text.iter().enumerate() {
        tree.push(node(chain, TokenId((t.0 + 1) % vocab), i + 1));
        tree.push(node(chain, t, i + 1));
        chain = tree.len() - 1;
    }
    tree
}
