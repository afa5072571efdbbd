//! The `.rlc` file: an [`RlcMatrix`] on disk, little-endian, validated on read.
//!
//! ```text
//! header, 48 bytes
//!   0   8  magic        "LACUNRLC"
//!   8   2  version      u16 = 1
//!  10   2  value_format u16 = 1 (FP16)
//!  12   4  rows         u32  M, >= 1
//!  16   4  cols         u32  K, >= 1
//!  20   4  panel_rows   u32  rows per panel, >= 1 (the last panel may hold fewer)
//!  24   4  panels       u32  = ceil(rows / panel_rows)
//!  28   4  reserved     u32  = 0
//!  32   8  entries      u64  stored entries of all panels (nonzeros + padding entries)
//!  40   8  nnz          u64  nonzeros of all panels
//! then per panel, top to bottom:
//!   0   8  entries      u64  = colptr[K] of this panel; arrays hold P = entries rounded up to 8
//!   8   8  nnz          u64
//!  16      values       P x FP16 (2 bytes each)
//!          runs         P / 2 bytes, entry 2b in bits [3:0] of byte b, 2b+1 in bits [7:4]
//!          colptr       (K + 1) x u32
//! trailer
//!   0   4  crc32        CRC-32 (IEEE) of every byte before it
//! ```
//!
//! Contract: [`read_rlc`] returns a matrix only if every field is consistent and every panel is
//! canonical RLC-CSC (see [`crate::rlc`]); otherwise a [`RlcFileError`] that names the first
//! problem. It never panics and never allocates more than the input's length warrants. Every file
//! it accepts is byte-identical to what [`write_rlc`] writes for the matrix it returns.

use crate::rlc::{RlcCsc, RlcError, RlcMatrix, ENTRIES_PER_WORD};
use half::f16;
use std::path::Path;

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"LACUNRLC";
/// The format version this code reads and writes.
pub const VERSION: u16 = 1;
/// Value format code for FP16 (the `Fp16Fp32` datapath's weights).
pub const VALUE_FORMAT_FP16: u16 = crate::Datapath::Fp16Fp32.value_format();
/// Bytes in the file header.
pub const HEADER_BYTES: usize = 48;
/// Bytes in each panel header.
pub const PANEL_HEADER_BYTES: usize = 16;
/// Bytes in the trailer.
pub const TRAILER_BYTES: usize = 4;

/// Why a `.rlc` file was refused.
#[derive(Debug, thiserror::Error)]
pub enum RlcFileError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file ends early.
    #[error("truncated .rlc file: {what} needs bytes {offset}..{end}, but the file has {len} bytes")]
    Truncated {
        /// What was being read.
        what: String,
        /// Where it starts.
        offset: u64,
        /// Where it ends.
        end: u64,
        /// The file length.
        len: u64,
    },
    /// Not an `.rlc` file.
    #[error("not an .rlc file: the magic is {found:?}, expected \"LACUNRLC\"")]
    BadMagic {
        /// The first eight bytes.
        found: String,
    },
    /// A version this build does not read.
    #[error(".rlc version {0} is not supported (this build reads version 1)")]
    UnsupportedVersion(u16),
    /// A value format this build does not read.
    #[error(".rlc value format {0} is not supported (1 = FP16)")]
    UnsupportedValueFormat(u16),
    /// The reserved field is set.
    #[error("reserved header field is {0:#x}, expected 0")]
    Reserved(u32),
    /// Shape fields are out of range or disagree.
    #[error("bad header: {0}")]
    BadHeader(String),
    /// Bytes after the trailer.
    #[error("{0} unexpected bytes after the end of the .rlc data")]
    TrailingBytes(u64),
    /// The checksum does not match: the file was corrupted.
    #[error("checksum mismatch: the file stores crc32 {stored:#010x} but its contents give {computed:#010x} (corrupted file)")]
    Checksum {
        /// Stored CRC.
        stored: u32,
        /// Computed CRC.
        computed: u32,
    },
    /// A panel's arrays are malformed.
    #[error("panel {panel}: {source}")]
    Panel {
        /// The panel.
        panel: u32,
        /// What is wrong.
        source: RlcError,
    },
    /// A count in a header disagrees with the arrays.
    #[error("{what}: the header says {header}, the arrays hold {counted}")]
    CountMismatch {
        /// Which count.
        what: String,
        /// From the header.
        header: u64,
        /// From the arrays.
        counted: u64,
    },
}

