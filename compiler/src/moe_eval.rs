//! Expert policies side by side on one mixture: speed (tokens per step, expert traffic) from
//! greedy generation on real prompts, accuracy from teacher-forced steps on held-out text.
//!
//! For each policy ([`MoePolicy`]):
//! - **Generation:** every prompt is prefilled, then `tokens` tokens are decoded greedily by
//!   draft trees (`no-sd`: one token per step). `tokens_per_step` is committed tokens over
//!   steps; `expert_bytes_per_token` the steps' expert traffic (A8W4) over committed tokens;
//!   `unique_experts_per_step` the experts with anything loaded, per block and step. The lossy
//!   policies decode their own (approximate) model greedily, so their text may drift from the
//!   exact mixture's: their speed figures are those of that text.
//! - **Accuracy:** each held-out document's first `prompt_tokens` are prefilled exactly; the rest
//!   is walked by teacher-forced steps ([`Accept::Follow`]): the same draft trees and policy,
//!   but the accepted path follows the document. Every logits vector a step produces for a
//!   document position scores the next token (`perplexity`) and is compared with the exact
//!   mixture's argmax there, computed by plain decoding (`top1_agreement`). The exact policies
//!   (`no-sd`, `naive`) compute the exact mixture's logits bit for bit (tree attention is exact,
//!   tested), so their figures are the plain decoding's over the same positions (agreement 1),
//!   measured once.
//! - **Prefill:** the prompts' passes under the exact routing: experts loaded per block and
//!   prompt (the union of its tokens' top-k) and bytes per prompt token.
//!
//! [`evaluate_prefill`] sets prompt-wise expert reuse against per-token routing: each held-out
//! document prefilled whole in one pass, every position's logits scored as above.

use crate::checkpoint::Checkpoint;
use crate::coalesce::{Counts, MixtureStats, PolicyConfig, PolicyExec, Reuse, Scorer};
use crate::eval::{accuracy, Numerics};
use crate::forward::{argmax, nll, run_sequences, Dense};
use crate::passes::act_thresholds::Thresholds;
use crate::speculate::{generate, reborrow, Accept, Draft, Speculator, StepPolicy};
use crate::tokenizer::TokenId;
use lacuna_spec::speculation::{MoePolicy, TreeShape};
use serde::Serialize;

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct MoeEvalConfig {
    /// The draft trees.
    pub shape: TreeShape,
    /// The self-draft.
    pub draft: Draft,
    /// Tokens generated per prompt.
    pub tokens: usize,
    /// Tokens of each held-out document prefilled before the teacher-forced steps.
    pub prompt_tokens: usize,
    /// `budget`: experts per block and step.
    pub expert_budget: usize,
    /// `coalesced*`: channels per depth, in units of one token's need.
    pub channel_budget: f64,
}

/// One policy's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PolicyRow {
    /// The policy.
    pub policy: MoePolicy,
    /// Committed tokens per verification step (generation).
    pub tokens_per_step: f64,
    /// Experts with anything loaded, per block and step (generation).
    pub unique_experts_per_step: f64,
    /// Expert weight bytes (A8W4) per committed token (generation).
    pub expert_bytes_per_token: f64,
    /// Gate-predictor bytes per committed token (coalescing; counted apart from the experts).
    pub predictor_bytes_per_token: f64,
    /// Share of held-out positions where the policy's argmax is the exact mixture's.
    pub top1_agreement: f64,
    /// Perplexity on the held-out positions under the policy.
    pub perplexity: f64,
    /// Held-out positions scored.
    pub predicted: usize,
    /// Generation: tokens committed and steps taken.
    pub generated_tokens: usize,
    /// See `generated_tokens`.
    pub steps: usize,
    /// Prefill: experts loaded per block and prompt.
    pub prefill_unique_experts: f64,
    /// Prefill: expert bytes per prompt token.
    pub prefill_expert_bytes_per_token: f64,
}

