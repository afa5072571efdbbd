//! `lacuna emit-verilog [--arch NAME] -o DIR [--check] [--json]`: the RTL as Verilog for synthesis
//! flows, one file per module, with a manifest.
//!
//! `DIR/manifest.json` records the arch (name and hash), the core's top module (`top`), every
//! emitted block (its top module, its files, its ports with widths and meanings) and, with
//! `--check`, what Verilator lint and Yosys found (cells, flip-flops, memory bits). `--check` fails on any lint warning, latch or
//! combinational loop.

use crate::table::Table;
use anyhow::{Context, Result};
use lacuna_spec::Arch;
use lacuna_testbench::synth::{self, SynthStats};
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
    /// The top module of the whole core (its ports: the job interface and the memory port).
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
}

pub fn run(a: Args) -> Result<ExitCode> {
    let arch = Arch::load(&a.arch)?;
    let modules = lacuna_rtl::blocks(&arch)?;
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
    for module in &modules {
        let paths = synth::write_module(module, &a.out)?;
        let synthesis = if a.check {
            bar.set_message(format!("{}: verilator lint", module.name));
            synth::lint(&module.name, &paths)?;
            bar.set_message(format!("{}: yosys synthesis", module.name));
            Some(synth::synthesize(&module.name, &paths, &a.out.join("yosys"), synth::Depth::Full)?)
        } else {
            None
        };
        bar.inc(1);
        let files = paths.iter().filter_map(|p| p.file_name()).map(|f| f.to_string_lossy().to_string()).collect();
        blocks.push(BlockEntry { top: module.name.clone(), files, ports: module.ports.clone(), synthesis });
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
    if a.json {
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
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
    }
    Ok(ExitCode::SUCCESS)
}
