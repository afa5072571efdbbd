//! `down_engine::engine` (`DownEngine`): the down projection of one channel at a time
//! (`lacuna_model::expert_unit::down_engine`): `down_lanes` [`DownLane`]s adding a channel's down
//! column, times each operand vector's FP16 value, into that vector's rows of the output store.
//!
//! ```text
//!                  +------------------------------ down_engine ------------------------------+
//!  start, rows --->| pass: operands v = 0..vectors, row blocks b = 0..ceil(rows / L) (b inner)  |--> ready
//!  vectors ------->| element (v, b): lane l takes row b L + l of slot op_slot[v] with op_a[v]   |--> col_block
//!  op_slot[V] ---->|   and the column's col_q[l], col_scale[l] (read by col_block, same cycle) |<-- col_q[L]
//!  op_a[V] ------->| row store: (slot, block) -> L FP32 values, read ACC_AT and written LATENCY |<-- col_scale[L]
//!  op_first[V] --->|   cycles after the element (op_first: the slot's rows start from +0)        |--> drained
//!  rd_slot, ------>| an element waits while its (slot, block) issued < ROW_REUSE cycles ago     |--> rd_value[L]
//!  rd_block        | (rd_*: the store, read when drained)                                      |--> invalid
//!                  +---------------------------------------------------------------------------+
//! ```
//!
//! Contract: a pass (of 1 to `max_tokens + 1` operands, the operand registers; the unrouted means
//! are a pass per expert over the tokens not routed to it: `pipe`) is taken with
//! `start` in a cycle `ready` is high (it is high while no pass
//! is issuing and in the cycle of a pass's last element, so passes follow back to back); its
//! operands are latched then. From the next cycle the engine issues one element a cycle, `v`
//! outer and the row block `b` inner, except that an element waits while its `(slot, block)` was
//! issued in one of the previous `ROW_REUSE - 1` cycles (the lane reads a row [`ACC_AT`] cycles
//! after its element and writes it [`LATENCY`] cycles after: see [`super::lane`]); `col_block`
//! names the block of the element at the head, and `col_q[l]`, `col_scale[l]` must be row
//! `b L + l`'s weight and group scale in that cycle. Lane `l` of element `(v, b)` computes
//! `y = y + (f32(op_a[v]) * f32(scale)) * f32(q)` on row `b L + l` of slot `op_slot[v]` when that
//! row is below `rows`; `y` is +0 instead of the stored value in a pass whose `op_first[v]` is
//! set (a job's first pass over that slot, or the calibration's mean row at an expert's start).
//! Rows at or above `rows` in a block are unspecified. `drained`: nothing to issue and nothing
//! in flight; the store's row block `(rd_slot, rd_block)` is then `rd_value`. `invalid` is
//! sticky until `clear`: an element had an Inf or NaN operand or scale. The model's
//! `down_engine::Issue` computes the same issue cycles.
//!
//! How: the store is one [`Sram`] row per `(slot, block)` (`slot << block_bits | block`), `L`
//! cells wide, so all lanes read and write one row a cycle; it is read a cycle before the lanes
//! take the value, into a register (the row being written in that cycle forwarded), so that the
//! read's decoding and the adder's alignment are not in one cycle; the element's row index and
//! first flag follow it in delay lines to the read and the write; the last `ROW_REUSE - 1`
//! issued rows are kept for the hazard check.

use super::lane::{DownLane, ACC_AT, LATENCY, ROW_REUSE};
use crate::delay::Delay;
use crate::reg::Reg;
use crate::sram::Sram;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

/// The cycle (after its element) the store is read, a cycle before the lane takes the value.
const READ_AT: u64 = ACC_AT - 1;

