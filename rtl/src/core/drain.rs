//! `drain`: reads a finished panel's accumulators out of the back end and writes them to y.
//!
//! ```text
//!                   +------------------------------ drain ------------------------------+
//!  start, --------->| reading: row r of every lane per cycle (read_enable, read_index),  |--> read_enable, read_index
//!  panel_rows, m, ->|   rows 0 .. rows of the panel, where rows = min(panel_rows, m-row0)|--> reading (issue off)
//!  y_base           |   the L values go to the write ring at (tail, word first mod W)    |--> idle, done_panel
//!  read_value[l] -->| write ring: cap + 1 bursts of W = B/4 words; a burst is queued     |
//!  req_ready ------>|   when its last row is read (or the panel's last); a row whose     |--> req_valid, req_addr,
//!                   |   burst would not fit waits                                        |    req_data[w]
//!                   | issue: the oldest queued burst to y_base + B * (bursts written)    |--> pending
//!                   +--------------------------------------------------------------------+
//! ```
//!
//! Contract (`model::drain`, docs/microarchitecture.md "drain"): drain's step comes first in the
//! cycle: while reading, it reads register row r (register r of every lane) unless the burst that
//! row completes would not fit the write buffer (`cap` = one tile of output plus one burst); the
//! last row ends the read-out (`done_panel`; the back end issues again from the next cycle). Route
//! may then start the next panel in the same cycle (`start`, after `idle`). In the issue phase the
//! oldest queued burst is offered to the memory port (top priority). The RTL requires every panel's
//! output to start on a burst (`4 * panel_rows` a multiple of `request_bytes`, which the core's job
//! interface checks) and a register row to fit one burst (`4 * lanes <= request_bytes`, checked by
//! `rtl::blocks`), so the bursts of a job are written in address order from `y_base` and a row
//! never straddles two. Words of the last burst past the end of y are written with whatever the
//! lanes hold; they lie in y's burst-aligned region, which holds nothing else.

use crate::reg::Reg;
use crate::ring::Ring;
use crate::sram::Sram;
use crate::wiring::{constant, index_constants, many};
use rust_hdl::prelude::*;

/// The ports of [`Drain`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: a new job (panel 0 next, nothing queued)"),
    ("start", "route starts the read-out of the next panel this cycle"),
    ("panel_rows", "rows per panel (the last may have fewer)"),
    ("m", "rows of y"),
    ("y_base", "address of y (burst aligned)"),
    ("read_value", "lane l: the register drain reads (combinational, from the back end)"),
    ("req_ready", "the memory port takes drain's write this cycle"),
    ("reading", "drain reads this cycle: the back end issues nothing"),
    ("read_enable", "a register row is read (and reset) this cycle"),
    ("read_index", "the register read in every lane"),
    ("idle", "not reading after this cycle's step (route may start the next panel)"),
    ("done_panel", "the panel's last register row is read this cycle"),
    ("req_valid", "a burst of y is to be written"),
    ("req_addr", "its address"),
    ("req_data", "its data, 32-bit word w"),
    ("pending", "bursts queued and not yet written (after this cycle)"),
];

