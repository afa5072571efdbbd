//! # lacuna-model: the cycle-accurate model of lacuna
//!
//! One folder per unit, one file per hardware block, named as in `docs/microarchitecture.md` and
//! in `rtl/`: [`core`] (the Sparse SIMT core: `act_load`, `act_scan`, `colptr_fetch`,
//! `chunk_fetch`, `rlc_decoder`, `multiplier`, `route`, `accumulator`, `drain`), [`memory`] (the
//! shared memory port and its arbiter), [`vector`] (the vector unit), [`expert_unit`] (the
//! EdgeXpert expert unit: `channel_fetch`, `channel_buffer`, `dot_engine`, `swiglu`,
//! `down_engine`, `calibration`); [`system`] runs the units
//! of a decode step together, [`program`] a compiled program's trace on them.
//!
//! Contract: [`simulate`] runs one core job (spMspV over RLC-CSC, or GEMV over dense panels) on
//! an `Arch` and returns the output, which is bit-identical to `lacuna_golden::column_order` on
//! the same weights, the cycle count and the [`Counters`]. A
//! malformed RLC stream ends the job with a [`Fault`] (never a hang: a cycle limit derived from the
//! job size turns a model bug into [`SimError::Timeout`]).
#![warn(missing_docs)]

pub mod baselines;
pub mod core;
pub mod energy;
pub mod expert_unit;
pub mod memory;
pub mod program;
pub mod sweep;
pub mod system;
pub mod vector;

pub use core::counters::Counters;

use half::f16;
use lacuna_spec::dense_panels::{DensePanel, DensePanels};
use lacuna_spec::job::{JobKind, JobLayout, Weights};
use lacuna_spec::{ActivationFilter, Activations, Arch, RlcCsc, RlcMatrix};

/// One panel's arrays as the core reads them from memory: raw, possibly malformed.
#[derive(Clone, Copy, Debug)]
pub struct PanelData<'a> {
    /// Rows of the panel.
    pub rows: u32,
    /// FP16 values (padded).
    pub values: &'a [f16],
    /// Packed run lengths.
    pub runs: &'a [u8],
    /// Column pointers.
    pub colptr: &'a [u32],
}

impl<'a> PanelData<'a> {
    /// A valid panel.
    pub fn from_rlc(p: &'a RlcCsc) -> PanelData<'a> {
        PanelData { rows: p.rows(), values: p.values(), runs: p.runs(), colptr: p.colptr() }
    }

    /// A dense panel (a `gemv` job's: no run lengths).
    pub fn from_dense(p: &'a DensePanel) -> PanelData<'a> {
        PanelData { rows: p.rows(), values: p.values(), runs: &[], colptr: p.colptr() }
    }

    /// Entries the arrays hold in a job of `kind` (a `gemv` job reads no run lengths).
    pub fn entries(&self, kind: JobKind) -> u64 {
        match kind {
            JobKind::Gemv => self.values.len() as u64,
            _ => (self.values.len() as u64).min(self.runs.len() as u64 * 2),
        }
    }
}

/// One core job: spMspV over RLC-CSC panels or GEMV over dense panels.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// `Spmspv` (panels in RLC-CSC) or `Gemv` (dense panels: `runs` unused, every run 0).
    pub kind: JobKind,
    /// M.
    pub rows: u32,
    /// Rows per panel.
    pub panel_rows: u32,
    /// The panels, top to bottom.
    pub panels: Vec<PanelData<'a>>,
    /// The activation vector (K entries).
    pub x: &'a [f16],
    /// Which activations take part.
    pub filter: ActivationFilter,
}

impl<'a> Job<'a> {
    /// A job over a valid matrix.
    pub fn new(m: &'a RlcMatrix, x: &'a Activations, filter: ActivationFilter) -> Job<'a> {
        Job {
            kind: JobKind::Spmspv,
            rows: m.rows(),
            panel_rows: m.panel_rows(),
            panels: m.panels().iter().map(PanelData::from_rlc).collect(),
            x: x.as_slice(),
            filter,
        }
    }

