//! `mem_port`: the one memory port the core's loading and storing blocks share: an arbiter for
//! requests (the arch's `memory.arbitration`: fixed priority or round robin) and an in-order router
//! for responses.
//!
//! ```text
//!                    +---------------------------- mem_port ----------------------------+
//!  drain_valid/addr/ | grant: fixed priority, the first valid of drain > act > colptr > |--> mem_req_valid, mem_req_addr,
//!    data[w] ------->|   chunk; round robin, the first valid from `first` on, wrapping |    mem_req_write, mem_req_data[w]
//!  act_valid/addr -->|   (`first`: one past the last accepted). *_ready = granted and    |--> drain_ready, act_ready,
//!  colptr_valid/addr>|   mem_ready (drain writes; the others read)                       |    colptr_ready, chunk_ready
//!  chunk_valid/addr/ | ids: FIFO of the client of every request in flight (written at   |
//!    runs ---------->|   acceptance, max_outstanding deep)                               |
//!  mem_ready ------->| mem_resp_valid: the oldest request's response; routed by its id  |--> act_resp, colptr_resp,
//!  mem_resp_valid -->|   (a write's is dropped)                                          |    chunk_resp, chunk_resp_runs
//!                    |                                                                   |--> outstanding
//!                    +-------------------------------------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md "memory", docs/rtl.md "Memory port"): at most one request
//! per cycle leaves the core, granted as the model's arbiter (`model::memory::arbiter`) grants it; the memory takes it when it
//! raises `mem_ready` (fewer than `max_outstanding` in flight, one per cycle). Every request, write
//! or read, gets one response, in order; it is presented the cycle before the request completes
//! (its data is due), and this block tells its client in the same cycle. `outstanding` counts the
//! requests accepted and not yet answered, as of the start of the cycle (the model's in-flight
//! count after its tick).

use crate::reg::Reg;
use crate::sram::Sram;
use crate::wiring::{constant, many};
use lacuna_spec::{Arbitration, Arch, MemClient, MemRequester};
use rust_hdl::prelude::*;

/// The ports of [`MemPort`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: nothing in flight"),
    ("drain_valid", "drain wants to write a burst"),
    ("drain_addr", "its address"),
    ("drain_data", "its data, 32-bit word w"),
    ("act_valid", "act_load wants a burst of x"),
    ("act_addr", "its address"),
    ("colptr_valid", "colptr_fetch wants a pointer burst"),
    ("colptr_addr", "its address"),
    ("chunk_valid", "chunk_fetch wants a value or run burst"),
    ("chunk_addr", "its address"),
    ("chunk_runs", "it is a run burst"),
    ("mem_ready", "the memory takes the request this cycle"),
    ("mem_resp_valid", "the oldest request in flight is answered this cycle (the cycle before it completes)"),
    ("mem_req_valid", "a request leaves the core"),
    ("mem_req_addr", "its address"),
    ("mem_req_write", "it is a write (drain)"),
    ("mem_req_data", "the written burst, 32-bit word w"),
    ("drain_ready", "drain's request is taken"),
    ("act_ready", "act_load's request is taken"),
    ("colptr_ready", "colptr_fetch's request is taken"),
    ("chunk_ready", "chunk_fetch's request is taken"),
    ("act_resp", "the response is act_load's"),
    ("colptr_resp", "the response is colptr_fetch's"),
    ("chunk_resp", "the response is chunk_fetch's"),
    ("chunk_resp_runs", "it is a run burst"),
    ("outstanding", "requests accepted and not yet answered"),
    ("req_client", "the granted client: 0 drain, 1 act_load, 2 colptr_fetch, 3 chunk_fetch values, 4 chunk_fetch runs"),
];

/// Requester indices (the arbiter's ring): the spec's [`MemRequester::index`].
const R_DRAIN: u64 = MemRequester::Drain.index() as u64;
const R_ACT: u64 = MemRequester::ActLoad.index() as u64;
const R_COLPTR: u64 = MemRequester::ColptrFetch.index() as u64;
const R_CHUNK: u64 = MemRequester::ChunkFetch.index() as u64;

