//! `backend`: route and the accumulator lanes, wired: the core's back end as one block.
//!
//! ```text
//!                    +------------------------- backend --------------------------+
//!  in_valid -------->|  +-------+  push_count[l], push_*[l][k]  +--------------+   |--> read_value[l]
//!  in_marker ------->|  |       |------------------------------>| AccLane l    |   |--> invalid
//!  in_panel -------->|  | route |<------------------------------| (L of them)  |   |--> ports_used[l]
//!  in_entry_*[e] --->|  |       |   free[l], quiet[l]           |              |   |
//!  drain_idle ------>|  +-------+                               +--------------+   |
//!  issue_enable ---->|      |--> in_ready, start_drain, drain_panel    ^ read_enable, read_index
//!                    +---------------------------------------------------------------+
//! ```
//!
//! Contract: the union of `route` and `accumulator` (docs/microarchitecture.md): a token offered
//! while `in_ready` is taken; its entries reach lane `row mod L`, register `row div L`; a marker
//! starts drain once every lane is quiet and `drain_idle`; drain reads register `read_index` of
//! every lane while `read_enable` (and `issue_enable` is low). `invalid`: some lane added to a
//! register that had overflowed to Inf. The wiring is generated (see `wiring`).

use super::accumulator::AccLane;
use super::route::Route;
use crate::wiring::{assign, many, reduce, sig};
use lacuna_spec::Arch;
use rust_hdl::core::ast::{VerilogBlock, VerilogOp};
use rust_hdl::prelude::*;

/// The ports of [`Backend`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high"),
    ("in_valid", "the multiplier offers a token (a slice or an end-of-panel marker)"),
    ("in_marker", "the token is an end-of-panel marker"),
    ("in_panel", "the marker's panel"),
    ("in_entry_valid", "slice entry e is unmasked"),
    ("in_row", "slice entry e: its row in the panel"),
    ("in_product", "slice entry e: its exact FP32 product"),
    ("drain_idle", "drain is not reading registers"),
    ("issue_enable", "the lanes may issue (drain is not reading)"),
    ("read_enable", "drain reads register read_index of every lane and resets it"),
    ("read_index", "the register drain reads"),
    ("in_ready", "the offered token is taken this cycle"),
    ("start_drain", "a marker left: drain starts on drain_panel"),
    ("drain_panel", "the panel drain starts on"),
    ("read_value", "lane l: the value drain reads"),
    ("invalid", "a lane added to a register that overflowed to Inf"),
    ("ports_used", "lane l issued on every write port this cycle"),
];

/// Route plus L accumulator lanes.
#[derive(LogicBlock)]
pub struct Backend {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A token is offered.
    pub in_valid: Signal<In, Bit>,
    /// It is a marker.
    pub in_marker: Signal<In, Bit>,
    /// The marker's panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Entry e is unmasked.
    pub in_entry_valid: Vec<Signal<In, Bit>>,
    /// Entry e's row.
    pub in_row: Vec<Signal<In, Bits<16>>>,
    /// Entry e's product.
    pub in_product: Vec<Signal<In, Bits<32>>>,
    /// Drain is idle.
    pub drain_idle: Signal<In, Bit>,
    /// The lanes may issue.
    pub issue_enable: Signal<In, Bit>,
    /// Drain reads.
    pub read_enable: Signal<In, Bit>,
    /// The register drain reads.
    pub read_index: Signal<In, Bits<16>>,
    /// The token is taken.
    pub in_ready: Signal<Out, Bit>,
    /// Drain starts.
    pub start_drain: Signal<Out, Bit>,
    /// On this panel.
    pub drain_panel: Signal<Out, Bits<16>>,
    /// Lane l's value for drain.
    pub read_value: Vec<Signal<Out, Bits<32>>>,
    /// An overflowed register was added to.
    pub invalid: Signal<Out, Bit>,
    /// Lane l used every write port.
    pub ports_used: Vec<Signal<Out, Bit>>,
    route: Route,
    lanes: Vec<AccLane>,
}

impl Backend {
    /// The back end of `arch`'s core.
    pub fn from_arch(arch: &Arch) -> Backend {
        let c = &arch.core;
        let (lanes, entries) = (c.lanes as usize, arch.chunk_entries() as usize);
        let slots = arch.push_slots() as usize;
        Backend {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_entry_valid: many(entries),
            in_row: many(entries),
            in_product: many(entries),
            drain_idle: Default::default(),
            issue_enable: Default::default(),
            read_enable: Default::default(),
            read_index: Default::default(),
            in_ready: Default::default(),
            start_drain: Default::default(),
            drain_panel: Default::default(),
            read_value: many(lanes),
            invalid: Default::default(),
            ports_used: many(lanes),
            route: Route::new(lanes, entries, slots),
            lanes: (0..lanes).map(|_| AccLane::from_arch(arch)).collect(),
        }
    }

    fn slots(&self) -> usize {
        self.route.push_target.len() / self.lanes.len()
    }
}

