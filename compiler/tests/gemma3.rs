//! The second family end to end on its real checkpoint: Gemma-3-270M (GGUF Q4_K_M, from the
//! model cache, `scripts/fetch-models.sh`). Its forward against an independent implementation is
//! in `candle_check.rs`; here its tokenizer (SentencePiece-style, `<bos>` first) and a sanity
//! prompt. Skipped where the model is missing, unless `LACUNA_REQUIRE_MODELS=1`.

use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::corpus::{fortunes, Split};
use lacuna_compiler::forward::{greedy, Dense};
use lacuna_compiler::models::GEMMA3_270M;
use lacuna_compiler::tokenizer::TokenId;
use std::sync::OnceLock;

fn gemma3() -> Option<&'static Checkpoint> {
    static CKPT: OnceLock<Option<Checkpoint>> = OnceLock::new();
    CKPT.get_or_init(|| match GEMMA3_270M.locate() {
        Ok(path) => Some(Checkpoint::open(&path).expect("the pinned checkpoint loads")),
        Err(e) if std::env::var("LACUNA_REQUIRE_MODELS").as_deref() == Ok("1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    })
    .as_ref()
}

fn ids(v: &[u32]) -> Vec<TokenId> {
    v.iter().map(|&i| TokenId(i)).collect()
}

#[test]
fn the_tokenizer_starts_with_bos_and_splits_words_at_their_leading_space() {
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
fn every_text_of_the_corpus_decodes_back_to_itself() {
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
fn greedy_decoding_answers_the_capital_of_france_with_paris() {
    let Some(m) = gemma3() else { return };
    let prompt = m.tokenizer.encode("Question: What is the capital of France?\nAnswer:");
    let out = greedy(m, &prompt, 1, &mut Dense).unwrap();
    assert_eq!(out, ids(&[9079]), "next token {:?}", m.tokenizer.decode(&out));
}