/// Serializes `m` in the `.rlc` format.
pub fn write_rlc(m: &RlcMatrix) -> Vec<u8> {
    let stats = m.stats();
    let mut out = Vec::with_capacity(HEADER_BYTES + stats.bytes as usize + 64);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&VALUE_FORMAT_FP16.to_le_bytes());
    for v in [m.rows(), m.cols(), m.panel_rows(), m.panels().len() as u32, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&stats.stored_entries.to_le_bytes());
    out.extend_from_slice(&stats.nnz.to_le_bytes());
    for p in m.panels() {
        out.extend_from_slice(&p.entries().to_le_bytes());
        out.extend_from_slice(&p.nnz().to_le_bytes());
        for v in p.values() {
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        out.extend_from_slice(p.runs());
        for c in p.colptr() {
            out.extend_from_slice(&c.to_le_bytes());
        }
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Writes `m` to `path`.
pub fn write_rlc_file(m: &RlcMatrix, path: &Path) -> Result<(), RlcFileError> {
    std::fs::write(path, write_rlc(m)).map_err(|source| RlcFileError::Io { path: path.display().to_string(), source })
}

/// Reads and validates the `.rlc` file at `path`.
pub fn read_rlc_file(path: &Path) -> Result<RlcMatrix, RlcFileError> {
    let bytes = std::fs::read(path).map_err(|source| RlcFileError::Io { path: path.display().to_string(), source })?;
    read_rlc(&bytes)
}

/// A bounds-checked little-endian cursor.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: u64, what: impl FnOnce() -> String) -> Result<&'a [u8], RlcFileError> {
        let end = (self.pos as u64).checked_add(n).filter(|&e| e <= self.bytes.len() as u64);
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end as usize];
                self.pos = end as usize;
                Ok(s)
            }
            None => Err(RlcFileError::Truncated {
                what: what(),
                offset: self.pos as u64,
                end: (self.pos as u64).saturating_add(n),
                len: self.bytes.len() as u64,
            }),
        }
    }

    fn u16(&mut self, what: &str) -> Result<u16, RlcFileError> {
        let b = self.take(2, || what.to_string())?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &str) -> Result<u32, RlcFileError> {
        let b = self.take(4, || what.to_string())?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn u64(&mut self, what: &str) -> Result<u64, RlcFileError> {
        let b = self.take(8, || what.to_string())?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }
}

struct PanelLayout {
    entries: u64,
    nnz: u64,
    values: usize,
}