impl Logic for Backend {
    fn update(&mut self) {
        let slots = self.slots();
        let r = &mut self.route;
        r.clock.next = self.clock.val();
        r.reset.next = self.reset.val();
        r.in_valid.next = self.in_valid.val();
        r.in_marker.next = self.in_marker.val();
        r.in_panel.next = self.in_panel.val();
        r.drain_idle.next = self.drain_idle.val();
        for e in 0..self.in_row.len() {
            r.in_entry_valid[e].next = self.in_entry_valid[e].val();
            r.in_row[e].next = self.in_row[e].val();
            r.in_product[e].next = self.in_product[e].val();
        }
        for (l, lane) in self.lanes.iter_mut().enumerate() {
            lane.clock.next = self.clock.val();
            lane.reset.next = self.reset.val();
            lane.issue_enable.next = self.issue_enable.val();
            lane.read_enable.next = self.read_enable.val();
            lane.read_index.next = self.read_index.val();
            lane.push_count.next = r.push_count[l].val();
            for k in 0..slots {
                lane.push_target[k].next = r.push_target[l * slots + k].val();
                lane.push_product[k].next = r.push_product[l * slots + k].val();
            }
            r.free[l].next = lane.free.val();
            r.quiet[l].next = lane.quiet.val();
            self.read_value[l].next = lane.read_value.val();
            self.ports_used[l].next = lane.all_ports_used.val();
        }
        self.invalid.next = self.lanes.iter().any(|lane| lane.invalid.val());
        self.in_ready.next = self.route.in_ready.val();
        self.start_drain.next = self.route.start_drain.val();
        self.drain_panel.next = self.route.drain_panel.val();
    }

    fn connect(&mut self) {
        let r = &mut self.route;
        for s in [&mut r.in_valid, &mut r.in_marker, &mut r.drain_idle, &mut r.reset] {
            s.connect();
        }
        r.clock.connect();
        r.in_panel.connect();
        for e in 0..r.in_row.len() {
            r.in_entry_valid[e].connect();
            r.in_row[e].connect();
            r.in_product[e].connect();
        }
        for l in 0..self.lanes.len() {
            r.free[l].connect();
            r.quiet[l].connect();
        }
        for lane in self.lanes.iter_mut() {
            lane.clock.connect();
            for s in [&mut lane.reset, &mut lane.issue_enable, &mut lane.read_enable] {
                s.connect();
            }
            lane.read_index.connect();
            lane.push_count.connect();
            for k in 0..lane.push_target.len() {
                lane.push_target[k].connect();
                lane.push_product[k].connect();
            }
        }
        for l in 0..self.read_value.len() {
            self.read_value[l].connect();
            self.ports_used[l].connect();
        }
        self.invalid.connect();
        self.in_ready.connect();
        self.start_drain.connect();
        self.drain_panel.connect();
    }

    fn hdl(&self) -> Verilog {
        let (entries, slots, lanes) = (self.in_row.len(), self.slots(), self.lanes.len());
        let mut b: VerilogBlock = Vec::new();
        for port in ["clock", "reset", "in_valid", "in_marker", "in_panel", "drain_idle"] {
            b.push(assign(sig(&[&"route", &port]), sig(&[&port])));
        }
        for e in 0..entries {
            for port in ["in_entry_valid", "in_row", "in_product"] {
                b.push(assign(sig(&[&"route", &port, &e]), sig(&[&port, &e])));
            }
        }
        for l in 0..lanes {
            for port in ["clock", "reset", "issue_enable", "read_enable", "read_index"] {
                b.push(assign(sig(&[&"lanes", &l, &port]), sig(&[&port])));
            }
            b.push(assign(sig(&[&"lanes", &l, &"push_count"]), sig(&[&"route", &"push_count", &l])));
            for k in 0..slots {
                for port in ["push_target", "push_product"] {
                    b.push(assign(sig(&[&"lanes", &l, &port, &k]), sig(&[&"route", &port, &(l * slots + k)])));
                }
            }
            b.push(assign(sig(&[&"route", &"free", &l]), sig(&[&"lanes", &l, &"free"])));
            b.push(assign(sig(&[&"route", &"quiet", &l]), sig(&[&"lanes", &l, &"quiet"])));
            b.push(assign(sig(&[&"read_value", &l]), sig(&[&"lanes", &l, &"read_value"])));
            b.push(assign(sig(&[&"ports_used", &l]), sig(&[&"lanes", &l, &"all_ports_used"])));
        }
        let invalid = reduce((0..lanes).map(|l| sig(&[&"lanes", &l, &"invalid"])).collect(), VerilogOp::BitOr);
        b.push(assign(sig(&[&"invalid"]), invalid));
        for port in ["in_ready", "start_drain", "drain_panel"] {
            b.push(assign(sig(&[&port]), sig(&[&"route", &port])));
        }
        Verilog::Combinatorial(b)
    }
}
