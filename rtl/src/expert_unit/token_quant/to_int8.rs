//! `to_int8`: an FP32 value rounded to the nearest INT8 in -127..=127, ties to even, saturating:
//! the last step of a token's quantization (`lacuna_spec::a8w4::Int8Vector::quantize`:
//! `(v * inv).round_ties_even().clamp(-127, 127)`), combinational.
//!
//! ```text
//!              +---------+
//!   p[32] ---->| to_int8 |--> q[8]   round_ties_even(p) clamped to -127..=127, two's complement
//!              +---------+
//! ```
//!
//! Contract: for finite `p`, `q` is `p.round_ties_even().clamp(-127.0, 127.0) as i8` (a zero of
//! either sign and any `|p| < 0.5` give 0; `|p| >= 127` gives +-127). Inf gives +-127 and NaN an
//! unspecified value: the quantizer flags non-finite values itself.
//!
//! How: below 0.5 (biased exponent < 126) the result is 0, from 128 up (exponent > 133) it
//! saturates; between, the 24-bit significand is shifted right by `150 - exponent` (17 to 24)
//! and rounded from its guard bit and the bits below it (sticky), then clamped at 127 (128 is
//! reachable by rounding) and negated for a negative `p`.

use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The ports of [`ToInt8`] when it is a top module (it is emitted inside the quantizer lane).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("p", "FP32 value, IEEE binary32 bits"),
    ("q", "round_ties_even(p) clamped to -127..=127, INT8 two's complement"),
];

/// FP32 -> INT8, nearest even, saturating at +-127.
#[derive(LogicBlock)]
pub struct ToInt8 {
    /// The value (FP32 bits).
    pub p: Signal<In, Bits<32>>,
    /// The rounded integer (INT8 two's complement).
    pub q: Signal<Out, Bits<8>>,
    exp: Signal<Local, Bits<32>>,
    sig: Signal<Local, Bits<32>>,
    shift: Signal<Local, Bits<32>>,
    whole: Signal<Local, Bits<32>>,
    below: Signal<Local, Bits<32>>,
    guard: Signal<Local, Bit>,
    sticky: Signal<Local, Bit>,
    mag: Signal<Local, Bits<32>>,
    mag8: Signal<Local, Bits<8>>,
    word: Signal<Local, Bits<8>>,
    zero: Constant<Bits<32>>,
    zero8: Constant<Bits<8>>,
    one: Constant<Bits<32>>,
    exp8: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    hidden: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    max: Constant<Bits<32>>,
    /// Biased exponent of 0.5.
    e_half: Constant<Bits<32>>,
    /// Biased exponent of 64 (the largest below 128).
    e_top: Constant<Bits<32>>,
    /// 127 + 23: the shift that leaves the integer part of a significand of exponent 0.
    e_int: Constant<Bits<32>>,
}

impl Default for ToInt8 {
    fn default() -> ToInt8 {
        ToInt8 {
            p: Default::default(),
            q: Default::default(),
            exp: Default::default(),
            sig: Default::default(),
            shift: Default::default(),
            whole: Default::default(),
            below: Default::default(),
            guard: Default::default(),
            sticky: Default::default(),
            mag: Default::default(),
            mag8: Default::default(),
            word: Default::default(),
            zero: constant(0),
            zero8: constant(0),
            one: constant(1),
            exp8: constant(0xff),
            frac23: constant(0x7f_ffff),
            hidden: constant(0x80_0000),
            sign_bit: constant(0x8000_0000),
            k23: constant(23),
            max: constant(lacuna_spec::a8w4::INT8_MAX as u64),
            e_half: constant(126),
            e_top: constant(133),
            e_int: constant(150),
        }
    }
}

impl Logic for ToInt8 {
    #[hdl_gen]
    fn update(&mut self) {
        self.exp.next = (self.p.val() >> self.k23.val()) & self.exp8.val();
        self.sig.next = (self.p.val() & self.frac23.val()) | self.hidden.val();
        // Used only between e_half and e_top, where it is 17..=24.
        self.shift.next = self.e_int.val() - self.exp.val();
        self.whole.next = self.sig.val() >> self.shift.val();
        self.below.next = self.sig.val() & ((self.one.val() << (self.shift.val() - self.one.val())) - self.one.val());
        self.guard.next = ((self.sig.val() >> (self.shift.val() - self.one.val())) & self.one.val()) != self.zero.val();
        self.sticky.next = self.below.val() != self.zero.val();
        self.mag.next = self.whole.val();
        if self.guard.val() && (self.sticky.val() || ((self.whole.val() & self.one.val()) != self.zero.val())) {
            self.mag.next = self.whole.val() + self.one.val();
        }
        if self.exp.val() < self.e_half.val() {
            self.mag.next = self.zero.val();
        }
        if (self.exp.val() > self.e_top.val()) || (self.mag.val() > self.max.val()) {
            self.mag.next = self.max.val();
        }
        // (The clamp reads every bit of mag; the result is its low 8, at most 127.)
        self.mag8.next = self.mag.val().get_bits::<8>(0);
        self.word.next = self.mag8.val();
        if (self.p.val() & self.sign_bit.val()) != self.zero.val() {
            self.word.next = self.zero8.val() - self.mag8.val();
        }
        self.q.next = self.word.val();
    }
}
