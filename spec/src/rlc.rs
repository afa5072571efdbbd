//! RLC-CSC: Celty's run-length-coded compressed sparse column format, bit for bit.
//!
//! A matrix of M rows by K columns is stored column by column in three arrays:
//! - `values`: FP16 values, one per stored entry, padded with zero entries to a multiple of 8
//!   (one 16-byte load is 8 entries);
//! - `runs`: 4-bit run lengths, two per byte; entry `2b` is bits \[3:0\] of byte `b`, entry
//!   `2b+1` is bits \[7:4\]; padded like `values`;
//! - `colptr`: K+1 pointers; column k's entries are `colptr[k] .. colptr[k+1]`, with no
//!   alignment between columns.
//!
//! Encoding, per column, scanning rows in order with a zero counter z starting at 0: if the value
//! is nonzero or z == 15, emit (value, z) and set z = 0; otherwise z += 1. A padding entry
//! (0.0, 15) occupies a row itself, so it advances 16 rows. Padding entries after a column's last
//! nonzero are dropped. Decoding: `row_j = j + sum_{l <= j} run_l`, j counted from the column
//! start.
//!
//! Contract of [`RlcCsc`]: every value that exists is *canonical*, i.e. exactly what
//! [`RlcCsc::encode`] produces for some dense matrix. [`RlcCsc::from_parts`] checks that and
//! refuses anything else with an [`RlcError`]; consequently `encode(decode(m)) == m` for every
//! `RlcCsc` m, and `decode(encode(d)) == d` for every finite dense d up to the sign of zero
//! (a `-0.0` weight is a zero and decodes as `+0.0`).
//!
//! [`RlcMatrix`] splits a tall matrix into row panels of at most `panel_rows` rows, each encoded
//! on its own, so that one panel fits the accumulator tile of the core.

use crate::dense::DenseMatrix;
use crate::numerics::is_zero;
use half::f16;

/// Entries per 16-byte value load; arrays are padded to a multiple of this.
pub const ENTRIES_PER_WORD: usize = 8;
/// The largest run length a 4-bit field holds; a padding entry carries it.
pub const MAX_RUN: u8 = 15;
/// Bits per stored entry: a 16-bit value and a 4-bit run length.
pub const BITS_PER_ENTRY: u64 = 20;
/// Bytes per column pointer.
pub const COLPTR_BYTES: u64 = 4;

/// One decoded stored entry of a column.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry {
    /// Row within the panel.
    pub row: u32,
    /// The stored value (`0.0` for a padding entry).
    pub value: f16,
    /// The stored run length.
    pub run: u8,
}

impl Entry {
    /// A padding entry: value zero (run 15 in a canonical stream).
    pub fn is_padding(&self) -> bool {
        is_zero(self.value)
    }
}

