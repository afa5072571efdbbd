//! `lacuna eval`: accuracy beside speed for a real model at several dual-sparsity levels.
//!
//! For each level x (weights pruned to x % per block linear, activations thresholded for x %):
//! compile the model (calibrating on Debian fortunes), measure perplexity and top-1 agreement
//! with the dense model on held-out literature (`lacuna_compiler::eval`), with f32 products
//! and with the core's FP16 numerics (`--numerics`), and simulate the
//! compiled program's decode trace on the cycle model: cycles, latency, DRAM bytes and energy
//! per token for the linear layers, against dense FP16 GEMV on the same hardware.

use crate::cmd::compile::model_path;
use crate::cmd::eval_moe::{MoeFlags, MoeShape};
use crate::cmd::Percent;
use crate::table::Table;
use anyhow::{bail, Context, Result};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::compile::{compile, CompileOptions};
use lacuna_compiler::corpus::{fortunes, join, Split, SOURCE};
use lacuna_compiler::eval::{accuracy, Accuracy, Numerics};
use lacuna_compiler::passes::act_thresholds::Thresholds;
use lacuna_compiler::passes::allocate::Allocation;
use lacuna_compiler::passes::lower::Layout;
use lacuna_compiler::passes::prune_weights::PruneMethod;
use lacuna_compiler::tokenizer::TokenId;
use lacuna_model::energy::EnergyTable;
use lacuna_model::program::{dense_baselines, run_step};
use lacuna_spec::Arch;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `lacuna eval`.
#[derive(clap::Args)]
pub struct Args {
    /// A checkpoint of the Llama family (a GGUF file or a Hugging Face directory), or
    /// `smollm2-135m` (the pinned model in the cache).
    #[arg(default_value = "smollm2-135m")]
    model: String,
    /// Dual-sparsity levels in percent (weights and activations alike).
    #[arg(long, conflicts_with = "moe", value_delimiter = ',', default_values = ["0", "30", "50", "70"])]
    levels: Vec<Percent>,
    /// Pruning method: magnitude or wanda.
    #[arg(long, conflicts_with = "moe", default_value = "wanda")]
    method: String,
    /// Architecture: a preset (edge, tiny) or a TOML file.
    #[arg(long, conflicts_with = "moe", default_value = "edge")]
    arch: String,
    /// Evaluation documents (4 entries of Debian's `literature` fortunes each) [default: 16,
    /// with --moe 3; with --front the text is --tokens].
    #[arg(long, conflicts_with = "front")]
    docs: Option<usize>,
    /// Calibration documents (4 entries of Debian's `fortunes` each) [default: 32, with --moe
    /// 64: a mixture's routers fit hidden-size inputs and overfit fewer tokens].
    #[arg(long)]
    calibration_docs: Option<usize>,
    /// Mixture of experts with speculative decoding instead of dual sparsity: the dense FFNs
    /// split into E experts, K chosen per token (MoEfication), e.g. 16x4; every expert policy
    /// side by side.
    #[arg(long)]
    moe: Option<MoeShape>,
    /// With --moe: tokens generated per prompt [default: 24]; with --front: evaluation tokens in
    /// all [default: 512].
    #[arg(long)]
    tokens: Option<usize>,
    /// The accuracy-speed front instead of levels: every mean weight x activation sparsity of
    /// the grid under each allocation, its Pareto front, and the fastest point within 5 % and
    /// 10 % of dense perplexity (with --out: front.json, front.csv, front.svg).
    #[arg(long, conflicts_with_all = ["moe", "levels"])]
    front: bool,
    /// With --front: mean weight sparsity levels in percent.
    #[arg(long, requires = "front", value_delimiter = ',', default_values = ["0", "10", "20", "30", "40", "50", "60", "70"])]
    weight_levels: Vec<Percent>,
    /// With --front: mean activation sparsity levels in percent.
    #[arg(long, requires = "front", value_delimiter = ',', default_values = ["0", "10", "20", "30", "40", "50", "60", "70"])]
    act_levels: Vec<Percent>,
    /// Where the sparsity goes: uniform (every layer at the level) or sensitivity (the level as
    /// a mean: OWL per block for weights, TEAL's greedy allocation per input for activations)
    /// [default: uniform; with --front: uniform,sensitivity].
    #[arg(long, conflicts_with = "moe", value_delimiter = ',', value_parser = clap::value_parser!(Allocation))]
    allocation: Vec<Allocation>,
    /// Each layer's job: `auto` (gemv over dense panels where they take fewer bytes than
    /// RLC-CSC, else spmspv) or `rlc-csc` (every layer spmspv, the baseline).
    #[arg(long, conflicts_with = "moe", value_parser = clap::value_parser!(Layout), default_value = "auto")]
    layout: Layout,
    /// With --moe: generation prompts (16 tokens of held-out fortunes each).
    #[arg(long, requires = "moe", default_value_t = 3)]
    prompts: usize,
    #[command(flatten)]
    moe_flags: MoeFlags,
    /// Tokens per document at most.
    #[arg(long, default_value_t = 64)]
    max_tokens: usize,
    /// Which numerics the accuracy is measured with: f32 products, the core's (FP16 weights and
    /// activations, FP32 column-order sums), or both side by side.
    #[arg(long, conflicts_with_all = ["moe", "front"], value_enum, default_value_t = NumericsArg::Both)]
    numerics: NumericsArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write eval.json and eval.csv (with --front: front.json, front.csv, front.svg) into
    /// this directory.
    #[arg(long, conflicts_with = "moe")]
    out: Option<PathBuf>,
}

