//! Dense column panels: the weights of a `gemv` job ([`crate::job::JobKind::Gemv`]), the layout
//! the core streams when a layer is too dense for RLC-CSC to pay.
//!
//! A matrix of M rows by K columns is split into row panels exactly as [`RlcMatrix`] splits it
//! (at most `panel_rows` rows each, the last one shorter). A panel of R rows is stored column by
//! column with every row, zeros included:
//! - `values`: FP16, column k's rows `0..R` at entries `kR .. (k+1)R`, padded with zero entries
//!   to a multiple of 8 (one 16-byte load), like RLC-CSC's values;
//! - `colptr`: K+1 pointers `colptr[k] = kR`, as RLC-CSC's.
//!
//! There is no run-length array: every entry's run is 0, so entry j of a column is row j. The
//! core reads a `gemv` job through the same blocks as a `spmspv` job (`JobKind::Gemv` sets its
//! `dense` register): chunk_fetch asks for no run bursts and hands the decoder zero runs. So a
//! dense panel costs 2 bytes a weight plus 4 bytes a column (the pointers: 0.05 % of a 4096-row
//! panel), where RLC-CSC costs 2.5 bytes a stored entry plus the same pointers: a layer with
//! fewer than about 20 % zero weights is cheaper dense (2 < 2.5 (1 - z)). The pointers are kept, though they are
//! implied, so that colptr_fetch is one block for both kinds.
//!
//! Contract: a `DensePanels` is built only from a dense matrix or an `RlcMatrix` (nothing reads it
//! from a file), so it is always well formed; it holds the same weights bit for bit, `-0.0`
//! stored as `+0.0` as RLC-CSC does. Zero weights are stored and multiplied: their products are
//! `±0.0` and cannot change an accumulator (`crate::numerics`), so a `gemv` job's y equals the
//! spMspV golden's on the same weights bit for bit.

use crate::dense::DenseMatrix;
use crate::numerics::is_zero;
use crate::rlc::{RlcCsc, RlcError, RlcMatrix, COLPTR_BYTES, ENTRIES_PER_WORD};
use half::f16;

/// One dense panel.
#[derive(Clone, Debug, PartialEq)]
pub struct DensePanel {
    rows: u32,
    cols: u32,
    values: Vec<f16>,
    colptr: Vec<u32>,
}

impl DensePanel {
    /// An all-zero panel of `rows x cols`, padded; refused when its entries overflow a pointer.
    fn zeros(rows: usize, cols: usize) -> Result<DensePanel, RlcError> {
        let entries = rows as u64 * cols as u64;
        if entries > u32::MAX as u64 - ENTRIES_PER_WORD as u64 {
            return Err(RlcError::TooManyEntries(entries));
        }
        let padded = (entries as usize).div_ceil(ENTRIES_PER_WORD) * ENTRIES_PER_WORD;
        let colptr = (0..=cols as u32).map(|k| k * rows as u32).collect();
        Ok(DensePanel { rows: rows as u32, cols: cols as u32, values: vec![f16::ZERO; padded], colptr })
    }

    /// An RLC-CSC panel's weights, column-major (its stored zeros stay +0.0).
    fn from_rlc(p: &RlcCsc) -> Result<DensePanel, RlcError> {
        let mut d = DensePanel::zeros(p.rows() as usize, p.cols() as usize)?;
        let rows = p.rows() as usize;
        for k in 0..p.cols() as usize {
            // A canonical panel's rows lie inside it, and its only zeros are padding (+0.0).
            for e in p.column(k) {
                d.values[k * rows + e.row as usize] = e.value;
            }
        }
        Ok(d)
    }

