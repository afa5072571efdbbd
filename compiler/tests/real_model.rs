//! The golden forward of a real checkpoint (SmolLM2-135M-Instruct, GGUF Q4_1) against an
//! independent implementation that reads the same file (candle-transformers' quantized Llama);
//! the second family, Gemma-3-270M (GGUF Q4_K_M): its tokenizer (SentencePiece-style, `<bos>`
//! first) and a sanity prompt (its forward against candle: `candle_check.rs`).
//!
//! The model comes from the model cache (`scripts/fetch-models.sh`). Where it is missing these
//! tests say so and pass, unless `LACUNA_REQUIRE_MODELS=1` (set by `scripts/test.sh`), where a
//! missing model fails them: the suite never passes without having run them.

use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::corpus::{fortunes, Split};
use lacuna_compiler::forward::{argmax, greedy, Dense, Forward};
use lacuna_compiler::models::{RealModel, GEMMA3_270M, SMOLLM2_135M};
use lacuna_compiler::tokenizer::TokenId;
use std::sync::OnceLock;

/// A pinned model from the cache, loaded once per test binary (`None`: skipped where it is
/// missing and not required).
fn cached(model: RealModel, cell: &'static OnceLock<Option<Checkpoint>>) -> Option<&'static Checkpoint> {
    cell.get_or_init(|| match model.locate() {
        Ok(path) => Some(Checkpoint::open(&path).expect("the pinned checkpoint loads")),
        Err(e) if std::env::var("LACUNA_REQUIRE_MODELS").as_deref() == Ok("1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    })
    .as_ref()
}

fn smollm2() -> Option<&'static Checkpoint> {
    static CKPT: OnceLock<Option<Checkpoint>> = OnceLock::new();
    cached(SMOLLM2_135M, &CKPT)
}

fn ids(v: &[u32]) -> Vec<TokenId> {
    v.iter().map(|&i| TokenId(i)).collect()
}

#[test]
fn the_tokenizer_splits_the_prompt_as_the_checkpoints_own_tokenizer_does() {
    let Some(m) = smollm2() else { return };
    let t = &m.tokenizer;
    assert_eq!(t.encode("The capital of France is"), ids(&[504, 3575, 282, 4649, 314]));
    assert_eq!(t.decode(&ids(&[504, 3575, 282, 4649, 314, 7042])), "The capital of France is Paris");
    for text in ["Hello, world!\n\n  It's 2024: naïve café — 東京.", "<|im_start|>user\nhi<|im_end|>", "  x\t\ty  "]
    {
        assert_eq!(t.decode(&t.encode(text)), text, "round trip of {text:?}");
    }
    assert_eq!(t.encode("<|im_start|>")[0], TokenId(1));
}

#[test]
fn greedy_decoding_of_the_capital_of_france_names_paris() {
    let Some(m) = smollm2() else { return };
    let prompt = m.tokenizer.encode("The capital of France is");
    let out = greedy(m, &prompt, 1, &mut Dense).unwrap();
    assert_eq!(out, ids(&[7042]), "next token {:?}", m.tokenizer.decode(&out));
}

#[test]
fn a_step_refuses_a_token_outside_the_vocabulary() {
    let Some(m) = smollm2() else { return };
    let mut f = Forward::new(m);
    assert!(f.step(TokenId(49_152), &mut Dense).is_err());
    assert_eq!(f.position(), 0);
    assert_eq!(
        argmax(&f.step(TokenId(504), &mut Dense).unwrap()).0 as usize,
        argmax(&Forward::new(m).step(TokenId(504), &mut Dense).unwrap()).0 as usize
    );
}

#[test]
fn a_batch_of_sequences_gives_the_same_bits_as_each_sequence_alone() {
    use lacuna_compiler::forward::Batch;
    let Some(m) = smollm2() else { return };
    let texts = ["The capital of France is", "def add(a, b):\n    return", "Once upon a time"];
    let lists: Vec<Vec<TokenId>> = texts.iter().map(|t| m.tokenizer.encode(t)).collect();
    let mut batch = Batch::new(m, lists.len());
    let mut alone: Vec<Forward> = lists.iter().map(|_| Forward::new(m)).collect();
    for pos in 0..lists.iter().map(Vec::len).max().unwrap() {
        let tokens: Vec<(usize, TokenId)> =
            lists.iter().enumerate().filter_map(|(s, l)| l.get(pos).map(|&t| (s, t))).collect();
        let together = batch.step(&tokens, &mut Dense).unwrap();
        for (&(s, t), logits) in tokens.iter().zip(&together) {
            let single = alone[s].step(t, &mut Dense).unwrap();
            assert!(single.iter().zip(logits).all(|(a, b)| a.to_bits() == b.to_bits()), "sequence {s} position {pos}");
        }
    }
}

#[test]
fn the_checkpoint_written_as_a_hugging_face_directory_reads_back_to_the_same_logits() {
    let Some(m) = smollm2() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Query/key rows go out in Hugging Face's half-split RoPE layout and come back interleaved;
    // names, shards, config.json and tokenizer.json all go through the Hugging Face reader.
    lacuna_compiler::hf::write_dir(m, dir.path(), 2).unwrap();
    let hf = Checkpoint::open(dir.path()).unwrap();
    assert_eq!(hf.graph, m.graph);
    assert!(hf.weights == m.weights, "the weights differ after the round trip");
    let text = "The capital of France is Paris. It's 2024: naïve café.<|im_end|>";
    assert_eq!(hf.tokenizer.encode(text), m.tokenizer.encode(text));
    let prompt = m.tokenizer.encode("The capital of France is");
    let (mut a, mut b) = (Forward::new(m), Forward::new(&hf));
    for &t in &prompt {
        let (la, lb) = (a.step(t, &mut Dense).unwrap(), b.step(t, &mut Dense).unwrap());
        assert!(la == lb, "logits differ at token {t:?}");
    }
    assert_eq!(greedy(&hf, &prompt, 1, &mut Dense).unwrap(), ids(&[7042]));
}

/// Our BPE against Hugging Face's own `tokenizers` crate (the engine of `transformers`' fast
/// tokenizers), given the same vocabulary, merges, control tokens and pre-tokenizer (the
/// tokenizer.json written from the checkpoint): the same ids on every text of the corpus and on
/// hand-picked hard cases.
#[test]
fn the_tokenizer_gives_the_ids_of_hugging_faces_tokenizers_on_the_whole_corpus() {
    use lacuna_compiler::corpus::{fortunes, Split};
    let Some(m) = smollm2() else { return };
    let json = lacuna_compiler::hf::tokenizer_json(&m.tokenizer).to_string();
    let reference = tokenizers::Tokenizer::from_bytes(json.as_bytes()).expect("tokenizers reads our tokenizer.json");
    let mut texts: Vec<String> = [
        "The capital of France is",
        "Hello, world!\n\n  It's 2024: naïve café — 東京. 3.14159 x10^23",
        "<|im_start|>user\nWhat's 12+30?<|im_end|>\n<|im_start|>assistant\n",
        "  leading, trailing  \t\ttabs\r\nand CRLF   ",
        "they'll've we'd I'M DON'T 'tis",
        "emoji 🙂👍🏽 and combining é (e\u{301}), Ω≈ç√∫, العربية, हिन्दी",
        "",
    ]
    .map(String::from)
    .to_vec();
    for split in [Split::Calibration, Split::HeldOut, Split::Evaluation] {
        texts.extend(fortunes(split).unwrap());
    }
    let (mut tokens, mut differ) = (0usize, Vec::new());
    for t in &texts {
        let ours: Vec<u32> = m.tokenizer.encode(t).iter().map(|i| i.0).collect();
        let theirs = reference.encode(t.as_str(), false).unwrap().get_ids().to_vec();
        tokens += theirs.len();
        if ours != theirs {
            differ.push((t.clone(), ours, theirs));
        }
    }
    eprintln!("{} texts, {tokens} tokens, {} differ", texts.len(), differ.len());
    if let Some((t, ours, theirs)) = differ.first() {
        panic!("{} of {} texts differ; first {t:?}:\n ours   {ours:?}\n theirs {theirs:?}", differ.len(), texts.len());
    }
}

// Gemma 3.

fn gemma3() -> Option<&'static Checkpoint> {
    static CKPT: OnceLock<Option<Checkpoint>> = OnceLock::new();
    cached(GEMMA3_270M, &CKPT)
}

#[test]
fn gemma3s_tokenizer_starts_with_bos_and_splits_words_at_their_leading_space() {
    let Some(m) = gemma3() else { return };
    let t = &m.tokenizer;
    // <bos> The ▁capital ▁of ▁France ▁is: ids read off the file's own vocabulary.
    assert_eq!(t.encode("The capital of France is"), ids(&[2, 818, 5279, 529, 7001, 563]));
    assert_eq!(t.decode(&ids(&[818, 5279, 529, 7001, 563, 9079])), "The capital of France is Paris");
    // Newlines are user-defined tokens (107 is "\n"), turn markers control tokens.
    let chat = t.encode("<start_of_turn>user\nhi<end_of_turn>\n");
    assert_eq!(chat[1], TokenId(105), "{chat:?}");
    assert!(chat.contains(&TokenId(107)) && chat.contains(&TokenId(106)), "{chat:?}");
}

#[test]
fn every_text_of_the_corpus_decodes_back_to_itself_in_gemma3s_tokenizer() {
    let Some(m) = gemma3() else { return };
    let t = &m.tokenizer;
    let mut texts = fortunes(Split::Calibration).unwrap();
    texts.extend(fortunes(Split::Evaluation).unwrap());
    texts.extend(["naïve café — 東京 🙂\t\ttabs  two spaces".to_string(), "   ".into(), String::new()]);
    let mut tokens = 0;
    for text in &texts {
        let e = t.encode(text);
        assert_eq!(e[0], TokenId(2));
        assert_eq!(t.decode(&e[1..]), *text, "round trip of {text:?}");
        tokens += e.len();
    }
    assert!(tokens > 8_000, "{tokens} tokens");
}

#[test]
fn gemma3_answers_the_capital_of_france_with_paris() {
    let Some(m) = gemma3() else { return };
    let prompt = m.tokenizer.encode("Question: What is the capital of France?\nAnswer:");
    let out = greedy(m, &prompt, 1, &mut Dense).unwrap();
    assert_eq!(out, ids(&[9079]), "next token {:?}", m.tokenizer.decode(&out));
}
