//! The expert policies of a speculative step, and the expert traffic each one costs.
//!
//! A [`PolicyExec`] runs every mixture block of the target's passes ([`StepPolicy`]) and counts
//! the expert weights the step loads, in A8W4 ([`a8w4_channel_bytes`]; one channel of an expert
//! is its gate row, up row and down column). Nothing stays on chip from one step or block to
//! the next: each block of each step loads what it uses.
//!
//! - Prefill: every token's own top k (the union loaded), or prompt-wise reuse ([`Reuse`]).
//! - `no-sd`, `naive`: the graph's routing; the block loads the union of the tokens' top-k.
//! - `budget` (MoE-Spec style): the `expert_budget` experts with the most routing mass over the
//!   tree (`sum_t p_t share_t(e)` over tokens that chose e; `p_t` the draft's path probability, 1
//!   for the root; `share` the softmax, or for unit gating the router's positive outputs over
//!   their sum: [`shares`]) are loaded; each token takes its top k among them.
//! - `coalesced` (EdgeXpert's depth-aware coalescing, our design beyond its abstract): tokens
//!   grouped by depth, the root first. For a group, channel j of an expert e it routes to
//!   scores `sum_t p_t share_t(e) |silu(g~_tj)| mean|up_j|`, with `g~` the gate predicted by a
//!   rank-r projection (`g~ = (W_gate P)(P^T x)`, P the top r principal directions of the block's
//!   calibration inputs; its weights are loaded once per block and counted). The group selects
//!   its `channel_budget x k x expert_ffn` best channels (one token's need at 1.0); those not on
//!   chip are loaded; every token then uses all loaded channels of its experts, those selected
//!   for any depth of the step (all are on chip before the block computes).
//! - `coalesced-calibrated`: as `coalesced`, plus the skipped channels' expected contribution
//!   (FLAP-style mean compensation): with L the used channels, mu the expert's mean inner
//!   activation over calibration tokens routed to it, and `c = W_down mu` kept on chip,
//!   `y = W_down[:,L] a_L + kappa (c - W_down[:,L] mu_L)`, `kappa = |a_L|_1 / nu_L` with
//!   `nu_j = E|a_j|` the channel's mean magnitude over the same tokens (1 when nothing is loaded):
//!   a token whose loaded channels are twice as active as usual gets twice the mean of the rest.
//!   (The research note's `kappa = |a_L|_1 / |mu_L|_1` divides by the magnitude of the means,
//!   which cancel in sign: it over-scaled the compensation and lowered agreement below
//!   uncompensated coalescing, 0.667 against 0.809.) Its only traffic is the loaded channels' own.

use crate::checkpoint::{Checkpoint, Matrix};
use crate::forward::{dot, route, silu, Mixing, MixtureExec};
use crate::speculate::{Pass, StepPolicy, TreeNode};
use lacuna_spec::graph::{Gating, LayerId, MoeConfig};
use lacuna_spec::moe::ExpertId;
use lacuna_spec::moe_trace::{BlockTrace, Channels, ExpertLoad, Routing};
use lacuna_spec::speculation::{a8w4_bytes, a8w4_channel_bytes, MoePolicy};
use rayon::prelude::*;

pub use crate::mixture_stats::{calibrate_mixture, BlockStats, MixtureStats};

/// The knobs of the policies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PolicyConfig {
    /// The policy.
    pub policy: MoePolicy,
    /// `budget`: experts loaded per block and step.
    pub expert_budget: usize,
    /// `coalesced*`: channels a depth selects, in units of one token's need (k x expert_ffn).
    pub channel_budget: f64,
    /// Prefill passes: prompt-wise expert reuse, or (none) every token's own top k.
    pub reuse: Option<Reuse>,
}

/// Prompt-wise expert reuse in prefill (EdgeXpert; the scorers are ours): per block, the
/// `important` share of the prompt's tokens (at least one) keeps its top k; the union of their
/// experts is the shared set S; every other token takes its top `reduced_k` within S (routing
/// weights by the model's gating over S). The block loads S only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reuse {
    /// How tokens are ranked.
    pub scorer: Scorer,
    /// Share of the prompt's tokens that keep their own experts.
    pub important: f64,
    /// Experts each other token takes within the shared set.
    pub reduced_k: usize,
}