    /// Rows `row_start .. row_end` of `dense`, column-major.
    fn from_rows(dense: &DenseMatrix, row_start: usize, row_end: usize) -> Result<DensePanel, RlcError> {
        let rows = row_end - row_start;
        let mut d = DensePanel::zeros(rows, dense.cols())?;
        let values = &mut d.values;
        for r in row_start..row_end {
            for (k, &v) in dense.row(r).iter().enumerate() {
                if !v.is_finite() {
                    return Err(RlcError::NonFiniteWeight { row: r, col: k, value: v.to_f32() });
                }
                // -0.0 is a zero and is stored as +0.0, as RLC-CSC drops it.
                values[k * rows + r - row_start] = if is_zero(v) { f16::ZERO } else { v };
            }
        }
        Ok(d)
    }

    /// R.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// K.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// The column-major values, padded to a multiple of 8.
    pub fn values(&self) -> &[f16] {
        &self.values
    }

    /// The K+1 column pointers (`colptr[k] = kR`).
    pub fn colptr(&self) -> &[u32] {
        &self.colptr
    }

    /// Bytes in memory: values and pointers.
    pub fn bytes(&self) -> u64 {
        2 * self.values.len() as u64 + COLPTR_BYTES * self.colptr.len() as u64
    }
}

/// A matrix in dense column panels.
#[derive(Clone, Debug, PartialEq)]
pub struct DensePanels {
    rows: u32,
    cols: u32,
    panel_rows: u32,
    panels: Vec<DensePanel>,
}

