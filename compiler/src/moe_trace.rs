//! A mixture's passes under each expert policy, recorded as the spec's MoE trace
//! ([`lacuna_spec::moe_trace`]): what `lacuna compile MODEL --moe ExK --tree DxW -o DIR` writes
//! for the expert unit (issue 16).
//!
//! Each policy generates greedily from the prompt, as `lacuna eval --moe` measures it: the
//! prefill (every token's own top k, or prompt-wise reuse where asked), then verification steps
//! of draft trees, the accepted path chosen by the policy's own logits. The blocks' routing and
//! loads are those [`PolicyExec`] computed and counted, recorded as it ran; the trace is checked
//! by the reader's rules before it is returned.

use crate::checkpoint::Checkpoint;
use crate::coalesce::{MixtureStats, PolicyConfig, PolicyExec, Reuse};
use crate::forward::Dense;
use crate::speculate::{generate, Draft};
use crate::tokenizer::TokenId;
use lacuna_spec::moe_trace::{MoeTrace, PassKind, PassTrace, PolicyTrace, FORMAT, VERSION};
use lacuna_spec::speculation::{MoePolicy, TreeShape};

/// What the traced generation runs.
#[derive(Clone, Debug)]
pub struct TraceOptions {
    /// The draft trees' shape (`no-sd` runs one token a step whatever it is).
    pub shape: TreeShape,
    /// The self-draft.
    pub draft: Draft,
    /// Tokens generated after the prompt.
    pub tokens: usize,
    /// `budget`: experts per block and step.
    pub expert_budget: usize,
    /// `coalesced*`: channels a depth selects, in units of one token's need.
    pub channel_budget: f64,
    /// Prefill by prompt-wise reuse instead of every token's own experts.
    pub reuse: Option<Reuse>,
}

/// Runs every policy from `prompt` (its text `prompt_text`) and records its passes; `model`
/// names the mixture as reports label it.
pub fn trace_policies(
    mix: &Checkpoint,
    stats: &MixtureStats,
    policies: &[MoePolicy],
    prompt: &[TokenId],
    prompt_text: &str,
    opts: &TraceOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<MoeTrace, String> {
    let c = &mix.graph.config;
    let moe = c.moe.ok_or("the model is not a mixture")?;
    let mut traced = Vec::with_capacity(policies.len());
    for &policy in policies {
        progress(&format!("{policy}: generating {} tokens", opts.tokens));
        let cfg = PolicyConfig {
            policy,
            expert_budget: opts.expert_budget,
            channel_budget: opts.channel_budget,
            reuse: opts.reuse,
        };
        let shape = if policy.speculates() { opts.shape } else { TreeShape { depth: 0, width: 1 } };
        let mut exec = PolicyExec::new(mix, cfg, Some(stats))?;
        exec.record = Some(Vec::new());
        let (_, steps) = generate(mix, prompt, opts.tokens, shape, &opts.draft, &mut Dense, Some(&mut exec))
            .map_err(|e| e.to_string())?;
        let recorded = exec.record.take().unwrap_or_default();
        if recorded.len() != steps.len() + 1 {
            return Err(format!(
                "{policy}: {} passes recorded for a prefill and {} steps",
                recorded.len(),
                steps.len()
            ));
        }
        let mut blocks = recorded.into_iter();
        let n = prompt.len() as u32;
        let mut passes = vec![PassTrace {
            kind: PassKind::Prefill,
            tokens: prompt.iter().map(|t| t.0).collect(),
            parents: (0..n).map(|i| i.checked_sub(1)).collect(),
            accepted: (0..n).collect(),
            blocks: blocks.next().unwrap_or_default(),
        }];
        for (step, blocks) in steps.iter().zip(blocks) {
            passes.push(PassTrace {
                kind: PassKind::Verify,
                tokens: step.tree.iter().map(|node| node.token.0).collect(),
                parents: step.tree.iter().map(|node| node.parent.map(|p| p as u32)).collect(),
                accepted: step.path.iter().map(|&i| i as u32).collect(),
                blocks,
            });
        }
        traced.push(PolicyTrace { policy, passes });
    }
    let trace = MoeTrace {
        format: FORMAT.into(),
        version: VERSION,
        model: mix.name.clone(),
        layers: c.layers,
        hidden: c.hidden,
        moe,
        tree: opts.shape,
        draft: opts.draft.to_string(),
        prompt: prompt_text.into(),
        policies: traced,
    };
    // What is written obeys what is read.
    trace.check().map_err(|e| format!("the recorded trace breaks its own rules: {e}"))?;
    Ok(trace)
}

/// One policy's figures from its trace: generated tokens, verification steps, expert bytes of
/// the steps (A8W4) and of the prefill.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceSummary {
    /// Tokens the steps committed.
    pub generated: usize,
    /// Verification steps.
    pub steps: usize,
    /// Expert bytes the steps loaded.
    pub step_bytes: u64,
    /// Expert bytes the prefill loaded.
    pub prefill_bytes: u64,
}

/// Sums a policy's passes.
pub fn summarize(trace: &MoeTrace, policy: &PolicyTrace) -> TraceSummary {
    let mut s = TraceSummary::default();
    for pass in &policy.passes {
        let bytes = pass.blocks.iter().fold(0u64, |sum, b| sum.saturating_add(trace.block_bytes(b)));
        match pass.kind {
            PassKind::Prefill => s.prefill_bytes = s.prefill_bytes.saturating_add(bytes),
            PassKind::Verify => {
                s.generated += pass.accepted.len();
                s.steps += 1;
                s.step_bytes = s.step_bytes.saturating_add(bytes);
            }
        }
    }
    s
}
