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

/// Array lengths of one panel as laid out in memory: values (entries), run-length bytes, pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PanelLengths {
    /// FP16 values.
    pub values: u64,
    /// Bytes of packed run lengths.
    pub run_bytes: u64,
    /// Column pointers.
    pub colptr: u64,
}

impl JobLayout {
    /// Lays out a job of `x_len` activations, `rows` outputs and these panels for `arch`.
    pub fn from_lengths(
        arch: &Arch,
        x_len: u64,
        rows: u64,
        panels: impl IntoIterator<Item = PanelLengths>,
    ) -> JobLayout {
        let align = arch.memory.request_bytes as u64;
        let up = |a: u64| a.div_ceil(align) * align;
        let x = 0;
        let mut at = up(2 * x_len);
        let panels = panels
            .into_iter()
            .map(|p| {
                let values = at;
                let runs = up(values + 2 * p.values);
                let colptr = up(runs + p.run_bytes);
                at = up(colptr + 4 * p.colptr);
                PanelLayout { values, runs, colptr }
            })
            .collect();
        let y = at;
        JobLayout { x, panels, y, bytes: up(y + 4 * rows) }
    }

    /// Lays out `m` for `arch`.
    pub fn new(arch: &Arch, m: &RlcMatrix) -> JobLayout {
        let lengths = m.panels().iter().map(|p| PanelLengths {
            values: p.padded_len(),
            run_bytes: p.runs().len() as u64,
            colptr: p.colptr().len() as u64,
        });
        JobLayout::from_lengths(arch, m.cols() as u64, m.rows() as u64, lengths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DenseMatrix;

    #[test]
    fn every_region_starts_on_a_burst_boundary_in_the_documented_order() {
        let arch = Arch::preset("tiny").unwrap();
        let mut d = DenseMatrix::zeros(40, 3);
        d.set(39, 2, half::f16::ONE);
        let m = RlcMatrix::encode(&d, Some(arch.tile_rows())).unwrap();
        let l = JobLayout::new(&arch, &m);
        let burst = arch.memory.request_bytes as u64;
        let mut at = l.x;
        for p in &l.panels {
            for addr in [p.values, p.runs, p.colptr] {
                assert_eq!(addr % burst, 0);
                assert!(addr >= at, "regions in order: x, then per panel values, runs, colptr");
                at = addr;
            }
        }
        assert!(l.y > at && l.y % burst == 0);
        assert!(l.bytes >= l.y + 4 * 40);
    }
}
