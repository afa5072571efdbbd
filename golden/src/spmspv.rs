//! The column-order golden spMspV: `y = W x` over RLC-CSC, adding in the hardware's order.
//!
//! Contract: accumulators start at `+0.0`; columns are visited in increasing `k`; a column is
//! skipped iff its activation fails the [`ActivationFilter`]; within a column, entries are
//! visited in stored order (rows increasing) and every entry's exact FP32 product is added with
//! one FP32 round-to-nearest-even addition (`lacuna_spec::numerics`). Padding entries are added
//! like any other; their products are `±0.0` and cannot change an accumulator (see numerics).
//! This is deliberately the simplest code that states the rule; speed is [`crate::cpu_kernel`]'s
//! job.

use lacuna_spec::numerics::{accumulate, product};
use lacuna_spec::{ActivationFilter, Activations, RlcMatrix};

/// Why a job cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobError {
    /// x does not have K entries.
    #[error("the activation vector has {got} entries but the matrix has {cols} columns")]
    ActivationLength {
        /// K.
        cols: usize,
        /// x.len().
        got: usize,
    },
}

/// Checks that x fits the matrix.
pub fn check_job(m: &RlcMatrix, x: &Activations) -> Result<(), JobError> {
    if x.len() != m.cols() as usize {
        return Err(JobError::ActivationLength { cols: m.cols() as usize, got: x.len() });
    }
    Ok(())
}

/// `y = W x` in the hardware's order.
pub fn column_order(m: &RlcMatrix, x: &Activations, filter: ActivationFilter) -> Result<Vec<f32>, JobError> {
    check_job(m, x)?;
    let mut y = vec![0.0f32; m.rows() as usize];
    for (p, panel) in m.panels().iter().enumerate() {
        let base = m.panel_start(p);
        for (k, &xk) in x.as_slice().iter().enumerate() {
            if !filter.is_active(xk) {
                continue;
            }
            for e in panel.column(k) {
                let r = base + e.row as usize;
                y[r] = accumulate(y[r], product(e.value, xk));
            }
        }
    }
    Ok(y)
}
