//! `lacuna sweep`: the cycle model over a grid of architecture parameters and workloads.
//!
//! The grid is the cartesian product of the listed values (lanes, entries per lane, accumulate
//! write ports, memory bytes per cycle) over a base arch, times the workloads (shapes x levels).
//! Points are numbered in a fixed order; `--shard i/n` runs the points whose number is i mod n, so
//! that a cluster's job array (Slurm `--array`, Kubernetes indexed jobs) runs one shard per task,
//! and `lacuna merge` joins the shards. Points run in parallel (rayon) and are written in point
//! order, so the output does not depend on the thread count. Every line carries the sweep's hash;
//! merge refuses shards of different sweeps.

use crate::cmd::Percent;
use anyhow::{bail, Context, Result};
use lacuna_compiler::workload::{Shape, SyntheticWorkload, PROVENANCE};
use lacuna_model::energy::EnergyTable;
use lacuna_model::sweep::Point;
use lacuna_model::{simulate, Job};
use lacuna_spec::{ActivationFilter, Arch};
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use sweep_hash::stable_hash;

/// Arguments of `lacuna sweep`.
#[derive(clap::Args)]
pub struct Args {
    /// The base arch (a preset or a TOML file); the lists below replace its fields.
    #[arg(long, default_value = "edge")]
    arch: String,
    /// core.lanes values.
    #[arg(long, value_delimiter = ',', default_values_t = vec![8, 16, 32])]
    lanes: Vec<u32>,
    /// core.entries_per_lane values.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2, 4])]
    entries_per_lane: Vec<u32>,
    /// core.acc_write_ports values.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 2])]
    write_ports: Vec<u32>,
    /// memory.bytes_per_cycle values.
    #[arg(long, value_delimiter = ',', default_values_t = vec![32, 64, 128])]
    bytes_per_cycle: Vec<u32>,
    /// Workload shapes MxK (synthetic).
    #[arg(long, value_delimiter = ',', default_values_t = vec!["4096x4096".parse::<Shape>().expect("a valid shape")])]
    shape: Vec<Shape>,
    /// Dual sparsity levels in percent.
    #[arg(long, value_delimiter = ',', default_values = ["50", "70"])]
    sparsity: Vec<Percent>,
    /// Seed of the synthetic workloads.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run only shard I of N (points whose number is I mod N), e.g. 0/8.
    #[arg(long, default_value = "0/1")]
    shard: String,
    /// Output file (JSON lines, one per point).
    #[arg(short, long)]
    output: PathBuf,
}

fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let err = || anyhow::anyhow!("--shard must be I/N with 0 <= I < N, got `{s}`");
    let (i, n) = s.split_once('/').ok_or_else(err)?;
    let (i, n): (usize, usize) = (i.parse().map_err(|_| err())?, n.parse().map_err(|_| err())?);
    if n == 0 || i >= n {
        return Err(err());
    }
    Ok((i, n))
}

