//! The trace of a mixture's speculative decoding, pass by pass, for the expert unit (issue 16):
//! what `lacuna compile MODEL --moe ExK --tree DxW -o DIR` writes as `DIR/moe_trace.json`.
//!
//! Per policy ([`MoePolicy`]), per pass of the target (the prompt's prefill, then each
//! verification step): the tokens fed and their tree (each token's parent), the path accepted,
//! and per mixture block each token's routing (the experts it uses and their gate weights) and
//! the expert channels the block loads (whole experts, or under coalescing only some channels;
//! a channel is an expert's gate row, up row and down column, [`a8w4_channel_bytes`]).
//!
//! Contract: [`MoeTrace::read`] returns a trace only if the bytes are JSON of these types (no
//! unknown field) and every rule of [`MoeTrace::check`] holds, else one error naming the first
//! problem (policy, pass, block, token); it never panics, and its memory is bounded by the
//! input's length (every list is one the JSON spells out).

use crate::graph::MAX_DIMENSION;
use crate::moe::{ExpertId, MoeConfig, MAX_EXPERTS, MAX_EXPERT_FFNS};
use crate::speculation::{a8w4_channel_bytes, MoePolicy, TreeShape, MAX_TREE_DEPTH, MAX_TREE_WIDTH};
use serde::{Deserialize, Serialize};

/// The format name of the file.
pub const FORMAT: &str = "lacuna-moe-trace";
/// The version this code reads and writes.
pub const VERSION: u32 = 1;
/// The file's name in a program directory.
pub const FILE: &str = "moe_trace.json";

/// A mixture's passes under each policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoeTrace {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The model, e.g. "MoE derived from SmolLM2-135M-Instruct (MoEfication)".
    pub model: String,
    /// Mixture blocks (every block of the model is one).
    pub layers: usize,
    /// The hidden size (the length of an expert channel's rows).
    pub hidden: usize,
    /// The experts of each block.
    pub moe: MoeConfig,
    /// The draft trees' shape.
    pub tree: TreeShape,
    /// The self-draft's blocks (e.g. `0-9,20-29`).
    pub draft: String,
    /// The prompt's text.
    pub prompt: String,
    /// One per policy, each at most once.
    pub policies: Vec<PolicyTrace>,
}

/// Every pass of one policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyTrace {
    /// The policy.
    pub policy: MoePolicy,
    /// The prefill, then the verification steps.
    pub passes: Vec<PassTrace>,
}

/// What a pass of the target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PassKind {
    /// The prompt, fed as one chain.
    Prefill,
    /// A draft tree verified.
    Verify,
}

/// One pass: its tokens, their tree, what was accepted, and each block's experts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PassTrace {
    /// Prefill or verification.
    pub kind: PassKind,
    /// The tokens in the order fed (a tree's root first, every parent before its children).
    pub tokens: Vec<u32>,
    /// Each token's parent (an earlier index), none for the first; a prefill is a chain.
    pub parents: Vec<Option<u32>>,
    /// The accepted path, indices from the first token, each the parent of the next (a prefill
    /// accepts all its tokens).
    pub accepted: Vec<u32>,
    /// One per block, in order.
    pub blocks: Vec<BlockTrace>,
}

/// One block of one pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockTrace {
    /// Each token's experts, in the pass's token order.
    pub routing: Vec<Routing>,
    /// The experts whose channels the block loads, ascending.
    pub loads: Vec<ExpertLoad>,
    /// Whether the skipped channels' mean contribution is added (`coalesced-calibrated`).
    pub calibrated: bool,
}

/// The experts one token uses in one block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// Distinct experts, by decreasing weight.
    pub experts: Vec<ExpertId>,
    /// Their gate weights, finite and non-negative, in the same order.
    pub weights: Vec<f32>,
}

impl Routing {
    /// A token's routing from its weight per expert (zero: not chosen): the chosen experts by
    /// decreasing weight, ties to the lower index.
    pub fn from_weights(weights: &[f32]) -> Routing {
        let mut chosen: Vec<usize> = (0..weights.len()).filter(|&e| weights[e] != 0.0).collect();
        chosen.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
        Routing {
            experts: chosen.iter().map(|&e| ExpertId(e as u32)).collect(),
            weights: chosen.iter().map(|&e| weights[e]).collect(),
        }
    }
}

/// The channels of one expert a block loads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpertLoad {
    /// The expert.
    pub expert: ExpertId,
    /// Which of its channels.
    pub channels: Channels,
}

/// A set of an expert's channels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channels {
    /// The whole expert.
    All,
    /// These channels, ascending, at least one.
    Only(Vec<u32>),
}

