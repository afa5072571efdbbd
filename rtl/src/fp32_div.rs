//! `fp32_div`: an FP32 divider, round to nearest even, one quotient bit a cycle: the expert
//! unit's two divisions, the token quantization's `127 / amax` and `amax / 127`
//! (`lacuna_spec::a8w4::Int8Vector::quantize`) and calibration's `kappa = sum|h| / sum nu`
//! (`lacuna_model::expert_unit::calibration::kappa`): a few a token, so a small iterative unit
//! suffices where a multiplier-sized array would not pay.
//!
//! ```text
//!            +----------+
//!   start -->|          |--> busy
//!   a[32] -->| fp32_div |--> done       (one cycle, LATENCY cycles after start)
//!   b[32] -->|          |--> quotient   a / b rounded to nearest, ties to even
//!            +----------+--> invalid    a or b Inf or NaN, or b zero
//! ```
//!
//! Contract: `start` is taken when the unit is not `busy` (ignored otherwise); `LATENCY` cycles
//! later `done` is high for one cycle with `quotient`, for finite `a` and non-zero finite `b` the
//! bit pattern of Rust's `a / b` on f32: subnormal operands and results, signed zeros (the sign
//! is `sign(a) xor sign(b)`) and overflow to Inf included. `invalid` (with `done`): an operand
//! is Inf or NaN, or `b` is zero; `quotient` is then unspecified (the users never divide so:
//! amax is at least `ACT_FLUSH`, and kappa divides only by a positive sum). `busy` is high from
//! the cycle after `start` until the cycle before `done`; a new `start` may come with `done`.
//!
//! How: in the start cycle each significand (the hidden one unless the field is 0) is
//! normalized to a leading one at bit 23 by [`crate::normalize::Normalize`], its exponent
//! lowered by the shift. Then restoring division, one bit a cycle for `QUOTIENT_BITS` cycles:
//! the quotient `X / Y` of two such significands lies in (1/2, 2), so 27 bits (weights 2^0 ..
//! 2^-26) hold its 24 significant bits, the guard bit and one more, and the final remainder,
//! non-zero when the quotient is inexact, is the sticky bit. The quotient, the sticky bit and
//! the exponent difference go to the multiplier's back third ([`crate::fp32_mul::back`]),
//! whose normalize, round-to-nearest-even, subnormal shift and packing are exactly what a
//! quotient needs (its `exps` input offset so that its exponent rule gives the quotient's:
//! `ea - eb + 253`): one rounding block for both units.

use crate::fp32_mul::back::Fp32MulBack;
use crate::fp32_mul::{HI_INVALID, HI_SIGN};
use crate::normalize::Normalize;
use crate::reg::Reg;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// Quotient bits computed, one a cycle.
pub const QUOTIENT_BITS: u64 = 27;

/// Cycles from `start` to `done`: the unpacking cycle, the quotient bits, the rounding cycle.
pub const LATENCY: u64 = QUOTIENT_BITS + 2;
const _: () = assert!(LATENCY == 29, "PORTS says 29");

/// The ports of [`Fp32Div`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the unit idles"),
    ("start", "divide a by b (taken when not busy)"),
    ("a", "dividend, IEEE binary32 bits"),
    ("b", "divisor, IEEE binary32 bits"),
    ("busy", "a division is under way (a start is ignored)"),
    ("done", "the quotient is ready, LATENCY (29) cycles after its start, for one cycle"),
    ("quotient", "a / b rounded to nearest, ties to even, IEEE binary32 bits"),
    ("invalid", "with done: a or b was Inf or NaN, or b was zero; quotient is then unspecified"),
];

