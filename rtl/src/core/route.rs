//! `route`: holds one slice and delivers each entry to the FIFO of lane `row mod L`.
//!
//! ```text
//!                       +---------------- route ----------------+
//!  in_valid/marker ---->| hold: C entries (pending, row, product) |--> in_ready (takes the token)
//!  in_entry_valid[e] -->|       or an end-of-panel marker         |--> start_drain, drain_panel
//!  in_row[e] ---------->|                                         |
//!  in_product[e] ------>| lane l (RouteLane): its pending entries, |--> push_count[l]
//!  free[l] ------------>|   ranked in entry order, the first      |--> push_target[l*D+k]
//!  quiet[l] ----------->|   free[l] of them pushed                |--> push_product[l*D+k]
//!  drain_idle --------->|                                         |
//!                       +-----------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md, "route"): per cycle each lane's FIFO takes as many of the
//! held slice's entries for that lane as it has free slots (`free`, after this cycle's issue), in
//! entry order; the slice leaves when all are delivered. An end-of-panel marker leaves when every
//! lane is quiet and drain is idle, and starts drain for its panel. `in_ready`: the route is empty
//! after this cycle, so it takes the multiplier's token now (which it delivers from the next
//! cycle). D = min(lane_queue_depth, C) push slots per lane; rows are 16 bits (tile rows at most
//! 65,536 in the RTL).
//!
//! Structure: `RouteHold` keeps the held token, one `RouteLane` per lane picks that lane's
//! entries, and `Route` wires them: rust-hdl cannot index a port of an indexed sub-block inside
//! `#[hdl_gen]` (`lanes[l].pending[e]`), so `Route::hdl` builds its wiring as rust-hdl's Verilog
//! AST in Rust loops, and `Route::update` does the same copies for rust-hdl's simulator.

use crate::reg::Reg;
use crate::wiring::{assign, index_constants, many, reduce, sig};
use rust_hdl::core::ast::{VerilogBlock, VerilogOp};
use rust_hdl::prelude::*;

/// One lane's share of the held slice: which entries are its, their order, what it takes.
#[derive(LogicBlock)]
pub struct RouteLane {
    /// Entry e is held and not yet delivered.
    pub pending: Vec<Signal<In, Bit>>,
    /// Entry e's row in the panel.
    pub row: Vec<Signal<In, Bits<16>>>,
    /// Entry e's product.
    pub product: Vec<Signal<In, Bits<32>>>,
    /// Free slots of this lane's FIFO after this cycle's issue.
    pub free: Signal<In, Bits<8>>,
    /// Entries pushed into the lane's FIFO this cycle.
    pub push_count: Signal<Out, Bits<8>>,
    /// Push slot k: the register (row div L).
    pub push_target: Vec<Signal<Out, Bits<16>>>,
    /// Push slot k: the product.
    pub push_product: Vec<Signal<Out, Bits<32>>>,
    /// Entry e is delivered this cycle.
    pub taken: Vec<Signal<Out, Bit>>,
    mine: Vec<Signal<Local, Bit>>,
    rank: Vec<Signal<Local, Bits<8>>>,
    seen: Vec<Signal<Local, Bits<8>>>,
    lane_id: Constant<Bits<16>>,
    lane_mask: Constant<Bits<16>>,
    lane_shift: Constant<Bits<16>>,
    idx8: Vec<Constant<Bits<8>>>,
    zero8: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
}

impl RouteLane {
    /// Lane `lane` of `lanes` (a power of two), `entries` per slice, `slots` pushes per cycle.
    pub fn new(lane: usize, lanes: usize, entries: usize, slots: usize) -> RouteLane {
        assert!(lanes.is_power_of_two() && lane < lanes && entries < 128 && slots >= 1);
        RouteLane {
            pending: many(entries),
            row: many(entries),
            product: many(entries),
            free: Default::default(),
            push_count: Default::default(),
            push_target: many(slots),
            push_product: many(slots),
            taken: many(entries),
            mine: many(entries),
            rank: many(entries),
            seen: many(entries + 1),
            lane_id: Constant::new((lane as LiteralType).into()),
            lane_mask: Constant::new(((lanes - 1) as LiteralType).into()),
            lane_shift: Constant::new((lanes.trailing_zeros() as LiteralType).into()),
            idx8: index_constants(slots),
            zero8: Constant::new((0 as LiteralType).into()),
            one8: Constant::new((1 as LiteralType).into()),
            zero16: Constant::new((0 as LiteralType).into()),
            zero32: Constant::new((0 as LiteralType).into()),
        }
    }
}

