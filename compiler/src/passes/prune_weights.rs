//! Unstructured weight pruning of every linear layer of a block to a target sparsity.
//!
//! Contract: after [`prune_matrix`] a layer of n weights has exactly `round(x * n)` zeros (or
//! more, if more were zero already); the weights zeroed are those of the smallest score, ties
//! broken by position (earlier first), so the result is deterministic. Kept weights are not
//! changed. Two scores:
//! - [`PruneMethod::Magnitude`]: `|w|`, ranked over the whole layer;
//! - [`PruneMethod::Wanda`] (Sun et al. 2023): `|w_ij| * ||X_j||_2`, with the input norms
//!   from real calibration activations ([`crate::calibrate`]), ranked within each output row
//!   (Wanda's comparison group); the layer's count is shared out so rows differ by at most one
//!   zero and the layer total is exact.
//!
//! The LM head (the tied embedding table in SmolLM2) is not pruned, as in the Wanda and TEAL
//! papers: pruning it would also prune the embedding lookup.

use crate::calibrate::Capture;
use crate::checkpoint::{Checkpoint, Matrix};
use lacuna_spec::graph::{LayerId, LinearKind, NodeId, Op};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// How weights are scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruneMethod {
    /// Smallest `|w|` over the layer.
    Magnitude,
    /// Smallest `|w| * ||x||` within each output row.
    Wanda,
}

impl std::str::FromStr for PruneMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "magnitude" => Ok(PruneMethod::Magnitude),
            "wanda" => Ok(PruneMethod::Wanda),
            _ => Err(format!("unknown pruning method {s:?} (magnitude or wanda)")),
        }
    }
}

/// What pruning did to one layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayerPrune {
    /// The linear node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// Weights in the layer.
    pub weights: u64,
    /// Zeros afterwards.
    pub zeros: u64,
}

/// Why pruning could not run.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PruneError {
    /// The target is not a fraction.
    #[error("weight sparsity must lie in [0, 1), got {0}")]
    BadTarget(f64),
    /// Wanda needs calibration data for this layer's input.
    #[error("Wanda needs calibration activations for the input of {0}")]
    NoCalibration(String),
}

/// Zeros the `target` lowest-scoring entries of `scores` (ties: earlier first); returns the
/// indices to zero.
fn lowest(scores: &[f32], target: usize) -> Vec<usize> {
    if target == 0 {
        return Vec::new();
    }
    let mut order: Vec<u32> = (0..scores.len() as u32).collect();
    let key = |&i: &u32| (scores[i as usize], i);
    let cmp = |a: &u32, b: &u32| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal);
    if target < order.len() {
        order.select_nth_unstable_by(target - 1, cmp);
    }
    order[..target.min(order.len())].iter().map(|&i| i as usize).collect()
}

/// Prunes one matrix to `fraction`; `norms` (one per column) are required for Wanda.
/// Returns the zeros afterwards.
pub fn prune_matrix(w: &mut Matrix, method: PruneMethod, fraction: f64, norms: Option<&[f32]>) -> u64 {
    let n = w.rows * w.cols;
    let target = ((fraction * n as f64).round() as usize).min(n);
    match (method, norms) {
        (PruneMethod::Wanda, Some(norms)) => {
            let (base, extra) = (target / w.rows, target % w.rows);
            let cols = w.cols;
            w.data.par_chunks_mut(cols).enumerate().for_each(|(r, row)| {
                let quota = base + (r < extra) as usize;
                let scores: Vec<f32> = row.iter().zip(norms).map(|(v, s)| v.abs() * s).collect();
                for i in lowest(&scores, quota) {
                    row[i] = 0.0;
                }
            });
        }
        _ => {
            let scores: Vec<f32> = w.data.iter().map(|v| v.abs()).collect();
            for i in lowest(&scores, target) {
                w.data[i] = 0.0;
            }
        }
    }
    w.data.iter().filter(|&&v| v == 0.0).count() as u64
}

