//! `lacuna cosim [--arch NAME] [--jobs N] [--seed S] [--json] [--vcd DIR]`: three-way agreement of
//! the RTL (Verilated), the cycle model and the golden references (`lacuna_testbench::cosim`).
//!
//! Runs N random seeded jobs (synthetic matrices, a quarter with corrupted streams) and the named
//! edge cases meant for the arch (`testbench/cases/`), and checks on every one: RTL and model make
//! the same memory requests in the same cycles, end in the same cycle with the same fault and
//! write bit-identical y; the model equals the column-order golden bit for bit; the golden is
//! within the dense FP32 bound. On a mismatch it names the first divergence (cycle, block, signal,
//! both values), reruns that job with a waveform and writes `DIR/cosim-<arch>-<case>.vcd`
//! (GTKWave opens it). Exits with status 1 when any check fails.

use crate::table::Table;
use anyhow::Result;
use lacuna_spec::Arch;
use lacuna_testbench::cosim::{check_case, named_cases, write_waveform, Case, Divergence, RtlEngine};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lacuna cosim`.
#[derive(clap::Args)]
pub struct Args {
    /// Architecture: a preset (tiny, edge) or a TOML file whose RTL this build holds (the presets
    /// and `testbench/archs/`).
    #[arg(long, default_value = "tiny")]
    arch: String,
    /// Random jobs (seeds S, S+1, ...).
    #[arg(long, default_value_t = 200)]
    jobs: u64,
    /// First seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Skip the named edge cases.
    #[arg(long)]
    no_cases: bool,
    /// Folder for the waveform of the first failing job.
    #[arg(long, default_value = ".")]
    vcd: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// The JSON report.
#[derive(Serialize)]
struct Report {
    arch: String,
    arch_hash: String,
    /// What the random jobs are.
    provenance: &'static str,
    jobs: usize,
    random_jobs: u64,
    named_cases: usize,
    passed: usize,
    /// Jobs whose RTL y differs from the model's.
    mismatches: usize,
    /// Jobs whose RTL cycle count differs from the model's.
    cycle_mismatches: usize,
    /// Jobs with any RTL/model divergence (requests, fault, cycles, y).
    divergences: usize,
    /// Well-formed jobs whose model y differs from the column-order golden.
    golden_mismatches: usize,
    /// Rows where the golden leaves the dense bound.
    dense_violations: usize,
    /// Largest golden error against dense, as a fraction of the bound.
    max_dense_bound_fraction: f64,
    /// Jobs that faulted (on both, when they agree).
    faulted: usize,
    /// Jobs an engine could not run.
    errors: usize,
    /// Cycles simulated (model count, all jobs).
    cycles: u64,
    first_failure: Option<Failure>,
}

#[derive(Serialize)]
struct Failure {
    case: String,
    divergence: Option<Divergence>,
    error: Option<String>,
    vcd: Option<String>,
}

/// The most random jobs one run may ask for (they stream: memory does not grow with them).
pub const MAX_JOBS: u64 = 100_000_000;

pub fn run(a: Args) -> Result<ExitCode> {
    if a.jobs > MAX_JOBS {
        anyhow::bail!("--jobs must be at most {MAX_JOBS}, got {}", a.jobs);
    }
    let arch = Arch::load(&a.arch)?;
    let rtl = RtlEngine { max_cycles: 5_000_000 };
    let named = if a.no_cases { vec![] } else { named_cases(&arch)? };
    let named_count = named.len();
    let total = a.jobs + named_count as u64;
    // Cases are made one at a time and only counts are kept (a soak runs 10^5 of them).
    let cases = (0..a.jobs).map(|i| Case::random(&arch, a.seed.wrapping_add(i))).chain(named);

    let bar = if a.json {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(total);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} jobs {elapsed} {msg}")
                .expect("a valid template"),
        );
        b
    };
    let mut report = Report {
        arch: arch.name.clone(),
        arch_hash: arch.hash().to_string(),
        provenance: "random jobs: synthetic seeded matrices and activations, small exact values on even seeds and Gaussian FP16 (real-valued) on odd seeds, a quarter of them gemv jobs over dense panels (lacuna_testbench::case::Case::random); named cases: hand-written data files",
        jobs: 0,
        random_jobs: a.jobs,
        named_cases: named_count,
        passed: 0,
        mismatches: 0,
        cycle_mismatches: 0,
        divergences: 0,
        golden_mismatches: 0,
        dense_violations: 0,
        max_dense_bound_fraction: 0.0,
        faulted: 0,
        errors: 0,
        cycles: 0,
        first_failure: None,
    };
    for case in cases {
        bar.set_message(case.name.clone());
        let rep = check_case(&arch, &case, &rtl);
        if let Some(e) = rep.error.as_deref().filter(|e| e.contains("no RTL block")) {
            bar.finish_and_clear();
            anyhow::bail!("{e} (the RTL is built for the presets and testbench/archs/)");
        }
        report.jobs += 1;
        report.passed += rep.passed() as usize;
        report.mismatches += rep.y_mismatch as usize;
        report.cycle_mismatches += rep.cycle_mismatch as usize;
        report.divergences += rep.divergence.is_some() as usize;
        report.golden_mismatches += rep.golden_mismatch as usize;
        report.dense_violations += rep.dense_violations;
        report.max_dense_bound_fraction = report.max_dense_bound_fraction.max(rep.dense_bound_fraction);
        report.faulted += rep.faulted as usize;
        report.errors += rep.error.is_some() as usize;
        report.cycles += rep.cycles.unwrap_or(0);
        if !rep.passed() && report.first_failure.is_none() {
            let vcd = write_waveform(&arch, &case, &a.vcd).ok();
            report.first_failure = Some(Failure {
                case: case.name.clone(),
                divergence: rep.divergence.clone(),
                error: rep.error.clone(),
                vcd: vcd.map(|p| p.display().to_string()),
            });
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("arch {} ({}); {}", report.arch, report.arch_hash, report.provenance);
        let mut t = Table::new(&["check", "jobs"]);
        let rows: [(&str, usize); 9] = [
            ("jobs run (random + named)", report.jobs),
            ("passed every check", report.passed),
            ("RTL y != model y", report.mismatches),
            ("RTL cycles != model cycles", report.cycle_mismatches),
            ("RTL diverges from model (requests, fault, cycles, y)", report.divergences),
            ("model y != column-order golden", report.golden_mismatches),
            ("golden rows outside the dense bound", report.dense_violations),
            ("faulted alike (malformed streams)", report.faulted),
            ("engine errors", report.errors),
        ];
        for (what, n) in rows {
            t.row(vec![what.to_string(), n.to_string()]);
        }
        print!("{}", t.render());
        println!(
            "{} model cycles in all; largest golden error {:.3} of the dense bound",
            report.cycles, report.max_dense_bound_fraction
        );
        if let Some(f) = &report.first_failure {
            println!("first failure: {}", f.case);
            if let Some(d) = &f.divergence {
                println!(
                    "  first divergence: cycle {}, block {}, signal {}: RTL {} / model {}",
                    d.cycle, d.block, d.signal, d.rtl, d.model
                );
            }
            if let Some(e) = &f.error {
                println!("  error: {e}");
            }
            if let Some(v) = &f.vcd {
                println!("  waveform: {v}");
            }
        }
    }
    Ok(if report.passed == report.jobs { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