/// `--numerics`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum NumericsArg {
    F32,
    Core,
    Both,
}

/// One level's row; accuracy figures are null for numerics not measured.
#[derive(Serialize)]
struct Row {
    level_percent: f64,
    weight_sparsity: f64,
    act_sparsity_target: f64,
    act_sparsity_eval_text: f64,
    /// f32 products.
    perplexity: Option<f64>,
    mean_nll: Option<f64>,
    top1_agreement_with_dense: Option<f64>,
    /// The core's FP16 numerics (dense reference: the f32 dense model).
    perplexity_core: Option<f64>,
    mean_nll_core: Option<f64>,
    top1_agreement_with_dense_core: Option<f64>,
    predicted_tokens: usize,
    cycles_per_token: f64,
    latency_ms_per_token: f64,
    dense_latency_ms_per_token: f64,
    speedup_vs_dense: f64,
    dram_mb_per_token: f64,
    energy_uj_per_token: f64,
    dense_energy_uj_per_token: f64,
    /// Layers run as gemv jobs over dense panels (the rest spmspv over RLC-CSC).
    gemv_layers: usize,
    trace_answer: String,
}

#[derive(Serialize)]
struct Report<'a> {
    model: String,
    arch: String,
    arch_hash: String,
    method: String,
    allocation: &'static str,
    layout: &'static str,
    eval_text: String,
    calibration_text: String,
    trace_prompt: &'static str,
    numerics: &'static str,
    scope: &'static str,
    rows: &'a [Row],
}

const PROMPT: &str = "The capital of France is";
const NUMERICS: &str = "accuracy: golden forward with the pruned weights and the hardware's activation drops, the linear layers in f32 (perplexity) and as the core computes them (perplexity core: the program's FP16 weights, FP16 activations, FP32 sums in column order; attention, norms, RoPE, SiLU in f32); the dense reference is the f32 dense model; speed and energy: the cycle model on the compiled program";
const SCOPE: &str = "speed and energy cover the whole decode step (linear layers on the core, attention as dense core jobs over the KV cache, the vector unit), averaged over the trace's steps; dense: the linear layers as dense FP16 GEMV on the same hardware. SmolLM2 is a dense SiLU model, not a ReLU model, and not a MoE";

/// A compiled program's whole decode step on the cycle model, averaged over its trace's steps,
/// beside the same step with the linear layers as dense FP16 GEMV on the same hardware.
pub struct DecodeSpeed {
    /// Cycles a token.
    pub cycles: f64,
    /// Dense cycles a token.
    pub dense_cycles: f64,
    /// DRAM bytes a token.
    pub dram_bytes: f64,
    /// Energy a token (pJ).
    pub energy_pj: f64,
    /// Dense energy a token (pJ).
    pub dense_energy_pj: f64,
}