/// Runs every policy of `policies` on the mixture `mix`.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_policies(
    mix: &Checkpoint,
    stats: &MixtureStats,
    policies: &[MoePolicy],
    prompts: &[Vec<TokenId>],
    held: &[Vec<TokenId>],
    cfg: &MoeEvalConfig,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<PolicyRow>, String> {
    if cfg.prompt_tokens == 0 {
        return Err("the teacher-forced steps need a prompt of at least one token".into());
    }
    let exact = exact_scores(mix, held, cfg.prompt_tokens)?;
    let exact_top1 = &exact.top1;
    let mut rows = Vec::new();
    for &policy in policies {
        // The exact policies' steps give the exact mixture's logits bit for bit (tree attention
        // is exact; tested), so their accuracy is the plain decoding's, measured once.
        let exact_policy = matches!(policy, MoePolicy::NoSd | MoePolicy::Naive);
        let pc =
            PolicyConfig { policy, expert_budget: cfg.expert_budget, channel_budget: cfg.channel_budget, reuse: None };
        let shape = if policy.speculates() { cfg.shape } else { TreeShape { depth: 0, width: 1 } };
        let mut exec = PolicyExec::new(mix, pc, Some(stats))?;
        let (mut committed, mut steps, mut prompt_tokens) = (0usize, 0usize, 0usize);
        for (i, prompt) in prompts.iter().enumerate() {
            progress(&format!("{policy}: generating from prompt {}/{}", i + 1, prompts.len()));
            let (_, s) = generate(mix, prompt, cfg.tokens, shape, &cfg.draft, &mut Dense, Some(&mut exec))
                .map_err(|e| e.to_string())?;
            committed += s.iter().map(|s| s.path.len()).sum::<usize>();
            steps += s.len();
            prompt_tokens += prompt.len();
        }
        let gen: Counts = exec.counts;
        let (mut nll_sum, mut predicted, mut agree) = (0f64, 0usize, 0usize);
        for (d, doc) in held.iter().enumerate().filter(|_| !exact_policy) {
            progress(&format!("{policy}: teacher-forced steps on document {}/{}", d + 1, held.len()));
            if doc.len() <= cfg.prompt_tokens + 1 {
                continue;
            }
            let mut s = Speculator::new(mix, shape, &cfg.draft).map_err(|e| e.to_string())?;
            let mut policy_exec: Option<&mut dyn StepPolicy> = Some(&mut exec);
            s.prefill(&doc[..cfg.prompt_tokens], &mut Dense, reborrow(&mut policy_exec)).map_err(|e| e.to_string())?;
            let mut at = cfg.prompt_tokens;
            while at + 1 < doc.len() {
                let tree = s.draft(doc[at], &mut Dense).map_err(|e| e.to_string())?;
                let out = s
                    .verify(tree, Accept::Follow(&doc[at + 1..]), &mut Dense, reborrow(&mut policy_exec))
                    .map_err(|e| e.to_string())?;
                for (i, logits) in out.logits.iter().enumerate() {
                    let pos = at + i;
                    if let Some(&next) = doc.get(pos + 1) {
                        nll_sum += nll(logits, next);
                        predicted += 1;
                        agree += usize::from(argmax(logits) == exact_top1[d][pos]);
                    }
                }
                at += out.path.len();
            }
        }
        let per = |v: u64, n: usize| v as f64 / n.max(1) as f64;
        rows.push(PolicyRow {
            policy,
            tokens_per_step: per(committed as u64, steps),
            unique_experts_per_step: per(gen.experts_loaded, gen.block_steps as usize),
            expert_bytes_per_token: per(gen.expert_bytes, committed),
            predictor_bytes_per_token: per(gen.predictor_bytes, committed),
            top1_agreement: if exact_policy { 1.0 } else { per(agree as u64, predicted) },
            perplexity: (if exact_policy { exact.mean_nll } else { nll_sum / predicted.max(1) as f64 }).exp(),
            predicted: if exact_policy { exact.predicted } else { predicted },
            generated_tokens: committed,
            steps,
            prefill_unique_experts: per(gen.prefill_experts_loaded, gen.prefill_block_passes as usize),
            prefill_expert_bytes_per_token: per(gen.prefill_expert_bytes, prompt_tokens),
        });
    }
    Ok(rows)
}

