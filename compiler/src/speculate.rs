//! Lossless speculative decoding with draft trees, on the golden forward.
//!
//! A step starts from the committed sequence and the token already decided for the next
//! position (the root). The **draft** grows a tree below the root, one depth at a time: it runs
//! the frontier through its layers, and of every (frontier node, draft top-`width` token) pair the
//! `width` most probable paths become the next depth (a beam over path probabilities, so a tree
//! of shape `DxW` has at most `1 + D W` nodes and each depth holds up to W mutually exclusive
//! candidates). The **target** then verifies the whole tree in one pass: every node attends to
//! the committed cache and to its own ancestors (tree attention, [`Batch::feed`]), so its logits
//! are bit-identical to those it would get decoded alone after them. **Acceptance** walks down
//! from the root while the child holding the target's argmax exists; the walked path is
//! committed and the argmax at its end is the next root. The output is therefore exactly the
//! target's greedy decoding, whatever the draft proposes; a better draft only walks further.
//!
//! The draft is a **self-draft**: the target's own blocks with some skipped (the residual
//! stream passes a skipped block by), then its final norm and LM head, as in Draft & Verify
//! (Zhang et al., ACL 2024) and SWIFT. Why this one on an edge accelerator with a mixture: it
//! adds no weights and no KV cache of its own (its blocks' keys and values for committed tokens
//! are the target's), it shares the tokenizer and the head by construction, and it needs no
//! training, which a separate small draft or EAGLE/Medusa heads would (no such draft exists for a
//! mixture derived here from a dense model). Which blocks: measured on SmolLM2-135M (tree 4x4, 6
//! held-out prompts, 24 tokens each; docs/edgexpert.md), skipping the middle third accepts 2.55
//! tokens per step, an early exit after the same 20 blocks 1.23: the last blocks shape the
//! head's distribution, the middle ones are the most redundant.
//!
//! Teacher forcing ([`Accept::Follow`]) walks the tree along a given text instead of the argmax:
//! the same steps and trees, so a lossy expert policy's perplexity and agreement can be measured
//! on held-out text under the conditions of speculative decoding.

use crate::checkpoint::Checkpoint;
use crate::forward::{argmax, softmax, Batch, Feed, ForwardError, LinearExec, MixtureExec, Slot};
use crate::tokenizer::TokenId;
use lacuna_spec::speculation::{TreeShape, MAX_TREE_DEPTH, MAX_TREE_WIDTH};

/// A self-draft: the blocks of the target it runs (the others skipped: the residual stream
/// passes them by), then the target's final norm and LM head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Draft {
    keep: Vec<bool>,
}

impl Draft {
    /// Blocks as ranges, e.g. `0-14` (early exit after block 14) or `0-9,20-29` (the middle
    /// skipped), for a model of `layers` blocks.
    pub fn parse(spec: &str, layers: usize) -> Result<Draft, SpeculateError> {
        let bad = || SpeculateError::DraftBlocks(spec.to_string(), layers);
        let mut keep = vec![false; layers];
        for part in spec.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let (a, b): (usize, usize) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
            if a > b || b >= layers {
                return Err(bad());
            }
            keep[a..=b].iter_mut().for_each(|k| *k = true);
        }
        Ok(Draft { keep })
    }

    /// The first `n` blocks (early exit), `n` in 1..=layers.
    pub fn first(n: usize, layers: usize) -> Result<Draft, SpeculateError> {
        if n == 0 || n > layers {
            return Err(SpeculateError::DraftBlocks(format!("0-{}", n as i64 - 1), layers));
        }
        Ok(Draft { keep: (0..layers).map(|l| l < n).collect() })
    }

    /// Blocks it runs.
    pub fn blocks(&self) -> usize {
        self.keep.iter().filter(|&&k| k).count()
    }

    /// The blocks it skips, as [`Batch::feed`] takes them.
    fn skip(&self) -> Vec<bool> {
        self.keep.iter().map(|k| !k).collect()
    }
}