/// Why RLC-CSC arrays were refused. Positions are entry indices into `values`/`runs`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RlcError {
    /// rows or cols is zero or too large.
    #[error("shape {rows}x{cols} is not supported: rows and cols must be in 1..=2^31")]
    BadShape {
        /// M.
        rows: u64,
        /// K.
        cols: u64,
    },
    /// `colptr` has the wrong length.
    #[error("colptr has {got} pointers, expected cols + 1 = {expected}")]
    ColptrLength {
        /// cols + 1.
        expected: u64,
        /// Found.
        got: u64,
    },
    /// `colptr[0]` is not 0.
    #[error("colptr[0] is {0}, expected 0")]
    ColptrStart(u32),
    /// A column ends before it starts.
    #[error("column pointers are not monotone: colptr[{col}] = {start} > colptr[{next}] = {end}", next = col + 1)]
    ColptrNotMonotone {
        /// The column.
        col: u32,
        /// colptr\[col\].
        start: u32,
        /// colptr\[col + 1\].
        end: u32,
    },
    /// `values` and `runs` disagree in length, or are not padded to a multiple of 8.
    #[error(
        "array lengths disagree: {values} values and {runs} run-length nibbles; both must be equal and a multiple of 8"
    )]
    ArrayLengths {
        /// values.len().
        values: u64,
        /// 2 * runs.len().
        runs: u64,
    },
    /// The padded length is not `colptr[K]` rounded up to 8.
    #[error(
        "colptr[K] = {entries} stored entries, but the arrays hold {padded} (expected {expected} after padding to 8)"
    )]
    CountMismatch {
        /// colptr\[K\].
        entries: u64,
        /// Array length found.
        padded: u64,
        /// Array length expected.
        expected: u64,
    },
    /// A value is infinite or NaN.
    #[error("entry {entry} (column {col}) holds the non-finite value {value}")]
    NonFiniteValue {
        /// Entry index.
        entry: u64,
        /// Its column.
        col: u32,
        /// The value.
        value: f32,
    },
    /// A column's runs reach past its last row.
    #[error("column {col}: entry {entry} decodes to row {row}, past the last row {last}")]
    RunOverrunsColumn {
        /// The column.
        col: u32,
        /// Entry index.
        entry: u64,
        /// The row it decodes to.
        row: u64,
        /// rows - 1.
        last: u32,
    },
    /// A zero value that is not a canonical padding entry (+0.0 with run 15).
    #[error("column {col}: entry {entry} is a zero value with run {run} (bits {bits:#06x}); only +0.0 with run 15 (padding) is allowed")]
    NonCanonicalZero {
        /// The column.
        col: u32,
        /// Entry index.
        entry: u64,
        /// Its run.
        run: u8,
        /// Its FP16 bits.
        bits: u16,
    },
    /// A column ends with a padding entry, which the encoder drops.
    #[error("column {col}: ends with a padding entry (entry {entry}); trailing padding must be dropped")]
    TrailingPadding {
        /// The column.
        col: u32,
        /// Entry index.
        entry: u64,
    },
    /// The tail past `colptr[K]` is not zero.
    #[error("padding tail entry {entry} is not zero (value bits {bits:#06x}, run {run})")]
    TailNotZero {
        /// Entry index.
        entry: u64,
        /// FP16 bits.
        bits: u16,
        /// Run.
        run: u8,
    },
    /// More stored entries than 32-bit column pointers address.
    #[error("{0} stored entries exceed the 32-bit column pointers")]
    TooManyEntries(u64),
    /// A weight is not finite at encode time.
    #[error("weight at row {row}, column {col} is {value}; weights must be finite")]
    NonFiniteWeight {
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// Value.
        value: f32,
    },
}

/// One matrix (or row panel) in RLC-CSC, always canonical.
#[derive(Clone, Debug, PartialEq)]
pub struct RlcCsc {
    rows: u32,
    cols: u32,
    values: Vec<f16>,
    runs: Vec<u8>,
    colptr: Vec<u32>,
}

/// Reads run length `i` from packed nibbles.
#[inline(always)]
pub fn run_at(runs: &[u8], i: usize) -> u8 {
    (runs[i / 2] >> ((i & 1) * 4)) & 0x0f
}

fn check_shape(rows: u64, cols: u64) -> Result<(), RlcError> {
    let ok = |n: u64| (1..=1u64 << 31).contains(&n);
    if ok(rows) && ok(cols) {
        Ok(())
    } else {
        Err(RlcError::BadShape { rows, cols })
    }
}

impl RlcCsc {
    /// Encodes rows `row_start .. row_end` of `dense` (all columns).
    pub fn encode_rows(dense: &DenseMatrix, row_start: usize, row_end: usize) -> Result<RlcCsc, RlcError> {
        let cols = dense.cols();
        assert!(row_start <= row_end && row_end <= dense.rows(), "row range out of bounds");
        check_shape((row_end - row_start) as u64, cols as u64)?;
        // Scan row by row (the dense matrix is row-major) with one zero counter per column.
        let mut per_col: Vec<Vec<(f16, u8)>> = vec![Vec::new(); cols];
        let mut zeros = vec![0u8; cols];
        for r in row_start..row_end {
            for (k, &v) in dense.row(r).iter().enumerate() {
                if !v.is_finite() {
                    return Err(RlcError::NonFiniteWeight { row: r, col: k, value: v.to_f32() });
                }
                let nonzero = !is_zero(v);
                if nonzero || zeros[k] == MAX_RUN {
                    per_col[k].push((if nonzero { v } else { f16::ZERO }, zeros[k]));
                    zeros[k] = 0;
                } else {
                    zeros[k] += 1;
                }
            }
        }
        let total: usize = per_col
            .iter_mut()
            .map(|col| {
                // Padding after the column's last nonzero is dropped.
                while col.last().is_some_and(|e| is_zero(e.0)) {
                    col.pop();
                }
                col.len()
            })
            .sum();
        if total as u64 > u32::MAX as u64 {
            return Err(RlcError::TooManyEntries(total as u64));
        }
        let padded = total.div_ceil(ENTRIES_PER_WORD) * ENTRIES_PER_WORD;
        let mut values = Vec::with_capacity(padded);
        let mut runs = vec![0u8; padded / 2];
        let mut colptr = Vec::with_capacity(cols + 1);
        colptr.push(0u32);
        for col in &per_col {
            for &(v, run) in col {
                let i = values.len();
                // Fresh bytes, so each nibble is written once (no stale nibble to add onto).
                runs[i / 2] |= run << ((i & 1) * 4);
                values.push(v);
            }
            colptr.push(values.len() as u32);
        }
        values.resize(padded, f16::ZERO);
        Ok(RlcCsc { rows: (row_end - row_start) as u32, cols: cols as u32, values, runs, colptr })
    }

