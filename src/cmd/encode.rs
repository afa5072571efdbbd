//! `lacuna encode IN -o OUT.rlc`: dense weights to RLC-CSC.

use anyhow::{Context, Result};
use lacuna_spec::{write_rlc_file, Arch};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lacuna encode`.
#[derive(clap::Args)]
pub struct Args {
    /// Dense weights: a 2-D .npy (FP16, FP32 or FP64) or .safetensors file, shape (M outputs, K inputs).
    input: PathBuf,
    /// The .rlc file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// The tensor to encode from a .safetensors file (optional when it holds one 2-D tensor).
    #[arg(long)]
    tensor: Option<String>,
    /// Split into balanced row panels that fit the tile of this arch (a preset name or a .toml file).
    #[arg(long, conflicts_with = "panel_rows")]
    arch: Option<String>,
    /// Split into row panels of this many rows (default: one panel).
    #[arg(long)]
    panel_rows: Option<u32>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let dense = lacuna_compiler::load_dense(&a.input, a.tensor.as_deref())?;
    let panel_rows = match (&a.arch, a.panel_rows) {
        (Some(name), _) => Some(Arch::load(name)?.balanced_panel_rows(dense.rows())),
        (None, Some(0)) => anyhow::bail!("--panel-rows must be at least 1"),
        (None, p) => p,
    };
    let m = lacuna_compiler::encode_parallel(&dense, panel_rows)
        .with_context(|| format!("cannot encode {}", a.input.display()))?;
    write_rlc_file(&m, &a.output)?;
    let s = m.stats();
    println!(
        "{}: {}x{} in {} panel(s), {} nonzeros, {} stored entries ({} padding), {} bytes ({:.3} of dense FP16) -> {}",
        a.input.display(),
        s.rows,
        s.cols,
        s.panels,
        s.nnz,
        s.stored_entries,
        s.padding_entries,
        s.bytes,
        s.bytes as f64 / s.dense_fp16_bytes as f64,
        a.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