impl std::fmt::Display for Draft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let mut l = 0;
        while l < self.keep.len() {
            if self.keep[l] {
                let start = l;
                while l + 1 < self.keep.len() && self.keep[l + 1] {
                    l += 1;
                }
                parts.push(if start == l { format!("{l}") } else { format!("{start}-{l}") });
            }
            l += 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// One node of a draft tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TreeNode {
    /// Its parent's index in the tree (none for the root).
    pub parent: Option<usize>,
    /// Its token.
    pub token: TokenId,
    /// Its depth (0 for the root).
    pub depth: usize,
    /// The draft's probability of the path from the root to it (1 for the root).
    pub p: f32,
}

/// What a step's expert policy is told before the target runs (it then sees each block's
/// mixture through [`MixtureExec`], the tokens in the order given here).
pub trait StepPolicy: MixtureExec {
    /// The tokens of the next pass: a prompt's tokens in order (each the parent of the next)
    /// for prefill, a draft tree for a step.
    fn begin(&mut self, pass: Pass<'_>);
}

/// A pass of the target.
#[derive(Clone, Copy, Debug)]
pub enum Pass<'t> {
    /// The prompt, fed as one chain.
    Prefill(usize),
    /// A step's tree.
    Verify(&'t [TreeNode]),
}

/// How a step accepts.
#[derive(Clone, Copy, Debug)]
pub enum Accept<'t> {
    /// Greedy: the target's argmax at each node.
    Greedy,
    /// Teacher forcing: the given tokens, which continue the root (`text[0]` follows it).
    Follow(&'t [TokenId]),
}

/// What one step did.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOutcome {
    /// The tree verified.
    pub tree: Vec<TreeNode>,
    /// The accepted path (tree indices from the root), committed to the cache.
    pub path: Vec<usize>,
    /// The target's logits at each node of the path (each predicts the token after it).
    pub logits: Vec<Vec<f32>>,
}

impl StepOutcome {
    /// The tokens the step committed (the root first).
    pub fn tokens(&self) -> Vec<TokenId> {
        self.path.iter().map(|&i| self.tree[i].token).collect()
    }
}

/// Why speculative decoding could not run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpeculateError {
    /// The forward pass failed (bad token, full context).
    #[error(transparent)]
    Forward(#[from] ForwardError),
    /// The draft's blocks are not ranges of the model's.
    #[error("self-draft blocks '{0}' are not ascending ranges within 0..{1} (e.g. 0-9,20-29)")]
    DraftBlocks(String, usize),
    /// The tree's shape is outside the spec's bounds.
    #[error("tree shape {0} is outside depth 0..={MAX_TREE_DEPTH}, width 1..={MAX_TREE_WIDTH}")]
    Shape(TreeShape),
    /// Decoding needs a prompt.
    #[error("the prompt is empty")]
    EmptyPrompt,
}

/// One sequence decoded by draft trees.
pub struct Speculator<'a> {
    ckpt: &'a Checkpoint,
    batch: Batch<'a>,
    shape: TreeShape,
    /// The blocks the draft skips.
    skip: Vec<bool>,
}

impl<'a> Speculator<'a> {
    /// A sequence of `ckpt` drafted by `draft` in trees of `shape`.
    pub fn new(ckpt: &'a Checkpoint, shape: TreeShape, draft: &Draft) -> Result<Self, SpeculateError> {
        let layers = ckpt.graph.config.layers;
        if draft.keep.len() != layers || draft.blocks() == 0 {
            return Err(SpeculateError::DraftBlocks(draft.to_string(), layers));
        }
        if shape.width == 0 || shape.width > MAX_TREE_WIDTH || shape.depth > MAX_TREE_DEPTH {
            return Err(SpeculateError::Shape(shape));
        }
        Ok(Speculator { ckpt, batch: Batch::new(ckpt, 1), shape, skip: draft.skip() })
    }