/// The ports of [`DownEngine`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: no pass under way"),
    ("clear", "clears invalid (a job's start)"),
    ("start", "take a pass (when ready): its operands below are latched"),
    ("rows", "the pass's rows (the hidden size), 1..=max_hidden"),
    ("vectors", "the pass's operand vectors, 1..=max_tokens + 1"),
    ("op_slot", "operand v's row set in the store (a token, or the calibration's mean row), 0..=max_tokens"),
    ("op_a", "operand v's value (the channel's fp16(w h) for its token, or a mean), IEEE binary16 bits"),
    ("op_first", "operand v's rows start from +0 in this pass"),
    ("ready", "a start is taken this cycle"),
    ("col_block", "the row block of the element at the head of the pass (rows col_block * L + l)"),
    ("col_q", "the column's INT4 weight of row col_block * L + l, this cycle"),
    ("col_scale", "that row's group scale, IEEE binary16 bits, this cycle"),
    ("drained", "no element to issue and none in flight: rd_value is the store"),
    ("rd_slot", "the row set read when drained"),
    ("rd_block", "the row block read when drained"),
    ("rd_value", "row rd_block * L + l of slot rd_slot, IEEE binary32 bits"),
    ("invalid", "sticky until clear: an element had an Inf or NaN operand or scale"),
];

/// Bits of a row block index: `ceil(log2(ceil(max_hidden / lanes)))`.
pub fn block_bits(arch: &Arch) -> u32 {
    let blocks = arch.expert_unit.max_hidden.div_ceil(arch.expert_unit.down_lanes);
    blocks.next_power_of_two().trailing_zeros()
}

/// Row sets of the store: a token's output rows each, and the calibration's mean row.
pub fn slots(arch: &Arch) -> usize {
    arch.expert_unit.max_tokens as usize + 1
}

/// The down engine.
#[derive(LogicBlock)]
pub struct DownEngine {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Clears `invalid`.
    pub clear: Signal<In, Bit>,
    /// Take a pass.
    pub start: Signal<In, Bit>,
    /// The pass's rows.
    pub rows: Signal<In, Bits<32>>,
    /// Its operand vectors.
    pub vectors: Signal<In, Bits<32>>,
    /// Each operand's row set.
    pub op_slot: Vec<Signal<In, Bits<32>>>,
    /// Each operand's value (FP16 bits).
    pub op_a: Vec<Signal<In, Bits<16>>>,
    /// Each operand's rows start from +0.
    pub op_first: Vec<Signal<In, Bit>>,
    /// A start is taken.
    pub ready: Signal<Out, Bit>,
    /// The block at the head of the pass.
    pub col_block: Signal<Out, Bits<32>>,
    /// The column's weights of that block (INT4).
    pub col_q: Vec<Signal<In, Bits<4>>>,
    /// Their group scales (FP16 bits).
    pub col_scale: Vec<Signal<In, Bits<16>>>,
    /// Nothing to issue or in flight.
    pub drained: Signal<Out, Bit>,
    /// The row set read.
    pub rd_slot: Signal<In, Bits<32>>,
    /// The block read.
    pub rd_block: Signal<In, Bits<32>>,
    /// The store's values there (FP32 bits).
    pub rd_value: Vec<Signal<Out, Bits<32>>>,
    /// An element was invalid (sticky).
    pub invalid: Signal<Out, Bit>,
    lanes: Vec<DownLane>,
    store: Sram<32>,
    active: Reg<Bit>,
    cur_v: Reg<Bits<32>>,
    cur_b: Reg<Bits<32>>,
    base: Reg<Bits<32>>,
    n_vec: Reg<Bits<32>>,
    n_rows: Reg<Bits<32>>,
    slot_r: Vec<Reg<Bits<32>>>,
    a_r: Vec<Reg<Bits<16>>>,
    first_r: Vec<Reg<Bit>>,
    /// The rows issued in the last ROW_REUSE - 1 cycles, and whether an element issued then.
    recent: Vec<Reg<Bits<32>>>,
    recent_valid: Vec<Reg<Bit>>,
    inflight: Reg<Bits<32>>,
    bad: Reg<Bit>,
    /// Side band: the element's row to its read (a cycle before ACC_AT, into `acc_r`), then to
    /// its write; its first flag to the read.
    row_at: Delay<Bits<32>>,
    acc_r: Vec<Reg<Bits<32>>>,
    row_wr: Delay<Bits<32>>,
    first_at: Delay<Bit>,
    /// The element at the head: its row (`slot << block_bits | block`), operand and first flag,
    /// registered so that the hazard check starts from a register.
    head_tag: Reg<Bits<32>>,
    head_a: Reg<Bits<16>>,
    head_first: Reg<Bit>,
    nv: Signal<Local, Bits<32>>,
    next_slot: Signal<Local, Bits<32>>,
    next_a: Signal<Local, Bits<16>>,
    next_first: Signal<Local, Bit>,
    hazard: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    last_block: Signal<Local, Bit>,
    pass_end: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    writes: Signal<Local, Bit>,
    forward: Signal<Local, Bit>,
    flagged: Signal<Local, Bit>,
    v_index: Vec<Constant<Bits<32>>>,
    l_index: Vec<Constant<Bits<32>>>,
    lane_count: Constant<Bits<32>>,
    shift: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
}