/// How prompt-wise reuse finds the important tokens of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scorer {
    /// The router's confidence: the probability mass of the token's own top k (a token whose
    /// routing is sharp needs its experts; a diffuse one loses little within S).
    RouterConfidence,
    /// Evenly spaced tokens, the first included: the control a scorer must beat.
    Spaced,
}

/// One expert's weights, channel-major (row j of each is channel j).
pub(crate) struct Expert<'a> {
    pub(crate) gate: &'a Matrix,
    pub(crate) up: &'a Matrix,
    pub(crate) down_t: Matrix,
}

/// What a policy loaded, summed over passes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    /// Verification passes (steps).
    pub steps: u64,
    /// Expert weight bytes the steps loaded.
    pub expert_bytes: u64,
    /// Gate-predictor bytes the steps loaded (coalescing only).
    pub predictor_bytes: u64,
    /// Sum over (block, step) of the experts with anything loaded.
    pub experts_loaded: u64,
    /// (block, step) pairs.
    pub block_steps: u64,
    /// Prefill: expert bytes, experts over (block, prompt) pairs, prompt tokens.
    pub prefill_expert_bytes: u64,
    /// See `prefill_expert_bytes`.
    pub prefill_experts_loaded: u64,
    /// See `prefill_expert_bytes`.
    pub prefill_block_passes: u64,
}

/// Runs the mixture blocks of a target's passes under a policy and counts their traffic.
pub struct PolicyExec<'a> {
    cfg: PolicyConfig,
    moe: MoeConfig,
    hidden: usize,
    experts: Vec<Vec<Expert<'a>>>,
    /// Per block, the experts' mean outputs added for unchosen experts (where the graph has them).
    means: Vec<Option<&'a Matrix>>,
    stats: Option<&'a MixtureStats>,
    tree: Vec<TreeNode>,
    prefill: bool,
    /// The traffic so far.
    pub counts: Counts,
    /// Where set, every pass's blocks as the MoE trace records them (a pass pushes its list).
    pub record: Option<Vec<Vec<BlockTrace>>>,
}

/// The weights of expert `e` of block `l`.
pub(crate) fn expert_weights<'a>(ckpt: &'a Checkpoint, l: usize, e: usize) -> Expert<'a> {
    let find = |part: &str| {
        let name = format!("blk.{l}.{part}.{e}.weight");
        let at = ckpt.graph.weights.iter().position(|w| w.tensor == name);
        &ckpt.weights[at.unwrap_or_else(|| panic!("a mixture's graph names {name}"))]
    };
    let down = find("ffn_down");
    let mut t = vec![0f32; down.data.len()];
    for r in 0..down.rows {
        for (c, &v) in down.row(r).iter().enumerate() {
            t[c * down.rows + r] = v;
        }
    }
    Expert { gate: find("ffn_gate"), up: find("ffn_up"), down_t: Matrix { rows: down.cols, cols: down.rows, data: t } }
}

impl<'a> PolicyExec<'a> {
    /// The policy for `ckpt` (a mixture); coalescing needs `stats`.
    pub fn new(ckpt: &'a Checkpoint, cfg: PolicyConfig, stats: Option<&'a MixtureStats>) -> Result<Self, String> {
        let c = &ckpt.graph.config;
        let moe = c.moe.ok_or("the model is not a mixture")?;
        let coalesces = matches!(cfg.policy, MoePolicy::Coalesced | MoePolicy::CoalescedCalibrated);
        if coalesces && stats.is_none_or(|s| s.blocks.len() != c.layers) {
            return Err(format!("{} needs the mixture's calibration statistics", cfg.policy));
        }
        if cfg.policy == MoePolicy::Budget && cfg.expert_budget == 0 {
            return Err("an expert budget of 0 loads nothing".into());
        }
        if cfg
            .reuse
            .is_some_and(|r| !((1..=moe.top_k).contains(&r.reduced_k) && r.important > 0.0 && r.important <= 1.0))
        {
            return Err(format!(
                "prompt-wise reuse needs a share of important tokens in (0, 1] and a reduced k in 1..={}",
                moe.top_k
            ));
        }
        if !(cfg.channel_budget.is_finite() && cfg.channel_budget >= 0.0) {
            return Err(format!("channel budget {} is not a non-negative number", cfg.channel_budget));
        }
        let experts = (0..c.layers).map(|l| (0..moe.experts).map(|e| expert_weights(ckpt, l, e)).collect()).collect();
        let means = (0..c.layers)
            .map(|l| {
                let name = format!("blk.{l}.ffn_exp_mean.weight");
                ckpt.graph.weights.iter().position(|w| w.tensor == name).map(|i| &ckpt.weights[i])
            })
            .collect();
        Ok(PolicyExec {
            cfg,
            moe,
            hidden: c.hidden,
            experts,
            means,
            stats,
            tree: Vec::new(),
            prefill: false,
            counts: Counts::default(),
            record: None,
        })
    }

