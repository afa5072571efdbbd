//! `lacuna merge`: joins the shards of one sweep into one JSON-lines file (and a CSV beside it).
//!
//! It refuses shards of different sweeps (their `sweep` hashes or point counts differ), a point
//! present twice, a malformed line (with its file and line number) and, unless `--allow-partial`, a sweep with
//! points missing (it names how many and the first).

use crate::cmd::sweep::Point;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
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
    let mut points: BTreeMap<usize, Point> = BTreeMap::new();
    let mut sweep: Option<(String, usize)> = None;
    for path in &a.inputs {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let p: Point = serde_json::from_str(line)
                .with_context(|| format!("{}, line {}: not a sweep point", path.display(), n + 1))?;
            match &sweep {
                None => sweep = Some((p.sweep.clone(), p.total)),
                Some((h, _)) if *h != p.sweep => {
                    bail!(
                        "{}, line {}: point of sweep {} but earlier shards are of sweep {h}",
                        path.display(),
                        n + 1,
                        p.sweep
                    )
                }
                Some((_, t)) if *t != p.total => {
                    bail!("{}, line {}: a sweep of {} points, but earlier points say {t}", path.display(), n + 1, p.total)
                }
                _ => {}
            }
            if p.index >= p.total {
                bail!("{}, line {}: point {} of a sweep of {}", path.display(), n + 1, p.index, p.total);
            }
            let index = p.index;
            if points.insert(index, p).is_some() {
                bail!("{}, line {}: point {index} appears twice", path.display(), n + 1);
            }
        }
    }
    let Some((hash, total)) = sweep else { bail!("no points in the inputs") };
    // Every point is distinct and below `total`, so what is missing is counted, not listed: a
    // claimed total of 2^64 - 1 costs nothing (it once tried to allocate the list).
    let missing = total - points.len();
    if missing > 0 && !a.allow_partial {
        let first = (0..total).find(|i| !points.contains_key(i)).expect("a point is missing");
        bail!(
            "sweep {hash}: {missing} of {total} points missing (first: {first}); run the missing shards or pass --allow-partial"
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
