//! RLC-CSC encoding of a dense matrix in row panels, one panel per rayon task.
//!
//! Panels are independent (each starts its own column streams), so encoding them in parallel
//! gives exactly the matrix `RlcMatrix::encode` gives.

use lacuna_spec::{DenseMatrix, RlcCsc, RlcError, RlcMatrix};
use rayon::prelude::*;

/// Encodes `dense` in panels of at most `panel_rows` rows (`None`: one panel), in parallel.
pub fn encode_parallel(dense: &DenseMatrix, panel_rows: Option<u32>) -> Result<RlcMatrix, RlcError> {
    if dense.rows() == 0 || dense.cols() == 0 {
        return RlcMatrix::encode(dense, panel_rows);
    }
    let panel_rows = panel_rows.unwrap_or(dense.rows() as u32).max(1) as usize;
    let starts: Vec<usize> = (0..dense.rows()).step_by(panel_rows).collect();
    let panels = starts
        .par_iter()
        .map(|&s| RlcCsc::encode_rows(dense, s, (s + panel_rows).min(dense.rows())))
        .collect::<Result<Vec<_>, _>>()?;
    RlcMatrix::from_panels(dense.rows() as u32, panel_rows as u32, panels)
}
