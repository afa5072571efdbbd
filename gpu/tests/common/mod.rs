//! Random spMspV cases for the GPU tests: real-valued FP16 (so that the order of additions shows
//! in the bits), random shapes and panel heights (from one-word columns to columns many warp
//! steps long), 30 % zero activations and thresholds.

use half::f16;
use lacuna_spec::{ActivationFilter, DenseMatrix, RlcMatrix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A seeded case of at most `max_rows` x `max_cols`: the dense matrix, its RLC-CSC, x, the filter.
pub fn random_case(
    seed: u64,
    max_rows: usize,
    max_cols: usize,
) -> (DenseMatrix, RlcMatrix, Vec<f16>, ActivationFilter) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rows = rng.random_range(1..max_rows);
    let cols = rng.random_range(1..max_cols);
    let density = [0.01, 0.3, 0.7, 1.0][rng.random_range(0..4)];
    let mut d = DenseMatrix::zeros(rows, cols);
    for r in 0..rows {
        for k in 0..cols {
            if rng.random_bool(density) {
                d.set(r, k, f16::from_f32(rng.random_range(-2.0f32..2.0)));
            }
        }
    }
    let panel_rows = [8u32, 100, 2048, 4096][rng.random_range(0..4)];
    let m = RlcMatrix::encode(&d, Some(panel_rows)).unwrap();
    let x: Vec<f16> = (0..cols)
        .map(|_| if rng.random_bool(0.3) { f16::ZERO } else { f16::from_f32(rng.random_range(-3.0f32..3.0)) })
        .collect();
    let filter = ActivationFilter { threshold: f16::from_f32([0.0, 0.5, 1.5][rng.random_range(0..3)]) };
    (d, m, x, filter)
}