/// Prunes every linear layer of every block of `ckpt` (not the LM head) to `fraction`.
/// Wanda reads the input norms from `calibration`.
pub fn prune_model(
    ckpt: &mut Checkpoint,
    method: PruneMethod,
    fraction: f64,
    calibration: Option<&Capture>,
) -> Result<Vec<LayerPrune>, PruneError> {
    if !(0.0..1.0).contains(&fraction) {
        return Err(PruneError::BadTarget(fraction));
    }
    prune_blocks(ckpt, method, &|_| fraction, calibration)
}

/// Prunes every linear layer of block `l` to `fraction(l)` (the LM head is not pruned).
pub fn prune_blocks(
    ckpt: &mut Checkpoint,
    method: PruneMethod,
    fraction: &dyn Fn(LayerId) -> f64,
    calibration: Option<&Capture>,
) -> Result<Vec<LayerPrune>, PruneError> {
    let mut out = Vec::new();
    let linears: Vec<_> = ckpt.graph.linears().filter(|l| l.2 != LinearKind::LmHead).collect();
    for (node, weight, _, layer) in linears {
        let f = layer.map_or(0.0, fraction);
        if !(0.0..1.0).contains(&f) {
            return Err(PruneError::BadTarget(f));
        }
        let n = ckpt.graph.node_at(node);
        let name = n.name.clone();
        let Op::Linear { input, .. } = n.op else { continue };
        let norms = match method {
            PruneMethod::Magnitude => None,
            PruneMethod::Wanda => Some(
                calibration
                    .and_then(|c| c.inputs.get(&input))
                    .map(|r| r.norms())
                    .ok_or_else(|| PruneError::NoCalibration(name.clone()))?,
            ),
        };
        let w = &mut ckpt.weights[weight.0 as usize];
        let zeros = prune_matrix(w, method, f, norms.as_deref());
        out.push(LayerPrune { node, name, weights: (w.rows * w.cols) as u64, zeros });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn matrix(rows: usize, cols: usize, data: Vec<f32>) -> Matrix {
        Matrix { rows, cols, data }
    }

    #[test]
    fn magnitude_pruning_zeros_the_smallest_and_breaks_ties_by_position() {
        let mut w = matrix(1, 5, vec![3.0, -1.0, 1.0, 2.0, 1.0]);
        assert_eq!(prune_matrix(&mut w, PruneMethod::Magnitude, 0.4, None), 2);
        assert_eq!(w.data, [3.0, 0.0, 0.0, 2.0, 1.0]);
    }

    #[test]
    fn wanda_weighs_each_weight_by_its_input_norm_within_its_row() {
        // Column 0 has tiny weights but a huge input norm: Wanda keeps it, magnitude would not.
        let mut w = matrix(2, 3, vec![0.1, 1.0, 2.0, 0.1, 3.0, 1.0]);
        let norms = [100.0, 1.0, 1.0];
        assert_eq!(prune_matrix(&mut w, PruneMethod::Wanda, 0.5, Some(&norms)), 3);
        // 3 zeros over 2 rows: the first row gives 2, the second 1.
        assert_eq!(w.data, [0.1, 0.0, 0.0, 0.1, 3.0, 0.0]);
    }

    proptest! {
        #[test]
        fn pruning_reaches_its_target_exactly(
            rows in 1usize..20, cols in 1usize..40, fraction in 0.0f64..0.99, wanda: bool, seed: u64,
        ) {
            use rand::{Rng, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let data: Vec<f32> = (0..rows * cols).map(|_| rng.random_range(0.01f32..1.0) * if rng.random() { 1.0 } else { -1.0 }).collect();
            let norms: Vec<f32> = (0..cols).map(|_| rng.random_range(0.1f32..10.0)).collect();
            let mut w = matrix(rows, cols, data.clone());
            let method = if wanda { PruneMethod::Wanda } else { PruneMethod::Magnitude };
            let zeros = prune_matrix(&mut w, method, fraction, Some(&norms));
            prop_assert_eq!(zeros as usize, (fraction * (rows * cols) as f64).round() as usize);
            // Kept weights are unchanged.
            for (a, b) in w.data.iter().zip(&data) {
                prop_assert!(*a == 0.0 || a == b);
            }
        }
    }
}