    fn expert_bytes(&self, channels: usize) -> u64 {
        channels as u64 * a8w4_channel_bytes(self.hidden)
    }

    /// Tokens' path probabilities and depths in feed order (a prefill chain: 1 and 0).
    fn token(&self, b: usize) -> (f32, usize) {
        self.tree.get(b).map_or((1.0, 0), |n| (n.p, n.depth))
    }

    /// The graph's routing; counts the union of the chosen experts.
    fn union(&mut self, logits: &[&[f32]]) -> Mixing {
        let routes: Vec<Vec<f32>> = logits.iter().map(|l| route(l, self.moe.top_k, self.moe.gating)).collect();
        let used: Vec<usize> = (0..self.moe.experts).filter(|&e| routes.iter().any(|r| r[e] != 0.0)).collect();
        self.load(&routes, whole(&used), 0, false);
        Mixing::Graph
    }

    /// Counts a block's loads (the A8W4 bytes of their channels, the predictor's apart) and
    /// records them with the tokens' routing where asked.
    fn load(&mut self, routes: &[Vec<f32>], loads: Vec<ExpertLoad>, predictor: u64, calibrated: bool) {
        let channels: usize = loads.iter().map(|l| l.channels.count(self.moe.expert_ffn)).sum();
        let (experts, bytes) = (loads.len(), self.expert_bytes(channels));
        if let Some(pass) = self.record.as_mut().and_then(|passes| passes.last_mut()) {
            let routing = routes.iter().map(|r| Routing::from_weights(r)).collect();
            pass.push(BlockTrace { routing, loads, calibrated });
        }
        let c = &mut self.counts;
        if self.prefill {
            c.prefill_experts_loaded += experts as u64;
            c.prefill_expert_bytes += bytes;
            c.prefill_block_passes += 1;
        } else {
            c.experts_loaded += experts as u64;
            c.expert_bytes += bytes;
            c.predictor_bytes += predictor;
            c.block_steps += 1;
        }
    }

    /// MoE-Spec style: the experts with the most routing mass, each token's top k among them.
    fn budget(&mut self, logits: &[&[f32]]) -> Mixing {
        let (n, k) = (self.moe.experts, self.moe.top_k);
        let mut mass = vec![0f64; n];
        let mut chosen_by_any = vec![false; n];
        for (b, l) in logits.iter().enumerate() {
            let share = shares(l, self.moe.gating);
            let chosen = route(l, k, self.moe.gating);
            for e in (0..n).filter(|&e| chosen[e] != 0.0) {
                chosen_by_any[e] = true;
                mass[e] += self.token(b).0 as f64 * share[e];
            }
        }
        let mut order: Vec<usize> = (0..n).filter(|&e| chosen_by_any[e]).collect();
        order.sort_by(|&a, &b| mass[b].total_cmp(&mass[a]));
        order.truncate(self.cfg.expert_budget);
        order.sort_unstable();
        let routes: Vec<Vec<f32>> = logits.iter().map(|l| self.route_within(l, &order, k)).collect();
        self.load(&routes, whole(&order), 0, false);
        Mixing::Routes(routes)
    }

    /// A token's top `k` among the experts `set` (ascending), weighted by the model's gating
    /// over them.
    fn route_within(&self, logits: &[f32], set: &[usize], k: usize) -> Vec<f32> {
        let sub: Vec<f32> = set.iter().map(|&e| logits[e]).collect();
        let w = route(&sub, k.min(set.len()), self.moe.gating);
        let mut full = vec![0f32; logits.len()];
        set.iter().zip(w).for_each(|(&e, w)| full[e] = w);
        full
    }