impl DownEngine {
    /// The engine of `arch`'s expert unit.
    pub fn from_arch(arch: &Arch) -> DownEngine {
        let u = &arch.expert_unit;
        let (lanes, vectors) = (u.down_lanes as usize, slots(arch));
        let rows = slots(arch) << block_bits(arch);
        DownEngine {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            start: Default::default(),
            rows: Default::default(),
            vectors: Default::default(),
            op_slot: many(vectors),
            op_a: many(vectors),
            op_first: many(vectors),
            ready: Default::default(),
            col_block: Default::default(),
            col_q: many(lanes),
            col_scale: many(lanes),
            drained: Default::default(),
            rd_slot: Default::default(),
            rd_block: Default::default(),
            rd_value: many(lanes),
            invalid: Default::default(),
            lanes: many(lanes),
            store: Sram::new(rows, lanes, 32, lanes),
            active: Default::default(),
            cur_v: Default::default(),
            cur_b: Default::default(),
            base: Default::default(),
            n_vec: Default::default(),
            n_rows: Default::default(),
            slot_r: many(vectors),
            a_r: many(vectors),
            first_r: many(vectors),
            recent: many(ROW_REUSE as usize - 1),
            recent_valid: many(ROW_REUSE as usize - 1),
            inflight: Default::default(),
            bad: Default::default(),
            row_at: Delay::new(READ_AT as usize),
            acc_r: many(lanes),
            row_wr: Delay::new((LATENCY - READ_AT) as usize),
            first_at: Delay::new(READ_AT as usize),
            head_tag: Default::default(),
            head_a: Default::default(),
            head_first: Default::default(),
            nv: Default::default(),
            next_slot: Default::default(),
            next_a: Default::default(),
            next_first: Default::default(),
            hazard: Default::default(),
            issue: Default::default(),
            last_block: Default::default(),
            pass_end: Default::default(),
            take: Default::default(),
            writes: Default::default(),
            forward: Default::default(),
            flagged: Default::default(),
            v_index: index_constants(vectors),
            l_index: index_constants(lanes),
            lane_count: constant(lanes as u64),
            shift: constant(block_bits(arch) as u64),
            one: constant(1),
            zero: constant(0),
        }
    }
}

