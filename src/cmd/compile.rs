//! `lacuna compile`: a real checkpoint to a lacuna program (manifest, memory image, decode trace);
//! with `--moe ExK --tree DxW`, a derived mixture's MoE trace instead (`compile_moe.rs`).

use crate::cmd::eval_moe::{MoeFlags, MoeShape};
use crate::cmd::Percent;
use anyhow::{bail, Context, Result};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::compile::{compile, CompileOptions};
use lacuna_compiler::models;
use lacuna_compiler::passes::allocate::Allocation;
use lacuna_compiler::passes::lower::Layout;
use lacuna_compiler::passes::prune_weights::PruneMethod;
use lacuna_spec::trace::write_trace;
use lacuna_spec::Arch;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `lacuna compile`.
#[derive(clap::Args)]
pub struct Args {
    /// A checkpoint of the Llama family: a GGUF file, a Hugging Face directory (config.json,
    /// *.safetensors, tokenizer.json), or `smollm2-135m` (the pinned SmolLM2-135M-Instruct in the
    /// model cache; scripts/fetch-models.sh fetches it).
    model: String,
    /// Weight sparsity of every block linear, in percent (the LM head stays dense).
    #[arg(long, conflicts_with = "moe", default_value = "50")]
    weight_sparsity: Percent,
    /// Activation sparsity of every block linear's input, in percent (calibrated thresholds).
    #[arg(long, conflicts_with = "moe", default_value = "50")]
    act_sparsity: Percent,
    /// Pruning method: magnitude or wanda.
    #[arg(long, conflicts_with = "moe", default_value = "wanda")]
    method: String,
    /// Where the sparsity goes: `uniform` (every layer at the targets) or `sensitivity` (the
    /// targets as means: weights per block by OWL's outlier ratios, activations per input by
    /// TEAL's greedy allocation on measured output error; docs/compiler.md).
    #[arg(long, conflicts_with = "moe", value_parser = clap::value_parser!(Allocation), default_value = "uniform")]
    allocation: Allocation,
    /// Each layer's job: `auto` (gemv over dense panels where they take fewer bytes than
    /// RLC-CSC, else spmspv) or `rlc-csc` (every layer spmspv, the baseline).
    #[arg(long, conflicts_with = "moe", value_parser = clap::value_parser!(Layout), default_value = "auto")]
    layout: Layout,
    /// Architecture: a preset (edge, tiny) or a TOML file.
    #[arg(long, conflicts_with = "moe", default_value = "edge")]
    arch: String,
    /// The prompt of the recorded decode trace.
    #[arg(long, default_value = "The capital of France is")]
    prompt: String,
    /// Tokens generated after the prompt in the trace.
    #[arg(long, default_value_t = 3)]
    generate: usize,
    /// Calibration documents (4 Debian fortunes each) [default: 32, with --moe 64].
    #[arg(long)]
    calibration_docs: Option<usize>,
    /// Held-out documents for the activation sparsity check (4 Debian riddles each).
    #[arg(long, conflicts_with = "moe", default_value_t = 8)]
    held_out_docs: usize,
    /// Tokens per calibration or held-out document at most.
    #[arg(long, default_value_t = 64)]
    max_tokens: usize,
    /// Output directory (program.json, image.bin, trace.lctr; with --moe, moe_trace.json).
    #[arg(short, long)]
    out: PathBuf,
    /// A mixture of experts with speculative decoding instead of dual sparsity: the dense FFNs
    /// split into E experts, K chosen per token (MoEfication), e.g. 16x8; the trace of every
    /// expert policy's passes for the expert unit (moe_trace.json).
    #[arg(long)]
    moe: Option<MoeShape>,
    #[command(flatten)]
    moe_flags: MoeFlags,
}

/// Resolves a model argument: a file, or the name of a pinned model in the cache.
pub fn model_path(model: &str) -> Result<PathBuf> {
    if let Some(m) = models::ALL.iter().find(|m| m.name == model) {
        return m.locate().map_err(anyhow::Error::msg);
    }
    let p = PathBuf::from(model);
    if !p.exists() {
        let names: Vec<String> = models::ALL.iter().map(|m| format!("`{}`", m.name)).collect();
        bail!(
            "{model}: no such file or directory (give a GGUF file, a Hugging Face checkpoint directory or one of {})",
            names.join(", ")
        );
    }
    Ok(p)
}

/// The most tokens `--generate` may ask for in a trace (each is a whole forward step).
pub const MAX_GENERATE: usize = 256;
/// The most tokens per document `--max-tokens` may ask for.
pub const MAX_DOC_TOKENS: usize = 2048;
/// The most documents `--calibration-docs` or `--held-out-docs` may ask for.
pub const MAX_DOCS: usize = 10_000;