/// A hash of everything that defines the sweep, so shards of different sweeps cannot be merged.
mod sweep_hash {
    /// FNV-1a over the bytes: stable across runs, platforms and Rust versions.
    pub fn stable_hash(text: &str) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// The most points one sweep may have.
pub const MAX_SWEEP_POINTS: usize = 1_000_000;

pub fn run(a: Args) -> Result<ExitCode> {
    let (shard, shards) = parse_shard(&a.shard)?;
    let base = Arch::load(&a.arch)?;
    let points = [
        a.lanes.len(),
        a.entries_per_lane.len(),
        a.write_ports.len(),
        a.bytes_per_cycle.len(),
        a.shape.len(),
        a.sparsity.len(),
    ]
    .iter()
    .try_fold(1usize, |n, &k| n.checked_mul(k))
    .filter(|&n| n <= MAX_SWEEP_POINTS);
    if points.is_none() {
        bail!(
            "the grid has more than {MAX_SWEEP_POINTS} points (the product of the lists' lengths): shorten the lists"
        );
    }
    let mut grid = Vec::new();
    for &l in &a.lanes {
        for &e in &a.entries_per_lane {
            for &p in &a.write_ports {
                for &b in &a.bytes_per_cycle {
                    for &shape in &a.shape {
                        for &s in &a.sparsity {
                            grid.push((l, e, p, b, shape, s));
                        }
                    }
                }
            }
        }
    }
    let total = grid.len();
    let sweep = stable_hash(&format!(
        "{}|{:?}|{}",
        base.hash(),
        grid.iter().map(|g| format!("{g:?}")).collect::<Vec<_>>(),
        a.seed
    ));
    let mine: Vec<usize> = (0..total).filter(|i| i % shards == shard).collect();
    eprintln!("sweep {sweep}: {total} points, shard {shard}/{shards} runs {}; workloads: {PROVENANCE}", mine.len());

    // Workloads are shared by the points: draw and prune each (shape, level) once.
    let mut workloads = std::collections::BTreeMap::new();
    for &shape in &a.shape {
        let pair = SyntheticWorkload::dense_pair(shape, a.seed);
        for &s in &a.sparsity {
            let f = s.fraction();
            workloads
                .insert((shape.to_string(), f.to_bits()), SyntheticWorkload::at_sparsity(shape, a.seed, &pair, f, f));
        }
    }
    let energy = EnergyTable::default();
    let bar = indicatif::ProgressBar::new(mine.len() as u64);
    let points: Vec<Point> = mine
        .par_iter()
        .map(|&i| {
            let (l, e, p, b, shape, s) = grid[i];
            let mut arch = base.clone();
            arch.name = format!("{}-l{l}-e{e}-p{p}-b{b}", base.name);
            arch.core.lanes = l;
            arch.core.entries_per_lane = e;
            arch.core.acc_write_ports = p;
            arch.memory.bytes_per_cycle = b;
            // One request is accepted per cycle, so a wider bus needs bursts at least as wide.
            arch.memory.request_bytes = arch.memory.request_bytes.max(b);
            let mut pt = Point {
                sweep: sweep.clone(),
                index: i,
                total,
                lanes: l,
                entries_per_lane: e,
                acc_write_ports: p,
                bytes_per_cycle: b,
                arch_hash: arch.hash().to_string(),
                shape: shape.to_string(),
                sparsity: s.percent(),
                invalid: None,
                cycles: 0,
                dense_cycles: 0,
                speedup_vs_dense: 0.0,
                roofline_fraction: 0.0,
                energy_pj: 0.0,
                bytes_loaded: 0,
                provenance: PROVENANCE.into(),
            };
            if let Err(err) = arch.validate() {
                pt.invalid = Some(err.to_string());
                bar.inc(1);
                return Ok(pt);
            }
            let w = &workloads[&(shape.to_string(), s.fraction().to_bits())];
            let m = w.encode_for(&arch)?;
            let filter = ActivationFilter::NONZERO;
            let r = match simulate(&arch, &Job::new(&m, &w.activations, filter)) {
                Ok(r) => r,
                // An arch point whose panel table is too small for the shape is a point, not a
                // failed sweep.
                Err(e @ lacuna_model::SimError::TooManyPanels { .. }) => {
                    pt.invalid = Some(e.to_string());
                    bar.inc(1);
                    return Ok(pt);
                }
                Err(e) => return Err(e.into()),
            };
            let (rows, cols) = (shape.rows as u64, shape.cols as u64);
            pt.dense_cycles = lacuna_model::baselines::dense(&arch, rows, cols, &energy).cycles;
            pt.cycles = r.counters.cycles;
            pt.speedup_vs_dense = pt.dense_cycles as f64 / pt.cycles as f64;
            let ideal = m.job_bytes(w.activations.as_slice(), filter).total();
            pt.roofline_fraction = lacuna_model::baselines::roofline_cycles(&arch, ideal) / pt.cycles as f64;
            pt.energy_pj = energy.of_core(&r.counters, cols * m.panels().len() as u64).total_pj();
            pt.bytes_loaded = r.counters.bytes.loaded();
            bar.inc(1);
            Ok(pt)
        })
        .collect::<Result<Vec<_>>>()?;
    bar.finish_and_clear();
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(&a.output).with_context(|| format!("cannot write {}", a.output.display()))?,
    );
    for p in &points {
        writeln!(f, "{}", serde_json::to_string(p)?)?;
    }
    f.flush()?;
    eprintln!("wrote {} points to {}", points.len(), a.output.display());
    Ok(ExitCode::SUCCESS)
}
