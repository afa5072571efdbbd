//! `core`: the Sparse SIMT core: every block wired as docs/microarchitecture.md draws them and
//! the job interface (configuration registers, the panel table, `start`, `done`, `error`); its
//! four memory requesters face the system's memory port (`system`, `mem_port`).
//!
//! ```text
//!            +------------------------------------ core -------------------------------------+
//!  cfg ----->| x_base y_base cols m panel_rows panels threshold   panel table (per panel:    |
//!  table_* ->| dense (1: a gemv job, no run bursts)              values runs colptr entries  |
//!  start --->| running: start .. done (the blocks are held in      rows), written before start|
//!            |   reset while not running)                                                    |
//!            |                                                                               |
//!            |  act_path --> colptr_fetch --> chunk_fetch --> decode_path --> backend --> drain |
//!            |     |              |               |   (rlc_decoder +     (route +      |      |
//!            |     |              |               |    multiplier)       L lanes)      |      |
//!            |     +--------------+-------+-------+------------------------------------+      |
//!            +----------------------------|--------------------------------------------------+
//!                                         v
//!       per requester (drain, act, colptr, chunk): *_req_valid/addr(/data[w], runs), *_ready;
//!       responses: act_resp, colptr_resp, chunk_resp(_runs), mem_resp_data[w]; outstanding
//! ```
//!
//! Contract (`model::core`): cycle 0 is the cycle after `start`; from then on every block does in
//! each cycle what the model's does, in the model's order (drain, route and the lanes, the
//! multiplier, the decoder, chunk_fetch, colptr_fetch, the activation scan, then the issue phase
//! the system's port grants). `done` is high in the cycle in which the model's job finishes (`t`; the model's
//! cycle count is the later of `t + 1` and the last write's completion, which the memory knows).
//! A malformed stream raises `error` with its code and the model's fault report: a run past the
//! panel (code 1: panel, column, row in `error_a`) stops the front end in the cycle the slice
//! reaches D3; bad column pointers (code 2: panel, column, `error_a` = colptr\[k\],
//! `error_b` = colptr\[k+1\]) stop it in the cycle they are checked. After a fault nothing new is
//! asked of the memory but drain's writes; the job ends once the memory has answered everything.
//! A job the RTL cannot run (code 3: more than `core.max_panels` panels, no panel, panels of more
//! rows than the tile or of rows not filling whole bursts of y, x larger than the activation
//! SRAM) is refused at `start`: `error` and `done` in that cycle, nothing run. `invalid` is sticky:
//! some product or sum was Inf or NaN (the model computes the same values; no fault).

pub mod accumulator;
pub mod act_load;
pub mod act_path;
pub mod act_scan;
pub mod act_sram;
pub mod backend;
pub mod chunk_fetch;
pub mod colptr_fetch;
pub mod decode_path;
pub mod drain;
pub mod multiplier;
pub mod reg_file;
pub mod rlc_decoder;
pub mod route;
mod update;

use self::act_path::ActPath;
use self::backend::Backend;
use self::chunk_fetch::ChunkFetch;
use self::colptr_fetch::ColptrFetch;
use self::decode_path::DecodePath;
use self::drain::Drain;
use crate::reg::Reg;
use crate::sram::Sram;
use crate::widen::Widen16;
use crate::wiring::{constant, many};
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

/// Error codes on `error_code`: the spec's [`FaultCode`]s.
pub mod error_code {
    use lacuna_spec::FaultCode;
    /// No error.
    pub const NONE: u64 = FaultCode::None.code();
    /// An entry decodes to a row past its panel.
    pub const RUN_OVERRUN: u64 = FaultCode::RunOverrun.code();
    /// `colptr[k] > colptr[k+1]` or `colptr[k+1] > entries`.
    pub const BAD_COLUMN_POINTER: u64 = FaultCode::BadColumnPointer.code();
    /// The job does not fit the RTL (see the module docs).
    pub const UNSUPPORTED_JOB: u64 = FaultCode::UnsupportedJob.code();
}

