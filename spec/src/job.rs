//! The memory image of one spMspV job: where the activations, the RLC-CSC arrays of every panel
//! and the output live, in bytes. The cycle model, the RTL's job interface and the testbench all
//! take their addresses from here.
//!
//! Layout, each region starting on a `memory.request_bytes` boundary, in this order: x (K FP16),
//! then per panel its values (2P bytes), runs (P/2 bytes) and column pointers (4(K+1) bytes),
//! then y (M FP32).

use crate::{Arch, RlcMatrix};

/// Addresses of one panel's arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PanelLayout {
    /// FP16 values.
    pub values: u64,
    /// Packed run lengths.
    pub runs: u64,
    /// Column pointers (u32).
    pub colptr: u64,
}

/// Addresses of a whole job.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct JobLayout {
    /// The activation vector.
    pub x: u64,
    /// Per panel, top to bottom.
    pub panels: Vec<PanelLayout>,
    /// The FP32 output vector.
    pub y: u64,
    /// Bytes of the whole image.
    pub bytes: u64,
}

impl JobLayout {
    /// Lays out `m` for `arch`.
    pub fn new(arch: &Arch, m: &RlcMatrix) -> JobLayout {
        let align = arch.memory.request_bytes as u64;
        let up = |a: u64| a.div_ceil(align) * align;
        let mut at = 0u64;
        let x = at;
        at = up(at + 2 * m.cols() as u64);
        let panels = m
            .panels()
            .iter()
            .map(|p| {
                let values = at;
                let runs = up(values + 2 * p.padded_len());
                let colptr = up(runs + p.padded_len() / 2);
                at = up(colptr + 4 * (p.cols() as u64 + 1));
                PanelLayout { values, runs, colptr }
            })
            .collect();
        let y = at;
        at = up(y + 4 * m.rows() as u64);
        JobLayout { x, panels, y, bytes: at }
    }
}