/// Client ids in the response FIFO: the spec's [`MemClient::id`]s.
const DRAIN: u64 = MemClient::Outputs.id();
const ACT: u64 = MemClient::Activations.id();
const COLPTR: u64 = MemClient::Colptr.id();
const VALUES: u64 = MemClient::Values.id();
const RUNS: u64 = MemClient::Runs.id();

/// The memory port arbiter and response router.
#[derive(LogicBlock)]
pub struct MemPort {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Drain write.
    pub drain_valid: Signal<In, Bit>,
    /// Its address.
    pub drain_addr: Signal<In, Bits<32>>,
    /// Its data.
    pub drain_data: Vec<Signal<In, Bits<32>>>,
    /// act_load read.
    pub act_valid: Signal<In, Bit>,
    /// Its address.
    pub act_addr: Signal<In, Bits<32>>,
    /// colptr_fetch read.
    pub colptr_valid: Signal<In, Bit>,
    /// Its address.
    pub colptr_addr: Signal<In, Bits<32>>,
    /// chunk_fetch read.
    pub chunk_valid: Signal<In, Bit>,
    /// Its address.
    pub chunk_addr: Signal<In, Bits<32>>,
    /// A run burst.
    pub chunk_runs: Signal<In, Bit>,
    /// Memory takes the request.
    pub mem_ready: Signal<In, Bit>,
    /// Oldest request answered.
    pub mem_resp_valid: Signal<In, Bit>,
    /// Request out.
    pub mem_req_valid: Signal<Out, Bit>,
    /// Its address.
    pub mem_req_addr: Signal<Out, Bits<32>>,
    /// A write.
    pub mem_req_write: Signal<Out, Bit>,
    /// Written data.
    pub mem_req_data: Vec<Signal<Out, Bits<32>>>,
    /// Drain granted.
    pub drain_ready: Signal<Out, Bit>,
    /// act_load granted.
    pub act_ready: Signal<Out, Bit>,
    /// colptr_fetch granted.
    pub colptr_ready: Signal<Out, Bit>,
    /// chunk_fetch granted.
    pub chunk_ready: Signal<Out, Bit>,
    /// Response for act_load.
    pub act_resp: Signal<Out, Bit>,
    /// Response for colptr_fetch.
    pub colptr_resp: Signal<Out, Bit>,
    /// Response for chunk_fetch.
    pub chunk_resp: Signal<Out, Bit>,
    /// A run burst.
    pub chunk_resp_runs: Signal<Out, Bit>,
    /// In flight.
    pub outstanding: Signal<Out, Bits<32>>,
    /// The granted client's id.
    pub req_client: Signal<Out, Bits<32>>,
    ids: Sram<32>,
    head: Reg<Bits<32>>,
    count: Reg<Bits<32>>,
    id: Signal<Local, Bits<32>>,
    accepted: Signal<Local, Bit>,
    tail: Signal<Local, Bits<32>>,
    new_head: Signal<Local, Bits<32>>,
    depth: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    id_drain: Constant<Bits<32>>,
    id_act: Constant<Bits<32>>,
    id_colptr: Constant<Bits<32>>,
    id_values: Constant<Bits<32>>,
    id_runs: Constant<Bits<32>>,
    /// Round robin: the requester searched first (one past the last accepted).
    first: Reg<Bits<32>>,
    sel: Signal<Local, Bits<32>>,
    start: Signal<Local, Bits<32>>,
    after: Signal<Local, Bits<32>>,
    /// 3 under round robin (the ring's index mask), 0 under fixed priority (`first` is ignored).
    ring_mask: Constant<Bits<32>>,
    none: Constant<Bits<32>>,
    r_drain: Constant<Bits<32>>,
    r_act: Constant<Bits<32>>,
    r_colptr: Constant<Bits<32>>,
    r_chunk: Constant<Bits<32>>,
}