/// The iterative divider.
#[derive(LogicBlock)]
pub struct Fp32Div {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Start a division.
    pub start: Signal<In, Bit>,
    /// Dividend (FP32 bits).
    pub a: Signal<In, Bits<32>>,
    /// Divisor (FP32 bits).
    pub b: Signal<In, Bits<32>>,
    /// A division is under way.
    pub busy: Signal<Out, Bit>,
    /// The quotient is ready (one cycle).
    pub done: Signal<Out, Bit>,
    /// The quotient (FP32 bits).
    pub quotient: Signal<Out, Bits<32>>,
    /// With `done`: the division was invalid.
    pub invalid: Signal<Out, Bit>,
    norm_a: Normalize,
    norm_b: Normalize,
    back: Fp32MulBack,
    ea_f: Signal<Local, Bits<32>>,
    eb_f: Signal<Local, Bits<32>>,
    flags: Signal<Local, Bits<32>>,
    diff: Signal<Local, Bits<32>>,
    busy_r: Reg<Bit>,
    count: Reg<Bits<32>>,
    rem: Reg<Bits<32>>,
    divisor: Reg<Bits<32>>,
    quo: Reg<Bits<32>>,
    exps: Reg<Bits<32>>,
    flags_r: Reg<Bits<32>>,
    done_r: Reg<Bit>,
    quotient_r: Reg<Bits<32>>,
    invalid_r: Reg<Bit>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    exp8: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    hidden: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    invalid_field: Constant<Bits<32>>,
    low3: Constant<Bits<32>>,
    bias: Constant<Bits<32>>,
    bits: Constant<Bits<32>>,
    k3: Constant<Bits<32>>,
    k_sign: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k21: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
}

impl Default for Fp32Div {
    fn default() -> Fp32Div {
        Fp32Div {
            clock: Default::default(),
            reset: Default::default(),
            start: Default::default(),
            a: Default::default(),
            b: Default::default(),
            busy: Default::default(),
            done: Default::default(),
            quotient: Default::default(),
            invalid: Default::default(),
            norm_a: Default::default(),
            norm_b: Default::default(),
            back: Default::default(),
            ea_f: Default::default(),
            eb_f: Default::default(),
            flags: Default::default(),
            diff: Default::default(),
            busy_r: Default::default(),
            count: Default::default(),
            rem: Default::default(),
            divisor: Default::default(),
            quo: Default::default(),
            exps: Default::default(),
            flags_r: Default::default(),
            done_r: Default::default(),
            quotient_r: Default::default(),
            invalid_r: Default::default(),
            zero: constant(0),
            one: constant(1),
            exp8: constant(0xff),
            frac23: constant(0x7f_ffff),
            hidden: constant(0x80_0000),
            abs_mask: constant(0x7fff_ffff),
            // The back third's `hi` word: its sign and invalid bits.
            sign_field: constant(1 << HI_SIGN),
            invalid_field: constant(1 << HI_INVALID),
            low3: constant(0x7),
            // The back third's biased exponent is exps - 126 - z for a leading one at bit 23 of
            // its high word weighing 2^1 (a product); a quotient's weighs 2^0 and its biased
            // exponent is ea - eb + 127: exps = ea - eb + 253 (modulo 2^32, as it computes).
            bias: constant(253),
            bits: constant(QUOTIENT_BITS),
            k3: constant(3),
            k_sign: constant(31 - HI_SIGN),
            k8: constant(8),
            k21: constant(21),
            k23: constant(23),
        }
    }
}