impl Logic for DownEngine {
    #[hdl_gen]
    fn update(&mut self) {
        self.store.clock.next = self.clock.val();
        self.active.clock.next = self.clock.val();
        self.active.reset.next = self.reset.val();
        self.cur_v.clock.next = self.clock.val();
        self.cur_v.reset.next = self.reset.val();
        self.cur_b.clock.next = self.clock.val();
        self.cur_b.reset.next = self.reset.val();
        self.base.clock.next = self.clock.val();
        self.base.reset.next = self.reset.val();
        self.n_vec.clock.next = self.clock.val();
        self.n_vec.reset.next = self.reset.val();
        self.n_rows.clock.next = self.clock.val();
        self.n_rows.reset.next = self.reset.val();
        self.inflight.clock.next = self.clock.val();
        self.inflight.reset.next = self.reset.val();
        self.bad.clock.next = self.clock.val();
        self.bad.reset.next = self.reset.val();
        self.row_at.clock.next = self.clock.val();
        self.row_at.reset.next = self.reset.val();
        self.row_wr.clock.next = self.clock.val();
        self.row_wr.reset.next = self.reset.val();
        self.first_at.clock.next = self.clock.val();
        self.first_at.reset.next = self.reset.val();
        for v in 0..self.slot_r.len() {
            self.slot_r[v].clock.next = self.clock.val();
            self.slot_r[v].reset.next = self.reset.val();
            self.slot_r[v].d.next = self.slot_r[v].q.val();
            self.a_r[v].clock.next = self.clock.val();
            self.a_r[v].reset.next = self.reset.val();
            self.a_r[v].d.next = self.a_r[v].q.val();
            self.first_r[v].clock.next = self.clock.val();
            self.first_r[v].reset.next = self.reset.val();
            self.first_r[v].d.next = self.first_r[v].q.val();
        }
        for k in 0..self.recent.len() {
            self.recent[k].clock.next = self.clock.val();
            self.recent[k].reset.next = self.reset.val();
            self.recent_valid[k].clock.next = self.clock.val();
            self.recent_valid[k].reset.next = self.reset.val();
        }
        for l in 0..self.lanes.len() {
            self.lanes[l].clock.next = self.clock.val();
            self.lanes[l].reset.next = self.reset.val();
            self.acc_r[l].clock.next = self.clock.val();
            self.acc_r[l].reset.next = self.reset.val();
        }

        self.head_tag.clock.next = self.clock.val();
        self.head_tag.reset.next = self.reset.val();
        self.head_a.clock.next = self.clock.val();
        self.head_a.reset.next = self.reset.val();
        self.head_first.clock.next = self.clock.val();
        self.head_first.reset.next = self.reset.val();
        // The next operand (the head's successor when its last block issues).
        self.nv.next = self.cur_v.q.val() + self.one.val();
        self.next_slot.next = self.zero.val();
        self.next_a.next = self.a_r[0].q.val();
        self.next_first.next = false;
        for v in 0..self.slot_r.len() {
            if self.nv.val() == self.v_index[v].val() {
                self.next_slot.next = self.slot_r[v].q.val();
                self.next_a.next = self.a_r[v].q.val();
                self.next_first.next = self.first_r[v].q.val();
            }
        }
        // Whether the head's block is still in flight.
        self.hazard.next = false;
        for k in 0..self.recent.len() {
            if self.recent_valid[k].q.val() && (self.recent[k].q.val() == self.head_tag.q.val()) {
                self.hazard.next = true;
            }
        }
        self.issue.next = self.active.q.val() && !self.hazard.val();
        self.last_block.next = (self.base.q.val() + self.lane_count.val()) >= self.n_rows.q.val();
        self.pass_end.next = self.issue.val() && self.last_block.val() && (self.nv.val() == self.n_vec.q.val());
        self.col_block.next = self.cur_b.q.val();

        // The lanes: row b L + l of the element, below the pass's rows. The row's value is read a
        // cycle before the lane takes it and registered (the read's decoding and the adder's
        // alignment in one cycle were 81 FO4), the value being written in that cycle forwarded.
        self.store.rd_offset.next = self.zero.val();
        self.writes.next = self.lanes[0].out_valid.val();
        self.forward.next = self.writes.val() && (self.row_wr.q.val() == self.row_at.q.val());
        for l in 0..self.lanes.len() {
            self.acc_r[l].d.next = self.store.rd[l].val();
            if self.forward.val() {
                self.acc_r[l].d.next = self.lanes[l].sum.val();
            }
            if self.first_at.q.val() {
                self.acc_r[l].d.next = self.zero.val();
            }
            self.lanes[l].in_valid.next =
                self.issue.val() && ((self.base.q.val() + self.l_index[l].val()) < self.n_rows.q.val());
            self.lanes[l].a.next = self.head_a.q.val();
            self.lanes[l].scale.next = self.col_scale[l].val();
            self.lanes[l].q.next = self.col_q[l].val();
            self.lanes[l].acc.next = self.acc_r[l].q.val();
            self.rd_value[l].next = self.store.rd[l].val();
        }
        // The side band: the row to the read (READ_AT) and the write (LATENCY).
        self.row_at.d.next = self.head_tag.q.val();
        self.first_at.d.next = self.head_first.q.val();
        self.row_wr.d.next = self.row_at.q.val();
        // (Lane 0's row, b L, is below every pass's rows: its out_valid is the element's.)
        self.store.wr_enable.next = self.writes.val();
        self.store.wr_row.next = self.row_wr.q.val();
        self.store.wr_offset.next = self.zero.val();
        self.flagged.next = false;
        for l in 0..self.lanes.len() {
            self.store.wr_data[l].next = self.lanes[l].sum.val();
            if self.lanes[l].out_valid.val() && self.lanes[l].invalid.val() {
                self.flagged.next = true;
            }
        }
        self.bad.d.next = (self.bad.q.val() || self.flagged.val()) && !self.clear.val();

        // The hazard window.
        self.recent[0].d.next = self.head_tag.q.val();
        self.recent_valid[0].d.next = self.issue.val();
        for k in 1..self.recent.len() {
            self.recent[k].d.next = self.recent[k - 1].q.val();
            self.recent_valid[k].d.next = self.recent_valid[k - 1].q.val();
        }

        // Advance: the block inner, then the operand.
        self.active.d.next = self.active.q.val() && !self.pass_end.val();
        self.cur_v.d.next = self.cur_v.q.val();
        self.cur_b.d.next = self.cur_b.q.val();
        self.base.d.next = self.base.q.val();
        self.head_tag.d.next = self.head_tag.q.val();
        self.head_a.d.next = self.head_a.q.val();
        self.head_first.d.next = self.head_first.q.val();
        if self.issue.val() {
            self.cur_b.d.next = self.cur_b.q.val() + self.one.val();
            self.base.d.next = self.base.q.val() + self.lane_count.val();
            self.head_tag.d.next = self.head_tag.q.val() + self.one.val();
            if self.last_block.val() {
                self.cur_b.d.next = self.zero.val();
                self.base.d.next = self.zero.val();
                self.cur_v.d.next = self.nv.val();
                self.head_tag.d.next = self.next_slot.val() << self.shift.val();
                self.head_a.d.next = self.next_a.val();
                self.head_first.d.next = self.next_first.val();
            }
        }
        self.inflight.d.next = self.inflight.q.val();
        if self.issue.val() && !self.writes.val() {
            self.inflight.d.next = self.inflight.q.val() + self.one.val();
        }
        if !self.issue.val() && self.writes.val() {
            self.inflight.d.next = self.inflight.q.val() - self.one.val();
        }

        // A new pass (after the advance, which it overrides).
        self.ready.next = !self.active.q.val() || self.pass_end.val();
        self.take.next = self.start.val() && (!self.active.q.val() || self.pass_end.val());
        self.n_vec.d.next = self.n_vec.q.val();
        self.n_rows.d.next = self.n_rows.q.val();
        if self.take.val() {
            self.active.d.next = true;
            self.cur_v.d.next = self.zero.val();
            self.cur_b.d.next = self.zero.val();
            self.base.d.next = self.zero.val();
            self.n_vec.d.next = self.vectors.val();
            self.n_rows.d.next = self.rows.val();
            self.head_tag.d.next = self.op_slot[0].val() << self.shift.val();
            self.head_a.d.next = self.op_a[0].val();
            self.head_first.d.next = self.op_first[0].val();
            for v in 0..self.slot_r.len() {
                self.slot_r[v].d.next = self.op_slot[v].val();
                self.a_r[v].d.next = self.op_a[v].val();
                self.first_r[v].d.next = self.op_first[v].val();
            }
        }
        self.drained.next = !self.active.q.val() && (self.inflight.q.val() == self.zero.val());
        self.store.rd_row.next = self.row_at.q.val();
        if !self.active.q.val() && (self.inflight.q.val() == self.zero.val()) {
            self.store.rd_row.next = (self.rd_slot.val() << self.shift.val()) | self.rd_block.val();
        }
        self.invalid.next = self.bad.q.val();
    }
}