impl MemPort {
    /// The port of `arch`'s memory.
    pub fn from_arch(arch: &Arch) -> MemPort {
        MemPort::new(arch.burst_words(), arch.memory.max_outstanding as usize, arch.memory.arbitration)
    }

    /// A port of bursts of `words` 32-bit words with up to `max_outstanding` in flight.
    pub fn new(words: usize, max_outstanding: usize, policy: Arbitration) -> MemPort {
        assert!(words >= 1 && max_outstanding >= 1);
        assert_eq!(MemRequester::ALL.len(), 4, "the ring below has four requesters");
        MemPort {
            clock: Default::default(),
            reset: Default::default(),
            drain_valid: Default::default(),
            drain_addr: Default::default(),
            drain_data: many(words),
            act_valid: Default::default(),
            act_addr: Default::default(),
            colptr_valid: Default::default(),
            colptr_addr: Default::default(),
            chunk_valid: Default::default(),
            chunk_addr: Default::default(),
            chunk_runs: Default::default(),
            mem_ready: Default::default(),
            mem_resp_valid: Default::default(),
            mem_req_valid: Default::default(),
            mem_req_addr: Default::default(),
            mem_req_write: Default::default(),
            mem_req_data: many(words),
            drain_ready: Default::default(),
            act_ready: Default::default(),
            colptr_ready: Default::default(),
            chunk_ready: Default::default(),
            act_resp: Default::default(),
            colptr_resp: Default::default(),
            chunk_resp: Default::default(),
            chunk_resp_runs: Default::default(),
            outstanding: Default::default(),
            req_client: Default::default(),
            ids: Sram::new(max_outstanding, 1, 32, 1),
            head: Default::default(),
            count: Default::default(),
            id: Default::default(),
            accepted: Default::default(),
            tail: Default::default(),
            new_head: Default::default(),
            depth: constant(max_outstanding as u64),
            one32: constant(1),
            zero32: constant(0),
            id_drain: constant(DRAIN),
            id_act: constant(ACT),
            id_colptr: constant(COLPTR),
            id_values: constant(VALUES),
            id_runs: constant(RUNS),
            first: Default::default(),
            sel: Default::default(),
            start: Default::default(),
            after: Default::default(),
            ring_mask: constant(match policy {
                Arbitration::FixedPriority => 0,
                Arbitration::RoundRobin => 3,
            }),
            none: constant(4),
            r_drain: constant(R_DRAIN),
            r_act: constant(R_ACT),
            r_colptr: constant(R_COLPTR),
            r_chunk: constant(R_CHUNK),
        }
    }
}

