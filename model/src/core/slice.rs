//! The tokens that flow down the pipeline: column descriptors, slices, and end-of-panel markers.

use half::f16;

/// An active column of a panel with its entry range, as the column-pointer fetch hands it on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    /// Panel index.
    pub panel: u32,
    /// Column index k.
    pub k: u32,
    /// Its activation.
    pub x: f16,
    /// First entry (colptr\[k\]).
    pub start: u64,
    /// One past the last entry (colptr\[k+1\]).
    pub end: u64,
}

/// The part of one column that lies in one aligned chunk of C entries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slice {
    /// The column.
    pub column: Column,
    /// Chunk index: entries `chunk * C .. (chunk + 1) * C`.
    pub chunk: u64,
    /// The column's entries in the chunk: `lo .. hi` (absolute entry indices).
    pub lo: u64,
    /// One past the last.
    pub hi: u64,
    /// The column's first slice (the decoder resets its row carry).
    pub first: bool,
}

/// What moves from stage to stage.
#[derive(Clone, Debug, PartialEq)]
pub enum Token<T> {
    /// Work.
    Work(T),
    /// All of panel `p` has passed.
    EndPanel(u32),
}

/// One entry on its way to the accumulators: its row in the panel and its exact FP32 product.
pub type RowProduct = (u32, f32);

/// A slice after the decoder.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The slice.
    pub slice: Slice,
    /// Its entries' rows and products, in entry order (see `rlc_decoder` for when they are
    /// computed); entries masked for an overrun are left out.
    pub entries: Vec<RowProduct>,
    /// Entries of the slice that are padding (value +-0).
    pub padding: u32,
    /// An entry decoded to a row at or past the panel's end (the stream is malformed).
    pub overrun: Option<u64>,
}

/// A slice after the multiplier.
#[derive(Clone, Debug, PartialEq)]
pub struct Products {
    /// Panel index.
    pub panel: u32,
    /// Rows and products in entry order.
    pub entries: Vec<RowProduct>,
}