/// The drain unit and its write buffer.
#[derive(LogicBlock)]
pub struct Drain {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Start the next panel.
    pub start: Signal<In, Bit>,
    /// Rows per panel.
    pub panel_rows: Signal<In, Bits<32>>,
    /// Rows of y.
    pub m: Signal<In, Bits<32>>,
    /// Address of y.
    pub y_base: Signal<In, Bits<32>>,
    /// Lane values read.
    pub read_value: Vec<Signal<In, Bits<32>>>,
    /// Write granted.
    pub req_ready: Signal<In, Bit>,
    /// Reading this cycle.
    pub reading: Signal<Out, Bit>,
    /// A row is read.
    pub read_enable: Signal<Out, Bit>,
    /// The register read.
    pub read_index: Signal<Out, Bits<16>>,
    /// Not reading after the step.
    pub idle: Signal<Out, Bit>,
    /// Last row read.
    pub done_panel: Signal<Out, Bit>,
    /// Write wanted.
    pub req_valid: Signal<Out, Bit>,
    /// Its address.
    pub req_addr: Signal<Out, Bits<32>>,
    /// Its data.
    pub req_data: Vec<Signal<Out, Bits<32>>>,
    /// Writes queued.
    pub pending: Signal<Out, Bit>,
    busy: Reg<Bit>,
    r: Reg<Bits<16>>,
    first: Reg<Bits<32>>,
    rows: Reg<Bits<32>>,
    row0: Reg<Bits<32>>,
    ptr: Ring<32>,
    written: Reg<Bits<32>>,
    ring: Sram<32>,
    slot_base: Signal<Local, Bits<32>>,
    last_row: Signal<Local, Bit>,
    completes: Signal<Local, Bit>,
    step: Signal<Local, Bit>,
    n_busy: Signal<Local, Bit>,
    n_row0: Signal<Local, Bits<32>>,
    n_count: Signal<Local, Bits<32>>,
    // Busy after route's start, bursts queued after this cycle's write: locals of their own, so
    // that `idle` and the request are not computed from a value rewritten after route or the
    // memory port answered (Verilator would see a false combinational loop through them).
    busy_after: Signal<Local, Bit>,
    count_after: Signal<Local, Bits<32>>,
    left: Signal<Local, Bits<32>>,
    bypass: Signal<Local, Bit>,
    lane: Vec<Constant<Bits<32>>>,
    word: Vec<Constant<Bits<32>>>,
    lanes: Constant<Bits<32>>,
    words: Constant<Bits<32>>,
    word_mask: Constant<Bits<32>>,
    cap: Constant<Bits<32>>,
    log_burst: Constant<Bits<32>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
}

impl Drain {
    /// The drain of `arch`.
    pub fn from_arch(arch: &lacuna_spec::Arch) -> Drain {
        Drain::new(arch.core.lanes as usize, arch.memory.request_bytes as usize, arch.drain_buffer_bursts() as usize)
    }

    /// A drain for `lanes` lanes (4 * lanes <= burst), `burst`-byte writes, a write buffer of
    /// `cap` bursts (`model::drain::Drain::capacity`).
    pub fn new(lanes: usize, burst: usize, cap: usize) -> Drain {
        assert!(lanes.is_power_of_two() && burst.is_power_of_two() && 4 * lanes <= burst && cap >= 1);
        let words = burst / 4;
        Drain {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            panel_rows: Default::default(),
            m: Default::default(),
            y_base: Default::default(),
            read_value: many(lanes),
            req_ready: Default::default(),
            reading: Default::default(),
            read_enable: Default::default(),
            read_index: Default::default(),
            idle: Default::default(),
            done_panel: Default::default(),
            req_valid: Default::default(),
            req_addr: Default::default(),
            req_data: many(words),
            pending: Default::default(),
            busy: Default::default(),
            r: Default::default(),
            first: Default::default(),
            rows: Default::default(),
            row0: Default::default(),
            ptr: Ring::new(cap + 1),
            written: Default::default(),
            ring: Sram::partial(cap + 1, words, 32, words, lanes),
            slot_base: Default::default(),
            last_row: Default::default(),
            completes: Default::default(),
            step: Default::default(),
            n_busy: Default::default(),
            n_row0: Default::default(),
            n_count: Default::default(),
            busy_after: Default::default(),
            count_after: Default::default(),
            left: Default::default(),
            bypass: Default::default(),
            lane: index_constants(lanes),
            word: index_constants(words),
            lanes: constant(lanes as u64),
            words: constant(words as u64),
            word_mask: constant(words as u64 - 1),
            cap: constant(cap as u64),
            log_burst: constant(burst.trailing_zeros() as u64),
            one16: constant(1),
            zero16: constant(0),
            one32: constant(1),
            zero32: constant(0),
        }
    }
}