    /// Tokens committed so far.
    pub fn position(&self) -> usize {
        self.batch.position(0)
    }

    /// Feeds the prompt as one chain (one pass: the weights are read once for all its tokens)
    /// and returns the logits after each of its tokens.
    pub fn prefill(
        &mut self,
        prompt: &[TokenId],
        exec: &mut dyn LinearExec,
        policy: Option<&mut dyn StepPolicy>,
    ) -> Result<Vec<Vec<f32>>, SpeculateError> {
        if prompt.is_empty() {
            return Err(SpeculateError::EmptyPrompt);
        }
        // Slots are numbered from an empty scratch (a failed pass may have left some).
        self.batch.discard(0);
        let base = self.position();
        let feeds: Vec<Feed> = prompt
            .iter()
            .enumerate()
            .map(|(i, &token)| Feed { seq: 0, token, position: base + i, context: (0..i).map(Slot).collect() })
            .collect();
        let mixture = policy.map(|p| {
            p.begin(Pass::Prefill(prompt.len()));
            p as &mut dyn MixtureExec
        });
        let (slots, mut values) = self.batch.feed(&feeds, exec, mixture, self.ckpt.graph.nodes.len(), &[])?;
        self.batch.commit(0, &slots);
        Ok(values.pop().unwrap_or_default())
    }

    /// Grows the draft tree below `root`.
    pub fn draft(&mut self, root: TokenId, exec: &mut dyn LinearExec) -> Result<Vec<TreeNode>, SpeculateError> {
        self.batch.discard(0);
        let mut tree = vec![TreeNode { parent: None, token: root, depth: 0, p: 1.0 }];
        let mut slot_of: Vec<Slot> = Vec::new();
        let mut frontier = vec![0usize];
        let base = self.position();
        for depth in 0..self.shape.depth {
            let feeds: Vec<Feed> = frontier
                .iter()
                .map(|&n| Feed {
                    seq: 0,
                    token: tree[n].token,
                    position: base + depth,
                    context: ancestors(&tree, n).iter().map(|&a| slot_of[a]).collect(),
                })
                .collect();
            let (slots, mut values) = self.batch.feed(&feeds, exec, None, self.ckpt.graph.nodes.len(), &self.skip)?;
            for (&n, s) in frontier.iter().zip(slots) {
                if slot_of.len() <= n {
                    slot_of.resize(n + 1, Slot(usize::MAX));
                }
                slot_of[n] = s;
            }
            let logits = values.pop().unwrap_or_default();
            let mut candidates: Vec<TreeNode> = Vec::new();
            for (&n, mut l) in frontier.iter().zip(logits) {
                softmax(&mut l);
                for (token, q) in top(&l, self.shape.width) {
                    candidates.push(TreeNode { parent: Some(n), token, depth: depth + 1, p: tree[n].p * q });
                }
            }
            // The most probable paths; ties to the earlier candidate (a stable sort).
            candidates.sort_by(|a, b| b.p.total_cmp(&a.p));
            candidates.truncate(self.shape.width);
            frontier = (tree.len()..tree.len() + candidates.len()).collect();
            tree.extend(candidates);
        }
        self.batch.discard(0);
        Ok(tree)
    }