impl DensePanels {
    /// `dense` in panels of at most `panel_rows` rows (`None`: one panel).
    pub fn new(dense: &DenseMatrix, panel_rows: Option<u32>) -> Result<DensePanels, RlcError> {
        let (rows, cols) = (dense.rows(), dense.cols());
        let ok = |n: usize| (1..=1usize << 31).contains(&n);
        if !ok(rows) || !ok(cols) {
            return Err(RlcError::BadShape { rows: rows as u64, cols: cols as u64 });
        }
        let panel_rows = panel_rows.unwrap_or(rows as u32).max(1);
        let panels = (0..rows)
            .step_by(panel_rows as usize)
            .map(|start| DensePanel::from_rows(dense, start, (start + panel_rows as usize).min(rows)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DensePanels { rows: rows as u32, cols: cols as u32, panel_rows, panels })
    }

    /// The same weights and panels as `m`, panel by panel (no whole dense matrix in between).
    pub fn from_rlc(m: &RlcMatrix) -> Result<DensePanels, RlcError> {
        let panels = m.panels().iter().map(DensePanel::from_rlc).collect::<Result<Vec<_>, _>>()?;
        Ok(DensePanels { rows: m.rows(), cols: m.cols(), panel_rows: m.panel_rows(), panels })
    }

    /// M.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// K.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// Rows per panel.
    pub fn panel_rows(&self) -> u32 {
        self.panel_rows
    }

    /// The panels, top to bottom.
    pub fn panels(&self) -> &[DensePanel] {
        &self.panels
    }

    /// Bytes of all panels.
    pub fn bytes(&self) -> u64 {
        self.panels.iter().map(DensePanel::bytes).sum()
    }
}

/// The bytes of `m`'s weights in each layout, for choosing one: (RLC-CSC, dense panels). Both
/// count values, run lengths (RLC-CSC only) and column pointers of every panel; a job skips the
/// same inactive columns in either, so the ratio holds for any activation vector up to how the
/// skipped columns' entries are spread.
pub fn layout_bytes(m: &RlcMatrix) -> (u64, u64) {
    let rlc = m.panels().iter().map(|p| p.bytes()).sum();
    let dense = m
        .panels()
        .iter()
        .map(|p| {
            let entries =
                (p.rows() as u64 * p.cols() as u64).div_ceil(ENTRIES_PER_WORD as u64) * ENTRIES_PER_WORD as u64;
            2 * entries + COLPTR_BYTES * (p.cols() as u64 + 1)
        })
        .sum();
    (rlc, dense)
}

/// Whether `m`'s weights take fewer bytes in dense panels than in RLC-CSC: the compiler's rule
/// for lowering a layer to a `gemv` job (`--layout auto`), and what a program's check holds a
/// `gemv` layer to (so a manifest cannot make the loader expand a sparse layer densely).
pub fn dense_pays(m: &RlcMatrix) -> bool {
    let (rlc, dense) = layout_bytes(m);
    dense < rlc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(rows: usize, cols: usize, zero_every: usize) -> DenseMatrix {
        let mut d = DenseMatrix::zeros(rows, cols);
        for r in 0..rows {
            for k in 0..cols {
                if (r * cols + k) % zero_every != 0 {
                    d.set(r, k, f16::from_f32(((r * 7 + k * 3) % 19 + 1) as f32 / 8.0));
                }
            }
        }
        d
    }

    #[test]
    fn each_panel_holds_its_rows_column_by_column_with_implied_pointers() {
        let d = sample(10, 3, 4);
        let m = DensePanels::new(&d, Some(4)).unwrap();
        assert_eq!(m.panels().len(), 3);
        for (p, panel) in m.panels().iter().enumerate() {
            let r = panel.rows() as usize;
            assert_eq!(r, if p < 2 { 4 } else { 2 });
            assert_eq!(panel.values().len() % ENTRIES_PER_WORD, 0);
            for k in 0..3 {
                assert_eq!(panel.colptr()[k] as usize, k * r);
                for i in 0..r {
                    assert_eq!(panel.values()[k * r + i].to_bits(), d.get(4 * p + i, k).to_bits());
                }
            }
            assert!(panel.values()[3 * r..].iter().all(|v| v.to_bits() == 0), "tail padding is +0.0");
        }
    }

    #[test]
    fn the_same_weights_come_from_rlc_and_from_dense_with_negative_zero_stored_as_zero() {
        let mut d = sample(9, 5, 3);
        d.set(0, 0, f16::NEG_ZERO);
        let m = RlcMatrix::encode(&d, Some(4)).unwrap();
        let a = DensePanels::from_rlc(&m).unwrap();
        let b = DensePanels::new(&d, Some(4)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.panels()[0].values()[0].to_bits(), 0);
    }

    #[test]
    fn dense_layout_is_cheaper_only_when_few_weights_are_zero() {
        let dense = RlcMatrix::encode(&sample(64, 64, 1_000_000), Some(64)).unwrap();
        let (rlc, d) = layout_bytes(&dense);
        // 2 bytes a weight against 2.5, the same pointers.
        assert!((d as f64) < 0.82 * rlc as f64, "dense layout {d} B vs RLC-CSC {rlc} B at 0 % zeros");
        // Around the crossover of 2 bytes a weight against 2.5 a stored entry: 1 - 2 / 2.5 = 20 %.
        for (zero_every, pays) in [(7, true), (4, false)] {
            let m = RlcMatrix::encode(&sample(64, 64, zero_every), Some(64)).unwrap();
            let zeros = 1.0 - m.stats().nnz as f64 / 4096.0;
            assert_eq!(dense_pays(&m), pays, "{:.1} % zeros: {:?}", 100.0 * zeros, layout_bytes(&m));
        }
        let sparse = RlcMatrix::encode(&sample(64, 64, 1), Some(64)).unwrap();
        let (rlc, d) = layout_bytes(&sparse);
        assert!(rlc < d, "all zeros: RLC-CSC {rlc} B vs dense {d} B");
        let b = DensePanels::from_rlc(&dense).unwrap().bytes();
        assert_eq!(b, layout_bytes(&dense).1, "layout_bytes counts what DensePanels holds");
    }

    #[test]
    fn a_non_finite_weight_is_refused_with_its_place() {
        let mut d = sample(4, 4, 2);
        d.set(2, 3, f16::INFINITY);
        let e = DensePanels::new(&d, None).unwrap_err();
        assert!(matches!(e, RlcError::NonFiniteWeight { row: 2, col: 3, .. }), "{e:?}");
    }
}
