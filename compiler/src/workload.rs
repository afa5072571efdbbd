//! The Celty paper's synthetic workloads: Gaussian weights pruned by magnitude to x %
//! (unstructured) and Gaussian activations zeroed below their x-th magnitude quantile.
//!
//! These are **synthetic**: every report that uses them must say so ([`PROVENANCE`]).
//! Generation is seeded and deterministic whatever the thread count: row block b of the matrix
//! draws from ChaCha8 stream b of the seed, the activations from their own stream.

use crate::prune::{prune_smallest, PruneResult};
use half::f16;
use lacuna_spec::{Activations, DenseMatrix};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use rayon::prelude::*;
use std::fmt;
use std::str::FromStr;

/// The label every output built on these workloads carries.
pub const PROVENANCE: &str =
    "synthetic: Gaussian N(0,1) weights and activations (as in the Celty paper), magnitude-pruned";

/// A weight shape M x K (rows = outputs, cols = inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// M.
    pub rows: usize,
    /// K.
    pub cols: usize,
}

/// The six shapes of the Celty evaluation: Llama-2-7B, Llama-2-13B and OPT-30B layers.
pub const PAPER_SHAPES: [Shape; 6] = [
    Shape { rows: 4096, cols: 4096 },
    Shape { rows: 4096, cols: 11008 },
    Shape { rows: 5120, cols: 5120 },
    Shape { rows: 5120, cols: 13824 },
    Shape { rows: 7168, cols: 7168 },
    Shape { rows: 7168, cols: 28672 },
];

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

/// The longest side a synthetic workload may have.
pub const MAX_SIDE: usize = 1 << 20;
/// The most weights a synthetic workload may have (2^28: a dense FP16 pair of this size and its
/// encodings take a few GiB, within a workstation's memory).
pub const MAX_ENTRIES: usize = 1 << 28;

impl FromStr for Shape {
    type Err = String;

    /// Parses `MxK`, e.g. `4096x11008`.
    fn from_str(s: &str) -> Result<Shape, String> {
        let err = || format!("shape `{s}` must be ROWSxCOLS with both at least 1, e.g. 4096x11008");
        let (m, k) = s.split_once(['x', 'X']).ok_or_else(err)?;
        let rows: usize = m.trim().parse().map_err(|_| err())?;
        let cols: usize = k.trim().parse().map_err(|_| err())?;
        if rows == 0 || cols == 0 || rows > MAX_SIDE || cols > MAX_SIDE {
            return Err(format!("shape `{s}`: each side must be 1 to {MAX_SIDE}, e.g. 4096x11008"));
        }
        if rows * cols > MAX_ENTRIES {
            return Err(format!(
                "shape `{s}` has {} weights; a synthetic workload holds at most {MAX_ENTRIES} (the paper's largest, 7168x28672, has 205,520,896)",
                rows * cols
            ));
        }
        Ok(Shape { rows, cols })
    }
}

const ROWS_PER_STREAM: usize = 64;
const ACTIVATION_STREAM: u64 = u64::MAX;

/// An M x K matrix of N(0, 1) samples rounded to FP16.
pub fn gaussian_matrix(shape: Shape, seed: u64) -> DenseMatrix {
    let mut data = vec![f16::ZERO; shape.rows * shape.cols];
    data.par_chunks_mut(ROWS_PER_STREAM * shape.cols).enumerate().for_each(|(block, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(block as u64);
        for v in chunk {
            let s: f32 = StandardNormal.sample(&mut rng);
            *v = f16::from_f32(s);
        }
    });
    DenseMatrix::new(shape.rows, shape.cols, data).expect("length matches the shape")
}

/// K samples of N(0, 1) rounded to FP16.
pub fn gaussian_vector(len: usize, seed: u64) -> Vec<f16> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(ACTIVATION_STREAM);
    (0..len).map(|_| f16::from_f32(StandardNormal.sample(&mut rng))).collect()
}

