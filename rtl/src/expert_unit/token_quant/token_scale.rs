//! `token_quant::token_scale`: a token's quantization scales: the largest magnitude of its
//! values, then `inv = 127 / amax` and `scale = amax / 127` on two dividers
//! (`lacuna_spec::a8w4::Int8Vector::quantize`), tokens back to back.
//!
//! ```text
//!             +----------------------------- token_scale ------------------------------+
//!  in_valid ->| running max of |x| --(last)--> held amax --(dividers free)--> fp32_div x2 |--> ready
//!  x[32] ---->| (the non-finite flag beside it)                     127 / amax, amax / 127 |--> inv[32]
//!  last ----->|                                           amax < ACT_FLUSH: both 0       |--> scale[32]
//!  in_ready <-| low while a token's amax waits and the dividers are busy                 |--> invalid
//!             +-------------------------------------------------------------------------+
//! ```
//!
//! Contract: values are taken in cycles with `in_valid` and `in_ready`; `last` marks a token's
//! final value. For each token, in order, `ready` is high for one cycle with `inv` and `scale`:
//! for finite values with `amax = max |x|` at least `lacuna_spec::a8w4::ACT_FLUSH`, the f32
//! quotients `127 / amax` and `amax / 127` (rounded to nearest even); below it both +0 (the
//! spec's flushed token). `invalid` (with `ready`): a value of the token was Inf or NaN; `inv`
//! and `scale` are then unspecified. `inv`, `scale` and `invalid` hold until the next `ready`.
//! With the dividers idle, `ready` comes [`READY_AFTER_LAST`] cycles after the cycle of `last`;
//! the next token's values may follow `last` at once: while one token divides, the next
//! token's maximum is taken, and only a token that ends while its predecessor still waits for
//! the dividers holds `in_ready` low (so tokens of at least [`READY_AFTER_LAST`] - 2 values
//! never wait).
//!
//! How: `|x|` of finite values orders as its bits (sign cleared), so the running maximum is an
//! unsigned compare. A token's amax is held in a register after its `last` and starts both
//! dividers ([`crate::fp32_div::Fp32Div`]) in the next cycle they are free; their results are
//! registered (with the flush rule) as the outputs.

use crate::fp32_div::Fp32Div;
use crate::reg::Reg;
use crate::wiring::constant;
use lacuna_spec::a8w4::{ACT_FLUSH, INT8_MAX};
use rust_hdl::prelude::*;

/// Cycles from a token's `last` (dividers idle) to its `ready`: the held register, the
/// divisions, the output register.
pub const READY_AFTER_LAST: u64 = 1 + crate::fp32_div::LATENCY + 1;
const _: () = assert!(READY_AFTER_LAST == 31, "PORTS says 31");

/// The ports of [`TokenScale`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: no token under way"),
    ("in_valid", "a value of the token is presented"),
    ("x", "the value, IEEE binary32 bits"),
    ("last", "with in_valid: the token's last value"),
    ("in_ready", "a presented value is taken (low only while a finished token waits for the dividers)"),
    ("ready", "one cycle a token: its inv, scale and invalid follow (31 cycles after last when idle)"),
    ("inv", "127 / amax rounded to nearest even (+0 when amax < ACT_FLUSH), IEEE binary32 bits"),
    ("scale", "amax / 127 rounded to nearest even (+0 when amax < ACT_FLUSH), IEEE binary32 bits"),
    ("invalid", "a value of that token was Inf or NaN; inv and scale are then unspecified"),
];

/// The token's amax and its two quotients.
#[derive(LogicBlock)]
pub struct TokenScale {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A value is presented.
    pub in_valid: Signal<In, Bit>,
    /// The value (FP32 bits).
    pub x: Signal<In, Bits<32>>,
    /// It is the token's last.
    pub last: Signal<In, Bit>,
    /// The value is taken.
    pub in_ready: Signal<Out, Bit>,
    /// A token's results (one cycle).
    pub ready: Signal<Out, Bit>,
    /// 127 / amax (FP32 bits).
    pub inv: Signal<Out, Bits<32>>,
    /// amax / 127 (FP32 bits).
    pub scale: Signal<Out, Bits<32>>,
    /// The token had a non-finite value.
    pub invalid: Signal<Out, Bit>,
    div_inv: Fp32Div,
    div_scale: Fp32Div,
    magnitude: Signal<Local, Bits<32>>,
    bad: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    busy: Signal<Local, Bit>,
    done: Signal<Local, Bit>,
    start: Signal<Local, Bit>,
    max_now: Signal<Local, Bits<32>>,
    bad_now: Signal<Local, Bit>,
    flush: Signal<Local, Bit>,
    run_max: Reg<Bits<32>>,
    run_bad: Reg<Bit>,
    held: Reg<Bit>,
    held_max: Reg<Bits<32>>,
    held_bad: Reg<Bit>,
    flight_bad: Reg<Bit>,
    flight_flush: Reg<Bit>,
    r_ready: Reg<Bit>,
    r_inv: Reg<Bits<32>>,
    r_scale: Reg<Bits<32>>,
    r_bad: Reg<Bit>,
    zero: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    exp_mask: Constant<Bits<32>>,
    flush_bits: Constant<Bits<32>>,
    int8_max: Constant<Bits<32>>,
}

