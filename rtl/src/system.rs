//! `system`: the top of lacuna's hardware: the Sparse SIMT core and the one memory port its
//! requesters share, with the job interface and the memory interface as its ports. Further units
//! (the expert unit) join here as more requesters of the port.
//!
//! ```text
//!            +-------------------------------- system ---------------------------------+
//!  job ----->|  core (job interface, the blocks)                                        |--> running, done, error*,
//!            |    drain/act/colptr/chunk requests --> mem_port (arch's arbitration) ----|--> mem_req_valid/addr/
//!            |    <-- grants, routed responses, outstanding                             |    write/data[w], client
//!  memory -->|  mem_ready, mem_resp_valid, mem_resp_data[w]                             |
//!            +--------------------------------------------------------------------------+
//! ```
//!
//! Contract (`model::core` with `model::memory`): the core's; the port is held in reset and takes
//! nothing while no job runs, so a job starts with nothing in flight and the arbiter's ring at its
//! start. The ports are the core's job interface and probes plus the memory interface below.

use crate::core::Core;
use crate::memory::mem_port::MemPort;
use crate::wiring::{constant, many};
use lacuna_spec::{Arch, MemClient, MemRequester};
use rust_hdl::prelude::*;

/// The ports of [`System`].
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high: idle, no error, nothing in flight"),
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
    ("mem_ready", "the memory takes the request this cycle"),
    ("mem_resp_valid", "the oldest request in flight is answered this cycle (the cycle before it completes)"),
    ("mem_resp_data", "the answer's burst (reads), 32-bit word w"),
    ("mem_req_valid", "a request leaves the system"),
    ("mem_req_addr", "its address (burst aligned)"),
    ("mem_req_write", "it is a write of y"),
    ("mem_req_data", "the written burst, 32-bit word w"),
    ("running", "a job is running"),
    ("done", "the job finishes this cycle"),
    ("error", "the job faulted or was refused (until the next start)"),
    ("error_code", "1 run past the panel, 2 bad column pointers, 3 job refused"),
    ("error_panel", "the faulting panel"),
    ("error_col", "the faulting column"),
    ("error_a", "code 1: the row; code 2: colptr[k]"),
    ("error_b", "code 2: colptr[k+1]"),
    ("invalid", "an Inf or NaN product or sum was seen (until the next start)"),
    (
        "mem_req_client",
        "probe: who asks: 0 drain, 1 act_load, 2 colptr_fetch, 3 chunk_fetch values, 4 chunk_fetch runs",
    ),
    ("act_loaded", "probe: bytes of x in the activation SRAM"),
    ("drain_panel", "probe: the panel route hands to drain this cycle"),
    ("lane_ports_used", "probe: lane l issued on every write port this cycle"),
];

/// The system top.
#[derive(LogicBlock)]
pub struct System {
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
    /// Memory takes the request.
    pub mem_ready: Signal<In, Bit>,
    /// Oldest request answered.
    pub mem_resp_valid: Signal<In, Bit>,
    /// Its data.
    pub mem_resp_data: Vec<Signal<In, Bits<32>>>,
    /// Request.
    pub mem_req_valid: Signal<Out, Bit>,
    /// Its address.
    pub mem_req_addr: Signal<Out, Bits<32>>,
    /// A write.
    pub mem_req_write: Signal<Out, Bit>,
    /// Written data.
    pub mem_req_data: Vec<Signal<Out, Bits<32>>>,
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
    /// Probe: the requesting client.
    pub mem_req_client: Signal<Out, Bits<32>>,
    /// Probe: bytes of x loaded.
    pub act_loaded: Signal<Out, Bits<32>>,
    /// Probe: panel handed to drain.
    pub drain_panel: Signal<Out, Bits<16>>,
    /// Probe: lane l used every port.
    pub lane_ports_used: Vec<Signal<Out, Bit>>,
    core: Core,
    port: MemPort,
    c_outputs: Constant<Bits<32>>,
    c_activations: Constant<Bits<32>>,
    c_colptr: Constant<Bits<32>>,
    c_values: Constant<Bits<32>>,
    c_runs: Constant<Bits<32>>,
}

/// The core's requesters in port order: `update` wires port r to `REQUESTERS[r]`, so the spec's
/// order must be this one (checked at compile time).
const REQUESTERS: [MemRequester; 4] =
    [MemRequester::Drain, MemRequester::ActLoad, MemRequester::ColptrFetch, MemRequester::ChunkFetch];
const _: () = {
    assert!(REQUESTERS.len() == MemRequester::ALL.len());
    let mut r = 0;
    while r < REQUESTERS.len() {
        assert!(REQUESTERS[r].index() == r);
        r += 1;
    }
};

