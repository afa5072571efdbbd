//! `expert_job`: one job of the expert unit (a mixture block of one pass: a draft tree's tokens
//! or a chunk of a prompt) and the block's A8W4 experts it reads.
//!
//! Contract: [`ExpertJob::check`] accepts a job only if the unit can run it as stated: at most
//! `max_tokens` tokens of at most `max_hidden` finite values, each token's routing distinct
//! experts of the block with finite non-negative weights, loads ascending by expert with
//! channels within the expert, calibration only where the weights carry its statistics. The
//! golden (`lacuna_golden::expert`) and the model (`lacuna_model::expert_unit`) compute what
//! [`crate::a8w4`] states, on checked jobs only.

use crate::a8w4::{A8w4Error, ExpertChannel};
use crate::expert_unit::ExpertUnitParams;
use crate::graph::MAX_DIMENSION;
use crate::moe::{ExpertId, MAX_EXPERTS};
use crate::moe_trace::{Channels, ExpertLoad, Routing};
use half::f16;

/// One job: tokens, their routing, the channels loaded, whether calibration is applied.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertJob {
    /// Each token's input (the block's normalised hidden state), FP32.
    pub tokens: Vec<Vec<f32>>,
    /// Each token's experts and gate weights.
    pub routing: Vec<Routing>,
    /// The channels loaded, by expert, ascending.
    pub loads: Vec<ExpertLoad>,
    /// Whether the skipped channels' mean contribution is added (`coalesced-calibrated`).
    pub calibrated: bool,
}

/// Calibration statistics of one expert, as the unit reads them (FP16).
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertCalibration {
    /// `c = W_down mu`: the expert's mean output (hidden).
    pub mean_out: Vec<f16>,
    /// `mu_j`: each channel's mean inner activation (expert_ffn).
    pub mean: Vec<f16>,
    /// `nu_j`: each channel's mean magnitude (expert_ffn).
    pub mean_abs: Vec<f16>,
}

/// A block's experts in A8W4, with what calibration and the unrouted means need.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertBlock {
    /// The hidden size.
    pub hidden: usize,
    /// Each expert's channels (every expert has the same number).
    pub experts: Vec<Vec<ExpertChannel>>,
    /// Per expert, when the block has calibration statistics.
    pub calibration: Option<Vec<ExpertCalibration>>,
    /// Per expert, its mean output added for the tokens that do not choose it
    /// (`MoeConfig::unrouted_mean`, FP16, hidden each).
    pub unrouted_means: Option<Vec<Vec<f16>>>,
}

impl ExpertBlock {
    /// Quantizes a block from f32 experts: per expert its gate rows, up rows and down columns
    /// (`[expert][channel]`, each `hidden` long).
    pub fn quantize(
        hidden: usize,
        gate: &[Vec<Vec<f32>>],
        up: &[Vec<Vec<f32>>],
        down_columns: &[Vec<Vec<f32>>],
    ) -> Result<ExpertBlock, A8w4Error> {
        let mut experts = Vec::with_capacity(gate.len());
        for e in 0..gate.len() {
            let channels = (0..gate[e].len())
                .map(|j| ExpertChannel::quantize(&gate[e][j], &up[e][j], &down_columns[e][j]))
                .collect::<Result<Vec<_>, _>>()?;
            experts.push(channels);
        }
        Ok(ExpertBlock { hidden, experts, calibration: None, unrouted_means: None })
    }

    /// Channels of each expert.
    pub fn expert_ffn(&self) -> usize {
        self.experts.first().map_or(0, Vec::len)
    }
}

/// The largest token value a job may carry (FP16's largest finite value: the vector unit hands
/// the unit FP16-range values, and larger ones could overflow the f32 gate and up sums).
pub const MAX_TOKEN_VALUE: f32 = 65504.0;

/// The rules on routing and loads every job keeps, with or without its values: per token
/// distinct experts of the block, as many finite non-negative weights; loads ascending by expert,
/// each expert's channels all or a non-empty ascending list within the expert. `experts` and
/// `expert_ffn` within the mixture limits.
pub fn check_routing_and_loads(
    routing: &[Routing],
    loads: &[ExpertLoad],
    experts: usize,
    expert_ffn: usize,
) -> Result<(), String> {
    if experts == 0 || experts > MAX_EXPERTS || expert_ffn == 0 || expert_ffn > MAX_DIMENSION {
        return Err(format!(
            "{experts} experts of {expert_ffn} channels: a block has 1..={MAX_EXPERTS} experts of 1..={MAX_DIMENSION}"
        ));
    }
    for (t, r) in routing.iter().enumerate() {
        if r.experts.len() != r.weights.len() {
            return Err(format!("token {t}: {} experts but {} weights", r.experts.len(), r.weights.len()));
        }
        for (i, e) in r.experts.iter().enumerate() {
            if e.0 as usize >= experts || r.experts[..i].contains(e) {
                return Err(format!("token {t}: expert {} is out of range or repeated", e.0));
            }
        }
        if let Some(w) = r.weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(format!("token {t}: gate weight {w} is not finite and non-negative"));
        }
    }
    let mut last: Option<ExpertId> = None;
    for l in loads {
        if l.expert.0 as usize >= experts || last.is_some_and(|p| p >= l.expert) {
            return Err(format!("loads: expert {} is out of range or not ascending", l.expert.0));
        }
        last = Some(l.expert);
        if let Channels::Only(c) = &l.channels {
            if c.is_empty() || c.windows(2).any(|w| w[0] >= w[1]) || c.last().is_some_and(|&j| j as usize >= expert_ffn)
            {
                return Err(format!(
                    "loads: expert {}'s channels are not a non-empty ascending list within 0..{expert_ffn}",
                    l.expert.0
                ));
            }
        }
    }
    Ok(())
}