pub fn run(a: Args) -> Result<ExitCode> {
    let calibration_docs = a.calibration_docs.unwrap_or(if a.moe.is_some() { 64 } else { 32 });
    for (flag, v, max) in [
        ("--generate", a.generate, MAX_GENERATE),
        ("--max-tokens", a.max_tokens, MAX_DOC_TOKENS),
        ("--calibration-docs", calibration_docs, MAX_DOCS),
        ("--held-out-docs", a.held_out_docs, MAX_DOCS),
    ] {
        if v > max {
            bail!("{flag} must be at most {max}, got {v}");
        }
    }
    if let Some(moe) = a.moe {
        a.moe_flags.check()?;
        if a.generate == 0 {
            bail!("--generate must be at least 1 with --moe (the trace's steps are its tokens)");
        }
        return crate::cmd::compile_moe::run(crate::cmd::compile_moe::MoeCompileArgs {
            model_path: model_path(&a.model)?,
            moe,
            flags: a.moe_flags,
            prompt: a.prompt,
            generate: a.generate,
            calibration_docs,
            max_tokens: a.max_tokens,
            out: a.out,
        });
    }
    let arch = Arch::load(&a.arch)?;
    let method: PruneMethod = a.method.parse().map_err(anyhow::Error::msg)?;
    let opts = CompileOptions {
        prompt: a.prompt.clone(),
        generate: a.generate,
        calibration_docs,
        held_out_docs: a.held_out_docs,
        max_tokens: a.max_tokens,
        allocation: a.allocation,
        layout: a.layout,
        ..CompileOptions::new(
            arch,
            a.weight_sparsity.partial_fraction("weight-sparsity")?,
            method,
            a.act_sparsity.partial_fraction("act-sparsity")?,
        )
    };
    opts.allocation.check_act_target(opts.act_sparsity).map_err(anyhow::Error::msg)?;
    let path = model_path(&a.model)?;
    let start = Instant::now();
    let say = |what: &str| eprintln!("[{:>6.1} s] {what}", start.elapsed().as_secs_f64());
    // Read (and check) the file before any progress line, so a bad file is one error line.
    let ckpt = Checkpoint::open(&path)?;
    say(&format!("read {}", path.display()));
    let mut c = compile(ckpt, &opts, say).map_err(anyhow::Error::msg)?;
    if let Some(m) = models::ALL.iter().find(|m| m.name == a.model) {
        c.program.model_sha256 = Some(m.sha256.into());
    }
    c.program.write(&a.out, &c.image)?;
    let trace_path = a.out.join("trace.lctr");
    std::fs::write(&trace_path, write_trace(&c.trace)).with_context(|| trace_path.display().to_string())?;
    let s = &c.program.settings;
    say(&format!(
        "wrote {} ({} layers, image {:.1} MB, trace of {} steps)",
        a.out.display(),
        c.program.layers.len(),
        c.program.image_bytes as f64 / 1e6,
        c.trace.steps.len()
    ));
    println!("model          {}", c.program.model);
    println!("arch           {} ({})", opts.arch.name, c.program.arch_hash);
    match s.allocation.as_str() {
        "uniform" => println!("weights        {:.0} % pruned ({})", 100.0 * s.weight_sparsity, s.prune_method),
        a => println!("weights        {:.0} % pruned ({}, {a} allocation)", 100.0 * s.weight_sparsity, s.prune_method),
    }
    println!(
        "activations    {:.0} % target; {:.1} % reached on held-out text ({})",
        100.0 * s.act_sparsity,
        100.0 * s.held_out_act_sparsity,
        s.held_out
    );
    if !c.block_weight_sparsity.is_empty() {
        let v: Vec<String> = c.block_weight_sparsity.values().map(|v| format!("{:.0}", 100.0 * v)).collect();
        println!("  by block (%)  {} (OWL)", v.join(" "));
    }
    if let Some(levels) = &c.act_levels {
        let v: Vec<String> = levels.iter().map(|(k, v)| format!("{k:?} {:.0} %", 100.0 * v)).collect();
        println!("  by input      {} (measured sensitivity)", v.join(", "));
    }
    let gemv: Vec<&str> =
        c.program.layers.iter().filter(|l| l.job == lacuna_spec::job::JobKind::Gemv).map(|l| l.name.as_str()).collect();
    println!(
        "layout         {}: {} gemv jobs (dense panels), {} spmspv (RLC-CSC){}",
        s.layout.name(),
        gemv.len(),
        c.program.layers.len() - gemv.len(),
        match gemv.len() {
            0 => String::new(),
            n if n <= 4 => format!(": {}", gemv.join(", ")),
            _ => format!(": {}, ... {}", gemv[..3].join(", "), gemv[gemv.len() - 1]),
        }
    );
    println!("calibration    {} ({} tokens)", s.calibration, s.calibration_tokens);
    println!("trace          {:?} -> {:?}", opts.prompt, c.generated);
    Ok(ExitCode::SUCCESS)
}
