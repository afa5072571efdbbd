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
use lacuna_testbench::cosim::{check_case, named_cases, write_waveform, Case, CaseReport, Divergence, RtlEngine};
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

pub fn run(a: Args) -> Result<ExitCode> {
    let arch = Arch::load(&a.arch)?;
    let rtl = RtlEngine { max_cycles: 5_000_000 };
    let mut cases: Vec<Case> = (0..a.jobs).map(|i| Case::random(&arch, a.seed + i)).collect();
    let named = if a.no_cases { vec![] } else { named_cases(&arch)? };
    let named_count = named.len();
    cases.extend(named);

    let bar = if a.json {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(cases.len() as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} jobs {elapsed} {msg}")
                .expect("a valid template"),
        );
        b
    };
    let mut reports: Vec<CaseReport> = Vec::new();
    for case in &cases {
        bar.set_message(case.name.clone());
        let rep = check_case(&arch, case, &rtl);
        if let Some(e) = rep.error.as_deref().filter(|e| e.contains("no RTL block")) {
            bar.finish_and_clear();
            anyhow::bail!("{e} (the RTL is built for the presets and testbench/archs/)");
        }
        reports.push(rep);
        bar.inc(1);
    }
    bar.finish_and_clear();

    let failed = reports.iter().position(|r| !r.passed());
    let first_failure = match failed {
        None => None,
        Some(i) => {
            let (case, rep) = (&cases[i], &reports[i]);
            let vcd = write_waveform(&arch, case, &a.vcd).ok();
            Some(Failure {
                case: case.name.clone(),
                divergence: rep.divergence.clone(),
                error: rep.error.clone(),
                vcd: vcd.map(|p| p.display().to_string()),
            })
        }
    };
    let report = Report {
        arch: arch.name.clone(),
        arch_hash: arch.hash().to_string(),
        provenance: "random jobs: synthetic seeded matrices and activations (lacuna_testbench::cosim::Case::random); named cases: hand-written data files",
        jobs: reports.len(),
        random_jobs: a.jobs,
        named_cases: named_count,
        passed: reports.iter().filter(|r| r.passed()).count(),
        mismatches: reports.iter().filter(|r| r.y_mismatch).count(),
        cycle_mismatches: reports.iter().filter(|r| r.cycle_mismatch).count(),
        divergences: reports.iter().filter(|r| r.divergence.is_some()).count(),
        golden_mismatches: reports.iter().filter(|r| r.golden_mismatch).count(),
        dense_violations: reports.iter().map(|r| r.dense_violations).sum(),
        max_dense_bound_fraction: reports.iter().map(|r| r.dense_bound_fraction).fold(0.0, f64::max),
        faulted: reports.iter().filter(|r| r.faulted).count(),
        errors: reports.iter().filter(|r| r.error.is_some()).count(),
        cycles: reports.iter().filter_map(|r| r.cycles).sum(),
        first_failure,
    };
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