impl System {
    /// The system for `arch` (which `rtl::blocks` has checked against the RTL's limits).
    pub fn from_arch(arch: &Arch) -> System {
        let words = arch.burst_words();
        System {
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
            mem_ready: Default::default(),
            mem_resp_valid: Default::default(),
            mem_resp_data: many(words),
            mem_req_valid: Default::default(),
            mem_req_addr: Default::default(),
            mem_req_write: Default::default(),
            mem_req_data: many(words),
            running: Default::default(),
            done: Default::default(),
            error: Default::default(),
            error_code: Default::default(),
            error_panel: Default::default(),
            error_col: Default::default(),
            error_a: Default::default(),
            error_b: Default::default(),
            invalid: Default::default(),
            mem_req_client: Default::default(),
            act_loaded: Default::default(),
            drain_panel: Default::default(),
            lane_ports_used: many(arch.core.lanes as usize),
            core: Core::from_arch(arch),
            port: MemPort::from_arch(arch),
            c_outputs: constant(MemClient::Outputs.id()),
            c_activations: constant(MemClient::Activations.id()),
            c_colptr: constant(MemClient::Colptr.id()),
            c_values: constant(MemClient::Values.id()),
            c_runs: constant(MemClient::Runs.id()),
        }
    }
}

impl Logic for System {
    #[hdl_gen]
    fn update(&mut self) {
        // The job interface, to the core.
        self.core.clock.next = self.clock.val();
        self.core.reset.next = self.reset.val();
        self.core.x_base.next = self.x_base.val();
        self.core.y_base.next = self.y_base.val();
        self.core.cols.next = self.cols.val();
        self.core.m.next = self.m.val();
        self.core.panel_rows.next = self.panel_rows.val();
        self.core.panels.next = self.panels.val();
        self.core.threshold.next = self.threshold.val();
        self.core.dense.next = self.dense.val();
        self.core.table_write.next = self.table_write.val();
        self.core.table_index.next = self.table_index.val();
        self.core.table_values.next = self.table_values.val();
        self.core.table_runs.next = self.table_runs.val();
        self.core.table_colptr.next = self.table_colptr.val();
        self.core.table_entries.next = self.table_entries.val();
        self.core.table_rows.next = self.table_rows.val();
        self.core.start.next = self.start.val();
        self.running.next = self.core.running.val();
        self.done.next = self.core.done.val();
        self.error.next = self.core.error.val();
        self.error_code.next = self.core.error_code.val();
        self.error_panel.next = self.core.error_panel.val();
        self.error_col.next = self.core.error_col.val();
        self.error_a.next = self.core.error_a.val();
        self.error_b.next = self.core.error_b.val();
        self.invalid.next = self.core.invalid.val();
        self.act_loaded.next = self.core.act_loaded.val();
        self.drain_panel.next = self.core.drain_panel.val();
        for l in 0..self.lane_ports_used.len() {
            self.lane_ports_used[l].next = self.core.lane_ports_used[l].val();
        }

        // The core's requesters to the port; its grants and responses back. The port is idle
        // (in reset, taking nothing) between jobs.
        self.port.clock.next = self.clock.val();
        self.port.reset.next = self.reset.val() || !self.core.running.val();
        // Port r is requester MemRequester::ALL[r] (the indices are checked where they are
        // declared, `REQUESTERS`); each request names its client, each response is taken by the
        // requester whose client it names.
        self.port.req_valid[0].next = self.core.drain_req_valid.val();
        self.port.req_addr[0].next = self.core.drain_req_addr.val();
        self.port.req_client[0].next = self.c_outputs.val();
        self.port.req_valid[1].next = self.core.act_req_valid.val();
        self.port.req_addr[1].next = self.core.act_req_addr.val();
        self.port.req_client[1].next = self.c_activations.val();
        self.port.req_valid[2].next = self.core.colptr_req_valid.val();
        self.port.req_addr[2].next = self.core.colptr_req_addr.val();
        self.port.req_client[2].next = self.c_colptr.val();
        self.port.req_valid[3].next = self.core.chunk_req_valid.val();
        self.port.req_addr[3].next = self.core.chunk_req_addr.val();
        self.port.req_client[3].next = self.c_values.val();
        if self.core.chunk_req_runs.val() {
            self.port.req_client[3].next = self.c_runs.val();
        }
        self.port.mem_ready.next = self.mem_ready.val() && self.core.running.val();
        self.port.mem_resp_valid.next = self.mem_resp_valid.val();
        self.core.drain_ready.next = self.port.req_ready[0].val();
        self.core.act_ready.next = self.port.req_ready[1].val();
        self.core.colptr_ready.next = self.port.req_ready[2].val();
        self.core.chunk_ready.next = self.port.req_ready[3].val();
        self.core.act_resp.next =
            self.mem_resp_valid.val() && (self.port.resp_client.val() == self.c_activations.val());
        self.core.colptr_resp.next = self.mem_resp_valid.val() && (self.port.resp_client.val() == self.c_colptr.val());
        self.core.chunk_resp_runs.next = self.port.resp_client.val() == self.c_runs.val();
        self.core.chunk_resp.next = self.mem_resp_valid.val()
            && ((self.port.resp_client.val() == self.c_values.val()) || self.core.chunk_resp_runs.val());
        self.core.outstanding.next = self.port.outstanding.val();
        for w in 0..self.mem_resp_data.len() {
            self.core.mem_resp_data[w].next = self.mem_resp_data[w].val();
            self.port.write_data[w].next = self.core.drain_req_data[w].val();
            self.mem_req_data[w].next = self.port.mem_req_data[w].val();
        }

        // The memory interface.
        self.mem_req_valid.next = self.port.mem_req_valid.val() && self.core.running.val();
        self.mem_req_addr.next = self.port.mem_req_addr.val();
        self.mem_req_write.next = self.port.mem_req_write.val();
        self.mem_req_client.next = self.port.req_client_granted.val();
    }
}
