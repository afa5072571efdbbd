//! `swiglu::engine` (`SwigluEngine`): SwiGLU in the dot engine's stream order: it takes a wave's
//! gate and up values as the dot engine gives them (user by user, every unit at once) and runs
//! the user's channels, in channel order, through one [`SwigluLane`]
//! (`lacuna_model::expert_unit::swiglu`).
//!
//! ```text
//!                  +------------------------------ swiglu_engine ------------------------------+
//!  in_valid[U] -->| gate: held per unit (next); up: the user's pairs (gate, up) and its weight |--> out_valid
//!  value[U] ----->|   move to the issue registers, channel u = 0..last pending                 |--> out_unit, out_user
//!  in_user, ----->| one element a cycle: (gate, up, weight) registered, then the lane         |--> a[16], h[32]
//!  in_up,         |   (23 stages): h = silu(gate) up, a = fp16(weight h)                        |--> idle, invalid, overrun
//!  in_weight ---->|                                                                           |
//!                  +---------------------------------------------------------------------------+
//! ```
//!
//! Contract: the inputs are the dot engine's outputs (`out_valid[u]`, `value[u]`, `out_user`,
//! `out_up`): a user's gate values in one cycle, its up values in the next, from units `0..n`
//! (n >= 1), and with the up values `in_weight`, the user's routing weight (FP32) for the wave's
//! expert (the unit's routing table, read by `out_user`).
//! When a user's up values arrive (cycle V), its elements `(u, user)` for `u = 0..n` issue one
//! a cycle from V + 1, and element `u` comes out in cycle V + [`OUT_AFTER_UP`] + `u` with
//! `out_valid`, `out_unit` = u, `out_user`, `h` (FP32 bits of `silu(gate) x up`) and `a` (FP16
//! bits of `down_operand(weight, h)`), exactly as the model's `swiglu::apply`. The next user's up
//! values may arrive in the cycle of the previous user's last issue or later (the dot engine's
//! users are `max(2 x groups, n)` cycles apart, and a job's waves have one `groups`, so they
//! never come early); arriving earlier sets
//! `overrun` (sticky until `clear`) and the previous user's elements not yet issued are lost.
//! `invalid`
//! (sticky until `clear`): an element had a non-finite operand. `idle`: no element pending or
//! in the lane. The model's `swiglu::operand_at` computes the same cycles.
//!
//! How: each unit's gate is held in a register until its up arrives (the next user's gate comes
//! one cycle before its up, while this user's elements may still issue), then both move to the
//! issue registers; a pointer walks them, and the element's operands are registered before the
//! lane, so that the pointer's multiplexers and the lane's first adder are not in one cycle.

use super::lane::{SwigluLane, LATENCY};
use crate::delay::Delay;
use crate::reg::Reg;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

/// Cycles from a user's up values in to its first element out: the issue cycle, the operand
/// register and the lane.
pub const OUT_AFTER_UP: u64 = 2 + LATENCY;
const _: () =
    assert!(OUT_AFTER_UP == lacuna_spec::expert_unit::SWIGLU_OUT_AFTER_UP, "the model schedules by the spec's");

/// The ports of [`SwigluEngine`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: nothing pending"),
    ("clear", "clears invalid and overrun (a job's start)"),
    ("in_valid", "unit u's value comes in (the dot engine's out_valid)"),
    ("value", "unit u's value, IEEE binary32 bits"),
    ("in_user", "the user of the values coming in"),
    ("in_up", "their row: 0 gate, 1 up (a user's up values the cycle after its gate values)"),
    ("in_weight", "with the up values: the user's routing weight for the expert, IEEE binary32 bits"),
    ("out_valid", "an element comes out (OUT_AFTER_UP (25) + u cycles after its user's up values)"),
    ("out_unit", "its channel's unit in the wave"),
    ("out_user", "its user"),
    ("h", "silu(gate) * up, IEEE binary32 bits"),
    ("a", "the down operand fp16(weight * h), saturating, IEEE binary16 bits"),
    ("idle", "no element pending or in the lane"),
    ("invalid", "sticky until clear: an element had an Inf or NaN operand"),
    ("overrun", "sticky until clear: a user's up values came while the previous user's elements were pending"),
];