    /// A `gemv` job over dense panels.
    pub fn gemv(d: &'a DensePanels, x: &'a Activations, filter: ActivationFilter) -> Job<'a> {
        Job {
            kind: JobKind::Gemv,
            rows: d.rows(),
            panel_rows: d.panel_rows(),
            panels: d.panels().iter().map(PanelData::from_dense).collect(),
            x: x.as_slice(),
            filter,
        }
    }

    /// The job of `w`'s kind.
    pub fn of(w: Weights<'a>, x: &'a Activations, filter: ActivationFilter) -> Job<'a> {
        match w {
            Weights::Rlc(m) => Job::new(m, x, filter),
            Weights::Dense(d) => Job::gemv(d, x, filter),
        }
    }

    /// The job's registers and panel table entries for `arch` (`lacuna_spec::job`'s register
    /// map): what a host writes to the core's job interface before `start`.
    pub fn registers(
        &self,
        arch: &Arch,
    ) -> (lacuna_spec::job::SpmspvRegisters, Vec<lacuna_spec::job::PanelTableEntry>) {
        let layout = self.layout(arch);
        let regs = lacuna_spec::job::SpmspvRegisters {
            x_base: layout.x,
            y_base: layout.y,
            cols: self.x.len() as u64,
            m: self.rows as u64,
            panel_rows: self.panel_rows as u64,
            panels: self.panels.len() as u64,
            threshold: self.filter.threshold.to_bits(),
            dense: self.kind == JobKind::Gemv,
        };
        let table = self
            .panels
            .iter()
            .zip(&layout.panels)
            .map(|(pd, pl)| lacuna_spec::job::PanelTableEntry {
                values: pl.values,
                runs: pl.runs,
                colptr: pl.colptr,
                entries: pd.entries(self.kind),
                rows: pd.rows as u64,
            })
            .collect();
        (regs, table)
    }

    /// The memory image's addresses for `arch` (`lacuna_spec::job`).
    pub fn layout(&self, arch: &Arch) -> JobLayout {
        let lengths = self.panels.iter().map(|p| lacuna_spec::job::PanelLengths {
            values: p.values.len() as u64,
            run_bytes: if self.kind == JobKind::Gemv { 0 } else { p.runs.len() as u64 },
            colptr: p.colptr.len() as u64,
        });
        JobLayout::from_lengths(arch, self.x.len() as u64, self.rows as u64, lengths)
    }
}

/// A malformed stream the core detected; the job ends early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, thiserror::Error)]
pub enum Fault {
    /// An entry decoded to a row at or past its panel's end.
    #[error("panel {panel}, column {col}: an entry decodes to row {row}, past the panel (cycle {cycle})")]
    RunOverrunsColumn {
        /// Panel.
        panel: u32,
        /// Column.
        col: u32,
        /// The row.
        row: u64,
        /// Cycle detected (the slice in D3).
        cycle: u64,
    },
    /// `colptr[k] > colptr[k+1]`, or past the arrays.
    #[error("panel {panel}, column {col}: bad column pointers {start}..{end} (cycle {cycle})")]
    BadColumnPointer {
        /// Panel.
        panel: u32,
        /// Column.
        col: u32,
        /// colptr\[k\].
        start: u64,
        /// colptr\[k+1\].
        end: u64,
        /// Cycle detected.
        cycle: u64,
    },
}

impl Fault {
    /// The spec's code for this fault (what the RTL's `error_code` carries).
    pub fn code(&self) -> lacuna_spec::FaultCode {
        match self {
            Fault::RunOverrunsColumn { .. } => lacuna_spec::FaultCode::RunOverrun,
            Fault::BadColumnPointer { .. } => lacuna_spec::FaultCode::BadColumnPointer,
        }
    }
}

/// The result of a simulated job.
#[derive(Clone, Debug)]
pub struct SimResult {
    /// y = W x, M FP32 values (rows of panels never drained after a fault stay 0).
    pub y: Vec<f32>,
    /// Cycles and every counter.
    pub counters: Counters,
    /// The malformed stream, if the core found one.
    pub fault: Option<Fault>,
    /// Every memory request in order (only from `simulate_logged`; empty otherwise).
    pub requests: Vec<memory::MemRequest>,
    /// The first cycle of every run of cycles of one class (only from `simulate_logged`): the
    /// counters' partition of the cycles, in time.
    pub phases: Vec<(u64, core::Class)>,
}

