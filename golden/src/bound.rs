//! The sparse result against the dense f64 reference, within a stated bound.
//!
//! The bound, per output row r: the engines add `n_r` exact products one by one in FP32, so
//! (Higham, eq. 4.4) `|y[r] - exact[r]| <= gamma(n_r - 1) * sum_k |w[r][k] x_k|` with
//! `gamma(m) = m 2^-24 / (1 - m 2^-24)`, where `n_r` counts the nonzero products of row r.
//! `exact` is computed in f64; its own error (at most `K * 2^-53` relative to the absolute sum)
//! is added to the bound so that the check cannot fail for a correct result.

use crate::dense::effective;
use half::f16;
use lacuna_spec::numerics::sum_error_bound;
use lacuna_spec::{ActivationFilter, DenseMatrix};

/// How a sparse result compares with the dense reference.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BoundReport {
    /// Rows compared.
    pub rows: usize,
    /// Largest `|y - exact|` over the rows.
    pub max_abs_error: f64,
    /// Largest `|y - exact| / bound` over the rows with a nonzero bound (<= 1 passes).
    pub max_bound_fraction: f64,
    /// Rows whose error exceeds their bound.
    pub violations: usize,
    /// The first violating row, if any.
    pub first_violation: Option<usize>,
}

impl BoundReport {
    /// True when every row is within its bound.
    pub fn passed(&self) -> bool {
        self.violations == 0
    }
}

/// Compares `y` (an FP32 sparse result) with `W x` computed in f64, row by row.
pub fn check_against_dense(w: &DenseMatrix, x: &[f16], filter: ActivationFilter, y: &[f32]) -> BoundReport {
    assert_eq!(y.len(), w.rows(), "result length must be M");
    let xe: Vec<f64> = x.iter().map(|&v| effective(v, filter).to_f64()).collect();
    let k_f64_error = w.cols() as f64 * f64::EPSILON;
    let mut rep = BoundReport { rows: w.rows(), ..BoundReport::default() };
    for (r, &yr) in y.iter().enumerate() {
        let (mut exact, mut abs_sum, mut n) = (0.0f64, 0.0f64, 0usize);
        for (wv, xv) in w.row(r).iter().zip(&xe) {
            let p = wv.to_f64() * xv;
            if p != 0.0 {
                exact += p;
                abs_sum += p.abs();
                n += 1;
            }
        }
        let bound = sum_error_bound(n, abs_sum) + k_f64_error * abs_sum;
        let err = (yr as f64 - exact).abs();
        rep.max_abs_error = rep.max_abs_error.max(err);
        if bound > 0.0 {
            rep.max_bound_fraction = rep.max_bound_fraction.max(err / bound);
        }
        if err > bound {
            rep.violations += 1;
            rep.first_violation.get_or_insert(r);
        }
    }
    rep
}
