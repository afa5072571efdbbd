//! `lacuna eval --moe ExK --tree DxW`: the expert policies of MoE + speculative decoding side
//! by side (issue 15). The mixture is derived from the dense model by MoEfication and labelled
//! so; its calibration statistics (gate predictor, mean activations) come from the same
//! calibration text; every policy then generates from real prompts and walks held-out text
//! (`lacuna_compiler::moe_eval`).

use anyhow::{bail, Result};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::coalesce::{calibrate_mixture, MixtureStats};
use lacuna_compiler::coalesce::{Reuse, Scorer};
use lacuna_compiler::corpus::{fortunes, join, Split, SOURCE};
use lacuna_compiler::moe_eval::{evaluate_policies, evaluate_prefill, MoeEvalConfig, PolicyRow, PrefillRow};
use lacuna_compiler::moefy::moefy;
use lacuna_compiler::speculate::{default_draft, Draft};
use lacuna_compiler::tokenizer::TokenId;
use lacuna_spec::graph::LlamaConfig;
use lacuna_spec::speculation::{MoePolicy, TreeShape};
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

/// `ExK`: experts and experts chosen per token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeShape {
    pub experts: usize,
    pub top_k: usize,
}

impl std::str::FromStr for MoeShape {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not ExK (experts x chosen per token, e.g. 16x4)");
        let (e, k) = s.split_once('x').ok_or_else(bad)?;
        let (experts, top_k) = (e.parse().map_err(|_| bad())?, k.parse().map_err(|_| bad())?);
        if experts == 0 || top_k == 0 || top_k > experts {
            return Err(bad());
        }
        Ok(MoeShape { experts, top_k })
    }
}

/// The mixture options `eval --moe` and `compile --moe` share (each requires `--moe`).
#[derive(clap::Args, Clone, Debug)]
pub struct MoeFlags {
    /// With --moe: draft trees of depth D and width W.
    #[arg(long, requires = "moe", default_value = "4x4")]
    pub tree: TreeShape,
    /// With --moe: the self-draft's blocks, e.g. 0-9,20-29 [default: the first and last thirds].
    #[arg(long, requires = "moe")]
    pub draft: Option<String>,
    /// With --moe: experts per block and step of the `budget` policy [default: 3K/2, at most E].
    #[arg(long, requires = "moe")]
    pub expert_budget: Option<usize>,
    /// With --moe: channels a depth may select under coalescing, in units of one token's need.
    #[arg(long, requires = "moe", default_value_t = 1.0)]
    pub channel_budget: f64,
    /// With --moe: rank of the coalescing's gate predictor.
    #[arg(long, requires = "moe", default_value_t = 32)]
    pub predictor_rank: usize,
    /// With --moe: the policies to run.
    #[arg(long, requires = "moe", value_delimiter = ',', default_values = ["no-sd", "naive", "budget", "coalesced", "coalesced-calibrated"])]
    pub policies: Vec<MoePolicy>,
}

impl MoeFlags {
    /// What clap cannot check, before any work: one error line each.
    pub fn check(&self) -> Result<()> {
        if !(self.channel_budget.is_finite() && self.channel_budget >= 0.0) {
            bail!("--channel-budget must be a non-negative number, got {}", self.channel_budget);
        }
        if self.expert_budget == Some(0) {
            bail!("--expert-budget must be at least 1");
        }
        let p = &self.policies;
        if let Some(twice) = p.iter().enumerate().find_map(|(i, q)| p[..i].contains(q).then_some(q)) {
            bail!("--policies names {twice} twice");
        }
        Ok(())
    }

    /// The self-draft of a model of this shape, the predictor's rank checked against it.
    pub fn draft_for(&self, c: &LlamaConfig) -> Result<Draft> {
        if self.predictor_rank == 0 || self.predictor_rank > c.hidden {
            bail!("--predictor-rank must lie in 1..={}, got {}", c.hidden, self.predictor_rank);
        }
        Ok(match &self.draft {
            Some(d) => Draft::parse(d, c.layers)?,
            None => default_draft(c),
        })
    }

    /// The `budget` policy's experts for a mixture of this shape: as given, or one and a half
    /// tokens' worth, below the union of a tree (2k would be all 16 of a 16x8 mixture).
    pub fn expert_budget_for(&self, moe: MoeShape) -> usize {
        self.expert_budget.unwrap_or((3 * moe.top_k).div_ceil(2).min(moe.experts))
    }
}

/// What `eval --moe` needs of the command line.
pub struct MoeArgs {
    pub model_path: std::path::PathBuf,
    pub moe: MoeShape,
    pub flags: MoeFlags,
    pub tokens: usize,
    pub prompts: usize,
    pub docs: usize,
    pub calibration_docs: usize,
    pub max_tokens: usize,
    pub json: bool,
}

#[derive(Serialize)]
struct Report<'a> {
    model: String,
    moe: String,
    tree: String,
    draft: String,
    expert_budget: usize,
    channel_budget: f64,
    predictor_rank: usize,
    calibration_text: String,
    prompts: String,
    eval_text: String,
    bytes: &'static str,
    policies: &'a [PolicyRow],
    prefill: &'a [PrefillRow],
}

const BYTES: &str = "expert weights in A8W4 (INT4 values, an FP16 scale per 32), loaded per block and step with nothing kept across steps; the gate predictor's bytes apart; attention and the draft's own passes not counted";

/// `n` documents of 4 Debian fortunes of a split, tokenized, `max_tokens` each at most.
pub fn fortune_docs(ckpt: &Checkpoint, split: Split, n: usize, max_tokens: usize) -> Result<Vec<Vec<TokenId>>> {
    Ok(join(&fortunes(split).map_err(anyhow::Error::msg)?, 4)
        .iter()
        .take(n)
        .map(|t| ckpt.tokenizer.encode(t).into_iter().take(max_tokens).collect())
        .collect())
}