/// The exact mixture by plain decoding: every position's argmax, and the mean NLL of the
/// positions from `from` on (those the teacher-forced steps score).
struct Exact {
    top1: Vec<Vec<TokenId>>,
    mean_nll: f64,
    predicted: usize,
}

fn exact_scores(mix: &Checkpoint, held: &[Vec<TokenId>], from: usize) -> Result<Exact, String> {
    let mut top1: Vec<Vec<TokenId>> = held.iter().map(|d| Vec::with_capacity(d.len())).collect();
    let (mut nll_sum, mut predicted) = (0f64, 0usize);
    let mut each = |d: usize, pos: usize, logits: &[f32]| {
        top1[d].push(argmax(logits));
        if let (true, Some(&next)) = (pos >= from && held[d].len() > from + 1, held[d].get(pos + 1)) {
            nll_sum += nll(logits, next);
            predicted += 1;
        }
    };
    run_sequences(mix, held, 16, &mut Dense, Some(&mut each)).map_err(|e| e.to_string())?;
    Ok(Exact { top1, mean_nll: nll_sum / predicted.max(1) as f64, predicted })
}

/// One prefill routing's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PrefillRow {
    /// `per-token`, or the reuse scorer.
    pub routing: String,
    /// Experts loaded per block and prompt.
    pub unique_experts_per_block: f64,
    /// Expert bytes (A8W4) per prompt token.
    pub expert_bytes_per_token: f64,
    /// Share of positions where the argmax is the exact mixture's.
    pub top1_agreement: f64,
    /// Perplexity over the documents' positions.
    pub perplexity: f64,
    /// Positions scored.
    pub predicted: usize,
}

/// Per-token routing, then prompt-wise reuse with each scorer (`reuse` gives the share and
/// the reduced k), each held-out document prefilled whole.
pub fn evaluate_prefill(
    mix: &Checkpoint,
    stats: &MixtureStats,
    held: &[Vec<TokenId>],
    reuse: Reuse,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<PrefillRow>, String> {
    let (_, exact_top1) =
        accuracy(mix, Numerics::F32(&Thresholds::default()), held, None).map_err(|e| e.to_string())?;
    let layers = mix.graph.config.layers;
    let whole = Draft::first(layers, layers).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    let options = [None, Some(Scorer::RouterConfidence), Some(Scorer::Spaced)];
    for scorer in options {
        let routing = scorer.map_or("per-token".to_string(), |s| {
            format!(
                "reuse ({}; {:.0} % keep top-k, others top-{} in the shared set)",
                serde_json::to_value(s).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default(),
                100.0 * reuse.important,
                reuse.reduced_k
            )
        });
        progress(&format!("prefill: {routing}"));
        let pc = PolicyConfig {
            policy: MoePolicy::Naive,
            expert_budget: 1,
            channel_budget: 1.0,
            reuse: scorer.map(|scorer| Reuse { scorer, ..reuse }),
        };
        let mut exec = PolicyExec::new(mix, pc, Some(stats))?;
        let (mut nll_sum, mut predicted, mut agree, mut tokens) = (0f64, 0usize, 0usize, 0usize);
        for (d, doc) in held.iter().enumerate().filter(|(_, d)| !d.is_empty()) {
            let mut s = Speculator::new(mix, TreeShape { depth: 0, width: 1 }, &whole).map_err(|e| e.to_string())?;
            let logits = s.prefill(doc, &mut Dense, Some(&mut exec)).map_err(|e| e.to_string())?;
            tokens += doc.len();
            for (pos, l) in logits.iter().enumerate() {
                if let Some(&next) = doc.get(pos + 1) {
                    nll_sum += nll(l, next);
                    predicted += 1;
                    agree += usize::from(argmax(l) == exact_top1[d][pos]);
                }
            }
        }
        let c = exec.counts;
        rows.push(PrefillRow {
            routing,
            unique_experts_per_block: c.prefill_experts_loaded as f64 / c.prefill_block_passes.max(1) as f64,
            expert_bytes_per_token: c.prefill_expert_bytes as f64 / tokens.max(1) as f64,
            top1_agreement: agree as f64 / predicted.max(1) as f64,
            perplexity: (nll_sum / predicted.max(1) as f64).exp(),
            predicted,
        });
    }
    Ok(rows)
}
