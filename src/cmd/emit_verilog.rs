//! `lacuna emit-verilog [--arch NAME] -o DIR [--block MODULE ...] [--check] [--json]`: the RTL as
//! Verilog for synthesis flows, one file per module, with a manifest (`--block`: only the named
//! blocks, e.g. to time one block without the minutes the whole design takes).
//!
//! `DIR/manifest.json` records the arch (name and hash), the core's top module (`top`), every
//! emitted block (its top module, its files, its ports with widths and meanings) and, with
//! `--check`, what Verilator lint and Yosys found (cells, flip-flops, memory bits) and each
//! block's area and timing in a real cell library (`timing`: OSU 0.18 um, its worst paths and
//! their delays scaled to 28 nm; `lacuna_testbench::timing`), also printed as a table.
//! `--check` fails on any lint warning, latch or combinational loop, and when a block's
//! register-to-register path exceeds the budget of the arch's clock, or of `--clock-mhz`
//! (`lacuna_spec::timing`).
//! The system and core tops are their blocks wired: synthesized to generic gates, timed block
//! by block (mapping a whole top to the library takes hours).

use crate::table::Table;
use anyhow::{Context, Result};
use lacuna_spec::Arch;
use lacuna_testbench::synth::{self, SynthStats};
use lacuna_testbench::timing::{self, TimingReport};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lacuna emit-verilog`.
#[derive(clap::Args)]
pub struct Args {
    /// Architecture: a preset (edge, tiny) or a TOML file.
    #[arg(long, default_value = "edge")]
    arch: String,
    /// Output folder (created if missing).
    #[arg(short, long)]
    out: PathBuf,
    /// Also run `verilator --lint-only -Wall` and Yosys synthesis on every block.
    #[arg(long)]
    check: bool,
    /// Only this block (its top module, e.g. `lacuna_mem_port_tiny`); repeatable.
    #[arg(long = "block", value_name = "MODULE")]
    blocks: Vec<String>,
    /// The clock the timing is checked against with --check, MHz (default: the arch's own;
    /// the suite holds `tiny` to 800, `edge`'s).
    #[arg(long)]
    clock_mhz: Option<u32>,
    /// Print the manifest as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// `DIR/manifest.json`.
#[derive(Serialize)]
struct Manifest {
    format: &'static str,
    version: u32,
    arch: String,
    arch_hash: String,
    /// The top module of the whole core (its ports: the job interface and the memory port);
    /// with `--block`, among `blocks` only if named.
    top: String,
    blocks: Vec<BlockEntry>,
}

#[derive(Serialize)]
struct BlockEntry {
    top: String,
    files: Vec<String>,
    ports: Vec<lacuna_rtl::Port>,
    #[serde(skip_serializing_if = "Option::is_none")]
    synthesis: Option<SynthStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timing: Option<TimingReport>,
}

pub fn run(a: Args) -> Result<ExitCode> {
    let arch = Arch::load(&a.arch)?;
    let mut modules = lacuna_rtl::blocks(&arch)?;
    if !a.blocks.is_empty() {
        if let Some(unknown) = a.blocks.iter().find(|b| !modules.iter().any(|m| &m.name == *b)) {
            let names: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
            anyhow::bail!("--block {unknown}: arch {} has no such block; its blocks: {}", arch.name, names.join(", "));
        }
        modules.retain(|m| a.blocks.contains(&m.name));
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let mut blocks = Vec::new();
    // Linting and synthesizing every block takes minutes: say which block is being checked.
    let bar = indicatif::ProgressBar::new(modules.len() as u64);
    if a.check {
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} blocks {elapsed} {msg}")
                .expect("a valid template"),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let clock_mhz = a.clock_mhz.unwrap_or(arch.clock_mhz);
    if !(1..=10_000).contains(&clock_mhz) {
        anyhow::bail!("--clock-mhz must be in 1..=10000, got {clock_mhz}");
    }
    let library = match a.check {
        true => {
            let lib = timing::Library::find()?;
            let fo4 = timing::fo4_ns(&lib, &a.out.join("sta"))?;
            Some((lib, fo4))
        }
        false => None,
    };
    for module in &modules {
        let paths = synth::write_module(module, &a.out)?;
        let (mut synthesis, mut timing) = (None, None);
        if let Some((lib, fo4)) = &library {
            bar.set_message(format!("{}: verilator lint", module.name));
            synth::lint(&module.name, &paths)?;
            let work = a.out.join("yosys");
            if lacuna_rtl::is_wiring_top(&module.name) {
                bar.set_message(format!("{}: yosys synthesis", module.name));
                synthesis = Some(synth::synthesize(&module.name, &paths, &work, synth::Depth::Full)?);
            } else {
                bar.set_message(format!("{}: yosys, cell library, opensta", module.name));
                let report = timing::analyze(&module.name, &paths, &work, lib, *fo4, clock_mhz)?;
                synthesis = Some(SynthStats {
                    module: module.name.clone(),
                    cells: report.cells,
                    flip_flops: report.flip_flops,
                    memory_bits: report.memory_bits,
                });
                timing = Some(report);
            }
        }
        bar.inc(1);
        let files = paths.iter().filter_map(|p| p.file_name()).map(|f| f.to_string_lossy().to_string()).collect();
        blocks.push(BlockEntry { top: module.name.clone(), files, ports: module.ports.clone(), synthesis, timing });
    }
    bar.finish_and_clear();
    let manifest = Manifest {
        format: "lacuna-verilog",
        version: 1,
        arch: arch.name.clone(),
        arch_hash: arch.hash().to_string(),
        top: lacuna_rtl::top_name(&arch),
        blocks,
    };
    let text = serde_json::to_string_pretty(&manifest)?;
    std::fs::write(a.out.join("manifest.json"), format!("{text}\n"))?;
    let reports: Vec<TimingReport> = manifest.blocks.iter().filter_map(|b| b.timing.clone()).collect();
    let over: Vec<&str> =
        reports.iter().filter(|r| r.meets_budget() == Some(false)).map(|r| r.module.as_str()).collect();
    if a.json {
        println!("{text}");
    } else {
        println!("arch {} ({}): Verilog in {}", manifest.arch, manifest.arch_hash, a.out.display());
        let mut t = Table::new(&["block (top module)", "files", "ports", "cells", "flip-flops", "memory bits"]);
        for b in &manifest.blocks {
            let s = b.synthesis.as_ref();
            let figure = |f: fn(&SynthStats) -> u64| s.map(|s| f(s).to_string()).unwrap_or_else(|| "-".into());
            t.row(vec![
                b.top.clone(),
                b.files.len().to_string(),
                b.ports.len().to_string(),
                figure(|s| s.cells),
                figure(|s| s.flip_flops),
                figure(|s| s.memory_bits),
            ]);
        }
        print!("{}", t.render());
        if a.check {
            println!(
                "lint (verilator --lint-only -Wall, no warning waived) and yosys (synth; check -assert; no latches): clean"
            );
            println!(
                "\ncells and flip-flops: library cells for the timed blocks, generic gates for the tops; \
                 area and timing in {}:",
                reports.first().map_or("(no block timed)", |r| r.library.as_str())
            );
            print!("{}", timing::table(&reports));
        }
    }
    if !over.is_empty() {
        eprintln!(
            "over the clock budget of {} MHz at {} (register to register): {}",
            clock_mhz,
            lacuna_spec::timing::TARGET.name,
            over.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