    /// Encodes a whole matrix as one panel.
    pub fn encode(dense: &DenseMatrix) -> Result<RlcCsc, RlcError> {
        RlcCsc::encode_rows(dense, 0, dense.rows())
    }

    /// Checks raw arrays and wraps them; refuses anything [`RlcCsc::encode`] would not produce.
    pub fn from_parts(
        rows: u32,
        cols: u32,
        values: Vec<f16>,
        runs: Vec<u8>,
        colptr: Vec<u32>,
    ) -> Result<RlcCsc, RlcError> {
        check_shape(rows as u64, cols as u64)?;
        if colptr.len() as u64 != cols as u64 + 1 {
            return Err(RlcError::ColptrLength { expected: cols as u64 + 1, got: colptr.len() as u64 });
        }
        if values.len() != runs.len() * 2 || values.len() % ENTRIES_PER_WORD != 0 {
            return Err(RlcError::ArrayLengths { values: values.len() as u64, runs: runs.len() as u64 * 2 });
        }
        if colptr[0] != 0 {
            return Err(RlcError::ColptrStart(colptr[0]));
        }
        for (col, w) in colptr.windows(2).enumerate() {
            if w[0] > w[1] {
                return Err(RlcError::ColptrNotMonotone { col: col as u32, start: w[0], end: w[1] });
            }
        }
        let entries = colptr[cols as usize] as usize;
        let expected = entries.div_ceil(ENTRIES_PER_WORD) * ENTRIES_PER_WORD;
        if values.len() != expected {
            return Err(RlcError::CountMismatch {
                entries: entries as u64,
                padded: values.len() as u64,
                expected: expected as u64,
            });
        }
        for (i, v) in values.iter().enumerate().skip(entries) {
            let (bits, run) = (v.to_bits(), run_at(&runs, i));
            if bits != 0 || run != 0 {
                return Err(RlcError::TailNotZero { entry: i as u64, bits, run });
            }
        }
        for col in 0..cols {
            let (start, end) = (colptr[col as usize] as usize, colptr[col as usize + 1] as usize);
            let mut row: u64 = 0;
            for (i, &v) in values.iter().enumerate().take(end).skip(start) {
                let run = run_at(&runs, i);
                if !v.is_finite() {
                    return Err(RlcError::NonFiniteValue { entry: i as u64, col, value: v.to_f32() });
                }
                row += run as u64 + if i == start { 0 } else { 1 };
                if row >= rows as u64 {
                    return Err(RlcError::RunOverrunsColumn { col, entry: i as u64, row, last: rows - 1 });
                }
                if is_zero(v) && (v.to_bits() != 0 || run != MAX_RUN) {
                    return Err(RlcError::NonCanonicalZero { col, entry: i as u64, run, bits: v.to_bits() });
                }
            }
            if end > start && is_zero(values[end - 1]) {
                return Err(RlcError::TrailingPadding { col, entry: end as u64 - 1 });
            }
        }
        Ok(RlcCsc { rows, cols, values, runs, colptr })
    }

    /// M (rows of this panel).
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// K.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// The padded value array.
    pub fn values(&self) -> &[f16] {
        &self.values
    }

    /// The packed run-length array (two per byte, low nibble first).
    pub fn runs(&self) -> &[u8] {
        &self.runs
    }

    /// The K+1 column pointers.
    pub fn colptr(&self) -> &[u32] {
        &self.colptr
    }

    /// Run length of entry `i`.
    pub fn run(&self, i: usize) -> u8 {
        run_at(&self.runs, i)
    }

