//! `lacuna`: the command-line tool of the lacuna sparse LLM accelerator.
//!
//! Every subcommand prints a table for people and, with `--json`, JSON for machines. A user's
//! mistake (a missing file, a malformed input) ends with one `error: ...` line on stderr and a
//! non-zero exit status, never a backtrace.

mod cmd;
mod front_plot;
mod mem_trace;
mod report;
mod table;
mod timeline;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lacuna",
    version,
    about = "lacuna: a dual-sparse and MoE LLM inference accelerator (spec, golden references, cycle model, RTL, compiler)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a real LLM checkpoint (GGUF) to a lacuna program: pruning, activation thresholds, lowering, a decode trace.
    Compile(cmd::compile::Args),
    /// Encode a dense weight matrix (.npy or .safetensors) as RLC-CSC (.rlc).
    Encode(cmd::encode::Args),
    /// Describe and validate an .rlc file: shape, entries, padding, bytes against other formats.
    Inspect(cmd::inspect::Args),
    /// Run the golden and CPU spMspV kernels on the Celty workloads, checked against dense.
    Spmspv(cmd::spmspv::Args),
    /// Simulate the Sparse SIMT core (cycle model) and the baselines on the same hardware.
    Simulate(cmd::simulate::Args),
    /// Sweep the cycle model over architecture parameters, one shard of a job array at a time.
    Sweep(cmd::sweep::Args),
    /// Join the shard outputs of one sweep.
    Merge(cmd::merge::Args),
    /// Write the RTL as Verilog for synthesis flows, with a manifest; --check lints and synthesizes it.
    EmitVerilog(cmd::emit_verilog::Args),
    /// Accuracy beside speed: perplexity and top-1 agreement of a real model at several sparsity levels, next to its simulated latency and energy.
    Eval(cmd::eval::Args),
    /// Co-simulate the RTL (Verilator) with the cycle model and the golden references.
    Cosim(cmd::cosim::Args),
    /// The golden f32 forward of a checkpoint: its logits at every position as .npy, to compare with another framework.
    Forward(cmd::forward::Args),
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`lacuna simulate --json | head`)
    // would panic; the default action ends the process quietly, as it does every Unix tool.
    #[cfg(unix)]
    // SAFETY: called first, before any thread exists; SIG_DFL is a valid handler for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A value clap's parsers refused (a level out of range, a malformed shape): one line, as
        // every other error of the tool; usage errors keep clap's tips.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.render().to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: an invalid argument"));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    // Check the arguments and stop: the README test parses every documented command this way.
    if std::env::var("LACUNA_PARSE_ONLY").as_deref() == Ok("1") {
        return ExitCode::SUCCESS;
    }
    let result = match cli.command {
        Command::Compile(a) => cmd::compile::run(a),
        Command::Encode(a) => cmd::encode::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Spmspv(a) => cmd::spmspv::run(a),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Sweep(a) => cmd::sweep::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::EmitVerilog(a) => cmd::emit_verilog::run(a),
        Command::Cosim(a) => cmd::cosim::run(a),
        Command::Eval(a) => cmd::eval::run(a),
        Command::Forward(a) => cmd::forward::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes on one line, each cause once: many errors already quote their
/// source (`{path}: {source}`), and the OS error would otherwise be printed twice.
fn message(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}