/// Parses and validates `.rlc` bytes.
pub fn read_rlc(bytes: &[u8]) -> Result<RlcMatrix, RlcFileError> {
    let mut cur = Cursor { bytes, pos: 0 };
    let magic = cur.take(8, || "the magic".into())?;
    if magic != MAGIC {
        return Err(RlcFileError::BadMagic { found: String::from_utf8_lossy(magic).into_owned() });
    }
    let version = cur.u16("the version")?;
    if version != VERSION {
        return Err(RlcFileError::UnsupportedVersion(version));
    }
    let format = cur.u16("the value format")?;
    // An `RlcMatrix` holds FP16 values: of the datapaths, only the one that consumes them.
    match crate::Datapath::from_value_format(format) {
        Some(crate::Datapath::Fp16Fp32) => {}
        None => return Err(RlcFileError::UnsupportedValueFormat(format)),
    }
    let rows = cur.u32("the header")?;
    let cols = cur.u32("the header")?;
    let panel_rows = cur.u32("the header")?;
    let panels = cur.u32("the header")?;
    let reserved = cur.u32("the header")?;
    let total_entries = cur.u64("the header")?;
    let total_nnz = cur.u64("the header")?;
    if reserved != 0 {
        return Err(RlcFileError::Reserved(reserved));
    }
    if rows == 0 || cols == 0 || rows > 1 << 31 || cols > 1 << 31 {
        return Err(RlcFileError::BadHeader(format!("shape {rows}x{cols}: rows and cols must be in 1..=2^31")));
    }
    if panel_rows == 0 {
        return Err(RlcFileError::BadHeader("panel_rows is 0".into()));
    }
    let expected_panels = rows.div_ceil(panel_rows);
    if panels != expected_panels {
        return Err(RlcFileError::BadHeader(format!(
            "{panels} panels, but {rows} rows in panels of {panel_rows} need {expected_panels}"
        )));
    }

    // First pass: walk the panel headers to find the layout, so that a short file is reported as
    // truncated (not as a checksum mismatch) and nothing is allocated before its bytes exist.
    let colptr_bytes = (cols as u64 + 1) * 4;
    let mut layout = Vec::new();
    for p in 0..panels {
        let entries = cur.u64(&format!("panel {p} header"))?;
        let nnz = cur.u64(&format!("panel {p} header"))?;
        if entries > u32::MAX as u64 {
            return Err(RlcFileError::Panel { panel: p, source: RlcError::TooManyEntries(entries) });
        }
        let padded = entries.div_ceil(ENTRIES_PER_WORD as u64) * ENTRIES_PER_WORD as u64;
        let arrays = padded * 2 + padded / 2 + colptr_bytes;
        cur.take(arrays, || format!("panel {p} arrays"))?;
        layout.push(PanelLayout { entries, nnz, values: padded as usize });
    }
    let body_end = cur.pos;
    let stored = cur.u32("the crc32 trailer")?;
    if cur.pos < bytes.len() {
        return Err(RlcFileError::TrailingBytes((bytes.len() - cur.pos) as u64));
    }
    let computed = crc32fast::hash(&bytes[..body_end]);
    if stored != computed {
        return Err(RlcFileError::Checksum { stored, computed });
    }

    // Second pass: decode the arrays; the lengths are known to be in the file.
    let mut cur = Cursor { bytes, pos: HEADER_BYTES };
    let mut out = Vec::with_capacity(layout.len());
    for (p, l) in layout.iter().enumerate() {
        let p = p as u32;
        cur.pos += PANEL_HEADER_BYTES;
        let vb = cur.take(l.values as u64 * 2, String::new)?;
        let values: Vec<f16> = vb.chunks_exact(2).map(|b| f16::from_bits(u16::from_le_bytes([b[0], b[1]]))).collect();
        let runs = cur.take(l.values as u64 / 2, String::new)?.to_vec();
        let cb = cur.take(colptr_bytes, String::new)?;
        let colptr: Vec<u32> = cb.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
        let prow = (rows - p * panel_rows).min(panel_rows);
        let panel = RlcCsc::from_parts(prow, cols, values, runs, colptr)
            .map_err(|source| RlcFileError::Panel { panel: p, source })?;
        if panel.entries() != l.entries {
            return Err(RlcFileError::CountMismatch {
                what: format!("panel {p} stored entries"),
                header: l.entries,
                counted: panel.entries(),
            });
        }
        if panel.nnz() != l.nnz {
            return Err(RlcFileError::CountMismatch {
                what: format!("panel {p} nonzeros"),
                header: l.nnz,
                counted: panel.nnz(),
            });
        }
        out.push(panel);
    }
    let m = RlcMatrix::from_panels(rows, panel_rows, out).map_err(|e| RlcFileError::BadHeader(e.to_string()))?;
    let stats = m.stats();
    if stats.stored_entries != total_entries {
        return Err(RlcFileError::CountMismatch {
            what: "total stored entries".into(),
            header: total_entries,
            counted: stats.stored_entries,
        });
    }
    if stats.nnz != total_nnz {
        return Err(RlcFileError::CountMismatch {
            what: "total nonzeros".into(),
            header: total_nnz,
            counted: stats.nnz,
        });
    }
    Ok(m)
}