    /// Stored entries (nonzeros and padding entries), without the tail that pads to 8.
    pub fn entries(&self) -> u64 {
        self.colptr[self.cols as usize] as u64
    }

    /// Array length after padding to a multiple of 8.
    pub fn padded_len(&self) -> u64 {
        self.values.len() as u64
    }

    /// Padding entries inside columns (zero values with run 15).
    pub fn padding_entries(&self) -> u64 {
        self.values[..self.entries() as usize].iter().filter(|v| is_zero(**v)).count() as u64
    }

    /// Nonzero weights.
    pub fn nnz(&self) -> u64 {
        self.entries() - self.padding_entries()
    }

    /// Entry index range of column `k`.
    pub fn column_range(&self, k: usize) -> std::ops::Range<usize> {
        self.colptr[k] as usize..self.colptr[k + 1] as usize
    }

    /// The decoded entries of column `k`, padding included, rows increasing.
    pub fn column(&self, k: usize) -> ColumnIter<'_> {
        let range = self.column_range(k);
        ColumnIter { m: self, next: range.start, end: range.end, row: -1 }
    }

    /// Bytes of the three arrays: 2 per padded value, half a byte per padded run, 4 per pointer.
    pub fn bytes(&self) -> u64 {
        self.padded_len() * 2 + self.padded_len() / 2 + (self.cols as u64 + 1) * COLPTR_BYTES
    }

    /// The dense matrix this encodes.
    pub fn decode(&self) -> DenseMatrix {
        let mut dense = DenseMatrix::zeros(self.rows as usize, self.cols as usize);
        self.decode_into(&mut dense, 0);
        dense
    }

    fn decode_into(&self, dense: &mut DenseMatrix, row_offset: usize) {
        for k in 0..self.cols as usize {
            for e in self.column(k) {
                if !e.is_padding() {
                    dense.set(row_offset + e.row as usize, k, e.value);
                }
            }
        }
    }
}

/// Iterator over one column's stored entries.
pub struct ColumnIter<'a> {
    m: &'a RlcCsc,
    next: usize,
    end: usize,
    row: i64,
}

impl Iterator for ColumnIter<'_> {
    type Item = Entry;

    #[inline]
    fn next(&mut self) -> Option<Entry> {
        if self.next >= self.end {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let run = self.m.run(i);
        self.row += run as i64 + 1;
        Some(Entry { row: self.row as u32, value: self.m.values[i], run })
    }
}

/// A matrix split into row panels of at most `panel_rows` rows, each in RLC-CSC.
#[derive(Clone, Debug, PartialEq)]
pub struct RlcMatrix {
    rows: u32,
    cols: u32,
    panel_rows: u32,
    panels: Vec<RlcCsc>,
}

/// The bytes one spMspV job must load, by kind (see [`RlcMatrix::job_bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct JobBytes {
    /// Stored entries of the active columns.
    pub entries: u64,
    /// FP16 values.
    pub values: u64,
    /// 4-bit run lengths.
    pub runs: u64,
    /// Column pointers.
    pub colptr: u64,
    /// The activation vector.
    pub activations: u64,
}

impl JobBytes {
    /// All bytes.
    pub fn total(&self) -> u64 {
        self.values + self.runs + self.colptr + self.activations
    }
}

/// Per-matrix storage figures, for `inspect` and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StorageStats {
    /// M.
    pub rows: u64,
    /// K.
    pub cols: u64,
    /// Row panels.
    pub panels: u64,
    /// Rows per panel (the last may hold fewer).
    pub panel_rows: u64,
    /// Nonzero weights.
    pub nnz: u64,
    /// Stored entries: nonzeros plus padding entries.
    pub stored_entries: u64,
    /// Padding entries (0.0, 15) inside columns.
    pub padding_entries: u64,
    /// Zero entries appended to pad each panel's arrays to a multiple of 8.
    pub tail_entries: u64,
    /// Bytes of RLC-CSC: values, run lengths and column pointers of all panels.
    pub bytes: u64,
    /// Bytes of the same matrix in dense FP16.
    pub dense_fp16_bytes: u64,
    /// Bytes in CSC with FP16 values and 16-bit row indices (32-bit column pointers per panel).
    pub csc16_bytes: u64,
    /// Bytes as a column-major bitmap (1 bit per weight) plus packed FP16 nonzeros.
    pub bitmap_bytes: u64,
}