/// The SwiGLU engine.
#[derive(LogicBlock)]
pub struct SwigluEngine {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Clears the sticky flags.
    pub clear: Signal<In, Bit>,
    /// A unit's value comes in.
    pub in_valid: Vec<Signal<In, Bit>>,
    /// The values.
    pub value: Vec<Signal<In, Bits<32>>>,
    /// Their user.
    pub in_user: Signal<In, Bits<32>>,
    /// Their row.
    pub in_up: Signal<In, Bit>,
    /// The user's weight (with its up values).
    pub in_weight: Signal<In, Bits<32>>,
    /// An element comes out.
    pub out_valid: Signal<Out, Bit>,
    /// Its unit.
    pub out_unit: Signal<Out, Bits<32>>,
    /// Its user.
    pub out_user: Signal<Out, Bits<32>>,
    /// Its h.
    pub h: Signal<Out, Bits<32>>,
    /// Its down operand.
    pub a: Signal<Out, Bits<16>>,
    /// Nothing pending.
    pub idle: Signal<Out, Bit>,
    /// An operand was not finite (sticky).
    pub invalid: Signal<Out, Bit>,
    /// A user came too early (sticky).
    pub overrun: Signal<Out, Bit>,
    lane: SwigluLane,
    gate_next: Vec<Reg<Bits<32>>>,
    gate_r: Vec<Reg<Bits<32>>>,
    up_r: Vec<Reg<Bits<32>>>,
    active: Reg<Bit>,
    cur: Reg<Bits<32>>,
    last_u: Reg<Bits<32>>,
    user_r: Reg<Bits<32>>,
    w_r: Reg<Bits<32>>,
    /// The element's operands, registered before the lane.
    op_valid: Reg<Bit>,
    op_gate: Reg<Bits<32>>,
    op_up: Reg<Bits<32>>,
    op_w: Reg<Bits<32>>,
    op_unit: Reg<Bits<32>>,
    op_user: Reg<Bits<32>>,
    unit_at: Delay<Bits<32>>,
    user_at: Delay<Bits<32>>,
    /// Cycles until the last issued element is out.
    tail: Reg<Bits<32>>,
    bad: Reg<Bit>,
    late: Reg<Bit>,
    ups: Signal<Local, Bit>,
    highest: Signal<Local, Bits<32>>,
    sel_gate: Signal<Local, Bits<32>>,
    sel_up: Signal<Local, Bits<32>>,
    issue_last: Signal<Local, Bit>,
    u_index: Vec<Constant<Bits<32>>>,
    drain: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
}

impl SwigluEngine {
    /// The engine of `arch`'s expert unit: one input per dot unit.
    pub fn from_arch(arch: &Arch) -> SwigluEngine {
        let u = &arch.expert_unit;
        let units = u.dot_units as usize;
        SwigluEngine {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            in_valid: many(units),
            value: many(units),
            in_user: Default::default(),
            in_up: Default::default(),
            in_weight: Default::default(),
            out_valid: Default::default(),
            out_unit: Default::default(),
            out_user: Default::default(),
            h: Default::default(),
            a: Default::default(),
            idle: Default::default(),
            invalid: Default::default(),
            overrun: Default::default(),
            lane: Default::default(),
            gate_next: many(units),
            gate_r: many(units),
            up_r: many(units),
            active: Default::default(),
            cur: Default::default(),
            last_u: Default::default(),
            user_r: Default::default(),
            w_r: Default::default(),
            op_valid: Default::default(),
            op_gate: Default::default(),
            op_up: Default::default(),
            op_w: Default::default(),
            op_unit: Default::default(),
            op_user: Default::default(),
            unit_at: Delay::new(LATENCY as usize),
            user_at: Delay::new(LATENCY as usize),
            tail: Default::default(),
            bad: Default::default(),
            late: Default::default(),
            ups: Default::default(),
            highest: Default::default(),
            sel_gate: Default::default(),
            sel_up: Default::default(),
            issue_last: Default::default(),
            u_index: index_constants(units),
            drain: constant(LATENCY + 1),
            one: constant(1),
            zero: constant(0),
        }
    }
}

