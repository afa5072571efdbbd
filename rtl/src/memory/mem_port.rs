//! `mem_port`: the one memory port that every requester of the system shares: an arbiter for
//! requests (the arch's `memory.arbitration`: fixed priority or round robin) and an in-order
//! router for responses.
//!
//! ```text
//!                    +---------------------------- mem_port ----------------------------+
//!  req_valid[r] ---->| grant: fixed priority, the first valid requester in index order   |--> mem_req_valid, mem_req_addr,
//!  req_addr[r] ----->|   (`MemRequester::ALL`); round robin, the first valid from `first` |    mem_req_write, mem_req_data[w]
//!  req_client[r] --->|   on, wrapping (`first`: one past the last accepted).              |--> req_ready[r]
//!  write_data[w] --->|   req_ready[r] = granted and mem_ready; a writer's request carries |--> req_client
//!  mem_ready ------->|   write_data; req_client_granted: the granted request's client     |--> req_client_granted
//!  mem_resp_valid -->| ids: FIFO of the client of every request in flight (written at    |--> resp_client
//!                    |   acceptance, max_outstanding deep); resp_client: the oldest's     |--> outstanding
//!                    +--------------------------------------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md "memory", docs/rtl.md "Memory port"): requester r is the
//! spec's `MemRequester::ALL[r]` (its index is its port and its place under fixed priority); each
//! request names its client (`MemClient::id`, one of the requester's `clients()`), which the
//! response carries back. At most one request per cycle leaves, granted as the model's arbiter
//! (`model::memory::arbiter`) grants it; the memory takes it when it raises `mem_ready` (fewer than
//! `max_outstanding` in flight, one per cycle). Every request, write or read, gets one response,
//! in order; it is presented the cycle before the request completes (its data is due) with
//! `mem_resp_valid`, and `resp_client` names whose it is in the same cycle (a requester takes the
//! responses of its clients; nobody takes a write's). `outstanding` counts the requests accepted
//! and not yet answered, as of the start of the cycle (the model's in-flight count after its
//! tick).

use crate::reg::Reg;
use crate::ring::Ring;
use crate::sram::Sram;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::{Arbitration, Arch, MemRequester};
use rust_hdl::prelude::*;

/// The ports of [`MemPort`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: nothing in flight"),
    ("req_valid", "requester r (MemRequester::ALL[r]) asks"),
    ("req_addr", "requester r: its address"),
    ("req_client", "requester r: the client of its request"),
    ("write_data", "the writing requester's burst, 32-bit word w"),
    ("mem_ready", "the memory takes the request this cycle"),
    ("mem_resp_valid", "the oldest request in flight is answered this cycle (the cycle before it completes)"),
    ("mem_req_valid", "a request leaves"),
    ("mem_req_addr", "its address"),
    ("mem_req_write", "it is a write"),
    ("mem_req_data", "the written burst, 32-bit word w"),
    ("req_ready", "requester r's request is taken"),
    ("resp_client", "the client of the oldest request in flight (whose the response is)"),
    ("outstanding", "requests accepted and not yet answered"),
    (
        "req_client_granted",
        "the granted client: 0 drain, 1 act_load, 2 colptr_fetch, 3 chunk_fetch values, 4 chunk_fetch runs",
    ),
];

/// The memory port arbiter and response router over the spec's requesters.
#[derive(LogicBlock)]
pub struct MemPort {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Requester r asks.
    pub req_valid: Vec<Signal<In, Bit>>,
    /// Its address.
    pub req_addr: Vec<Signal<In, Bits<32>>>,
    /// Its client.
    pub req_client: Vec<Signal<In, Bits<32>>>,
    /// The writer's data.
    pub write_data: Vec<Signal<In, Bits<32>>>,
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
    /// Requester r granted.
    pub req_ready: Vec<Signal<Out, Bit>>,
    /// The oldest request's client.
    pub resp_client: Signal<Out, Bits<32>>,
    /// In flight.
    pub outstanding: Signal<Out, Bits<32>>,
    /// The granted client's id.
    pub req_client_granted: Signal<Out, Bits<32>>,
    ids: Sram<32>,
    ring: Ring<32>,
    id: Signal<Local, Bits<32>>,
    accepted: Signal<Local, Bit>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    /// Round robin: the requester searched first (one past the last accepted).
    first: Reg<Bits<32>>,
    sel: Signal<Local, Bits<32>>,
    from_start: Signal<Local, Bits<32>>,
    start: Signal<Local, Bits<32>>,
    after: Signal<Local, Bits<32>>,
    /// Round robin (else fixed priority: the search starts at requester 0, `first` is ignored).
    round_robin: Constant<Bit>,
    /// Requester indices 0..N, and N: none granted.
    index: Vec<Constant<Bits<32>>>,
    none: Constant<Bits<32>>,
    /// Whether requester r writes (`MemRequester::writes`).
    writes: Vec<Constant<Bit>>,
}