/// The ports of [`Core`].
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high: idle, no error"),
    ("x_base", "job: address of x (K FP16, burst aligned)"),
    ("y_base", "job: address of y (M FP32, burst aligned)"),
    ("cols", "job: K, activations per panel"),
    ("m", "job: M, rows of y"),
    ("panel_rows", "job: rows per panel (the last may have fewer)"),
    ("panels", "job: panels"),
    ("threshold", "job: activation threshold, a non-negative FP16"),
    ("dense", "job: 1 for a gemv job (dense panels: no run lengths, every run 0)"),
    ("table_write", "write entry table_index of the panel table this cycle"),
    ("table_index", "the panel"),
    ("table_values", "its FP16 values' address"),
    ("table_runs", "its run lengths' address"),
    ("table_colptr", "its column pointers' address"),
    ("table_entries", "its entries (padded length of values)"),
    ("table_rows", "its rows"),
    ("start", "run the configured job (cycle 0 is the next cycle)"),
    ("drain_ready", "the port takes drain's request this cycle"),
    ("act_ready", "the port takes act_load's request this cycle"),
    ("colptr_ready", "the port takes colptr_fetch's request this cycle"),
    ("chunk_ready", "the port takes chunk_fetch's request this cycle"),
    ("act_resp", "the response this cycle is act_load's"),
    ("colptr_resp", "the response this cycle is colptr_fetch's"),
    ("chunk_resp", "the response this cycle is chunk_fetch's"),
    ("chunk_resp_runs", "it is a run burst"),
    ("mem_resp_data", "the answer's burst (reads), 32-bit word w"),
    ("outstanding", "requests the port has in flight (as of the start of the cycle)"),
    ("drain_req_valid", "drain wants to write a burst of y"),
    ("drain_req_addr", "its address (burst aligned)"),
    ("drain_req_data", "its data, 32-bit word w"),
    ("act_req_valid", "act_load wants a burst of x"),
    ("act_req_addr", "its address"),
    ("colptr_req_valid", "colptr_fetch wants a pointer burst"),
    ("colptr_req_addr", "its address"),
    ("chunk_req_valid", "chunk_fetch wants a value or run burst"),
    ("chunk_req_addr", "its address"),
    ("chunk_req_runs", "it is a run burst"),
    ("running", "a job is running"),
    ("done", "the job finishes this cycle"),
    ("error", "the job faulted or was refused (until the next start)"),
    ("error_code", "1 run past the panel, 2 bad column pointers, 3 job refused"),
    ("error_panel", "the faulting panel"),
    ("error_col", "the faulting column"),
    ("error_a", "code 1: the row; code 2: colptr[k]"),
    ("error_b", "code 2: colptr[k+1]"),
    ("invalid", "an Inf or NaN product or sum was seen (until the next start)"),
    ("act_loaded", "probe: bytes of x in the activation SRAM"),
    ("drain_panel", "probe: the panel route hands to drain this cycle"),
    ("lane_ports_used", "probe: lane l issued on every write port this cycle"),
];