impl Logic for SwigluEngine {
    #[hdl_gen]
    fn update(&mut self) {
        self.lane.clock.next = self.clock.val();
        self.lane.reset.next = self.reset.val();
        self.active.clock.next = self.clock.val();
        self.active.reset.next = self.reset.val();
        self.cur.clock.next = self.clock.val();
        self.cur.reset.next = self.reset.val();
        self.last_u.clock.next = self.clock.val();
        self.last_u.reset.next = self.reset.val();
        self.user_r.clock.next = self.clock.val();
        self.user_r.reset.next = self.reset.val();
        self.w_r.clock.next = self.clock.val();
        self.w_r.reset.next = self.reset.val();
        self.op_valid.clock.next = self.clock.val();
        self.op_valid.reset.next = self.reset.val();
        self.op_gate.clock.next = self.clock.val();
        self.op_gate.reset.next = self.reset.val();
        self.op_up.clock.next = self.clock.val();
        self.op_up.reset.next = self.reset.val();
        self.op_w.clock.next = self.clock.val();
        self.op_w.reset.next = self.reset.val();
        self.op_unit.clock.next = self.clock.val();
        self.op_unit.reset.next = self.reset.val();
        self.op_user.clock.next = self.clock.val();
        self.op_user.reset.next = self.reset.val();
        self.unit_at.clock.next = self.clock.val();
        self.unit_at.reset.next = self.reset.val();
        self.user_at.clock.next = self.clock.val();
        self.user_at.reset.next = self.reset.val();
        self.tail.clock.next = self.clock.val();
        self.tail.reset.next = self.reset.val();
        self.bad.clock.next = self.clock.val();
        self.bad.reset.next = self.reset.val();
        self.late.clock.next = self.clock.val();
        self.late.reset.next = self.reset.val();
        // The issue: the element at the pointer (its operands selected from the held pairs).
        self.sel_gate.next = self.gate_r[0].q.val();
        self.sel_up.next = self.up_r[0].q.val();
        for u in 0..self.gate_r.len() {
            if self.cur.q.val() == self.u_index[u].val() {
                self.sel_gate.next = self.gate_r[u].q.val();
                self.sel_up.next = self.up_r[u].q.val();
            }
        }
        self.issue_last.next = self.active.q.val() && (self.cur.q.val() == self.last_u.q.val());
        self.op_valid.d.next = self.active.q.val();
        self.op_gate.d.next = self.sel_gate.val();
        self.op_up.d.next = self.sel_up.val();
        self.op_w.d.next = self.w_r.q.val();
        self.op_unit.d.next = self.cur.q.val();
        self.op_user.d.next = self.user_r.q.val();
        self.cur.d.next = self.cur.q.val();
        if self.active.q.val() {
            self.cur.d.next = self.cur.q.val() + self.one.val();
        }
        self.active.d.next = self.active.q.val() && !self.issue_last.val();

        // The inputs: gates held until their up values; a user's up values start its elements
        // (after the advance, which they override).
        self.ups.next = false;
        self.highest.next = self.zero.val();
        for u in 0..self.gate_r.len() {
            self.gate_next[u].clock.next = self.clock.val();
            self.gate_next[u].reset.next = self.reset.val();
            self.gate_r[u].clock.next = self.clock.val();
            self.gate_r[u].reset.next = self.reset.val();
            self.up_r[u].clock.next = self.clock.val();
            self.up_r[u].reset.next = self.reset.val();
            self.gate_next[u].d.next = self.gate_next[u].q.val();
            self.gate_r[u].d.next = self.gate_r[u].q.val();
            self.up_r[u].d.next = self.up_r[u].q.val();
            if self.in_valid[u].val() && !self.in_up.val() {
                self.gate_next[u].d.next = self.value[u].val();
            }
            if self.in_valid[u].val() && self.in_up.val() {
                self.gate_r[u].d.next = self.gate_next[u].q.val();
                self.up_r[u].d.next = self.value[u].val();
                self.ups.next = true;
                self.highest.next = self.u_index[u].val();
            }
        }
        self.last_u.d.next = self.last_u.q.val();
        self.user_r.d.next = self.user_r.q.val();
        self.w_r.d.next = self.w_r.q.val();
        if self.ups.val() {
            self.w_r.d.next = self.in_weight.val();
            self.active.d.next = true;
            self.cur.d.next = self.zero.val();
            self.last_u.d.next = self.highest.val();
            self.user_r.d.next = self.in_user.val();
        }
        // Up values while this user's elements are pending, other than in its last issue.
        self.late.d.next = (self.late.q.val() || (self.ups.val() && self.active.q.val() && !self.issue_last.val()))
            && !self.clear.val();
        self.overrun.next = self.late.q.val();

        // The lane, its side band, and the outputs.
        self.lane.in_valid.next = self.op_valid.q.val();
        self.lane.gate.next = self.op_gate.q.val();
        self.lane.up.next = self.op_up.q.val();
        self.lane.weight.next = self.op_w.q.val();
        self.unit_at.d.next = self.op_unit.q.val();
        self.user_at.d.next = self.op_user.q.val();
        self.out_valid.next = self.lane.out_valid.val();
        self.out_unit.next = self.unit_at.q.val();
        self.out_user.next = self.user_at.q.val();
        self.h.next = self.lane.h.val();
        self.a.next = self.lane.a.val();
        self.bad.d.next =
            (self.bad.q.val() || (self.lane.out_valid.val() && self.lane.invalid.val())) && !self.clear.val();
        self.invalid.next = self.bad.q.val();
        self.tail.d.next = self.tail.q.val();
        if self.tail.q.val() != self.zero.val() {
            self.tail.d.next = self.tail.q.val() - self.one.val();
        }
        if self.active.q.val() {
            self.tail.d.next = self.drain.val();
        }
        self.idle.next = !self.active.q.val() && (self.tail.q.val() == self.zero.val());
    }
}
