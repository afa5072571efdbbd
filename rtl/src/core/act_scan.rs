//! `act_scan`: finds the active columns of each panel and queues them for the pointer fetch.
//!
//! ```text
//!                  +----------------------- act_scan -----------------------+
//!  cols, panels -->| k: next activation; panel: current panel                |--> read_index (group k/W)
//!  threshold ----->| group k..k+W-1: active = x != 0 and |x| >= threshold    |
//!  loaded -------->|   examined when all of it is in the SRAM and the queue  |--> head_valid, head_marker,
//!  read_x[i] ----->|   has room for all its active ones (after this cycle's  |    head_panel, head_k, head_x
//!  pop ----------->|   pop); after a panel's last group, an end-of-panel     |--> done
//!                  |   marker (its own cycle)                                 |
//!                  +----------------------------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md, "act_scan"): W = `scan_width` activations per cycle, k
//! from 0 for every panel; the queue (`activation_queue_depth` entries) hands its head to
//! colptr_fetch, which pops it (`pop`) before the scan pushes in the same cycle. `loaded`: bytes
//! of x in the activation SRAM; `read_x[i]` is the SRAM's x[k + i] for `read_index` = k (the
//! SRAM port is combinational). The threshold is a non-negative FP16; magnitudes compare as
//! integers, which orders non-negative finite FP16 values correctly.

use crate::reg::Reg;
use crate::ring::Ring;
use crate::wiring::{constant, index_constants, many};
use rust_hdl::prelude::*;

/// The ports of [`ActScan`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset; the scan starts at panel 0, k = 0"),
    ("cols", "K: activations per panel"),
    ("panels", "panels of the job"),
    ("threshold", "activation threshold, a non-negative FP16"),
    ("loaded", "bytes of x in the activation SRAM"),
    ("read_index", "k: the first activation of the group examined"),
    ("read_x", "the SRAM's x[k + i]"),
    ("pop", "colptr_fetch takes the queue's head this cycle"),
    ("head_valid", "the activation queue is not empty"),
    ("head_marker", "its head is an end-of-panel marker"),
    ("head_panel", "the head's panel"),
    ("head_k", "the head's column"),
    ("head_x", "the head's activation, FP16"),
    ("done", "every panel scanned and its marker queued"),
];

/// The activation scan and its queue.
#[derive(LogicBlock)]
pub struct ActScan {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// K.
    pub cols: Signal<In, Bits<32>>,
    /// Panels.
    pub panels: Signal<In, Bits<16>>,
    /// Threshold (FP16).
    pub threshold: Signal<In, Bits<16>>,
    /// Bytes of x loaded.
    pub loaded: Signal<In, Bits<32>>,
    /// First activation of the group.
    pub read_index: Signal<Out, Bits<32>>,
    /// x[k + i].
    pub read_x: Vec<Signal<In, Bits<16>>>,
    /// The head is taken this cycle.
    pub pop: Signal<In, Bit>,
    /// Queue not empty.
    pub head_valid: Signal<Out, Bit>,
    /// Head is a marker.
    pub head_marker: Signal<Out, Bit>,
    /// Head's panel.
    pub head_panel: Signal<Out, Bits<16>>,
    /// Head's column.
    pub head_k: Signal<Out, Bits<32>>,
    /// Head's activation.
    pub head_x: Signal<Out, Bits<16>>,
    /// All panels scanned.
    pub done: Signal<Out, Bit>,
    k: Reg<Bits<32>>,
    panel: Reg<Bits<16>>,
    q_marker: Vec<Reg<Bit>>,
    q_panel: Vec<Reg<Bits<16>>>,
    q_k: Vec<Reg<Bits<32>>>,
    q_x: Vec<Reg<Bits<16>>>,
    ring: Ring<8>,
    after_pop: Signal<Local, Bits<8>>,
    group_end: Signal<Local, Bits<32>>,
    active: Vec<Signal<Local, Bit>>,
    rank: Vec<Signal<Local, Bits<8>>>,
    slot: Vec<Signal<Local, Bits<8>>>,
    examine: Signal<Local, Bit>,
    push_marker: Signal<Local, Bit>,
    pushed: Signal<Local, Bits<8>>,
    offset: Vec<Constant<Bits<32>>>,
    idx8: Vec<Constant<Bits<8>>>,
    width: Constant<Bits<32>>,
    depth: Constant<Bits<8>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    one16: Constant<Bits<16>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    abs16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
}

impl ActScan {
    /// The activation scan of `arch`.
    pub fn from_arch(arch: &lacuna_spec::Arch) -> ActScan {
        ActScan::new(arch.core.scan_width as usize, arch.core.activation_queue_depth as usize)
    }

    /// A scan of `width` activations per cycle with a queue of `depth` (2..=127).
    pub fn new(width: usize, depth: usize) -> ActScan {
        assert!(width >= 1 && (2..128).contains(&depth) && width < 128);
        ActScan {
            clock: Default::default(),
            reset: Default::default(),
            cols: Default::default(),
            panels: Default::default(),
            threshold: Default::default(),
            loaded: Default::default(),
            read_index: Default::default(),
            read_x: many(width),
            pop: Default::default(),
            head_valid: Default::default(),
            head_marker: Default::default(),
            head_panel: Default::default(),
            head_k: Default::default(),
            head_x: Default::default(),
            done: Default::default(),
            k: Default::default(),
            panel: Default::default(),
            q_marker: many(depth),
            q_panel: many(depth),
            q_k: many(depth),
            q_x: many(depth),
            ring: Ring::new(depth),
            after_pop: Default::default(),
            group_end: Default::default(),
            active: many(width),
            rank: many(width + 1),
            slot: many(width),
            examine: Default::default(),
            push_marker: Default::default(),
            pushed: Default::default(),
            offset: index_constants(width),
            idx8: index_constants(depth.max(width)),
            width: constant(width as u64),
            depth: constant(depth as u64),
            one8: constant(1),
            zero8: constant(0),
            one16: constant(1),
            one32: constant(1),
            zero32: constant(0),
            abs16: constant(0x7fff),
            zero16: constant(0),
        }
    }
}