/// Why a job could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A panel is taller than the accumulator tile.
    #[error("panels of {panel_rows} rows do not fit the arch's tile of {tile_rows} rows (lanes x acc_regs_per_lane); encode with --arch")]
    PanelTooTall {
        /// Rows per panel.
        panel_rows: u32,
        /// The arch's tile.
        tile_rows: u32,
    },
    /// More panels than the core's panel table holds.
    #[error("{panels} panels; the arch's panel table holds {max} (core.max_panels)")]
    TooManyPanels {
        /// Panels of the job.
        panels: u64,
        /// core.max_panels.
        max: u32,
    },
    /// x does not fit the activation SRAM.
    #[error("K = {cols} activations need {} bytes of activation SRAM, the arch has {sram}", 2 * cols)]
    TooManyColumns {
        /// K.
        cols: u64,
        /// sram.activation_bytes.
        sram: u32,
    },
    /// M is beyond what one job may produce.
    #[error("M = {rows} rows; one job produces at most {MAX_JOB_ROWS} (its y is held in memory)")]
    TooManyRows {
        /// M.
        rows: u64,
    },
    /// x has the wrong length.
    #[error("the activation vector has {got} entries but the matrix has {cols} columns")]
    ActivationLength {
        /// K.
        cols: u64,
        /// Found.
        got: u64,
    },
    /// The model exceeded its cycle limit: a model bug, reported instead of hanging.
    #[error("the model did not finish within {cycles} cycles (a model bug)")]
    Timeout {
        /// Cycles simulated.
        cycles: u64,
    },
}

/// Simulates `job` on `arch` (with bulk skipping of idle cycles).
pub fn simulate(arch: &Arch, job: &Job) -> Result<SimResult, SimError> {
    simulate_with(arch, job, true)
}

/// Simulates with bulk skipping on or off (off: every cycle evaluated; for tests).
pub fn simulate_with(arch: &Arch, job: &Job, skip: bool) -> Result<SimResult, SimError> {
    run_checked(arch, job, skip, false)
}

/// Simulates and records every memory request (`SimResult::requests`), the stream the RTL
/// co-simulation compares first, and the cycles' classes in time (`SimResult::phases`).
pub fn simulate_logged(arch: &Arch, job: &Job) -> Result<SimResult, SimError> {
    run_checked(arch, job, true, true)
}

/// The most rows (M) one job may have: 2^24, 64 MiB of FP32 output. A valid `.rlc` file of a few
/// hundred kilobytes can declare hundreds of thousands of empty panels of thousands of rows each;
/// its y would take gigabytes (the largest M of a real layer, a vocabulary, is about 2^18).
pub const MAX_JOB_ROWS: u64 = 1 << 24;

fn run_checked(arch: &Arch, job: &Job, skip: bool, log: bool) -> Result<SimResult, SimError> {
    let rows = job.panels.iter().map(|p| p.rows as u64).sum::<u64>().max(job.rows as u64);
    if rows > MAX_JOB_ROWS {
        return Err(SimError::TooManyRows { rows });
    }
    if job.panels.len() as u64 > arch.core.max_panels as u64 {
        return Err(SimError::TooManyPanels { panels: job.panels.len() as u64, max: arch.core.max_panels });
    }
    if job.panel_rows > arch.tile_rows() || job.panels.iter().any(|p| p.rows > arch.tile_rows()) {
        return Err(SimError::PanelTooTall { panel_rows: job.panel_rows, tile_rows: arch.tile_rows() });
    }
    if job.x.len() as u64 > arch.max_cols() as u64 {
        return Err(SimError::TooManyColumns { cols: job.x.len() as u64, sram: arch.sram.activation_bytes });
    }
    if let Some(p) = job.panels.iter().find(|p| p.colptr.len() != job.x.len() + 1) {
        return Err(SimError::ActivationLength { cols: p.colptr.len() as u64 - 1, got: job.x.len() as u64 });
    }
    let layout = job.layout(arch);
    core::run(arch, job, &layout, skip, log)
}