impl Default for TokenScale {
    fn default() -> TokenScale {
        TokenScale {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            x: Default::default(),
            last: Default::default(),
            in_ready: Default::default(),
            ready: Default::default(),
            inv: Default::default(),
            scale: Default::default(),
            invalid: Default::default(),
            div_inv: Default::default(),
            div_scale: Default::default(),
            magnitude: Default::default(),
            bad: Default::default(),
            take: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            start: Default::default(),
            max_now: Default::default(),
            bad_now: Default::default(),
            flush: Default::default(),
            run_max: Default::default(),
            run_bad: Default::default(),
            held: Default::default(),
            held_max: Default::default(),
            held_bad: Default::default(),
            flight_bad: Default::default(),
            flight_flush: Default::default(),
            r_ready: Default::default(),
            r_inv: Default::default(),
            r_scale: Default::default(),
            r_bad: Default::default(),
            zero: constant(0),
            abs_mask: constant(0x7fff_ffff),
            exp_mask: constant(0x7f80_0000),
            flush_bits: constant(ACT_FLUSH.to_bits() as u64),
            int8_max: constant((INT8_MAX as f32).to_bits() as u64),
        }
    }
}

impl Logic for TokenScale {
    #[hdl_gen]
    fn update(&mut self) {
        self.div_inv.clock.next = self.clock.val();
        self.div_inv.reset.next = self.reset.val();
        self.div_scale.clock.next = self.clock.val();
        self.div_scale.reset.next = self.reset.val();
        self.run_max.clock.next = self.clock.val();
        self.run_max.reset.next = self.reset.val();
        self.run_bad.clock.next = self.clock.val();
        self.run_bad.reset.next = self.reset.val();
        self.held.clock.next = self.clock.val();
        self.held.reset.next = self.reset.val();
        self.held_max.clock.next = self.clock.val();
        self.held_max.reset.next = self.reset.val();
        self.held_bad.clock.next = self.clock.val();
        self.held_bad.reset.next = self.reset.val();
        self.flight_bad.clock.next = self.clock.val();
        self.flight_bad.reset.next = self.reset.val();
        self.flight_flush.clock.next = self.clock.val();
        self.flight_flush.reset.next = self.reset.val();
        self.r_ready.clock.next = self.clock.val();
        self.r_ready.reset.next = self.reset.val();
        self.r_inv.clock.next = self.clock.val();
        self.r_inv.reset.next = self.reset.val();
        self.r_scale.clock.next = self.clock.val();
        self.r_scale.reset.next = self.reset.val();
        self.r_bad.clock.next = self.clock.val();
        self.r_bad.reset.next = self.reset.val();
        // A held token starts the dividers in a cycle they are free (busy falls with done).
        // (The two dividers start together and take the same time: both are read for clarity.)
        self.busy.next = self.div_inv.busy.val() || self.div_scale.busy.val();
        self.done.next = self.div_inv.done.val() && self.div_scale.done.val();
        self.start.next = self.held.q.val() && !self.busy.val();
        self.in_ready.next = !(self.held.q.val() && self.busy.val());
        self.take.next = self.in_valid.val() && !(self.held.q.val() && self.busy.val());
        // The running maximum of |x| and the non-finite flag, with this value.
        self.magnitude.next = self.x.val() & self.abs_mask.val();
        self.bad.next = (self.x.val() & self.exp_mask.val()) == self.exp_mask.val();
        self.max_now.next = self.run_max.q.val();
        if self.magnitude.val() > self.run_max.q.val() {
            self.max_now.next = self.magnitude.val();
        }
        self.bad_now.next = self.run_bad.q.val() || self.bad.val();
        self.run_max.d.next = self.run_max.q.val();
        self.run_bad.d.next = self.run_bad.q.val();
        self.held.d.next = self.held.q.val() && !self.start.val();
        self.held_max.d.next = self.held_max.q.val();
        self.held_bad.d.next = self.held_bad.q.val();
        if self.take.val() {
            self.run_max.d.next = self.max_now.val();
            self.run_bad.d.next = self.bad_now.val();
            if self.last.val() {
                self.run_max.d.next = self.zero.val();
                self.run_bad.d.next = false;
                self.held.d.next = true;
                self.held_max.d.next = self.max_now.val();
                self.held_bad.d.next = self.bad_now.val();
            }
        }
        // The divisions of the held token.
        self.div_inv.start.next = self.start.val();
        self.div_inv.a.next = self.int8_max.val();
        self.div_inv.b.next = self.held_max.q.val();
        self.div_scale.start.next = self.start.val();
        self.div_scale.a.next = self.held_max.q.val();
        self.div_scale.b.next = self.int8_max.val();
        self.flight_bad.d.next = self.flight_bad.q.val();
        self.flight_flush.d.next = self.flight_flush.q.val();
        if self.start.val() {
            self.flight_bad.d.next = self.held_bad.q.val();
            self.flight_flush.d.next = self.held_max.q.val() < self.flush_bits.val();
        }
        // Their results, flushed to +0 below ACT_FLUSH (where 127 / amax could overflow).
        self.flush.next = self.flight_flush.q.val();
        self.r_ready.d.next = self.done.val();
        self.r_inv.d.next = self.r_inv.q.val();
        self.r_scale.d.next = self.r_scale.q.val();
        self.r_bad.d.next = self.r_bad.q.val();
        if self.done.val() {
            self.r_inv.d.next = self.div_inv.quotient.val();
            self.r_scale.d.next = self.div_scale.quotient.val();
            self.r_bad.d.next = self.flight_bad.q.val()
                || (!self.flush.val() && (self.div_inv.invalid.val() || self.div_scale.invalid.val()));
            if self.flush.val() {
                self.r_inv.d.next = self.zero.val();
                self.r_scale.d.next = self.zero.val();
            }
        }
        self.ready.next = self.r_ready.q.val();
        self.inv.next = self.r_inv.q.val();
        self.scale.next = self.r_scale.q.val();
        self.invalid.next = self.r_bad.q.val();
    }
}