impl Channels {
    /// How many channels, of an expert of `expert_ffn`.
    pub fn count(&self, expert_ffn: usize) -> usize {
        match self {
            Channels::All => expert_ffn,
            Channels::Only(c) => c.len(),
        }
    }
}

impl MoeTrace {
    /// Parses and checks a trace file's bytes.
    pub fn read(bytes: &[u8]) -> Result<MoeTrace, String> {
        let t: MoeTrace = serde_json::from_slice(bytes).map_err(|e| format!("not a lacuna MoE trace: {e}"))?;
        t.check()?;
        Ok(t)
    }

    /// The expert bytes a block of a pass loads (A8W4), of a checked trace (whose sizes keep it
    /// far from overflow).
    pub fn block_bytes(&self, block: &BlockTrace) -> u64 {
        let channels: usize = block.loads.iter().map(|l| l.channels.count(self.moe.expert_ffn)).sum();
        channels as u64 * a8w4_channel_bytes(self.hidden)
    }

    /// Every rule a trace obeys (each one the writer keeps): the header's sizes within the graph's
    /// limits; at least one policy, each once, its passes a prefill then verification steps (one
    /// token each for `no-sd`); a pass's parents earlier tokens, a prefill a chain, a step a tree
    /// within the shape (depth, and width at each depth); the accepted path a chain from the first
    /// token; one block trace per block, one routing per token, each of 1 to k distinct experts
    /// with finite, non-negative, non-increasing weights; loads of distinct experts in ascending
    /// order, each used by some token; outside a coalesced step exactly the experts used, whole; in
    /// one, whole or a proper part of their channels (ascending, within the expert), and a routed
    /// expert may get none; calibration exactly on the steps of `coalesced-calibrated`. Linear
    /// time in the input.
    pub fn check(&self) -> Result<(), String> {
        if self.format != FORMAT || self.version != VERSION {
            return Err(format!(
                "a {} trace of version {} (this build reads {FORMAT} version {VERSION})",
                self.format, self.version
            ));
        }
        let m = &self.moe;
        let sizes_fit = (1..=MAX_EXPERTS).contains(&m.experts)
            && (1..=m.experts).contains(&m.top_k)
            && (1..=MAX_DIMENSION).contains(&m.expert_ffn)
            && (1..=MAX_DIMENSION).contains(&self.hidden)
            && self.layers >= 1
            && self.layers.saturating_mul(m.experts) <= MAX_EXPERT_FFNS;
        if !sizes_fit {
            return Err(format!(
                "{} blocks of {}x{} experts of {} channels, hidden {}, exceed the graph's limits",
                self.layers, m.experts, m.top_k, m.expert_ffn, self.hidden
            ));
        }
        if self.tree.depth > MAX_TREE_DEPTH || !(1..=MAX_TREE_WIDTH).contains(&self.tree.width) {
            return Err(format!("tree shape {} is out of range", self.tree));
        }
        if self.policies.is_empty() {
            return Err("no policy traced".into());
        }
        for (i, p) in self.policies.iter().enumerate() {
            if self.policies[..i].iter().any(|q| q.policy == p.policy) {
                return Err(format!("policy {} traced twice", p.policy));
            }
            if p.passes.is_empty() {
                return Err(format!("{}: no pass (a prefill comes first)", p.policy));
            }
            for (s, pass) in p.passes.iter().enumerate() {
                let expected = if s == 0 { PassKind::Prefill } else { PassKind::Verify };
                let at = format!("{}, pass {s}", p.policy);
                if pass.kind != expected {
                    return Err(format!("{at}: a {:?} pass where a {expected:?} belongs", pass.kind));
                }
                self.check_pass(p.policy, pass).map_err(|e| format!("{at}: {e}"))?;
            }
        }
        Ok(())
    }