/// The loaded channels of one expert: ascending channel indices.
pub fn loaded_channels(load: &ExpertLoad, expert_ffn: usize) -> Vec<usize> {
    match &load.channels {
        Channels::All => (0..expert_ffn).collect(),
        Channels::Only(c) => c.iter().map(|&j| j as usize).collect(),
    }
}

impl ExpertJob {
    /// Why the unit cannot run this job on `block` under `params`, naming the first problem.
    pub fn check(&self, block: &ExpertBlock, params: &ExpertUnitParams) -> Result<(), String> {
        let (e_count, ffn) = (block.experts.len(), block.expert_ffn());
        if block.hidden == 0 || block.hidden > params.max_hidden as usize {
            return Err(format!("hidden size {} is not in 1..={}", block.hidden, params.max_hidden));
        }
        if let Some(e) = block.experts.iter().position(|x| {
            x.len() != ffn
                || x.iter()
                    .any(|c| c.gate.len() != block.hidden || c.up.len() != block.hidden || c.down.len() != block.hidden)
        }) {
            return Err(format!("expert {e} does not have {ffn} channels of {} values", block.hidden));
        }
        if self.tokens.is_empty() || self.tokens.len() > params.max_tokens as usize {
            return Err(format!("{} tokens: a job has 1..={}", self.tokens.len(), params.max_tokens));
        }
        if self.routing.len() != self.tokens.len() {
            return Err(format!("{} routings for {} tokens", self.routing.len(), self.tokens.len()));
        }
        for (t, x) in self.tokens.iter().enumerate() {
            if x.len() != block.hidden {
                return Err(format!("token {t} has {} values, the block's hidden size is {}", x.len(), block.hidden));
            }
            if let Some(i) = x.iter().position(|v| !(v.abs() <= MAX_TOKEN_VALUE)) {
                return Err(format!(
                    "token {t}'s value {i} ({}) is not finite or beyond FP16's range (|x| <= {MAX_TOKEN_VALUE})",
                    x[i]
                ));
            }
        }
        check_routing_and_loads(&self.routing, &self.loads, e_count, ffn)?;
        if self.calibrated && block.calibration.is_none() {
            return Err("a calibrated job needs the block's calibration statistics".into());
        }
        let finite = |v: &[f16]| v.iter().all(|x| x.is_finite());
        if let Some(cal) = &block.calibration {
            if cal.len() != e_count
                || cal
                    .iter()
                    .any(|c| c.mean_out.len() != block.hidden || c.mean.len() != ffn || c.mean_abs.len() != ffn)
            {
                return Err("calibration statistics do not match the block's experts".into());
            }
            if let Some(e) = cal.iter().position(|c| {
                !finite(&c.mean_out)
                    || !finite(&c.mean)
                    || c.mean_abs.iter().any(|v| !(v.is_finite() && v.to_f32() >= 0.0))
            }) {
                return Err(format!(
                    "expert {e}'s calibration statistics are not finite (or a mean magnitude is negative)"
                ));
            }
        }
        if let Some(m) = &block.unrouted_means {
            if m.len() != e_count || m.iter().any(|v| v.len() != block.hidden) {
                return Err("unrouted means do not match the block's experts".into());
            }
            if let Some(e) = m.iter().position(|v| !finite(v)) {
                return Err(format!("expert {e}'s unrouted mean is not finite"));
            }
        }
        Ok(())
    }

    /// The experts the job touches, ascending: those a token routes to or whose channels load.
    pub fn experts(&self) -> Vec<ExpertId> {
        let mut e: Vec<ExpertId> = self
            .routing
            .iter()
            .flat_map(|r| r.experts.iter().copied())
            .chain(self.loads.iter().map(|l| l.expert))
            .collect();
        e.sort();
        e.dedup();
        e
    }

    /// The tokens routed to expert `e`, ascending, with their gate weights for it.
    pub fn users_of(&self, e: ExpertId) -> Vec<(usize, f32)> {
        self.routing
            .iter()
            .enumerate()
            .filter_map(|(t, r)| r.experts.iter().position(|&x| x == e).map(|k| (t, r.weights[k])))
            .collect()
    }

    /// The loaded channels of expert `e` (none when it loads nothing).
    pub fn channels_of(&self, e: ExpertId, expert_ffn: usize) -> Vec<usize> {
        self.loads.iter().find(|l| l.expert == e).map_or(Vec::new(), |l| loaded_channels(l, expert_ffn))
    }
}
