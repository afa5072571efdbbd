//! Calibration: what the inputs of the linear layers look like on real text.
//!
//! [`Capture`] is a [`LinearExec`] that computes the dense product and records, per input vector
//! (q, k and v read one input; so do gate and up), the sum of squares of each channel (Wanda's
//! input norms) and a histogram of the FP16 magnitudes of its values (the activation
//! thresholds: the hardware compares the FP16 activation with an FP16 threshold, so the
//! histogram over the 2^15 magnitudes is exact, not a sample).

use crate::checkpoint::{Checkpoint, Matrix};
use crate::forward::{LinearExec, LinearSite};
use crate::tokenizer::TokenId;
use half::f16;
use lacuna_spec::graph::NodeId;
use std::collections::BTreeMap;

/// What one input vector looked like over the calibration tokens.
#[derive(Clone, Debug)]
pub struct InputRecord {
    /// Sum over tokens of `x_j^2`, per channel j.
    pub sum_sq: Vec<f64>,
    /// Count of values per FP16 magnitude (`bits & 0x7fff` of the rounded value).
    pub magnitudes: Vec<u64>,
    /// Tokens recorded.
    pub tokens: usize,
}

impl InputRecord {
    fn new(len: usize) -> Self {
        InputRecord { sum_sq: vec![0.0; len], magnitudes: vec![0; 1 << 15], tokens: 0 }
    }

    /// Values recorded.
    pub fn values(&self) -> u64 {
        self.magnitudes.iter().sum()
    }

    /// Wanda's input norm of each channel: `sqrt(sum_sq)`.
    pub fn norms(&self) -> Vec<f32> {
        self.sum_sq.iter().map(|s| s.sqrt() as f32).collect()
    }
}

/// Records the inputs of every linear layer while computing it densely.
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// Per input node.
    pub inputs: BTreeMap<NodeId, InputRecord>,
    /// The (input, batch slot, position) recorded for the current input node, so an input
    /// that several layers read is recorded once per token.
    last: Vec<(NodeId, usize, usize)>,
    /// Set to false to compute without recording (a prompt's warm-up).
    pub recording: bool,
}

impl Capture {
    /// An empty capture, recording.
    pub fn new() -> Self {
        Capture { recording: true, ..Capture::default() }
    }
}

impl Capture {
    fn record(&mut self, site: LinearSite, seq: usize, x: &[f32]) {
        if !self.recording || self.last.contains(&(site.input, seq, site.position)) {
            return;
        }
        self.last.push((site.input, seq, site.position));
        let r = self.inputs.entry(site.input).or_insert_with(|| InputRecord::new(x.len()));
        for (s, &v) in r.sum_sq.iter_mut().zip(x) {
            *s += (v as f64) * (v as f64);
        }
        for &v in x {
            r.magnitudes[(f16::from_f32(v).to_bits() & 0x7fff) as usize] += 1;
        }
        r.tokens += 1;
    }
}

impl LinearExec for Capture {
    fn linear(&mut self, site: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32> {
        self.linear_batch(&[site], w, &[x]).pop().unwrap_or_default()
    }

    fn linear_batch(&mut self, sites: &[LinearSite], w: &Matrix, xs: &[&[f32]]) -> Vec<Vec<f32>> {
        // A new input node: forget the last one's (sequence, position) marks.
        if sites.first().is_some_and(|s| self.last.first().is_some_and(|l| l.0 != s.input)) {
            self.last.clear();
        }
        for (b, (site, x)) in sites.iter().zip(xs).enumerate() {
            self.record(*site, b, x);
        }
        crate::forward::matvec_batch(w, xs)
    }
}

/// Runs each text through the model (dense), up to 16 side by side, and records the linear
/// layers' inputs (the LM head's too when `head`: it costs the head's product at every
/// position); each text is its own sequence, truncated to `max_tokens`. Returns the
/// capture and the tokens seen. A forward error (a token outside the embedding table, a text
/// longer than the context) is returned, never a capture of fewer tokens than it claims.
pub fn capture(
    ckpt: &Checkpoint,
    texts: &[String],
    max_tokens: usize,
    head: bool,
) -> Result<(Capture, usize), crate::forward::ForwardError> {
    let mut cap = Capture::new();
    let lists: Vec<Vec<TokenId>> =
        texts.iter().map(|t| ckpt.tokenizer.encode(t).into_iter().take(max_tokens).collect()).collect();
    let tokens = lists.iter().map(Vec::len).sum();
    let mut nothing = |_: usize, _: usize, _: &[f32]| {};
    crate::forward::run_sequences(ckpt, &lists, 16, &mut cap, head.then_some(&mut nothing as &mut _))?;
    Ok((cap, tokens))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::test_models::random_checkpoint;
    use lacuna_spec::graph::LlamaConfig;

    #[test]
    fn a_forward_error_during_calibration_is_returned_not_dropped() {
        // Once: `let _ = run_sequences(...)`; a capture that failed on its first token was
        // reported as "calibration (32 tokens)".
        let ckpt = random_checkpoint(&LlamaConfig { context: 4, ..LlamaConfig::tiny() }, 1);
        let text = vec!["ab ab ab ab ab ab ab ab".to_string()];
        let e = capture(&ckpt, &text, 64, false).unwrap_err();
        assert!(e.to_string().contains("context of 4 tokens is full"), "{e}");
        let (cap, tokens) = capture(&ckpt, &text, 4, false).unwrap();
        assert_eq!(tokens, 4);
        assert!(cap.inputs.values().all(|r| r.tokens == 4));
    }
}