    /// Verifies `tree` with the target (its root the decided token), accepts a path as `accept`
    /// says and commits it.
    pub fn verify(
        &mut self,
        tree: Vec<TreeNode>,
        accept: Accept<'_>,
        exec: &mut dyn LinearExec,
        policy: Option<&mut dyn StepPolicy>,
    ) -> Result<StepOutcome, SpeculateError> {
        // Tree node n is slot n: from an empty scratch.
        self.batch.discard(0);
        let base = self.position();
        let feeds: Vec<Feed> = (0..tree.len())
            .map(|n| Feed {
                seq: 0,
                token: tree[n].token,
                position: base + tree[n].depth,
                context: ancestors(&tree, n).into_iter().map(Slot).collect(),
            })
            .collect();
        let mixture = policy.map(|p| {
            p.begin(Pass::Verify(&tree));
            p as &mut dyn MixtureExec
        });
        let (slots, mut values) = self.batch.feed(&feeds, exec, mixture, self.ckpt.graph.nodes.len(), &[])?;
        let mut logits = values.pop().unwrap_or_default();
        let mut path = vec![0usize];
        loop {
            let at = path[path.len() - 1];
            let want = match accept {
                Accept::Greedy => Some(argmax(&logits[at])),
                Accept::Follow(text) => text.get(path.len() - 1).copied(),
            };
            let child = want.and_then(|w| (0..tree.len()).find(|&c| tree[c].parent == Some(at) && tree[c].token == w));
            match child {
                Some(c) => path.push(c),
                None => break,
            }
        }
        let chosen: Vec<Slot> = path.iter().map(|&n| slots[n]).collect();
        self.batch.commit(0, &chosen);
        let logits = path.iter().map(|&n| std::mem::take(&mut logits[n])).collect();
        Ok(StepOutcome { tree, path, logits })
    }
}

/// The ancestors of node `n`, root first.
fn ancestors(tree: &[TreeNode], n: usize) -> Vec<usize> {
    let mut up = Vec::new();
    let mut at = tree[n].parent;
    while let Some(a) = at {
        up.push(a);
        at = tree[a].parent;
    }
    up.reverse();
    up
}

/// The `k` most probable tokens (ties to the lower id), with their probabilities.
fn top(p: &[f32], k: usize) -> Vec<(TokenId, f32)> {
    let mut best: Vec<(TokenId, f32)> = Vec::with_capacity(k + 1);
    for (i, &q) in p.iter().enumerate() {
        if best.len() < k || q > best[best.len() - 1].1 {
            let at = best.partition_point(|&(_, b)| b >= q);
            best.insert(at, (TokenId(i as u32), q));
            best.truncate(k);
        }
    }
    best
}

/// Greedy decoding by draft trees: the prompt, then `new` tokens, and what each step did.
/// The tokens are exactly [`crate::forward::greedy`]'s.
pub fn generate(
    ckpt: &Checkpoint,
    prompt: &[TokenId],
    new: usize,
    shape: TreeShape,
    draft: &Draft,
    exec: &mut dyn LinearExec,
    mut policy: Option<&mut dyn StepPolicy>,
) -> Result<(Vec<TokenId>, Vec<StepOutcome>), SpeculateError> {
    let mut s = Speculator::new(ckpt, shape, draft)?;
    let logits = s.prefill(prompt, exec, reborrow(&mut policy))?;
    let mut root = argmax(&logits[logits.len() - 1]);
    let (mut out, mut steps) = (Vec::new(), Vec::new());
    while out.len() < new {
        let tree = s.draft(root, exec)?;
        let step = s.verify(tree, Accept::Greedy, exec, reborrow(&mut policy))?;
        out.extend(step.tokens());
        root = argmax(&step.logits[step.logits.len() - 1]);
        steps.push(step);
    }
    out.truncate(new);
    Ok((out, steps))
}

/// A shorter-lived loan of an optional policy (for a loop of passes).
pub fn reborrow<'s>(policy: &'s mut Option<&mut dyn StepPolicy>) -> Option<&'s mut dyn StepPolicy> {
    match policy {
        Some(p) => Some(&mut **p),
        None => None,
    }
}

/// The self-draft unless told: the first and last thirds of the blocks, the middle skipped
/// (measured on SmolLM2-135M against early exits in docs/edgexpert.md).
pub fn default_draft(config: &lacuna_spec::graph::LlamaConfig) -> Draft {
    let l = config.layers;
    let third = l / 3;
    let keep = (0..l).map(|b| b < l - 2 * third || b >= l - third).collect();
    Draft { keep }
}
