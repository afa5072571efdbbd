//! `lacuna forward CHECKPOINT (--ids 1,2,3 | --prompt TEXT) --out logits.npy`: the golden f32
//! forward of a checkpoint (dense, the weights as the reader dequantized them), one token at a
//! time over the KV cache, its logits at every position written as an f32 `.npy` of shape
//! `[tokens, vocab]`, so a user can hold a checkpoint read by lacuna against another framework
//! (e.g. `transformers`' `model(ids).logits[0]`, or llama.cpp's logits).
//!
//! Prints one line per position (the token fed and the highest-scoring next token), or `--json`.

use crate::cmd::compile::model_path;
use anyhow::{bail, Context, Result};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::forward::{argmax, Dense, Forward};
use lacuna_compiler::tokenizer::TokenId;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// The most tokens one call runs (each row of the output is a vocabulary of f32 logits).
pub const MAX_FORWARD_TOKENS: usize = 1024;

/// Arguments of `lacuna forward`.
#[derive(clap::Args)]
pub struct Args {
    /// A checkpoint (Llama or Gemma 3 family): a GGUF file, a Hugging Face directory, or a pinned name (`smollm2-135m`, `gemma3-270m`).
    model: String,
    /// Token ids to feed, comma-separated.
    #[arg(long, value_delimiter = ',', required_unless_present = "prompt", conflicts_with = "prompt")]
    ids: Vec<u32>,
    /// Text to feed, tokenized with the checkpoint's own tokenizer.
    #[arg(long)]
    prompt: Option<String>,
    /// Where to write the logits (.npy, f32, shape [tokens, vocab]).
    #[arg(short, long)]
    out: PathBuf,
    /// Print JSON (the ids and each position's top token) instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    model: String,
    ids: Vec<u32>,
    vocab: usize,
    /// The highest-scoring next token after each position.
    argmax: Vec<u32>,
    out: String,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let path = model_path(&a.model)?;
    let ckpt = Checkpoint::open(&path)?;
    let ids: Vec<TokenId> = match &a.prompt {
        Some(text) => ckpt.tokenizer.encode(text),
        None => a.ids.iter().map(|&i| TokenId(i)).collect(),
    };
    let context = ckpt.graph.config.context;
    let limit = MAX_FORWARD_TOKENS.min(context);
    if ids.is_empty() || ids.len() > limit {
        bail!("{} tokens to feed; give 1 to {limit} (the context is {context})", ids.len());
    }
    let vocab = ckpt.graph.config.vocab;
    if let Some(bad) = ids.iter().find(|t| t.0 as usize >= vocab) {
        bail!("token id {} is outside the vocabulary of {vocab}", bad.0);
    }
    let mut fwd = Forward::new(&ckpt);
    let mut logits = Vec::with_capacity(ids.len() * vocab);
    let mut top = Vec::with_capacity(ids.len());
    for &t in &ids {
        let l = fwd.step(t, &mut Dense)?;
        top.push(argmax(&l));
        logits.extend(l);
    }
    write_npy(&a.out, ids.len(), vocab, &logits).with_context(|| a.out.display().to_string())?;
    let report = Report {
        model: format!("{} ({})", ckpt.name, ckpt.file_name()),
        ids: ids.iter().map(|t| t.0).collect(),
        vocab,
        argmax: top.iter().map(|t| t.0).collect(),
        out: a.out.display().to_string(),
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}: {} tokens x {vocab} logits (f32) -> {}", report.model, ids.len(), report.out);
    for (i, (&t, &next)) in ids.iter().zip(&top).enumerate() {
        let text = |t: TokenId| format!("{:?}", ckpt.tokenizer.decode(&[t]));
        println!("{i:>5}  {:>7} {:<20} -> {:>7} {}", t.0, text(t), next.0, text(next));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `rows x cols` f32 values, row-major, as a C-order .npy.
fn write_npy(path: &std::path::Path, rows: usize, cols: usize, data: &[f32]) -> Result<()> {
    use npyz::WriterBuilder;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut w = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(&[rows as u64, cols as u64])
        .writer(&mut f)
        .begin_nd()?;
    w.extend(data.iter().copied())?;
    w.finish()?;
    Ok(())
}
