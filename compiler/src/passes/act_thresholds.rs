//! Activation sparsity: one magnitude threshold per linear-layer input for a target sparsity
//! (TEAL, Liu et al. 2024: training-free, magnitude-based), calibrated on real text.
//!
//! Contract: [`calibrate`] picks, for each input vector of every block (the q/k/v input, the
//! attention output, the gate/up input, the SwiGLU output), the FP16 threshold whose share of
//! calibration values below it is closest to the target; the hardware skips an activation iff
//! its FP16 magnitude is below the threshold (`ActivationFilter`), so the threshold is the
//! job's own field. The same target applies to every input (TEAL's uniform setting; its greedy
//! per-layer allocation is `crate::passes::allocate`). [`calibrate`] leaves the LM head's input
//! unthresholded; the sensitivity allocation thresholds it where its measured cost earns it.
//! [`Sparsify`] applies the thresholds in a forward pass and counts what it dropped, which is
//! how the sparsity reached on held-out text is measured.

use crate::calibrate::Capture;
use crate::checkpoint::{Checkpoint, Matrix};
use crate::forward::{LinearExec, LinearSite};
use half::f16;
use lacuna_spec::graph::{LinearKind, NodeId, Op};
use lacuna_spec::ActivationFilter;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The threshold of each linear layer (layers that read one input share its threshold).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// The target sparsity the thresholds were calibrated for.
    pub target: f64,
    /// Per linear node: the FP16 threshold (its bits) and the share of calibration values below it.
    pub layers: BTreeMap<NodeId, LayerThreshold>,
}

/// One layer's threshold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerThreshold {
    /// The FP16 threshold, as its bits.
    pub threshold_bits: u16,
    /// Share of the calibration values it drops.
    pub calibrated_sparsity: f64,
}

impl Thresholds {
    /// The filter of a linear node (keep every nonzero where it has no threshold).
    pub fn filter(&self, node: NodeId) -> ActivationFilter {
        match self.layers.get(&node) {
            Some(t) => ActivationFilter { threshold: f16::from_bits(t.threshold_bits) },
            None => ActivationFilter::NONZERO,
        }
    }
}

/// Why thresholds could not be calibrated.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ThresholdError {
    /// The target is not a fraction.
    #[error("activation sparsity must lie in [0, 1), got {0}")]
    BadTarget(f64),
    /// The capture has no values for this layer's input.
    #[error("no calibration activations for the input of {0}")]
    NoCalibration(String),
}

/// The FP16 magnitude (bits) whose share of values below it is closest to `target`, and that
/// share. Zeros are always below every threshold.
pub fn threshold_for(magnitudes: &[u64], target: f64) -> (u16, f64) {
    let n: u64 = magnitudes.iter().sum();
    if n == 0 || target <= 0.0 {
        return (0, 0.0);
    }
    let (mut below, mut best) = (0u64, (0u16, f64::INFINITY, 0.0));
    // Threshold t drops every magnitude < t; t = 0 drops nothing (zeros are never active
    // either, but ActivationFilter::NONZERO already skips them: count them as dropped).
    for t in 1..=0x7c00usize {
        below += magnitudes[t - 1];
        let share = below as f64 / n as f64;
        let err = (share - target).abs();
        if err < best.1 {
            best = (t as u16, err, share);
        }
        if share > target {
            break;
        }
    }
    (best.0, best.2)
}

/// Calibrates a threshold for every block linear's input from a capture of the (pruned) model.
pub fn calibrate(ckpt: &Checkpoint, capture: &Capture, target: f64) -> Result<Thresholds, ThresholdError> {
    if !(0.0..1.0).contains(&target) {
        return Err(ThresholdError::BadTarget(target));
    }
    let mut out = Thresholds { target, layers: BTreeMap::new() };
    for (node, _, kind, _) in ckpt.graph.linears() {
        if kind == LinearKind::LmHead {
            continue;
        }
        let n = ckpt.graph.node_at(node);
        let Op::Linear { input, .. } = n.op else { continue };
        let rec = capture.inputs.get(&input).ok_or_else(|| ThresholdError::NoCalibration(n.name.clone()))?;
        let (bits, share) = threshold_for(&rec.magnitudes, target);
        out.layers.insert(node, LayerThreshold { threshold_bits: bits, calibrated_sparsity: share });
    }
    Ok(out)
}

/// A forward-pass executor that drops the activations below each layer's threshold before the
/// f32 product, and counts them.
#[derive(Clone, Debug)]
pub struct Sparsify<'t> {
    /// The thresholds.
    pub thresholds: &'t Thresholds,
    /// Per linear node: (activations dropped, activations seen).
    pub counts: BTreeMap<NodeId, (u64, u64)>,
}

impl<'t> Sparsify<'t> {
    /// An executor with no counts yet.
    pub fn new(thresholds: &'t Thresholds) -> Self {
        Sparsify { thresholds, counts: BTreeMap::new() }
    }

    /// The share of activations dropped over every thresholded layer.
    pub fn sparsity(&self) -> f64 {
        let (d, n) = self
            .counts
            .iter()
            .filter(|(k, _)| self.thresholds.layers.contains_key(k))
            .fold((0, 0), |(a, b), (_, &(d, n))| (a + d, b + n));
        if n == 0 {
            0.0
        } else {
            d as f64 / n as f64
        }
    }
}

/// `x` with every activation the filter skips set to zero (the FP16 rounding decides, as in
/// the hardware); the kept values stay f32.
pub fn apply_filter(x: &[f32], filter: ActivationFilter) -> (Vec<f32>, u64) {
    let mut dropped = 0;
    let out = x
        .iter()
        .map(|&v| {
            if filter.is_active(f16::from_f32(v)) {
                v
            } else {
                dropped += 1;
                0.0
            }
        })
        .collect();
    (out, dropped)
}

impl LinearExec for Sparsify<'_> {
    fn linear(&mut self, site: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32> {
        self.linear_batch(&[site], w, &[x]).pop().unwrap_or_default()
    }

    fn linear_batch(&mut self, sites: &[LinearSite], w: &Matrix, xs: &[&[f32]]) -> Vec<Vec<f32>> {
        let kept: Vec<Vec<f32>> = sites
            .iter()
            .zip(xs)
            .map(|(site, x)| {
                let (kept, dropped) = apply_filter(x, self.thresholds.filter(site.node));
                let c = self.counts.entry(site.node).or_default();
                c.0 += dropped;
                c.1 += x.len() as u64;
                kept
            })
            .collect();
        let refs: Vec<&[f32]> = kept.iter().map(Vec::as_slice).collect();
        crate::forward::matvec_batch(w, &refs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_drops_the_share_closest_to_the_target() {
        let mut h = vec![0u64; 1 << 15];
        // 10 zeros, 40 values of magnitude bits 100, 50 of bits 200.
        h[0] = 10;
        h[100] = 40;
        h[200] = 50;
        assert_eq!(threshold_for(&h, 0.1), (1, 0.1));
        assert_eq!(threshold_for(&h, 0.45), (101, 0.5));
        assert_eq!(threshold_for(&h, 0.0), (0, 0.0));
    }
}