impl Logic for RouteLane {
    #[hdl_gen]
    fn update(&mut self) {
        // Rank each of this lane's pending entries among them, in entry order.
        self.seen[0].next = self.zero8.val();
        for e in 0..self.pending.len() {
            self.mine[e].next =
                self.pending[e].val() && ((self.row[e].val() & self.lane_mask.val()) == self.lane_id.val());
            self.rank[e].next = self.seen[e].val();
            self.seen[e + 1].next = self.seen[e].val();
            if self.mine[e].val() {
                self.seen[e + 1].next = self.seen[e].val() + self.one8.val();
            }
            self.taken[e].next = self.mine[e].val() && (self.rank[e].val() < self.free.val());
        }
        // The first `free` of them, in order, into the push slots.
        for e in 0..self.seen.len() {
            self.push_count.next = self.seen[e].val();
        }
        if self.free.val() < self.push_count.val() {
            self.push_count.next = self.free.val();
        }
        for k in 0..self.push_target.len() {
            self.push_target[k].next = self.zero16.val();
            self.push_product[k].next = self.zero32.val();
            for e in 0..self.pending.len() {
                if self.mine[e].val() && (self.rank[e].val() == self.idx8[k].val()) {
                    self.push_target[k].next = self.row[e].val() >> self.lane_shift.val();
                    self.push_product[k].next = self.product[e].val();
                }
            }
        }
    }
}

/// The held token: a slice's entries or an end-of-panel marker.
#[derive(LogicBlock)]
pub struct RouteHold {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The multiplier offers a token.
    pub in_valid: Signal<In, Bit>,
    /// It is an end-of-panel marker.
    pub in_marker: Signal<In, Bit>,
    /// The marker's panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Entry e of the offered slice is unmasked.
    pub in_entry_valid: Vec<Signal<In, Bit>>,
    /// Its row.
    pub in_row: Vec<Signal<In, Bits<16>>>,
    /// Its product.
    pub in_product: Vec<Signal<In, Bits<32>>>,
    /// Entry e was delivered this cycle (by some lane).
    pub taken: Vec<Signal<In, Bit>>,
    /// Every lane is quiet.
    pub all_quiet: Signal<In, Bit>,
    /// Drain is idle.
    pub drain_idle: Signal<In, Bit>,
    /// Entry e is held, not yet delivered.
    pub pending: Vec<Signal<Out, Bit>>,
    /// Its row.
    pub row: Vec<Signal<Out, Bits<16>>>,
    /// Its product.
    pub product: Vec<Signal<Out, Bits<32>>>,
    /// Takes the offered token this cycle.
    pub in_ready: Signal<Out, Bit>,
    /// The held marker leaves: drain starts.
    pub start_drain: Signal<Out, Bit>,
    /// Its panel.
    pub drain_panel: Signal<Out, Bits<16>>,
    held_pending: Vec<Reg<Bit>>,
    held_row: Vec<Reg<Bits<16>>>,
    held_product: Vec<Reg<Bits<32>>>,
    marker: Reg<Bit>,
    panel: Reg<Bits<16>>,
    left: Vec<Signal<Local, Bit>>,
    marker_leaves: Signal<Local, Bit>,
}

impl RouteHold {
    /// A hold for slices of `entries` entries.
    pub fn new(entries: usize) -> RouteHold {
        RouteHold {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_entry_valid: many(entries),
            in_row: many(entries),
            in_product: many(entries),
            taken: many(entries),
            all_quiet: Default::default(),
            drain_idle: Default::default(),
            pending: many(entries),
            row: many(entries),
            product: many(entries),
            in_ready: Default::default(),
            start_drain: Default::default(),
            drain_panel: Default::default(),
            held_pending: many(entries),
            held_row: many(entries),
            held_product: many(entries),
            marker: Default::default(),
            panel: Default::default(),
            left: many(entries + 1),
            marker_leaves: Default::default(),
        }
    }
}