impl RlcMatrix {
    /// Encodes `dense` in panels of at most `panel_rows` rows (`None`: one panel).
    pub fn encode(dense: &DenseMatrix, panel_rows: Option<u32>) -> Result<RlcMatrix, RlcError> {
        check_shape(dense.rows() as u64, dense.cols() as u64)?;
        let panel_rows = panel_rows.unwrap_or(dense.rows() as u32).max(1);
        let panels = (0..dense.rows())
            .step_by(panel_rows as usize)
            .map(|start| RlcCsc::encode_rows(dense, start, (start + panel_rows as usize).min(dense.rows())))
            .collect::<Result<Vec<_>, _>>()?;
        RlcMatrix::from_panels(dense.rows() as u32, panel_rows, panels)
    }

    /// Wraps encoded panels; checks that they tile `rows` and share one K.
    pub fn from_panels(rows: u32, panel_rows: u32, panels: Vec<RlcCsc>) -> Result<RlcMatrix, RlcError> {
        let cols = panels.first().map_or(0, |p| p.cols);
        check_shape(rows as u64, cols as u64)?;
        let expected = (rows as u64).div_ceil(panel_rows.max(1) as u64);
        let tiles = panel_rows > 0
            && panels.len() as u64 == expected
            && panels.iter().enumerate().all(|(p, panel)| {
                let want = (rows as u64 - p as u64 * panel_rows as u64).min(panel_rows as u64);
                panel.cols == cols && panel.rows as u64 == want
            });
        if !tiles {
            return Err(RlcError::BadShape { rows: rows as u64, cols: cols as u64 });
        }
        Ok(RlcMatrix { rows, cols, panel_rows, panels })
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
    pub fn panels(&self) -> &[RlcCsc] {
        &self.panels
    }

    /// First row of panel `p`.
    pub fn panel_start(&self, p: usize) -> usize {
        p * self.panel_rows as usize
    }

    /// The dense matrix this encodes.
    pub fn decode(&self) -> DenseMatrix {
        let mut dense = DenseMatrix::zeros(self.rows as usize, self.cols as usize);
        for (p, panel) in self.panels.iter().enumerate() {
            panel.decode_into(&mut dense, self.panel_start(p));
        }
        dense
    }

    /// The bytes a spMspV job must load: for every panel and every active column its two column
    /// pointers and its stored entries (2 bytes of value and half a byte of run each), plus the
    /// K FP16 activations once. Columns whose activation fails `filter` cost nothing. This is
    /// the ideal traffic, without the alignment of real loads: the byte-roofline denominator.
    pub fn job_bytes(&self, x: &[f16], filter: crate::ActivationFilter) -> JobBytes {
        let mut b = JobBytes { activations: x.len() as u64 * 2, ..JobBytes::default() };
        for panel in &self.panels {
            for (k, &xk) in x.iter().enumerate().take(self.cols as usize) {
                if filter.is_active(xk) {
                    let n = panel.column_range(k).len() as u64;
                    b.entries += n;
                    b.values += n * 2;
                    b.runs += n; // in nibbles; halved below
                    b.colptr += 2 * COLPTR_BYTES;
                }
            }
        }
        b.runs = b.runs.div_ceil(2);
        b
    }

    /// Storage figures against dense FP16, CSC with 16-bit indices and a bitmap format.
    pub fn stats(&self) -> StorageStats {
        let sum = |f: &dyn Fn(&RlcCsc) -> u64| self.panels.iter().map(f).sum::<u64>();
        let nnz = sum(&|p| p.nnz());
        let stored = sum(&|p| p.entries());
        let padded = sum(&|p| p.padded_len());
        let (rows, cols, panels) = (self.rows as u64, self.cols as u64, self.panels.len() as u64);
        StorageStats {
            rows,
            cols,
            panels,
            panel_rows: self.panel_rows as u64,
            nnz,
            stored_entries: stored,
            padding_entries: sum(&|p| p.padding_entries()),
            tail_entries: padded - stored,
            bytes: sum(&|p| p.bytes()),
            dense_fp16_bytes: rows * cols * 2,
            csc16_bytes: nnz * 4 + panels * (cols + 1) * COLPTR_BYTES,
            bitmap_bytes: (rows * cols).div_ceil(8) + nnz * 2,
        }
    }
}