impl Logic for MemPort {
    #[hdl_gen]
    fn update(&mut self) {
        self.head.clock.next = self.clock.val();
        self.head.reset.next = self.reset.val();
        self.count.clock.next = self.clock.val();
        self.count.reset.next = self.reset.val();
        self.ids.clock.next = self.clock.val();

        self.first.clock.next = self.clock.val();
        self.first.reset.next = self.reset.val();

        // The grant: the first valid requester from `start` on, else the first valid one (in
        // drain > act_load > colptr_fetch > chunk_fetch order; fixed priority: `start` is 0, and
        // both passes agree). Later assignments win: each pass runs from the last index down.
        self.start.next = self.first.q.val() & self.ring_mask.val();
        self.sel.next = self.none.val();
        if self.chunk_valid.val() {
            self.sel.next = self.r_chunk.val();
        }
        if self.colptr_valid.val() {
            self.sel.next = self.r_colptr.val();
        }
        if self.act_valid.val() {
            self.sel.next = self.r_act.val();
        }
        if self.drain_valid.val() {
            self.sel.next = self.r_drain.val();
        }
        if self.chunk_valid.val() && (self.r_chunk.val() >= self.start.val()) {
            self.sel.next = self.r_chunk.val();
        }
        if self.colptr_valid.val() && (self.r_colptr.val() >= self.start.val()) {
            self.sel.next = self.r_colptr.val();
        }
        if self.act_valid.val() && (self.r_act.val() >= self.start.val()) {
            self.sel.next = self.r_act.val();
        }
        if self.drain_valid.val() && (self.r_drain.val() >= self.start.val()) {
            self.sel.next = self.r_drain.val();
        }
        self.mem_req_valid.next = self.sel.val() != self.none.val();
        self.mem_req_write.next = self.sel.val() == self.r_drain.val();
        for w in 0..self.drain_data.len() {
            self.mem_req_data[w].next = self.drain_data[w].val();
        }
        self.drain_ready.next = false;
        self.act_ready.next = false;
        self.colptr_ready.next = false;
        self.chunk_ready.next = false;
        self.mem_req_addr.next = self.chunk_addr.val();
        self.id.next = self.id_values.val();
        if self.chunk_runs.val() {
            self.id.next = self.id_runs.val();
        }
        if self.sel.val() == self.r_drain.val() {
            self.mem_req_addr.next = self.drain_addr.val();
            self.id.next = self.id_drain.val();
            self.drain_ready.next = self.mem_ready.val();
        } else if self.sel.val() == self.r_act.val() {
            self.mem_req_addr.next = self.act_addr.val();
            self.id.next = self.id_act.val();
            self.act_ready.next = self.mem_ready.val();
        } else if self.sel.val() == self.r_colptr.val() {
            self.mem_req_addr.next = self.colptr_addr.val();
            self.id.next = self.id_colptr.val();
            self.colptr_ready.next = self.mem_ready.val();
        } else {
            self.chunk_ready.next = self.chunk_valid.val() && self.mem_ready.val();
        }
        self.accepted.next = self.mem_req_valid.val() && self.mem_ready.val();
        self.req_client.next = self.id.val();
        // Round robin: the ring moves on past an accepted request only.
        self.after.next = self.sel.val() + self.one32.val();
        if self.after.val() == self.none.val() {
            self.after.next = self.zero32.val();
        }
        self.first.d.next = self.first.q.val();
        if self.accepted.val() {
            self.first.d.next = self.after.val();
        }

        // The oldest request's client gets the response.
        self.ids.rd_row.next = self.head.q.val();
        self.ids.rd_offset.next = self.zero32.val();
        self.act_resp.next = self.mem_resp_valid.val() && (self.ids.rd[0].val() == self.id_act.val());
        self.colptr_resp.next = self.mem_resp_valid.val() && (self.ids.rd[0].val() == self.id_colptr.val());
        self.chunk_resp_runs.next = self.ids.rd[0].val() == self.id_runs.val();
        self.chunk_resp.next =
            self.mem_resp_valid.val() && ((self.ids.rd[0].val() == self.id_values.val()) || self.chunk_resp_runs.val());
        self.outstanding.next = self.count.q.val();

        // The id FIFO: push at acceptance, pop at the response.
        self.tail.next = self.head.q.val() + self.count.q.val();
        if self.tail.val() >= self.depth.val() {
            self.tail.next = self.tail.val() - self.depth.val();
        }
        self.ids.wr_enable.next = self.accepted.val();
        self.ids.wr_row.next = self.tail.val();
        self.ids.wr_offset.next = self.zero32.val();
        self.ids.wr_data[0].next = self.id.val();
        self.new_head.next = self.head.q.val();
        if self.mem_resp_valid.val() {
            self.new_head.next = self.head.q.val() + self.one32.val();
            if self.new_head.val() == self.depth.val() {
                self.new_head.next = self.zero32.val();
            }
        }
        self.head.d.next = self.new_head.val();
        self.count.d.next = self.count.q.val();
        if self.accepted.val() && !self.mem_resp_valid.val() {
            self.count.d.next = self.count.q.val() + self.one32.val();
        }
        if !self.accepted.val() && self.mem_resp_valid.val() {
            self.count.d.next = self.count.q.val() - self.one32.val();
        }
    }
}