/// The Sparse SIMT core.
#[derive(LogicBlock)]
pub struct Core {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Address of x.
    pub x_base: Signal<In, Bits<32>>,
    /// Address of y.
    pub y_base: Signal<In, Bits<32>>,
    /// K.
    pub cols: Signal<In, Bits<32>>,
    /// M.
    pub m: Signal<In, Bits<32>>,
    /// Rows per panel.
    pub panel_rows: Signal<In, Bits<32>>,
    /// Panels.
    pub panels: Signal<In, Bits<16>>,
    /// Threshold.
    pub threshold: Signal<In, Bits<16>>,
    /// A gemv job.
    pub dense: Signal<In, Bit>,
    /// Panel table write.
    pub table_write: Signal<In, Bit>,
    /// Its panel.
    pub table_index: Signal<In, Bits<16>>,
    /// Values address.
    pub table_values: Signal<In, Bits<32>>,
    /// Runs address.
    pub table_runs: Signal<In, Bits<32>>,
    /// Column pointers address.
    pub table_colptr: Signal<In, Bits<32>>,
    /// Entries.
    pub table_entries: Signal<In, Bits<32>>,
    /// Rows.
    pub table_rows: Signal<In, Bits<32>>,
    /// Start.
    pub start: Signal<In, Bit>,
    /// Drain's request taken.
    pub drain_ready: Signal<In, Bit>,
    /// act_load's request taken.
    pub act_ready: Signal<In, Bit>,
    /// colptr_fetch's request taken.
    pub colptr_ready: Signal<In, Bit>,
    /// chunk_fetch's request taken.
    pub chunk_ready: Signal<In, Bit>,
    /// Response for act_load.
    pub act_resp: Signal<In, Bit>,
    /// Response for colptr_fetch.
    pub colptr_resp: Signal<In, Bit>,
    /// Response for chunk_fetch.
    pub chunk_resp: Signal<In, Bit>,
    /// A run burst.
    pub chunk_resp_runs: Signal<In, Bit>,
    /// The response's data.
    pub mem_resp_data: Vec<Signal<In, Bits<32>>>,
    /// Requests in flight.
    pub outstanding: Signal<In, Bits<32>>,
    /// Drain write.
    pub drain_req_valid: Signal<Out, Bit>,
    /// Its address.
    pub drain_req_addr: Signal<Out, Bits<32>>,
    /// Its data.
    pub drain_req_data: Vec<Signal<Out, Bits<32>>>,
    /// act_load read.
    pub act_req_valid: Signal<Out, Bit>,
    /// Its address.
    pub act_req_addr: Signal<Out, Bits<32>>,
    /// colptr_fetch read.
    pub colptr_req_valid: Signal<Out, Bit>,
    /// Its address.
    pub colptr_req_addr: Signal<Out, Bits<32>>,
    /// chunk_fetch read.
    pub chunk_req_valid: Signal<Out, Bit>,
    /// Its address.
    pub chunk_req_addr: Signal<Out, Bits<32>>,
    /// A run burst.
    pub chunk_req_runs: Signal<Out, Bit>,
    /// Running.
    pub running: Signal<Out, Bit>,
    /// Finishes this cycle.
    pub done: Signal<Out, Bit>,
    /// Faulted or refused.
    pub error: Signal<Out, Bit>,
    /// Error code.
    pub error_code: Signal<Out, Bits<8>>,
    /// Faulting panel.
    pub error_panel: Signal<Out, Bits<16>>,
    /// Faulting column.
    pub error_col: Signal<Out, Bits<32>>,
    /// Row or colptr\[k\].
    pub error_a: Signal<Out, Bits<32>>,
    /// colptr\[k+1\].
    pub error_b: Signal<Out, Bits<32>>,
    /// Inf or NaN seen.
    pub invalid: Signal<Out, Bit>,
    /// Probe: bytes of x loaded.
    pub act_loaded: Signal<Out, Bits<32>>,
    /// Probe: panel handed to drain.
    pub drain_panel: Signal<Out, Bits<16>>,
    /// Probe: lane l used every port.
    pub lane_ports_used: Vec<Signal<Out, Bit>>,
    act: ActPath,
    colptr: ColptrFetch,
    chunk: ChunkFetch,
    decode: DecodePath,
    backend: Backend,
    drain: Drain,
    table_colptr_mem: Sram<32>,
    table_chunk_mem: Sram<32>,
    table_rows_mem: Sram<32>,
    widen_act_panel: Widen16,
    widen_col_panel: Widen16,
    widen_slice_panel: Widen16,
    widen_table_index: Widen16,
    run: Reg<Bit>,
    drained: Reg<Bits<16>>,
    fault: Reg<Bit>,
    code: Reg<Bits<8>>,
    fault_panel: Reg<Bits<16>>,
    fault_col: Reg<Bits<32>>,
    fault_a: Reg<Bits<32>>,
    fault_b: Reg<Bits<32>>,
    saw_invalid: Reg<Bit>,
    block_reset: Signal<Local, Bit>,
    halt_step: Signal<Local, Bit>,
    halt_issue: Signal<Local, Bit>,
    drained_now: Signal<Local, Bits<16>>,
    upstream_idle: Signal<Local, Bit>,
    pipeline_empty: Signal<Local, Bit>,
    accepted: Signal<Local, Bit>,
    quiet: Signal<Local, Bit>,
    finished: Signal<Local, Bit>,
    unsupported: Signal<Local, Bit>,
    new_job: Signal<Local, Bit>,
    max_panels: Constant<Bits<16>>,
    tile_rows: Constant<Bits<32>>,
    max_cols: Constant<Bits<32>>,
    burst_rows_mask: Constant<Bits<32>>,
    code_overrun: Constant<Bits<8>>,
    code_pointer: Constant<Bits<8>>,
    code_unsupported: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
}