    /// Prompt-wise expert reuse over a prefill pass's tokens.
    fn reuse(&mut self, logits: &[&[f32]], reuse: Reuse) -> Mixing {
        let (n, k) = (self.moe.experts, self.moe.top_k);
        let tokens = logits.len();
        let keep = ((reuse.important * tokens as f64).ceil() as usize).clamp(1, tokens.max(1));
        let routes: Vec<Vec<f32>> = logits.iter().map(|l| route(l, k, self.moe.gating)).collect();
        let important: Vec<usize> = match reuse.scorer {
            Scorer::RouterConfidence => {
                let score: Vec<f32> = logits
                    .iter()
                    .zip(&routes)
                    .map(|(l, r)| {
                        let p = shares(l, self.moe.gating);
                        (0..n).filter(|&e| r[e] != 0.0).map(|e| p[e] as f32).sum()
                    })
                    .collect();
                let mut order: Vec<usize> = (0..tokens).collect();
                order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
                order.truncate(keep);
                order
            }
            Scorer::Spaced => (0..keep).map(|i| i * tokens / keep).collect(),
        };
        let mut shared: Vec<usize> = (0..n).filter(|&e| important.iter().any(|&t| routes[t][e] != 0.0)).collect();
        shared.sort_unstable();
        let routes: Vec<Vec<f32>> = (0..tokens)
            .map(|t| {
                if important.contains(&t) {
                    routes[t].clone()
                } else {
                    self.route_within(logits[t], &shared, reuse.reduced_k)
                }
            })
            .collect();
        self.load(&routes, whole(&shared), 0, false);
        Mixing::Routes(routes)
    }

    /// Depth-aware coalescing (with calibration when `calibrated`).
    fn coalesce(&mut self, layer: usize, x: &[&[f32]], logits: &[&[f32]], calibrated: bool) -> Mixing {
        let (n, k, f) = (self.moe.experts, self.moe.top_k, self.moe.expert_ffn);
        let stats = &self.stats.expect("checked in new").blocks[layer];
        let routes: Vec<Vec<f32>> = logits.iter().map(|l| route(l, k, self.moe.gating)).collect();
        let probs: Vec<Vec<f64>> = logits.iter().map(|l| shares(l, self.moe.gating)).collect();
        let projected: Vec<Vec<f32>> = x.iter().map(|x| crate::forward::matvec(&stats.basis, x)).collect();
        let budget = (self.cfg.channel_budget * (k * f) as f64).round() as usize;
        let mut loaded = vec![vec![false; f]; n];
        let mut predicted = vec![false; n];
        let depths = (0..x.len()).map(|b| self.token(b).1).max().unwrap_or(0);
        for depth in 0..=depths {
            let group: Vec<usize> = (0..x.len()).filter(|&b| self.token(b).1 == depth).collect();
            let mut score = vec![vec![0f64; f]; n];
            let mut routed = vec![false; n];
            for &b in &group {
                for e in (0..n).filter(|&e| routes[b][e] != 0.0) {
                    predicted[e] = true;
                    routed[e] = true;
                    let g = crate::forward::matvec(&stats.gate_lr[e], &projected[b]);
                    let weight = self.token(b).0 as f64 * probs[b][e];
                    for j in 0..f {
                        score[e][j] += weight * (silu(g[j]).abs() * stats.mean_abs_up[e][j]) as f64;
                    }
                }
            }
            let mut candidates: Vec<(usize, usize)> =
                (0..n).filter(|&e| routed[e]).flat_map(|e| (0..f).map(move |j| (e, j))).collect();
            candidates.sort_by(|a, b| score[b.0][b.1].total_cmp(&score[a.0][a.1]));
            for &(e, j) in candidates.iter().take(budget) {
                loaded[e][j] = true;
            }
        }
        let loads: Vec<ExpertLoad> = (0..n)
            .filter_map(|e| {
                let only: Vec<u32> = (0..f).filter(|&j| loaded[e][j]).map(|j| j as u32).collect();
                let channels = match only.len() {
                    0 => return None,
                    c if c == f => Channels::All,
                    _ => Channels::Only(only),
                };
                Some(ExpertLoad { expert: ExpertId(e as u32), channels })
            })
            .collect();
        let rank = stats.basis.rows;
        let predictor = rank as u64 * a8w4_bytes(self.hidden)
            + predicted.iter().filter(|&&p| p).count() as u64 * f as u64 * a8w4_bytes(rank);
        self.load(&routes, loads, predictor, calibrated);
        let (weights, mean) = (&self.experts[layer], self.means[layer]);
        let outs: Vec<(Vec<f32>, Vec<f32>)> = (0..x.len())
            .into_par_iter()
            .map(|b| {
                let mut y = vec![0f32; x[b].len()];
                for e in 0..n {
                    if routes[b][e] != 0.0 {
                        let ye = partial_expert(&weights[e], &loaded[e], x[b], calibrated.then_some((stats, e)));
                        y.iter_mut().zip(ye).for_each(|(y, v)| *y += routes[b][e] * v);
                    } else if let Some(mean) = mean {
                        y.iter_mut().zip(mean.row(e)).for_each(|(y, v)| *y += v);
                    }
                }
                (routes[b].clone(), y)
            })
            .collect();
        Mixing::Outputs(outs)
    }
}