/// One synthetic spMspV job.
pub struct SyntheticWorkload {
    /// Its shape.
    pub shape: Shape,
    /// The seed it was drawn from.
    pub seed: u64,
    /// The pruned weights.
    pub weights: DenseMatrix,
    /// The sparsified activations.
    pub activations: Activations,
    /// What weight pruning reached.
    pub weight_pruning: PruneResult,
    /// What activation sparsification reached.
    pub act_pruning: PruneResult,
}

impl SyntheticWorkload {
    /// Draws the Gaussian pair for `shape` once; prune it per level with [`Self::at_sparsity`].
    pub fn dense_pair(shape: Shape, seed: u64) -> (DenseMatrix, Vec<f16>) {
        (gaussian_matrix(shape, seed), gaussian_vector(shape.cols, seed))
    }

    /// Prunes copies of a dense pair to the given weight and activation sparsity (fractions).
    pub fn at_sparsity(
        shape: Shape,
        seed: u64,
        dense: &(DenseMatrix, Vec<f16>),
        weight_sparsity: f64,
        act_sparsity: f64,
    ) -> SyntheticWorkload {
        let mut weights = dense.0.clone();
        let weight_pruning = prune_smallest(weights.data_mut(), weight_sparsity);
        let mut x = dense.1.clone();
        let act_pruning = prune_smallest(&mut x, act_sparsity);
        let activations = Activations::new(x).expect("Gaussian samples rounded to FP16 are finite");
        SyntheticWorkload { shape, seed, weights, activations, weight_pruning, act_pruning }
    }

    /// Its weights in RLC-CSC as `arch`'s core takes them: panels balanced to at most a tile
    /// (as the compiler's lowering cuts a real layer).
    pub fn encode_for(&self, arch: &lacuna_spec::Arch) -> Result<lacuna_spec::RlcMatrix, lacuna_spec::RlcError> {
        crate::encode_parallel(&self.weights, Some(arch.balanced_panel_rows(self.weights.rows())))
    }

    /// Draws and prunes in one step.
    pub fn new(shape: Shape, seed: u64, weight_sparsity: f64, act_sparsity: f64) -> SyntheticWorkload {
        let dense = Self::dense_pair(shape, seed);
        Self::at_sparsity(shape, seed, &dense, weight_sparsity, act_sparsity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_and_print() {
        let s: Shape = "4096x11008".parse().unwrap();
        assert_eq!(s, PAPER_SHAPES[1]);
        assert_eq!(s.to_string(), "4096x11008");
        assert!("4096".parse::<Shape>().is_err());
        assert!("0x5".parse::<Shape>().is_err());
        // Once: "memory allocation failed", exit 134.
        let e = "1048576x1048576".parse::<Shape>().unwrap_err();
        assert!(e.contains("at most 268435456"), "{e}");
        assert!("7168x28672".parse::<Shape>().is_ok());
    }

    #[test]
    fn workloads_are_deterministic_whatever_the_thread_count() {
        let shape = Shape { rows: 300, cols: 70 };
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let a = one.install(|| SyntheticWorkload::new(shape, 7, 0.5, 0.3));
        let b = SyntheticWorkload::new(shape, 7, 0.5, 0.3);
        assert_eq!(a.weights, b.weights);
        assert_eq!(a.activations, b.activations);
        let c = SyntheticWorkload::new(shape, 8, 0.5, 0.3);
        assert_ne!(a.weights, c.weights);
    }

    #[test]
    fn workloads_reach_the_asked_sparsity_exactly() {
        let shape = Shape { rows: 128, cols: 100 };
        for level in [0.3, 0.5, 0.7] {
            let w = SyntheticWorkload::new(shape, 1, level, level);
            assert_eq!(w.weights.nnz(), 12800 - (level * 12800.0).round() as usize);
            assert_eq!(
                w.activations.active_count(lacuna_spec::ActivationFilter::NONZERO),
                100 - (level * 100.0f64).round() as usize
            );
        }
    }
}