impl Core {
    /// The core for `arch` (which `rtl::blocks` has checked against the RTL's limits).
    pub fn from_arch(arch: &Arch) -> Core {
        let c = &arch.core;
        let words = arch.burst_words();
        Core {
            clock: Default::default(),
            reset: Default::default(),
            x_base: Default::default(),
            y_base: Default::default(),
            cols: Default::default(),
            m: Default::default(),
            panel_rows: Default::default(),
            panels: Default::default(),
            threshold: Default::default(),
            dense: Default::default(),
            table_write: Default::default(),
            table_index: Default::default(),
            table_values: Default::default(),
            table_runs: Default::default(),
            table_colptr: Default::default(),
            table_entries: Default::default(),
            table_rows: Default::default(),
            start: Default::default(),
            drain_ready: Default::default(),
            act_ready: Default::default(),
            colptr_ready: Default::default(),
            chunk_ready: Default::default(),
            act_resp: Default::default(),
            colptr_resp: Default::default(),
            chunk_resp: Default::default(),
            chunk_resp_runs: Default::default(),
            mem_resp_data: many(words),
            outstanding: Default::default(),
            drain_req_valid: Default::default(),
            drain_req_addr: Default::default(),
            drain_req_data: many(words),
            act_req_valid: Default::default(),
            act_req_addr: Default::default(),
            colptr_req_valid: Default::default(),
            colptr_req_addr: Default::default(),
            chunk_req_valid: Default::default(),
            chunk_req_addr: Default::default(),
            chunk_req_runs: Default::default(),
            running: Default::default(),
            done: Default::default(),
            error: Default::default(),
            error_code: Default::default(),
            error_panel: Default::default(),
            error_col: Default::default(),
            error_a: Default::default(),
            error_b: Default::default(),
            invalid: Default::default(),
            act_loaded: Default::default(),
            drain_panel: Default::default(),
            lane_ports_used: many(c.lanes as usize),
            act: ActPath::from_arch(arch),
            colptr: ColptrFetch::from_arch(arch),
            chunk: ChunkFetch::from_arch(arch),
            decode: DecodePath::from_arch(arch),
            backend: Backend::from_arch(arch),
            drain: Drain::from_arch(arch),
            table_colptr_mem: Sram::new(c.max_panels as usize, 2, 32, 2),
            table_chunk_mem: Sram::new(c.max_panels as usize, 2, 32, 2),
            table_rows_mem: Sram::new(c.max_panels as usize, 1, 32, 1),
            widen_act_panel: Default::default(),
            widen_col_panel: Default::default(),
            widen_slice_panel: Default::default(),
            widen_table_index: Default::default(),
            run: Default::default(),
            drained: Default::default(),
            fault: Default::default(),
            code: Default::default(),
            fault_panel: Default::default(),
            fault_col: Default::default(),
            fault_a: Default::default(),
            fault_b: Default::default(),
            saw_invalid: Default::default(),
            block_reset: Default::default(),
            halt_step: Default::default(),
            halt_issue: Default::default(),
            drained_now: Default::default(),
            upstream_idle: Default::default(),
            pipeline_empty: Default::default(),
            accepted: Default::default(),
            quiet: Default::default(),
            finished: Default::default(),
            unsupported: Default::default(),
            new_job: Default::default(),
            max_panels: constant(c.max_panels as u64),
            tile_rows: constant(arch.tile_rows() as u64),
            max_cols: constant(arch.max_cols() as u64),
            burst_rows_mask: constant(words as u64 - 1),
            code_overrun: constant(error_code::RUN_OVERRUN),
            code_pointer: constant(error_code::BAD_COLUMN_POINTER),
            code_unsupported: constant(error_code::UNSUPPORTED_JOB),
            one16: constant(1),
            zero8: constant(0),
            zero16: constant(0),
            zero32: constant(0),
        }
    }
}