/// The mixture derived from `dense` by MoEfication on `calib` (labelled so in its name), and its
/// calibration statistics (a gate predictor of `rank`) on the same text.
pub fn derive_mixture(
    dense: &Checkpoint,
    moe: MoeShape,
    calib: &[Vec<TokenId>],
    rank: usize,
    say: &dyn Fn(&str),
) -> Result<(Checkpoint, MixtureStats)> {
    say(&format!(
        "splitting the FFNs into {}x{} experts (MoEfication on {} documents)",
        moe.experts,
        moe.top_k,
        calib.len()
    ));
    let (mix, _) = moefy(dense, calib, moe.experts, moe.top_k, 1)?;
    say("calibration statistics of the mixture");
    let stats = calibrate_mixture(&mix, calib, rank).map_err(anyhow::Error::msg)?;
    Ok((mix, stats))
}

/// Prompt tokens of each generation prompt and prefilled before each held-out document's
/// teacher-forced steps.
const PROMPT_TOKENS: usize = 16;

pub fn run(a: MoeArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let say = |what: &str| eprintln!("[{:>6.1} s] {what}", start.elapsed().as_secs_f64());
    if a.max_tokens <= PROMPT_TOKENS + 1 {
        bail!("--max-tokens must exceed {} (the prompt part of each document)", PROMPT_TOKENS + 1);
    }
    let dense = Checkpoint::open(&a.model_path)?;
    let f = &a.flags;
    let draft = f.draft_for(&dense.graph.config)?;
    let docs = |split, n: usize| fortune_docs(&dense, split, n, a.max_tokens);
    let calib = docs(Split::Calibration, a.calibration_docs)?;
    let held = docs(Split::Evaluation, a.docs)?;
    let prompts: Vec<Vec<TokenId>> = docs(Split::HeldOut, a.prompts)?
        .into_iter()
        .map(|d| d.into_iter().take(PROMPT_TOKENS).collect::<Vec<_>>())
        .filter(|d| !d.is_empty())
        .collect();
    let (mix, stats) = derive_mixture(&dense, a.moe, &calib, f.predictor_rank, &say)?;
    drop(dense);
    let expert_budget = f.expert_budget_for(a.moe);
    let cfg = MoeEvalConfig {
        shape: f.tree,
        draft: draft.clone(),
        tokens: a.tokens,
        prompt_tokens: PROMPT_TOKENS,
        expert_budget,
        channel_budget: f.channel_budget,
    };
    let rows = evaluate_policies(&mix, &stats, &f.policies, &prompts, &held, &cfg, &mut |s| say(s))
        .map_err(anyhow::Error::msg)?;
    let reuse = Reuse { scorer: Scorer::RouterConfidence, important: 0.25, reduced_k: a.moe.top_k.div_ceil(2) };
    let prefill = evaluate_prefill(&mix, &stats, &held, reuse, &mut |s| say(s)).map_err(anyhow::Error::msg)?;
    let report = Report {
        model: mix.name.clone(),
        moe: format!("{}x{}", a.moe.experts, a.moe.top_k),
        tree: f.tree.to_string(),
        draft: draft.to_string(),
        expert_budget,
        channel_budget: f.channel_budget,
        predictor_rank: f.predictor_rank,
        calibration_text: format!("{} documents of Debian's fortunes ({SOURCE})", calib.len()),
        prompts: format!(
            "{} prompts of {PROMPT_TOKENS} tokens from held-out fortunes, {} tokens generated each",
            prompts.len(),
            a.tokens
        ),
        eval_text: format!(
            "{} documents of Debian's literature fortunes, the first {PROMPT_TOKENS} tokens prefilled",
            held.len()
        ),
        bytes: BYTES,
        policies: &rows,
        prefill: &prefill,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("model        {}", report.model);
    println!("tree         {} (self-draft: blocks {draft})", report.tree);
    println!("bytes        {BYTES}");
    let mut t = crate::table::Table::new(&[
        "policy",
        "tokens/step",
        "experts/block/step",
        "expert KB/token",
        "predictor KB/token",
        "top-1 agreement",
        "perplexity",
        "prefill experts/block",
    ]);
    let naive = rows.iter().find(|r| r.policy == MoePolicy::Naive).map(|r| r.expert_bytes_per_token);
    for r in &rows {
        let vs = naive.map_or(String::new(), |n| format!(" ({:+.1} %)", 100.0 * (r.expert_bytes_per_token / n - 1.0)));
        t.row(vec![
            r.policy.name().to_string(),
            format!("{:.2}", r.tokens_per_step),
            format!("{:.2}", r.unique_experts_per_step),
            format!("{:.1}{vs}", r.expert_bytes_per_token / 1e3),
            format!("{:.1}", r.predictor_bytes_per_token / 1e3),
            format!("{:.3}", r.top1_agreement),
            format!("{:.2}", r.perplexity),
            format!("{:.2}", r.prefill_unique_experts),
        ]);
    }
    print!("{}", t.render());
    println!("prefill (each evaluation document in one pass)");
    let mut t =
        crate::table::Table::new(&["routing", "experts/block", "expert KB/token", "top-1 agreement", "perplexity"]);
    for r in &prefill {
        t.row(vec![
            r.routing.clone(),
            format!("{:.2}", r.unique_experts_per_block),
            format!("{:.1}", r.expert_bytes_per_token / 1e3),
            format!("{:.3}", r.top1_agreement),
            format!("{:.2}", r.perplexity),
        ]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}
