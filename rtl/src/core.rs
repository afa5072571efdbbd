//! `core`: the Sparse SIMT core: every block wired as docs/microarchitecture.md draws them and
//! the job interface (configuration registers, the panel table, `start`, `done`, `error`); its
//! four memory requesters face the system's memory port (`system`, `mem_port`).
//!
//! ```text
//!            +------------------------------------ core -------------------------------------+
//!  cfg ----->| x_base y_base cols m panel_rows panels threshold   panel table (per panel:    |
//!  table_* ->|                                                   values runs colptr entries  |
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

use crate::act_path::ActPath;
use crate::backend::Backend;
use crate::chunk_fetch::ChunkFetch;
use crate::colptr_fetch::ColptrFetch;
use crate::decode_path::DecodePath;
use crate::drain::Drain;
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

impl Logic for Core {
    #[hdl_gen]
    fn update(&mut self) {
        // The job interface: start, the refusal check, the run register.
        self.unsupported.next = (self.panels.val() > self.max_panels.val())
            || (self.panels.val() == self.zero16.val())
            || (self.panel_rows.val() > self.tile_rows.val())
            || ((self.panel_rows.val() & self.burst_rows_mask.val()) != self.zero32.val())
            || (self.cols.val() > self.max_cols.val());
        self.new_job.next = self.start.val() && !self.run.q.val();
        self.block_reset.next = self.reset.val() || !self.run.q.val();
        self.run.clock.next = self.clock.val();
        self.run.reset.next = self.reset.val();
        self.run.d.next = self.run.q.val();
        if self.new_job.val() && !self.unsupported.val() {
            self.run.d.next = true;
        }
        self.running.next = self.run.q.val();

        // The panel table, one copy per reader.
        self.widen_table_index.narrow.next = self.table_index.val();
        self.table_colptr_mem.clock.next = self.clock.val();
        self.table_colptr_mem.wr_enable.next = self.table_write.val();
        self.table_colptr_mem.wr_row.next = self.widen_table_index.wide.val();
        self.table_colptr_mem.wr_offset.next = self.zero32.val();
        self.table_colptr_mem.wr_data[0].next = self.table_colptr.val();
        self.table_colptr_mem.wr_data[1].next = self.table_entries.val();
        self.table_chunk_mem.clock.next = self.clock.val();
        self.table_chunk_mem.wr_enable.next = self.table_write.val();
        self.table_chunk_mem.wr_row.next = self.widen_table_index.wide.val();
        self.table_chunk_mem.wr_offset.next = self.zero32.val();
        self.table_chunk_mem.wr_data[0].next = self.table_values.val();
        self.table_chunk_mem.wr_data[1].next = self.table_runs.val();
        self.table_rows_mem.clock.next = self.clock.val();
        self.table_rows_mem.wr_enable.next = self.table_write.val();
        self.table_rows_mem.wr_row.next = self.widen_table_index.wide.val();
        self.table_rows_mem.wr_offset.next = self.zero32.val();
        self.table_rows_mem.wr_data[0].next = self.table_rows.val();

        // drain, first in the cycle.
        self.drain.clock.next = self.clock.val();
        self.drain.reset.next = self.block_reset.val();
        self.drain.panel_rows.next = self.panel_rows.val();
        self.drain.m.next = self.m.val();
        self.drain.y_base.next = self.y_base.val();
        for l in 0..self.backend.read_value.len() {
            self.drain.read_value[l].next = self.backend.read_value[l].val();
            self.lane_ports_used[l].next = self.backend.ports_used[l].val();
        }
        self.drain.start.next = self.backend.start_drain.val();
        self.drain.req_ready.next = self.drain_ready.val();
        self.drain_panel.next = self.backend.drain_panel.val();

        // route and the lanes.
        self.backend.clock.next = self.clock.val();
        self.backend.reset.next = self.block_reset.val();
        self.backend.drain_idle.next = self.drain.idle.val();
        self.backend.issue_enable.next = !self.drain.reading.val();
        self.backend.read_enable.next = self.drain.read_enable.val();
        self.backend.read_index.next = self.drain.read_index.val();
        self.backend.in_valid.next = self.decode.out_valid.val();
        self.backend.in_marker.next = self.decode.out_marker.val();
        self.backend.in_panel.next = self.decode.out_panel.val();
        for e in 0..self.decode.out_row.len() {
            self.backend.in_entry_valid[e].next = self.decode.out_entry_valid[e].val();
            self.backend.in_row[e].next = self.decode.out_row[e].val();
            self.backend.in_product[e].next = self.decode.out_product[e].val();
        }

        // The multiplier and the decoder, from the fetch buffer's head.
        self.decode.clock.next = self.clock.val();
        self.decode.reset.next = self.block_reset.val();
        self.decode.out_ready.next = self.backend.in_ready.val();
        self.decode.halt.next = self.fault.q.val();
        self.decode.in_valid.next = self.chunk.head_valid.val();
        self.decode.in_marker.next = self.chunk.head_marker.val();
        self.decode.in_panel.next = self.chunk.head_panel.val();
        self.decode.in_k.next = self.chunk.head_k.val();
        self.decode.in_first.next = self.chunk.head_first.val();
        self.decode.in_lo.next = self.chunk.head_lo.val();
        self.decode.in_hi.next = self.chunk.head_hi.val();
        self.decode.in_x.next = self.chunk.head_x.val();
        self.widen_slice_panel.narrow.next = self.chunk.head_panel.val();
        self.table_rows_mem.rd_row.next = self.widen_slice_panel.wide.val();
        self.table_rows_mem.rd_offset.next = self.zero32.val();
        self.decode.in_rows.next = self.table_rows_mem.rd[0].val();
        for e in 0..self.chunk.head_value.len() {
            self.decode.in_value[e].next = self.chunk.head_value[e].val();
            self.decode.in_run[e].next = self.chunk.head_run[e].val();
        }

        // A fault this cycle (a run past its panel) stops the front end before it steps; bad
        // pointers, found by colptr_fetch's step, stop the issue phase.
        self.halt_step.next = self.fault.q.val() || self.decode.overrun.val();
        self.halt_issue.next = self.halt_step.val() || self.colptr.error.val();

        // The front end: chunk_fetch, colptr_fetch, the activation path.
        self.chunk.clock.next = self.clock.val();
        self.chunk.reset.next = self.block_reset.val();
        self.chunk.pop.next = self.decode.in_ready.val();
        self.chunk.halt.next = self.halt_step.val();
        self.chunk.halt_issue.next = self.halt_issue.val();
        self.chunk.in_valid.next = self.colptr.head_valid.val();
        self.chunk.in_marker.next = self.colptr.head_marker.val();
        self.chunk.in_panel.next = self.colptr.head_panel.val();
        self.chunk.in_k.next = self.colptr.head_k.val();
        self.chunk.in_x.next = self.colptr.head_x.val();
        self.chunk.in_start.next = self.colptr.head_start.val();
        self.chunk.in_end.next = self.colptr.head_end.val();
        self.widen_col_panel.narrow.next = self.colptr.head_panel.val();
        self.table_chunk_mem.rd_row.next = self.widen_col_panel.wide.val();
        self.table_chunk_mem.rd_offset.next = self.zero32.val();
        self.chunk.in_values.next = self.table_chunk_mem.rd[0].val();
        self.chunk.in_runs.next = self.table_chunk_mem.rd[1].val();
        self.chunk.req_ready.next = self.chunk_ready.val();
        self.chunk.resp_valid.next = self.chunk_resp.val();
        self.chunk.resp_runs.next = self.chunk_resp_runs.val();

        self.colptr.clock.next = self.clock.val();
        self.colptr.reset.next = self.block_reset.val();
        self.colptr.out_pop.next = self.chunk.in_pop.val();
        self.colptr.halt.next = self.halt_step.val();
        self.colptr.in_valid.next = self.act.head_valid.val();
        self.colptr.in_marker.next = self.act.head_marker.val();
        self.colptr.in_panel.next = self.act.head_panel.val();
        self.colptr.in_k.next = self.act.head_k.val();
        self.colptr.in_x.next = self.act.head_x.val();
        self.widen_act_panel.narrow.next = self.act.head_panel.val();
        self.table_colptr_mem.rd_row.next = self.widen_act_panel.wide.val();
        self.table_colptr_mem.rd_offset.next = self.zero32.val();
        self.colptr.in_colptr.next = self.table_colptr_mem.rd[0].val();
        self.colptr.in_entries.next = self.table_colptr_mem.rd[1].val();
        self.colptr.req_ready.next = self.colptr_ready.val();
        self.colptr.resp_valid.next = self.colptr_resp.val();

        self.act.clock.next = self.clock.val();
        self.act.reset.next = self.block_reset.val();
        self.act.x_base.next = self.x_base.val();
        self.act.cols.next = self.cols.val();
        self.act.panels.next = self.panels.val();
        self.act.threshold.next = self.threshold.val();
        self.act.pop.next = self.colptr.in_pop.val();
        self.act.req_ready.next = self.act_ready.val();
        self.act.resp_valid.next = self.act_resp.val();
        self.act_loaded.next = self.act.loaded.val();
        for w in 0..self.mem_resp_data.len() {
            self.act.resp_data[w].next = self.mem_resp_data[w].val();
            self.colptr.resp_data[w].next = self.mem_resp_data[w].val();
            self.chunk.resp_data[w].next = self.mem_resp_data[w].val();
        }

        // The issue phase: every requester's request to the system's port, which grants one.
        self.drain_req_valid.next = self.drain.req_valid.val();
        self.drain_req_addr.next = self.drain.req_addr.val();
        for w in 0..self.mem_resp_data.len() {
            self.drain_req_data[w].next = self.drain.req_data[w].val();
        }
        self.act_req_valid.next = self.act.req_valid.val() && !self.halt_issue.val();
        self.act_req_addr.next = self.act.req_addr.val();
        self.colptr_req_valid.next = self.colptr.req_valid.val();
        self.colptr_req_addr.next = self.colptr.req_addr.val();
        self.chunk_req_valid.next = self.chunk.req_valid.val();
        self.chunk_req_addr.next = self.chunk.req_addr.val();
        self.chunk_req_runs.next = self.chunk.req_runs.val();
        self.accepted.next =
            self.drain_ready.val() || self.act_ready.val() || self.colptr_ready.val() || self.chunk_ready.val();

        // Faults: the first one is kept.
        self.fault.clock.next = self.clock.val();
        self.fault.reset.next = self.reset.val();
        self.fault.d.next = self.fault.q.val();
        self.code.clock.next = self.clock.val();
        self.code.reset.next = self.reset.val();
        self.code.d.next = self.code.q.val();
        self.fault_panel.clock.next = self.clock.val();
        self.fault_panel.reset.next = self.reset.val();
        self.fault_panel.d.next = self.fault_panel.q.val();
        self.fault_col.clock.next = self.clock.val();
        self.fault_col.reset.next = self.reset.val();
        self.fault_col.d.next = self.fault_col.q.val();
        self.fault_a.clock.next = self.clock.val();
        self.fault_a.reset.next = self.reset.val();
        self.fault_a.d.next = self.fault_a.q.val();
        self.fault_b.clock.next = self.clock.val();
        self.fault_b.reset.next = self.reset.val();
        self.fault_b.d.next = self.fault_b.q.val();
        self.saw_invalid.clock.next = self.clock.val();
        self.saw_invalid.reset.next = self.reset.val();
        self.saw_invalid.d.next = self.saw_invalid.q.val();
        if self.run.q.val() && (self.decode.invalid.val() || self.backend.invalid.val()) {
            self.saw_invalid.d.next = true;
        }
        if self.run.q.val() && !self.fault.q.val() {
            if self.decode.overrun.val() {
                self.fault.d.next = true;
                self.code.d.next = self.code_overrun.val();
                self.fault_panel.d.next = self.decode.overrun_panel.val();
                self.fault_col.d.next = self.decode.overrun_k.val();
                self.fault_a.d.next = self.decode.overrun_row.val();
                self.fault_b.d.next = self.zero32.val();
            } else if self.colptr.error.val() {
                self.fault.d.next = true;
                self.code.d.next = self.code_pointer.val();
                self.fault_panel.d.next = self.colptr.error_panel.val();
                self.fault_col.d.next = self.colptr.error_k.val();
                self.fault_a.d.next = self.colptr.error_start.val();
                self.fault_b.d.next = self.colptr.error_end.val();
            }
        }
        if self.new_job.val() {
            self.fault.d.next = self.unsupported.val();
            self.code.d.next = self.zero8.val();
            if self.unsupported.val() {
                self.code.d.next = self.code_unsupported.val();
            }
            self.fault_panel.d.next = self.zero16.val();
            self.fault_col.d.next = self.zero32.val();
            self.fault_a.d.next = self.zero32.val();
            self.fault_b.d.next = self.zero32.val();
            self.saw_invalid.d.next = false;
        }
        self.error.next = self.fault.q.val();
        self.error_code.next = self.code.q.val();
        self.error_panel.next = self.fault_panel.q.val();
        self.error_col.next = self.fault_col.q.val();
        self.error_a.next = self.fault_a.q.val();
        self.error_b.next = self.fault_b.q.val();
        self.invalid.next = self.saw_invalid.q.val();

        // Finished? (model::core's test, on this cycle's outcome.)
        self.drained.clock.next = self.clock.val();
        self.drained.reset.next = self.block_reset.val();
        self.drained_now.next = self.drained.q.val();
        if self.drain.done_panel.val() {
            self.drained_now.next = self.drained.q.val() + self.one16.val();
        }
        self.drained.d.next = self.drained_now.val();
        self.upstream_idle.next = self.act.done.val()
            && !self.act.head_valid.val()
            && self.colptr.idle.val()
            && self.colptr.empty.val()
            && self.chunk.idle.val()
            && self.chunk.empty.val();
        self.pipeline_empty.next = self.decode.empty.val()
            && self.backend.in_ready.val()
            && self.drain.idle.val()
            && !self.drain.pending.val();
        self.quiet.next = (self.outstanding.val() == self.zero32.val()) && !self.accepted.val();
        self.finished.next =
            self.upstream_idle.val() && self.pipeline_empty.val() && (self.drained_now.val() == self.panels.val());
        if self.fault.q.val() || self.decode.overrun.val() || self.colptr.error.val() {
            self.finished.next = self.quiet.val() && !self.drain.pending.val();
        }
        self.done.next = (self.run.q.val() && self.finished.val()) || (self.new_job.val() && self.unsupported.val());
        if self.run.q.val() && self.finished.val() {
            self.run.d.next = false;
        }
    }
}