/// Whole experts, as loads.
fn whole(experts: &[usize]) -> Vec<ExpertLoad> {
    experts.iter().map(|&e| ExpertLoad { expert: ExpertId(e as u32), channels: Channels::All }).collect()
}

/// Each expert's share of a token's routing, for ranking (f64, never underflowing to 0 for a
/// chosen expert): the softmax for softmax gatings; for [`Gating::UnitTopK`] (a router fitted to
/// each expert's contribution) the positive part of the logits over their sum (uniform if none).
fn shares(logits: &[f32], gating: Gating) -> Vec<f64> {
    match gating {
        Gating::UnitTopK => {
            let total: f64 = logits.iter().map(|&l| (l as f64).max(0.0)).sum();
            if total > 0.0 {
                logits.iter().map(|&l| (l as f64).max(0.0) / total).collect()
            } else {
                vec![1.0 / logits.len().max(1) as f64; logits.len()]
            }
        }
        _ => {
            let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
            let e: Vec<f64> = logits.iter().map(|&l| (l as f64 - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            e.iter().map(|v| v / sum).collect()
        }
    }
}

/// An expert's output from its `used` channels, plus the mean compensation of the others.
fn partial_expert(w: &Expert, used: &[bool], x: &[f32], calibration: Option<(&BlockStats, usize)>) -> Vec<f32> {
    let mut y = vec![0f32; x.len()];
    let (mut a_l1, mut nu_l1) = (0f32, 0f32);
    let mut mean_used = vec![0f32; x.len()];
    for j in (0..used.len()).filter(|&j| used[j]) {
        let a = silu(dot(w.gate.row(j), x)) * dot(w.up.row(j), x);
        y.iter_mut().zip(w.down_t.row(j)).for_each(|(y, d)| *y += a * d);
        if let Some((s, e)) = calibration {
            let mu = s.mean[e][j];
            a_l1 += a.abs();
            nu_l1 += s.mean_abs[e][j];
            mean_used.iter_mut().zip(w.down_t.row(j)).for_each(|(m, d)| *m += mu * d);
        }
    }
    if let Some((s, e)) = calibration {
        let kappa = if nu_l1 > 0.0 { a_l1 / nu_l1 } else { 1.0 };
        for ((y, c), m) in y.iter_mut().zip(&s.mean_out[e]).zip(&mean_used) {
            *y += kappa * (c - m);
        }
    }
    y
}

impl MixtureExec for PolicyExec<'_> {
    fn mixture(&mut self, layer: LayerId, x: &[&[f32]], logits: &[&[f32]]) -> Mixing {
        if self.prefill {
            return match self.cfg.reuse {
                Some(r) => self.reuse(logits, r),
                None => self.union(logits),
            };
        }
        match self.cfg.policy {
            MoePolicy::NoSd | MoePolicy::Naive => self.union(logits),
            MoePolicy::Budget => self.budget(logits),
            MoePolicy::Coalesced => self.coalesce(layer.0 as usize, x, logits, false),
            MoePolicy::CoalescedCalibrated => self.coalesce(layer.0 as usize, x, logits, true),
        }
    }
}

impl StepPolicy for PolicyExec<'_> {
    fn begin(&mut self, pass: Pass<'_>) {
        match pass {
            Pass::Prefill(_) => {
                self.prefill = true;
                self.tree.clear();
                self.record.iter_mut().for_each(|passes| passes.push(Vec::new()));
            }
            Pass::Verify(tree) => {
                self.prefill = false;
                self.tree = tree.to_vec();
                self.counts.steps += 1;
                self.record.iter_mut().for_each(|passes| passes.push(Vec::new()));
            }
        }
    }
}

#[cfg(test)]
#[path = "coalesce_tests.rs"]
mod tests;
