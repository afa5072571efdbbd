//! The jobs of lacuna's units: their kinds ([`JobKind`]), the register map of a unit's job
//! interface ([`SPMSPV_REGISTERS`], [`PANEL_TABLE_REGISTERS`]: names, widths and meanings, the
//! RTL's port names) with a job's values ([`SpmspvRegisters`], [`PanelTableEntry`]), and the
//! memory image of one core job (spMspV or gemv): where the activations, the arrays of every
//! panel and the output live, in bytes. The cycle model, the RTL's job interface and the testbench all take
//! their registers and addresses from here.
//!
//! Layout, each region starting on a `memory.request_bytes` boundary, in this order: x (K FP16),
//! then per panel its values (2P bytes), runs (P/2 bytes; none in a gemv job's dense panels) and
//! column pointers (4(K+1) bytes), then y (M FP32).

use crate::dense_panels::DensePanels;
use crate::{Arch, RlcMatrix};

/// The kinds of job lacuna's units run: the Sparse SIMT core's spMspV and GEMV; the expert
/// unit's and the vector unit's kinds join here.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// `y = W x` over RLC-CSC row panels, inactive activations skipped, on the Sparse SIMT core.
    Spmspv,
    /// `y = W x` over dense column panels (`crate::dense_panels`: no run lengths), inactive
    /// activations still skipped, on the same core with its `dense` register set: the layout for
    /// a layer too dense for RLC-CSC to pay.
    Gemv,
}

impl JobKind {
    /// The unit that runs it.
    pub fn unit(self) -> crate::placement::Unit {
        match self {
            JobKind::Spmspv | JobKind::Gemv => crate::placement::Unit::Core,
        }
    }

    /// Its configuration registers (written before `start`).
    pub fn registers(self) -> &'static [Register] {
        match self {
            JobKind::Spmspv | JobKind::Gemv => &SPMSPV_REGISTERS,
        }
    }

    /// The kind's name, as programs and reports write it.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::Spmspv => "spmspv",
            JobKind::Gemv => "gemv",
        }
    }
}

/// How the compiler chooses each linear layer's job, and so its layout in memory (a program's
/// `settings.layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `gemv` over dense panels where they take fewer bytes than RLC-CSC
    /// ([`crate::dense_panels::dense_pays`]), else `spmspv`.
    #[default]
    Auto,
    /// Every layer `spmspv` over RLC-CSC (the layout before dense panels existed: a baseline).
    RlcCsc,
}

impl Layout {
    /// Its name in programs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Auto => "auto",
            Layout::RlcCsc => "rlc-csc",
        }
    }

    /// The job for a layer of weights `m`.
    pub fn job(self, m: &RlcMatrix) -> JobKind {
        match self {
            Layout::Auto if crate::dense_panels::dense_pays(m) => JobKind::Gemv,
            _ => JobKind::Spmspv,
        }
    }
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Layout, String> {
        match s {
            "auto" => Ok(Layout::Auto),
            "rlc-csc" => Ok(Layout::RlcCsc),
            _ => Err(format!("unknown layout {s:?}: auto or rlc-csc")),
        }
    }
}

/// A core job's weights, in either layout.
#[derive(Clone, Copy, Debug)]
pub enum Weights<'a> {
    /// RLC-CSC panels: a `spmspv` job.
    Rlc(&'a RlcMatrix),
    /// Dense column panels: a `gemv` job.
    Dense(&'a DensePanels),
}

/// One register of a unit's job interface: its name (the RTL's port of the same name), width and
/// meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    /// The name, as the RTL's port.
    pub name: &'static str,
    /// Width in bits.
    pub bits: u32,
    /// What it holds.
    pub doc: &'static str,
}

/// The core's job registers (spMspV and GEMV), in the order the RTL lists them.
pub const SPMSPV_REGISTERS: [Register; 8] = [
    Register { name: "x_base", bits: 32, doc: "address of x (K FP16, burst aligned)" },
    Register { name: "y_base", bits: 32, doc: "address of y (M FP32, burst aligned)" },
    Register { name: "cols", bits: 32, doc: "K, activations per panel" },
    Register { name: "m", bits: 32, doc: "M, rows of y" },
    Register { name: "panel_rows", bits: 32, doc: "rows per panel (the last may have fewer)" },
    Register { name: "panels", bits: 16, doc: "panels" },
    Register { name: "threshold", bits: 16, doc: "activation threshold, a non-negative FP16" },
    Register { name: "dense", bits: 1, doc: "1 for a gemv job (dense panels: no run lengths, every run 0)" },
];

/// One entry of the core's panel table, written at `table_index` with `table_write`.
pub const PANEL_TABLE_REGISTERS: [Register; 5] = [
    Register { name: "table_values", bits: 32, doc: "its FP16 values' address" },
    Register { name: "table_runs", bits: 32, doc: "its run lengths' address" },
    Register { name: "table_colptr", bits: 32, doc: "its column pointers' address" },
    Register { name: "table_entries", bits: 32, doc: "its entries (padded length of values)" },
    Register { name: "table_rows", bits: 32, doc: "its rows" },
];

/// A core job's register values (spMspV or gemv).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpmspvRegisters {
    /// Address of x.
    pub x_base: u64,
    /// Address of y.
    pub y_base: u64,
    /// K.
    pub cols: u64,
    /// M.
    pub m: u64,
    /// Rows per panel.
    pub panel_rows: u64,
    /// Panels.
    pub panels: u64,
    /// The threshold's FP16 bits.
    pub threshold: u16,
    /// A `gemv` job.
    pub dense: bool,
}

impl SpmspvRegisters {
    /// Each register with its value, in [`SPMSPV_REGISTERS`] order.
    pub fn values(&self) -> [(&'static Register, u64); 8] {
        let v = [
            self.x_base,
            self.y_base,
            self.cols,
            self.m,
            self.panel_rows,
            self.panels,
            self.threshold as u64,
            self.dense as u64,
        ];
        std::array::from_fn(|i| (&SPMSPV_REGISTERS[i], v[i]))
    }
}

/// One panel table entry's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PanelTableEntry {
    /// Values' address.
    pub values: u64,
    /// Run lengths' address.
    pub runs: u64,
    /// Column pointers' address.
    pub colptr: u64,
    /// Entries (padded length of values).
    pub entries: u64,
    /// Rows.
    pub rows: u64,
}

impl PanelTableEntry {
    /// Each register with its value, in [`PANEL_TABLE_REGISTERS`] order.
    pub fn values(&self) -> [(&'static Register, u64); 5] {
        let r = &PANEL_TABLE_REGISTERS;
        [(&r[0], self.values), (&r[1], self.runs), (&r[2], self.colptr), (&r[3], self.entries), (&r[4], self.rows)]
    }
}

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

    /// Lays out `m` for `arch` (a gemv job's layout is `lacuna_model::Job::layout`'s: the
    /// same regions with an empty runs region).
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