impl DecodeSpeed {
    /// Dense cycles over these.
    pub fn speedup(&self) -> f64 {
        self.dense_cycles / self.cycles.max(1.0)
    }
}

/// Simulates every step of `trace` (recorded for `p`) and averages.
pub fn decode_speed(
    p: &lacuna_spec::program::LoadedProgram,
    trace: &lacuna_spec::trace::Trace,
    energy: &EnergyTable,
) -> Result<DecodeSpeed> {
    let base = dense_baselines(p, energy);
    let steps = trace.steps.len();
    let (mut cyc, mut dcyc, mut bytes, mut e, mut de) = (0u64, 0u64, 0u64, 0f64, 0f64);
    for s in 0..steps {
        let r = run_step(p, trace, s, energy, &base)?;
        cyc += r.cycles;
        dcyc += r.dense_cycles;
        bytes += r.dram_bytes();
        e += r.energy_pj();
        de += r.dense_energy_pj();
    }
    let n = steps.max(1) as f64;
    Ok(DecodeSpeed {
        cycles: cyc as f64 / n,
        dense_cycles: dcyc as f64 / n,
        dram_bytes: bytes as f64 / n,
        energy_pj: e / n,
        dense_energy_pj: de / n,
    })
}

pub fn run(a: Args) -> Result<ExitCode> {
    use crate::cmd::compile::{MAX_DOCS, MAX_DOC_TOKENS};
    let docs = a.docs.unwrap_or(if a.moe.is_some() { 3 } else { 16 });
    let calibration_docs = a.calibration_docs.unwrap_or(if a.moe.is_some() { 64 } else { 32 });
    for (flag, v, max) in [
        ("--docs", docs, MAX_DOCS),
        ("--calibration-docs", calibration_docs, MAX_DOCS),
        ("--max-tokens", a.max_tokens, MAX_DOC_TOKENS),
        ("--prompts", a.prompts, MAX_DOCS),
        ("--tokens", a.tokens.unwrap_or(0), if a.front { MAX_DOCS * MAX_DOC_TOKENS } else { MAX_DOC_TOKENS }),
    ] {
        if v > max {
            bail!("{flag} must be at most {max}, got {v}");
        }
    }
    if let Some(moe) = a.moe {
        a.moe_flags.check()?;
        return crate::cmd::eval_moe::run(crate::cmd::eval_moe::MoeArgs {
            model_path: model_path(&a.model)?,
            moe,
            flags: a.moe_flags,
            tokens: a.tokens.unwrap_or(24),
            prompts: a.prompts,
            docs,
            calibration_docs,
            max_tokens: a.max_tokens,
            json: a.json,
        });
    }
    let arch = Arch::load(&a.arch)?;
    let method: PruneMethod = a.method.parse().map_err(anyhow::Error::msg)?;
    // Every argument is checked before any work, so a mistake is one error line, at once.
    if a.front {
        let levels = |l: &[Percent], name| l.iter().map(|l| l.partial_fraction(name)).collect::<Result<Vec<f64>>>();
        let (weight_levels, act_levels) =
            (levels(&a.weight_levels, "weight-levels")?, levels(&a.act_levels, "act-levels")?);
        let allocations = match a.allocation.is_empty() {
            true => vec![Allocation::Uniform, Allocation::Sensitivity],
            false => a.allocation.clone(),
        };
        if let Some(twice) = allocations.iter().enumerate().find(|(i, x)| allocations[..*i].contains(x)) {
            bail!("--allocation names {} twice", twice.1.name());
        }
        for &al in &allocations {
            for &x in &act_levels {
                al.check_act_target(x).map_err(anyhow::Error::msg)?;
            }
        }
        let tokens = a.tokens.unwrap_or(512);
        if tokens < 2 {
            bail!("--tokens must be at least 2 (the first token of a text is not predicted), got {tokens}");
        }
        return crate::cmd::eval_front::run(crate::cmd::eval_front::FrontArgs {
            model_path: model_path(&a.model)?,
            weight_levels,
            act_levels,
            allocations,
            layout: a.layout,
            method,
            arch,
            tokens,
            calibration_docs,
            max_tokens: a.max_tokens,
            json: a.json,
            out: a.out,
        });
    }
    if a.tokens.is_some() {
        bail!("--tokens goes with --moe or --front (the levels' evaluation text is --docs x --max-tokens)");
    }
    let allocation = match a.allocation.as_slice() {
        [] => Allocation::Uniform,
        [one] => *one,
        _ => bail!("--allocation takes one allocation without --front"),
    };
    // Every argument is checked before any work, so a mistake is one error line, at once.
    let fractions: Vec<f64> = a.levels.iter().map(|l| l.partial_fraction("levels")).collect::<Result<_>>()?;
    for &x in &fractions {
        allocation.check_act_target(x).map_err(anyhow::Error::msg)?;
    }
    let path = model_path(&a.model)?;
    let start = Instant::now();
    let say = |what: &str| eprintln!("[{:>6.1} s] {what}", start.elapsed().as_secs_f64());
    let dense = Checkpoint::open(&path)?;
    let eval_docs: Vec<Vec<TokenId>> = join(&fortunes(Split::Evaluation).map_err(anyhow::Error::msg)?, 4)
        .iter()
        .take(docs)
        .map(|t| dense.tokenizer.encode(t).into_iter().take(a.max_tokens).collect())
        .collect();
    say(&format!("dense model on {} evaluation documents", eval_docs.len()));
    let (_, dense_top1) = accuracy(&dense, Numerics::F32(&Thresholds::default()), &eval_docs, None)?;
    let model_name = format!("{} ({})", dense.name, dense.file_name());
    drop(dense);
    let energy = EnergyTable::default();
    let mut rows = Vec::new();
    for (&level, &x) in a.levels.iter().zip(&fractions) {
        say(&format!("level {level} %: compiling"));
        let mut opts = CompileOptions::new(arch.clone(), x, method, x);
        opts.allocation = allocation;
        opts.layout = a.layout;
        opts.calibration_docs = calibration_docs;
        opts.max_tokens = a.max_tokens;
        opts.prompt = PROMPT.into();
        let c = compile(Checkpoint::open(&path)?, &opts, |s| say(&format!("level {level} %: {s}")))
            .map_err(anyhow::Error::msg)?;
        let p = c
            .program
            .clone()
            .load(c.image, std::path::Path::new("program.json"), std::path::Path::new("image.bin"))
            .context("the compiled program")?;
        let f32_acc: Option<Accuracy> = if a.numerics != NumericsArg::Core {
            say(&format!("level {level} %: perplexity (f32 products)"));
            Some(accuracy(&c.checkpoint, Numerics::F32(&c.thresholds), &eval_docs, Some(&dense_top1))?.0)
        } else {
            None
        };
        let core_acc: Option<Accuracy> = if a.numerics != NumericsArg::F32 {
            say(&format!("level {level} %: perplexity (the core's FP16 numerics)"));
            Some(accuracy(&c.checkpoint, Numerics::Core(&p), &eval_docs, Some(&dense_top1))?.0)
        } else {
            None
        };
        // Both runs drop the same activations up to FP16 rounding; report the measured one.
        let acc = f32_acc.as_ref().or(core_acc.as_ref()).expect("at least one numerics is measured");
        say(&format!("level {level} %: simulating the decode trace"));
        let sp = decode_speed(&p, &c.trace, &energy)?;
        let clock = arch.clock_mhz as f64;
        rows.push(Row {
            level_percent: level.percent(),
            weight_sparsity: x,
            act_sparsity_target: x,
            act_sparsity_eval_text: acc.act_sparsity,
            perplexity: f32_acc.as_ref().map(|a| a.perplexity),
            mean_nll: f32_acc.as_ref().map(|a| a.mean_nll),
            top1_agreement_with_dense: f32_acc.as_ref().map(|a| a.top1_agreement),
            perplexity_core: core_acc.as_ref().map(|a| a.perplexity),
            mean_nll_core: core_acc.as_ref().map(|a| a.mean_nll),
            top1_agreement_with_dense_core: core_acc.as_ref().map(|a| a.top1_agreement),
            predicted_tokens: acc.predicted,
            cycles_per_token: sp.cycles,
            latency_ms_per_token: sp.cycles / clock / 1e3,
            dense_latency_ms_per_token: sp.dense_cycles / clock / 1e3,
            speedup_vs_dense: sp.speedup(),
            dram_mb_per_token: sp.dram_bytes / 1e6,
            energy_uj_per_token: sp.energy_pj / 1e6,
            dense_energy_uj_per_token: sp.dense_energy_pj / 1e6,
            gemv_layers: p.program.layers.iter().filter(|l| l.job == lacuna_spec::job::JobKind::Gemv).count(),
            trace_answer: c.generated.clone(),
        });
    }
    let report = Report {
        model: model_name,
        arch: arch.name.clone(),
        arch_hash: arch.hash().to_string(),
        method: a.method.clone(),
        allocation: allocation.name(),
        layout: a.layout.name(),
        eval_text: format!(
            "{SOURCE}: literature, {} documents of 4 entries, up to {} tokens",
            eval_docs.len(),
            a.max_tokens
        ),
        calibration_text: format!("{SOURCE}: fortunes, {} documents of 4 entries", calibration_docs),
        trace_prompt: PROMPT,
        numerics: NUMERICS,
        scope: SCOPE,
        rows: &rows,
    };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        std::fs::write(dir.join("eval.json"), serde_json::to_string_pretty(&report)?)?;
        // An accuracy not measured (--numerics) is an empty field.
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
        let mut csv = String::from("level_percent,perplexity,top1_agreement,perplexity_core,top1_agreement_core,act_sparsity_eval_text,latency_ms_per_token,dense_latency_ms_per_token,speedup_vs_dense,dram_mb_per_token,energy_uj_per_token,dense_energy_uj_per_token\n");
        for r in &rows {
            csv.push_str(&format!(
                "{},{},{},{},{},{:.4},{:.4},{:.4},{:.3},{:.3},{:.2},{:.2}\n",
                r.level_percent,
                opt(r.perplexity),
                opt(r.top1_agreement_with_dense),
                opt(r.perplexity_core),
                opt(r.top1_agreement_with_dense_core),
                r.act_sparsity_eval_text,
                r.latency_ms_per_token,
                r.dense_latency_ms_per_token,
                r.speedup_vs_dense,
                r.dram_mb_per_token,
                r.energy_uj_per_token,
                r.dense_energy_uj_per_token
            ));
        }
        std::fs::write(dir.join("eval.csv"), csv)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("model        {}", report.model);
    println!(
        "arch         {} ({}), {} MHz; pruning {}, {} allocation, {} layout",
        report.arch, report.arch_hash, arch.clock_mhz, report.method, report.allocation, report.layout
    );
    println!("eval text    {}", report.eval_text);
    println!("calibration  {}", report.calibration_text);
    println!("numerics     {NUMERICS}");
    println!("scope        {SCOPE}\n");
    let mut t = Table::new(&[
        "sparsity (w = a)",
        "perplexity",
        "top-1 vs dense",
        "perplexity core",
        "top-1 core",
        "act. sparsity",
        "ms/token",
        "dense ms",
        "speedup",
        "DRAM MB",
        "uJ/token",
        "dense uJ",
        "trace answer",
    ]);
    for r in &rows {
        t.row(vec![
            format!("{:.0} %", r.level_percent),
            r.perplexity.map_or("-".into(), |v| format!("{v:.2}")),
            r.top1_agreement_with_dense.map_or("-".into(), |v| format!("{:.1} %", 100.0 * v)),
            r.perplexity_core.map_or("-".into(), |v| format!("{v:.2}")),
            r.top1_agreement_with_dense_core.map_or("-".into(), |v| format!("{:.1} %", 100.0 * v)),
            format!("{:.1} %", 100.0 * r.act_sparsity_eval_text),
            format!("{:.3}", r.latency_ms_per_token),
            format!("{:.3}", r.dense_latency_ms_per_token),
            format!("{:.2}", r.speedup_vs_dense),
            format!("{:.1}", r.dram_mb_per_token),
            format!("{:.0}", r.energy_uj_per_token),
            format!("{:.0}", r.dense_energy_uj_per_token),
            format!("{:?}", r.trace_answer),
        ]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}