impl Logic for RouteHold {
    #[hdl_gen]
    fn update(&mut self) {
        self.marker.clock.next = self.clock.val();
        self.marker.reset.next = self.reset.val();
        self.panel.clock.next = self.clock.val();
        self.panel.reset.next = self.reset.val();
        self.panel.d.next = self.panel.q.val();
        // What stays after this cycle's delivery.
        self.left[0].next = false;
        for e in 0..self.held_pending.len() {
            self.held_pending[e].clock.next = self.clock.val();
            self.held_pending[e].reset.next = self.reset.val();
            self.held_row[e].clock.next = self.clock.val();
            self.held_row[e].reset.next = self.reset.val();
            self.held_product[e].clock.next = self.clock.val();
            self.held_product[e].reset.next = self.reset.val();
            self.pending[e].next = self.held_pending[e].q.val();
            self.row[e].next = self.held_row[e].q.val();
            self.product[e].next = self.held_product[e].q.val();
            self.held_pending[e].d.next = self.held_pending[e].q.val() && !self.taken[e].val();
            self.held_row[e].d.next = self.held_row[e].q.val();
            self.held_product[e].d.next = self.held_product[e].q.val();
            self.left[e + 1].next = self.left[e].val() || (self.held_pending[e].q.val() && !self.taken[e].val());
        }
        self.marker_leaves.next = self.marker.q.val() && self.drain_idle.val() && self.all_quiet.val();
        self.start_drain.next = self.marker_leaves.val();
        self.drain_panel.next = self.panel.q.val();
        self.marker.d.next = self.marker.q.val() && !self.marker_leaves.val();
        // Empty after this cycle: take the offered token.
        self.in_ready.next = true;
        for e in 0..self.left.len() {
            self.in_ready.next = !self.left[e].val() && (!self.marker.q.val() || self.marker_leaves.val());
        }
        if self.in_valid.val() && self.in_ready.val() {
            self.marker.d.next = self.in_marker.val();
            self.panel.d.next = self.in_panel.val();
            for e in 0..self.held_pending.len() {
                self.held_pending[e].d.next = self.in_entry_valid[e].val() && !self.in_marker.val();
                self.held_row[e].d.next = self.in_row[e].val();
                self.held_product[e].d.next = self.in_product[e].val();
            }
        }
    }
}

/// The route stage: the held token and one `RouteLane` per lane, wired together.
#[derive(LogicBlock)]
pub struct Route {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The multiplier offers a token.
    pub in_valid: Signal<In, Bit>,
    /// It is an end-of-panel marker.
    pub in_marker: Signal<In, Bit>,
    /// The marker's panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Entry e of the offered slice is unmasked.
    pub in_entry_valid: Vec<Signal<In, Bit>>,
    /// Its row in the panel.
    pub in_row: Vec<Signal<In, Bits<16>>>,
    /// Its product.
    pub in_product: Vec<Signal<In, Bits<32>>>,
    /// Lane l's free FIFO slots after this cycle's issue.
    pub free: Vec<Signal<In, Bits<8>>>,
    /// Lane l is quiet.
    pub quiet: Vec<Signal<In, Bit>>,
    /// Drain is idle.
    pub drain_idle: Signal<In, Bit>,
    /// Takes the offered token this cycle.
    pub in_ready: Signal<Out, Bit>,
    /// Drain starts for `drain_panel`.
    pub start_drain: Signal<Out, Bit>,
    /// The panel drain starts on.
    pub drain_panel: Signal<Out, Bits<16>>,
    /// Entries pushed into lane l's FIFO.
    pub push_count: Vec<Signal<Out, Bits<8>>>,
    /// Lane l, slot k (index l * D + k): the register.
    pub push_target: Vec<Signal<Out, Bits<16>>>,
    /// Lane l, slot k: the product.
    pub push_product: Vec<Signal<Out, Bits<32>>>,
    hold: RouteHold,
    lanes: Vec<RouteLane>,
}

impl Route {
    /// A route for `lanes` lanes, slices of `entries` entries, `slots` pushes per lane per cycle.
    pub fn new(lanes: usize, entries: usize, slots: usize) -> Route {
        Route {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_entry_valid: many(entries),
            in_row: many(entries),
            in_product: many(entries),
            free: many(lanes),
            quiet: many(lanes),
            drain_idle: Default::default(),
            in_ready: Default::default(),
            start_drain: Default::default(),
            drain_panel: Default::default(),
            push_count: many(lanes),
            push_target: many(lanes * slots),
            push_product: many(lanes * slots),
            hold: RouteHold::new(entries),
            lanes: (0..lanes).map(|l| RouteLane::new(l, lanes, entries, slots)).collect(),
        }
    }

    fn slots(&self) -> usize {
        self.push_target.len() / self.lanes.len()
    }
}