impl Logic for Fp32Div {
    #[hdl_gen]
    fn update(&mut self) {
        self.busy_r.clock.next = self.clock.val();
        self.busy_r.reset.next = self.reset.val();
        self.busy_r.d.next = self.busy_r.q.val();
        self.count.clock.next = self.clock.val();
        self.count.reset.next = self.reset.val();
        self.count.d.next = self.count.q.val();
        self.rem.clock.next = self.clock.val();
        self.rem.reset.next = self.reset.val();
        self.rem.d.next = self.rem.q.val();
        self.divisor.clock.next = self.clock.val();
        self.divisor.reset.next = self.reset.val();
        self.divisor.d.next = self.divisor.q.val();
        self.quo.clock.next = self.clock.val();
        self.quo.reset.next = self.reset.val();
        self.quo.d.next = self.quo.q.val();
        self.exps.clock.next = self.clock.val();
        self.exps.reset.next = self.reset.val();
        self.exps.d.next = self.exps.q.val();
        self.flags_r.clock.next = self.clock.val();
        self.flags_r.reset.next = self.reset.val();
        self.flags_r.d.next = self.flags_r.q.val();
        self.done_r.clock.next = self.clock.val();
        self.done_r.reset.next = self.reset.val();
        self.done_r.d.next = false;
        self.quotient_r.clock.next = self.clock.val();
        self.quotient_r.reset.next = self.reset.val();
        self.quotient_r.d.next = self.quotient_r.q.val();
        self.invalid_r.clock.next = self.clock.val();
        self.invalid_r.reset.next = self.reset.val();
        self.invalid_r.d.next = self.invalid_r.q.val();
        // Unpacking: each significand normalized to a leading one at bit 23 (bit 31 of the
        // normalizer's word), its exponent (the field, or 1 when it is 0) lowered by the shift.
        self.ea_f.next = (self.a.val() >> self.k23.val()) & self.exp8.val();
        self.eb_f.next = (self.b.val() >> self.k23.val()) & self.exp8.val();
        self.norm_a.w.next = (self.a.val() & self.frac23.val()) << self.k8.val();
        self.norm_a.e.next = self.ea_f.val();
        if self.ea_f.val() == self.zero.val() {
            self.norm_a.e.next = self.one.val();
        } else {
            self.norm_a.w.next = ((self.a.val() & self.frac23.val()) | self.hidden.val()) << self.k8.val();
        }
        self.norm_b.w.next = (self.b.val() & self.frac23.val()) << self.k8.val();
        self.norm_b.e.next = self.eb_f.val();
        if self.eb_f.val() == self.zero.val() {
            self.norm_b.e.next = self.one.val();
        } else {
            self.norm_b.w.next = ((self.b.val() & self.frac23.val()) | self.hidden.val()) << self.k8.val();
        }
        // The operands' sign bit (31) moved to HI_SIGN.
        self.flags.next = ((self.a.val() ^ self.b.val()) >> self.k_sign.val()) & self.sign_field.val();
        if (self.ea_f.val() == self.exp8.val())
            || (self.eb_f.val() == self.exp8.val())
            || ((self.b.val() & self.abs_mask.val()) == self.zero.val())
        {
            self.flags.next = self.flags.val() | self.invalid_field.val();
        }
        if self.start.val() && !self.busy_r.q.val() {
            self.busy_r.d.next = true;
            self.count.d.next = self.bits.val();
            self.rem.d.next = self.norm_a.w_out.val() >> self.k8.val();
            self.divisor.d.next = self.norm_b.w_out.val() >> self.k8.val();
            self.quo.d.next = self.zero.val();
            self.exps.d.next = (self.norm_a.e_out.val() - self.norm_b.e_out.val()) + self.bias.val();
            self.flags_r.d.next = self.flags.val();
        }
        // One quotient bit a cycle (restoring division): the remainder stays below twice the
        // divisor, under 2^25.
        self.diff.next = self.rem.q.val() - self.divisor.q.val();
        if self.busy_r.q.val() && (self.count.q.val() != self.zero.val()) {
            self.count.d.next = self.count.q.val() - self.one.val();
            if self.rem.q.val() >= self.divisor.q.val() {
                self.quo.d.next = (self.quo.q.val() << self.one.val()) | self.one.val();
                self.rem.d.next = self.diff.val() << self.one.val();
            } else {
                self.quo.d.next = self.quo.q.val() << self.one.val();
                self.rem.d.next = self.rem.q.val() << self.one.val();
            }
        }
        // Rounding: the quotient's top 24 bits as the back third's high word, the last three
        // and the sticky bit (a non-zero remainder) as its low word.
        self.back.hi.next = (self.quo.q.val() >> self.k3.val()) | self.flags_r.q.val();
        self.back.lo.next = (self.quo.q.val() & self.low3.val()) << self.k21.val();
        if self.rem.q.val() != self.zero.val() {
            self.back.lo.next = ((self.quo.q.val() & self.low3.val()) << self.k21.val()) | self.one.val();
        }
        self.back.exps.next = self.exps.q.val();
        if self.busy_r.q.val() && (self.count.q.val() == self.zero.val()) {
            self.busy_r.d.next = false;
            self.done_r.d.next = true;
            self.quotient_r.d.next = self.back.product.val();
            self.invalid_r.d.next = self.back.invalid.val();
        }
        self.busy.next = self.busy_r.q.val();
        self.done.next = self.done_r.q.val();
        self.quotient.next = self.quotient_r.q.val();
        self.invalid.next = self.invalid_r.q.val();
    }
}
