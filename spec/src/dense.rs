//! A dense FP16 weight matrix W of M rows (outputs) by K columns (inputs), stored row-major:
//! the encoder's input, the decoder's output, and the dense references' operand.

use half::f16;

/// A dense row-major FP16 matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseMatrix {
    rows: usize,
    cols: usize,
    data: Vec<f16>,
}

/// `data.len()` does not match the shape.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("a {rows}x{cols} matrix needs {} values, got {got}", rows * cols)]
pub struct ShapeMismatch {
    /// Rows asked for.
    pub rows: usize,
    /// Columns asked for.
    pub cols: usize,
    /// Values given.
    pub got: usize,
}

impl DenseMatrix {
    /// Wraps row-major `data` of shape `rows x cols`.
    pub fn new(rows: usize, cols: usize, data: Vec<f16>) -> Result<Self, ShapeMismatch> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(ShapeMismatch { rows, cols, got: data.len() });
        }
        Ok(DenseMatrix { rows, cols, data })
    }

    /// An all-zero matrix.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        DenseMatrix { rows, cols, data: vec![f16::ZERO; rows * cols] }
    }

    /// M.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// K.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The row-major values.
    pub fn data(&self) -> &[f16] {
        &self.data
    }

    /// Mutable row-major values.
    pub fn data_mut(&mut self) -> &mut [f16] {
        &mut self.data
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f16] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    /// W\[r\]\[k\].
    pub fn get(&self, r: usize, k: usize) -> f16 {
        self.data[r * self.cols + k]
    }

    /// Sets W\[r\]\[k\].
    pub fn set(&mut self, r: usize, k: usize, v: f16) {
        self.data[r * self.cols + k] = v;
    }

    /// Number of nonzero values (either sign of zero counts as zero).
    pub fn nnz(&self) -> usize {
        self.data.iter().filter(|v| !crate::numerics::is_zero(**v)).count()
    }
}