    fn check_pass(&self, policy: MoePolicy, pass: &PassTrace) -> Result<(), String> {
        let n = pass.tokens.len();
        let most = match (pass.kind, policy.speculates()) {
            (PassKind::Prefill, _) => MAX_DIMENSION,
            (PassKind::Verify, true) => self.tree.max_nodes(),
            (PassKind::Verify, false) => 1,
        };
        if n == 0 || n > most || pass.parents.len() != n {
            return Err(format!("{n} tokens and {} parents (1 to {most} tokens)", pass.parents.len()));
        }
        let mut depth = vec![0usize; n];
        for (i, parent) in pass.parents.iter().enumerate() {
            let ok = match (i, parent, pass.kind) {
                (0, None, _) => true,
                (_, Some(p), PassKind::Prefill) => *p as usize + 1 == i,
                (_, Some(p), PassKind::Verify) => (*p as usize) < i,
                _ => false,
            };
            if !ok {
                return Err(format!("token {i} has parent {parent:?}"));
            }
            if let Some(p) = parent {
                depth[i] = depth[*p as usize] + 1;
                if pass.kind == PassKind::Verify && depth[i] > self.tree.depth {
                    return Err(format!("token {i} lies deeper than the tree's {}", self.tree.depth));
                }
            }
        }
        if pass.kind == PassKind::Verify {
            let mut at_depth = vec![0usize; self.tree.depth + 1];
            for &d in &depth {
                at_depth[d] += 1;
                if d > 0 && at_depth[d] > self.tree.width {
                    return Err(format!("more than {} tokens at depth {d}", self.tree.width));
                }
            }
        }
        let chain = pass.accepted.first() == Some(&0)
            && pass.accepted.iter().all(|&a| (a as usize) < n)
            && pass.accepted.windows(2).all(|w| pass.parents[w[1] as usize] == Some(w[0]));
        if !chain || (pass.kind == PassKind::Prefill && pass.accepted.len() != n) {
            return Err(format!("accepted path {:?} is not a chain from the first token", pass.accepted));
        }
        if pass.blocks.len() != self.layers {
            return Err(format!("{} block traces for {} blocks", pass.blocks.len(), self.layers));
        }
        // Coalescing (the steps' only partial loads): a prefill loads every expert it uses.
        let coalesces =
            matches!(policy, MoePolicy::Coalesced | MoePolicy::CoalescedCalibrated) && pass.kind == PassKind::Verify;
        let calibrates = policy == MoePolicy::CoalescedCalibrated && pass.kind == PassKind::Verify;
        for (l, b) in pass.blocks.iter().enumerate() {
            self.check_block(b, n, coalesces, calibrates).map_err(|e| format!("block {l}: {e}"))?;
        }
        Ok(())
    }

    fn check_block(&self, b: &BlockTrace, tokens: usize, coalesces: bool, calibrates: bool) -> Result<(), String> {
        let (experts, k, ffn) = (self.moe.experts, self.moe.top_k, self.moe.expert_ffn);
        if b.routing.len() != tokens {
            return Err(format!("{} routings for {tokens} tokens", b.routing.len()));
        }
        if b.calibrated != calibrates {
            return Err(format!("calibrated {} where the policy says {calibrates}", b.calibrated));
        }
        // Linear in the input: lengths first, then one pass per token over a bitset of experts.
        let mut used = vec![false; experts];
        for (t, r) in b.routing.iter().enumerate() {
            let n = r.experts.len();
            if n == 0 || n > k || n != r.weights.len() {
                return Err(format!("token {t}: {n} experts, {} weights (1 to {k})", r.weights.len()));
            }
            let mut mine = Vec::with_capacity(n);
            for e in &r.experts {
                let e = e.0 as usize;
                if e >= experts || mine.contains(&e) {
                    return Err(format!("token {t}: expert {e} out of 0..{experts} or repeated"));
                }
                mine.push(e);
                used[e] = true;
            }
            let ordered = r.weights.windows(2).all(|w| w[0] >= w[1]);
            if !ordered || r.weights.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
                return Err(format!("token {t}: weights not finite, non-negative and non-increasing"));
            }
        }
        if !b.loads.windows(2).all(|w| w[0].expert < w[1].expert) {
            return Err("loads are not of distinct experts in ascending order".into());
        }
        for load in &b.loads {
            let e = load.expert.0 as usize;
            if e >= experts || !used[e] {
                return Err(format!("expert {e} loaded, which no token uses"));
            }
            if let Channels::Only(c) = &load.channels {
                // The writer says `all` for every channel; only coalescing loads parts.
                let ascending = c.windows(2).all(|w| w[0] < w[1]) && c.iter().all(|&j| (j as usize) < ffn);
                if !coalesces || c.is_empty() || c.len() >= ffn || !ascending {
                    return Err(format!(
                        "expert {e}: {} channels, not a proper ascending part of 0..{ffn} in a coalesced step",
                        c.len()
                    ));
                }
            }
        }
        let loaded = b.loads.iter().filter(|l| (l.expert.0 as usize) < experts).count();
        let needed = used.iter().filter(|&&u| u).count();
        // Outside a coalesced step, the block loads exactly the experts its tokens use (in one, a
        // routed expert may get no channel).
        if !coalesces && loaded != needed {
            let missing =
                (0..experts).find(|&e| used[e] && b.loads.binary_search_by_key(&(e as u32), |l| l.expert.0).is_err());
            return Err(format!("expert {} is used, but not loaded", missing.unwrap_or(0)));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "moe_trace_tests.rs"]
mod tests;