impl MemPort {
    /// The port of `arch`'s memory for the spec's requesters.
    pub fn from_arch(arch: &Arch) -> MemPort {
        MemPort::new(arch.burst_words(), arch.memory.max_outstanding as usize, arch.memory.arbitration)
    }

    /// A port of bursts of `words` 32-bit words with up to `max_outstanding` in flight.
    pub fn new(words: usize, max_outstanding: usize, policy: Arbitration) -> MemPort {
        assert!(words >= 1 && max_outstanding >= 1);
        let n = MemRequester::ALL.len();
        MemPort {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: many(n),
            req_addr: many(n),
            req_client: many(n),
            write_data: many(words),
            mem_ready: Default::default(),
            mem_resp_valid: Default::default(),
            mem_req_valid: Default::default(),
            mem_req_addr: Default::default(),
            mem_req_write: Default::default(),
            mem_req_data: many(words),
            req_ready: many(n),
            resp_client: Default::default(),
            outstanding: Default::default(),
            req_client_granted: Default::default(),
            ids: Sram::new(max_outstanding, 1, 32, 1),
            ring: Ring::new(max_outstanding),
            id: Default::default(),
            accepted: Default::default(),
            one32: constant(1),
            zero32: constant(0),
            first: Default::default(),
            sel: Default::default(),
            from_start: Default::default(),
            start: Default::default(),
            after: Default::default(),
            round_robin: Constant::new(policy == Arbitration::RoundRobin),
            index: index_constants(n),
            none: constant(n as u64),
            writes: MemRequester::ALL.iter().map(|r| Constant::new(r.writes())).collect(),
        }
    }
}

impl Logic for MemPort {
    #[hdl_gen]
    fn update(&mut self) {
        self.ring.clock.next = self.clock.val();
        self.ring.reset.next = self.reset.val();
        self.ids.clock.next = self.clock.val();
        self.first.clock.next = self.clock.val();
        self.first.reset.next = self.reset.val();

        // The grant: the first valid requester from `start` on, else the first valid one (in
        // index order; fixed priority: `start` is 0, and both searches agree).
        self.start.next = self.zero32.val();
        if self.round_robin.val() {
            self.start.next = self.first.q.val();
        }
        self.sel.next = self.none.val();
        self.from_start.next = self.none.val();
        for r in 0..self.req_valid.len() {
            if self.req_valid[r].val() && (self.sel.val() == self.none.val()) {
                self.sel.next = self.index[r].val();
            }
            if self.req_valid[r].val()
                && (self.index[r].val() >= self.start.val())
                && (self.from_start.val() == self.none.val())
            {
                self.from_start.next = self.index[r].val();
            }
        }
        if self.from_start.val() != self.none.val() {
            self.sel.next = self.from_start.val();
        }
        self.mem_req_valid.next = self.sel.val() != self.none.val();
        for w in 0..self.write_data.len() {
            self.mem_req_data[w].next = self.write_data[w].val();
        }
        self.mem_req_write.next = false;
        self.mem_req_addr.next = self.zero32.val();
        self.id.next = self.zero32.val();
        for r in 0..self.req_valid.len() {
            self.req_ready[r].next = false;
            if self.sel.val() == self.index[r].val() {
                self.mem_req_addr.next = self.req_addr[r].val();
                self.id.next = self.req_client[r].val();
                self.mem_req_write.next = self.writes[r].val();
                self.req_ready[r].next = self.mem_ready.val();
            }
        }
        self.accepted.next = self.mem_req_valid.val() && self.mem_ready.val();
        self.req_client_granted.next = self.id.val();
        // Round robin: the ring moves on past an accepted request only.
        self.after.next = self.sel.val() + self.one32.val();
        if self.after.val() == self.none.val() {
            self.after.next = self.zero32.val();
        }
        self.first.d.next = self.first.q.val();
        if self.accepted.val() {
            self.first.d.next = self.after.val();
        }

        // The id FIFO: push at acceptance, pop at the response; its head names the response.
        self.ids.rd_row.next = self.ring.head.val();
        self.ids.rd_offset.next = self.zero32.val();
        self.resp_client.next = self.ids.rd[0].val();
        self.outstanding.next = self.ring.count.val();
        self.ids.wr_enable.next = self.accepted.val();
        self.ids.wr_row.next = self.ring.tail.val();
        self.ids.wr_offset.next = self.zero32.val();
        self.ids.wr_data[0].next = self.id.val();
        self.ring.pop.next = self.mem_resp_valid.val();
        self.ring.push.next = self.zero32.val();
        if self.accepted.val() {
            self.ring.push.next = self.one32.val();
        }
    }
}
