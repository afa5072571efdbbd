//! RLC-CSC encoding of a dense matrix in row panels, one panel per rayon task.
//!
//! Panels are independent (each starts its own column streams), so encoding them in parallel
//! gives exactly the matrix `RlcMatrix::encode` gives.

use lacuna_spec::{DenseMatrix, RlcCsc, RlcError, RlcMatrix};
use rayon::prelude::*;

/// The panel height for M rows on a tile of `tile_rows`: as few panels as the tile allows, of
/// equal height (5120 rows on a 4096-row tile: two panels of 2560, not 4096 + 1024). Short panels
/// mean short columns, whose partly used first and last chunks cost bursts and decoder slots.
pub fn balanced_panel_rows(rows: usize, tile_rows: u32) -> u32 {
    let panels = rows.div_ceil(tile_rows as usize).max(1);
    rows.div_ceil(panels) as u32
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_panels_are_as_few_as_the_tile_allows_and_of_equal_height() {
        assert_eq!(balanced_panel_rows(5120, 4096), 2560);
        assert_eq!(balanced_panel_rows(4096, 4096), 4096);
        assert_eq!(balanced_panel_rows(7168, 4096), 3584);
        assert_eq!(balanced_panel_rows(100, 32), 25);
        assert_eq!(balanced_panel_rows(1, 32), 1);
    }
}