impl Logic for Route {
    fn update(&mut self) {
        let (entries, slots) = (self.in_row.len(), self.slots());
        self.hold.clock.next = self.clock.val();
        self.hold.reset.next = self.reset.val();
        self.hold.in_valid.next = self.in_valid.val();
        self.hold.in_marker.next = self.in_marker.val();
        self.hold.in_panel.next = self.in_panel.val();
        self.hold.drain_idle.next = self.drain_idle.val();
        self.hold.all_quiet.next = self.quiet.iter().all(|q| q.val());
        for e in 0..entries {
            self.hold.in_entry_valid[e].next = self.in_entry_valid[e].val();
            self.hold.in_row[e].next = self.in_row[e].val();
            self.hold.in_product[e].next = self.in_product[e].val();
            self.hold.taken[e].next = self.lanes.iter().any(|lane| lane.taken[e].val());
        }
        for (l, lane) in self.lanes.iter_mut().enumerate() {
            lane.free.next = self.free[l].val();
            for e in 0..entries {
                lane.pending[e].next = self.hold.pending[e].val();
                lane.row[e].next = self.hold.row[e].val();
                lane.product[e].next = self.hold.product[e].val();
            }
            self.push_count[l].next = lane.push_count.val();
            for k in 0..slots {
                self.push_target[l * slots + k].next = lane.push_target[k].val();
                self.push_product[l * slots + k].next = lane.push_product[k].val();
            }
        }
        self.in_ready.next = self.hold.in_ready.val();
        self.start_drain.next = self.hold.start_drain.val();
        self.drain_panel.next = self.hold.drain_panel.val();
    }

    fn connect(&mut self) {
        for s in
            [&mut self.hold.in_valid, &mut self.hold.in_marker, &mut self.hold.drain_idle, &mut self.hold.all_quiet]
        {
            s.connect();
        }
        self.hold.clock.connect();
        self.hold.reset.connect();
        self.hold.in_panel.connect();
        for e in 0..self.in_row.len() {
            self.hold.in_entry_valid[e].connect();
            self.hold.in_row[e].connect();
            self.hold.in_product[e].connect();
            self.hold.taken[e].connect();
        }
        for lane in self.lanes.iter_mut() {
            lane.free.connect();
            for e in 0..lane.pending.len() {
                lane.pending[e].connect();
                lane.row[e].connect();
                lane.product[e].connect();
            }
        }
        for s in self.push_count.iter_mut() {
            s.connect();
        }
        for s in self.push_target.iter_mut() {
            s.connect();
        }
        for s in self.push_product.iter_mut() {
            s.connect();
        }
        self.in_ready.connect();
        self.start_drain.connect();
        self.drain_panel.connect();
    }

    fn hdl(&self) -> Verilog {
        let (entries, slots, lanes) = (self.in_row.len(), self.slots(), self.lanes.len());
        let mut b: VerilogBlock = Vec::new();
        b.push(assign(sig(&[&"hold", &"clock"]), sig(&[&"clock"])));
        b.push(assign(sig(&[&"hold", &"reset"]), sig(&[&"reset"])));
        for port in ["in_valid", "in_marker", "in_panel", "drain_idle"] {
            b.push(assign(sig(&[&"hold", &port]), sig(&[&port])));
        }
        let all_quiet = reduce((0..lanes).map(|l| sig(&[&"quiet", &l])).collect(), VerilogOp::BitAnd);
        b.push(assign(sig(&[&"hold", &"all_quiet"]), all_quiet));
        for e in 0..entries {
            for port in ["in_entry_valid", "in_row", "in_product"] {
                b.push(assign(sig(&[&"hold", &port, &e]), sig(&[&port, &e])));
            }
            let taken = reduce((0..lanes).map(|l| sig(&[&"lanes", &l, &"taken", &e])).collect(), VerilogOp::BitOr);
            b.push(assign(sig(&[&"hold", &"taken", &e]), taken));
        }
        for l in 0..lanes {
            b.push(assign(sig(&[&"lanes", &l, &"free"]), sig(&[&"free", &l])));
            for e in 0..entries {
                for (to, from) in [("pending", "pending"), ("row", "row"), ("product", "product")] {
                    b.push(assign(sig(&[&"lanes", &l, &to, &e]), sig(&[&"hold", &from, &e])));
                }
            }
            b.push(assign(sig(&[&"push_count", &l]), sig(&[&"lanes", &l, &"push_count"])));
            for k in 0..slots {
                b.push(assign(sig(&[&"push_target", &(l * slots + k)]), sig(&[&"lanes", &l, &"push_target", &k])));
                b.push(assign(sig(&[&"push_product", &(l * slots + k)]), sig(&[&"lanes", &l, &"push_product", &k])));
            }
        }
        for port in ["in_ready", "start_drain", "drain_panel"] {
            b.push(assign(sig(&[&port]), sig(&[&"hold", &port])));
        }
        Verilog::Combinatorial(b)
    }
}
