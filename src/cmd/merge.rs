//! `lacuna merge`: joins the shards of one sweep into one JSON-lines file (and a CSV beside it).
//!
//! The joining is `lacuna_model::sweep::merge`: it refuses shards of different sweeps (their
//! `sweep` hashes or point counts differ), a point present twice, a malformed line (with its file
//! and line number); here, also, unless `--allow-partial`, a sweep with
//! points missing (it names how many and the first).

use anyhow::{bail, Context, Result};
use lacuna_model::sweep::merge;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lacuna merge`.
#[derive(clap::Args)]
pub struct Args {
    /// Shard outputs of `lacuna sweep`.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The merged JSON-lines file; a .csv with the same stem is written beside it.
    #[arg(short, long)]
    output: PathBuf,
    /// Write the merge even when points are missing.
    #[arg(long)]
    allow_partial: bool,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let mut texts = Vec::new();
    for path in &a.inputs {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        texts.push((path.display().to_string(), text));
    }
    let merged = merge(texts.iter().map(|(n, t)| (n.as_str(), t.as_str()))).map_err(anyhow::Error::msg)?;
    let (hash, total, points) = (&merged.sweep, merged.total, &merged.points);
    if let Some(first) = merged.first_missing().filter(|_| !a.allow_partial) {
        bail!(
            "sweep {hash}: {} of {total} points missing (first: {first}); run the missing shards or pass --allow-partial",
            merged.missing()
        );
    }
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(&a.output).with_context(|| a.output.display().to_string())?);
    let mut csv = String::from("index,lanes,entries_per_lane,acc_write_ports,bytes_per_cycle,shape,sparsity,cycles,dense_cycles,speedup_vs_dense,roofline_fraction,energy_pj,bytes_loaded,invalid\n");
    for p in points.values() {
        writeln!(out, "{}", serde_json::to_string(p)?)?;
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{:.4},{:.4},{:.1},{},{}\n",
            p.index,
            p.lanes,
            p.entries_per_lane,
            p.acc_write_ports,
            p.bytes_per_cycle,
            p.shape,
            p.sparsity,
            p.cycles,
            p.dense_cycles,
            p.speedup_vs_dense,
            p.roofline_fraction,
            p.energy_pj,
            p.bytes_loaded,
            p.invalid.as_deref().map(|s| format!("\"{}\"", s.replace('"', "'"))).unwrap_or_default()
        ));
    }
    out.flush()?;
    std::fs::write(a.output.with_extension("csv"), csv)?;
    eprintln!("sweep {hash}: merged {} of {total} points into {}", points.len(), a.output.display());
    Ok(ExitCode::SUCCESS)
}