impl Logic for ActScan {
    #[hdl_gen]
    fn update(&mut self) {
        self.k.clock.next = self.clock.val();
        self.k.reset.next = self.reset.val();
        self.k.d.next = self.k.q.val();
        self.panel.clock.next = self.clock.val();
        self.panel.reset.next = self.reset.val();
        self.panel.d.next = self.panel.q.val();
        self.ring.clock.next = self.clock.val();
        self.ring.reset.next = self.reset.val();
        for i in 0..self.q_k.len() {
            self.q_marker[i].clock.next = self.clock.val();
            self.q_marker[i].reset.next = self.reset.val();
            self.q_marker[i].d.next = self.q_marker[i].q.val();
            self.q_panel[i].clock.next = self.clock.val();
            self.q_panel[i].reset.next = self.reset.val();
            self.q_panel[i].d.next = self.q_panel[i].q.val();
            self.q_k[i].clock.next = self.clock.val();
            self.q_k[i].reset.next = self.reset.val();
            self.q_k[i].d.next = self.q_k[i].q.val();
            self.q_x[i].clock.next = self.clock.val();
            self.q_x[i].reset.next = self.reset.val();
            self.q_x[i].d.next = self.q_x[i].q.val();
        }

        // The head, and the pop that comes first in the cycle.
        self.head_valid.next = self.ring.count.val() != self.zero8.val();
        self.head_marker.next = false;
        self.head_panel.next = self.zero16.val();
        self.head_k.next = self.zero32.val();
        self.head_x.next = self.zero16.val();
        for i in 0..self.q_k.len() {
            if self.ring.head.val() == self.idx8[i].val() {
                self.head_marker.next = self.q_marker[i].q.val();
                self.head_panel.next = self.q_panel[i].q.val();
                self.head_k.next = self.q_k[i].q.val();
                self.head_x.next = self.q_x[i].q.val();
            }
        }
        self.ring.pop.next = self.pop.val() && self.head_valid.val();
        self.after_pop.next = self.ring.count.val();
        if self.ring.pop.val() {
            self.after_pop.next = self.ring.count.val() - self.one8.val();
        }

        // The group k .. end examined this cycle, if all of it is loaded and its active ones fit.
        self.done.next = self.panel.q.val() >= self.panels.val();
        self.read_index.next = self.k.q.val();
        self.group_end.next = self.k.q.val() + self.width.val();
        if self.group_end.val() > self.cols.val() {
            self.group_end.next = self.cols.val();
        }
        self.rank[0].next = self.zero8.val();
        for i in 0..self.active.len() {
            self.active[i].next = ((self.k.q.val() + self.offset[i].val()) < self.cols.val())
                && ((self.read_x[i].val() & self.abs16.val()) != self.zero16.val())
                && ((self.read_x[i].val() & self.abs16.val()) >= self.threshold.val());
            self.rank[i + 1].next = self.rank[i].val();
            if self.active[i].val() {
                self.rank[i + 1].next = self.rank[i].val() + self.one8.val();
            }
        }
        for i in 0..self.rank.len() {
            self.pushed.next = self.rank[i].val();
        }
        self.push_marker.next =
            !self.done.val() && (self.k.q.val() >= self.cols.val()) && (self.after_pop.val() < self.depth.val());
        self.examine.next = !self.done.val()
            && (self.k.q.val() < self.cols.val())
            && (self.loaded.val() >= (self.group_end.val() << self.one32.val()))
            && ((self.after_pop.val() + self.pushed.val()) <= self.depth.val());
        self.ring.push.next = self.zero8.val();
        if self.push_marker.val() {
            for j in 0..self.q_k.len() {
                if self.ring.tail.val() == self.idx8[j].val() {
                    self.q_marker[j].d.next = true;
                    self.q_panel[j].d.next = self.panel.q.val();
                }
            }
            self.ring.push.next = self.one8.val();
            self.panel.d.next = self.panel.q.val() + self.one16.val();
            self.k.d.next = self.zero32.val();
        }
        for i in 0..self.active.len() {
            self.slot[i].next = self.ring.tail.val() + self.rank[i].val();
            if self.slot[i].val() >= self.depth.val() {
                self.slot[i].next = self.slot[i].val() - self.depth.val();
            }
        }
        if self.examine.val() {
            for i in 0..self.active.len() {
                for j in 0..self.q_k.len() {
                    if self.active[i].val() && (self.slot[i].val() == self.idx8[j].val()) {
                        self.q_marker[j].d.next = false;
                        self.q_panel[j].d.next = self.panel.q.val();
                        self.q_k[j].d.next = self.k.q.val() + self.offset[i].val();
                        self.q_x[j].d.next = self.read_x[i].val();
                    }
                }
            }
            self.ring.push.next = self.pushed.val();
            self.k.d.next = self.group_end.val();
        }
    }
}