impl Logic for Drain {
    #[hdl_gen]
    fn update(&mut self) {
        self.busy.clock.next = self.clock.val();
        self.busy.reset.next = self.reset.val();
        self.r.clock.next = self.clock.val();
        self.r.reset.next = self.reset.val();
        self.r.d.next = self.r.q.val();
        self.first.clock.next = self.clock.val();
        self.first.reset.next = self.reset.val();
        self.first.d.next = self.first.q.val();
        self.rows.clock.next = self.clock.val();
        self.rows.reset.next = self.reset.val();
        self.rows.d.next = self.rows.q.val();
        self.row0.clock.next = self.clock.val();
        self.row0.reset.next = self.reset.val();
        self.ptr.clock.next = self.clock.val();
        self.ptr.reset.next = self.reset.val();
        self.written.clock.next = self.clock.val();
        self.written.reset.next = self.reset.val();
        self.written.d.next = self.written.q.val();
        self.ring.clock.next = self.clock.val();

        // The step: read row r unless the burst it completes would not fit.
        self.reading.next = self.busy.q.val();
        self.slot_base.next = self.first.q.val() & self.word_mask.val();
        self.last_row.next = (self.first.q.val() + self.lanes.val()) >= self.rows.q.val();
        self.completes.next = self.last_row.val() || ((self.slot_base.val() + self.lanes.val()) == self.words.val());
        self.step.next = self.busy.q.val();
        if self.completes.val() && (self.ptr.count.val() >= self.cap.val()) {
            self.step.next = false;
        }
        self.read_enable.next = self.step.val();
        self.read_index.next = self.r.q.val();
        self.ring.wr_enable.next = self.step.val();
        self.ring.wr_row.next = self.ptr.tail.val();
        self.ring.wr_offset.next = self.slot_base.val();
        for l in 0..self.read_value.len() {
            self.ring.wr_data[l].next = self.read_value[l].val();
        }
        self.n_busy.next = self.busy.q.val();
        self.n_row0.next = self.row0.q.val();
        self.ptr.push.next = self.zero32.val();
        self.done_panel.next = false;
        if self.step.val() {
            self.r.d.next = self.r.q.val() + self.one16.val();
            self.first.d.next = self.first.q.val() + self.lanes.val();
            if self.completes.val() {
                self.ptr.push.next = self.one32.val();
            }
            if self.last_row.val() {
                self.n_busy.next = false;
                self.done_panel.next = true;
                self.n_row0.next = self.row0.q.val() + self.panel_rows.val();
            }
        }
        self.idle.next = !self.n_busy.val();

        // Route starts the next panel (after the step).
        self.left.next = self.m.val() - self.n_row0.val();
        self.busy_after.next = self.n_busy.val();
        if self.start.val() {
            self.busy_after.next = true;
            self.r.d.next = self.zero16.val();
            self.first.d.next = self.zero32.val();
            self.rows.d.next = self.panel_rows.val();
            if self.left.val() < self.panel_rows.val() {
                self.rows.d.next = self.left.val();
            }
        }
        self.busy.d.next = self.busy_after.val();
        self.row0.d.next = self.n_row0.val();

        // Issue phase: the oldest queued burst; if it was completed by this cycle's row, that
        // row's words come from the lanes (the ring has them only after the edge).
        self.ring.rd_row.next = self.ptr.head.val();
        self.ring.rd_offset.next = self.zero32.val();
        self.bypass.next = self.step.val() && self.completes.val() && (self.ptr.count.val() == self.zero32.val());
        for w in 0..self.req_data.len() {
            self.req_data[w].next = self.ring.rd[w].val();
            for l in 0..self.read_value.len() {
                if self.bypass.val() && ((self.slot_base.val() + self.lane[l].val()) == self.word[w].val()) {
                    self.req_data[w].next = self.read_value[l].val();
                }
            }
        }
        self.n_count.next = self.ptr.count.val() + self.ptr.push.val();
        self.req_valid.next = self.n_count.val() != self.zero32.val();
        self.req_addr.next = self.y_base.val() + (self.written.q.val() << self.log_burst.val());
        self.ptr.pop.next = self.req_valid.val() && self.req_ready.val();
        self.count_after.next = self.n_count.val();
        if self.ptr.pop.val() {
            self.count_after.next = self.n_count.val() - self.one32.val();
            self.written.d.next = self.written.q.val() + self.one32.val();
        }
        self.pending.next = self.count_after.val() != self.zero32.val();
    }
}
