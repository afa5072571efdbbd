//! What the real-model tests share: SmolLM2 from the model cache (skipped where it is missing,
//! unless `LACUNA_REQUIRE_MODELS=1`) and its tokens of Debian fortunes. Each test binary compiles
//! its own copy and uses part of it.
#![allow(dead_code)]

use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::corpus::{fortunes, join, Split};
use lacuna_compiler::models::SMOLLM2_135M;
use lacuna_compiler::tokenizer::TokenId;

/// SmolLM2-135M-Instruct and what `docs` makes of it, or `None` (skipped) where the model is
/// missing and not required.
pub fn smollm2<T>(docs: impl FnOnce(&Checkpoint) -> Result<T, String>) -> Option<(Checkpoint, T)> {
    let load = || -> Result<_, String> {
        let ckpt = Checkpoint::open(&SMOLLM2_135M.locate()?).map_err(|e| e.to_string())?;
        let made = docs(&ckpt)?;
        Ok((ckpt, made))
    };
    match load() {
        Ok(x) => Some(x),
        Err(e) if std::env::var("LACUNA_REQUIRE_MODELS").as_deref() == Ok("1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// The first `n` documents of `per_doc` fortunes of `split`, at most `max` tokens each.
pub fn documents(
    ckpt: &Checkpoint,
    split: Split,
    per_doc: usize,
    n: usize,
    max: usize,
) -> Result<Vec<Vec<TokenId>>, String> {
    Ok(join(&fortunes(split)?, per_doc)
        .iter()
        .take(n)
        .map(|t| ckpt.tokenizer.encode(t).into_iter().take(max).collect())
        .collect())
}
