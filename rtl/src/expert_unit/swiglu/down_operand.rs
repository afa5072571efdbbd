//! `down_operand`: the down engine's operand of one (channel, token), `a = fp16(w x h)`
//! saturating at +-65504: `lacuna_spec::a8w4::down_operand`, combinational, from three blocks a
//! pipeline may put registers between (`swiglu::lane` does).
//!
//! ```text
//!            +---------------+  product[32]  +---------+
//!   w[32] -->| fp32_mul      |-------------->| ToFp16  |--> a[16]  fp16(clamp(w * h, -65504,
//!   h[32] -->|               |               |         |          65504)), nearest even
//!        \-->| OperandClass  |-------------->|         |
//!            +---------------+ special[16]   +---------+
//! ```
//!
//! Contract: for every `w` and `h`, `a` is the FP16 bit pattern of `down_operand(w, h)`: the
//! FP32 product (one rounding, [`crate::fp32_mul`]), clamped to FP16's largest finite value
//! (a product that overflowed to Inf, or an Inf operand times a non-zero one, clamps too), then
//! rounded to nearest even into FP16, subnormals included; signed zeros keep their sign; a NaN
//! product (a NaN operand, or Inf times zero) gives FP16's NaN `0x7e00`, as the spec's does.
//! (`fp32_mul`'s product of a non-finite operand is unspecified, so those cases are decided from
//! the operands' classes: [`OperandClass`].)
//!
//! How ([`ToFp16`]): the FP32 product's two halfwords, so that every step is 16 bits wide (rust-hdl has no
//! narrowing that Verilator's lint accepts without unused bits): a magnitude at or above 65504
//! (`0x477fe000`) saturates to `0x7bff`; a normal FP16 result takes the top 10 fraction bits,
//! rounded from the 13 below (the guard and 12 sticky bits) by adding the round bit to the
//! packed exponent and fraction; a subnormal one is the significand's top 11 bits shifted right
//! by `113 - e` (at most 12: the rest is sticky) by [`crate::sticky_shift::StickyShift`],
//! collecting the bits shifted out, then rounded the same way (a carry gives the smallest normal, as it should).

use crate::fp32_mul::Fp32Mul;
use crate::sticky_shift::StickyShift;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The ports of [`DownOperand`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("w", "the token's gate weight for the expert, IEEE binary32 bits"),
    ("h", "silu(gate) * up of the channel, IEEE binary32 bits"),
    ("a", "fp16(w * h) saturating at +-65504, round to nearest even (NaN: 0x7e00), IEEE binary16 bits"),
];

/// `fp16(w x h)`, saturating: the three blocks wired, combinational.
#[derive(LogicBlock, Default)]
pub struct DownOperand {
    /// The gate weight (FP32 bits).
    pub w: Signal<In, Bits<32>>,
    /// The channel's h (FP32 bits).
    pub h: Signal<In, Bits<32>>,
    /// The down operand (FP16 bits).
    pub a: Signal<Out, Bits<16>>,
    mul: Fp32Mul,
    classes: OperandClass,
    round: ToFp16,
}

impl Logic for DownOperand {
    #[hdl_gen]
    fn update(&mut self) {
        self.mul.a.next = self.w.val();
        self.mul.b.next = self.h.val();
        self.classes.w.next = self.w.val();
        self.classes.h.next = self.h.val();
        self.round.product.next = self.mul.product.val();
        // The multiplier's flag: an operand's exponent field is all ones (Inf or NaN).
        self.round.is_special.next = self.mul.invalid.val();
        self.round.special.next = self.classes.special.val();
        self.a.next = self.round.a.val();
    }
}

/// The operands' classes: the FP16 result of `w x h` when an operand is not finite (`0x7e00`
/// for a NaN operand or Inf times zero; +-65504 for Inf times non-zero).
#[derive(LogicBlock)]
pub struct OperandClass {
    /// The gate weight (FP32 bits).
    pub w: Signal<In, Bits<32>>,
    /// The channel's h (FP32 bits).
    pub h: Signal<In, Bits<32>>,
    /// The result when an operand is Inf or NaN (FP16 bits; the multiplier's `invalid` says
    /// when).
    pub special: Signal<Out, Bits<16>>,
    nan: Signal<Local, Bit>,
    inf: Signal<Local, Bit>,
    sign_xor: Signal<Local, Bits<32>>,
    exp_w: Signal<Local, Bits<32>>,
    exp_h: Signal<Local, Bits<32>>,
    frac_w: Signal<Local, Bits<32>>,
    frac_h: Signal<Local, Bits<32>>,
    zero32: Constant<Bits<32>>,
    exp_mask: Constant<Bits<32>>,
    frac_mask: Constant<Bits<32>>,
    abs32: Constant<Bits<32>>,
    sign32: Constant<Bits<32>>,
    nan16: Constant<Bits<16>>,
    max_half: Constant<Bits<16>>,
    sign_bit: Constant<Bits<16>>,
}

impl Default for OperandClass {
    fn default() -> OperandClass {
        OperandClass {
            w: Default::default(),
            h: Default::default(),
            special: Default::default(),
            nan: Default::default(),
            inf: Default::default(),
            sign_xor: Default::default(),
            exp_w: Default::default(),
            exp_h: Default::default(),
            frac_w: Default::default(),
            frac_h: Default::default(),
            zero32: constant(0),
            exp_mask: constant(0x7f80_0000),
            frac_mask: constant(0x7f_ffff),
            abs32: constant(0x7fff_ffff),
            sign32: constant(0x8000_0000),
            nan16: constant(0x7e00),
            max_half: constant(0x7bff),
            sign_bit: constant(0x8000),
        }
    }
}

impl Logic for OperandClass {
    #[hdl_gen]
    fn update(&mut self) {
        // Inf times non-zero saturates; a NaN operand, or Inf times zero, is NaN.
        self.exp_w.next = self.w.val() & self.exp_mask.val();
        self.exp_h.next = self.h.val() & self.exp_mask.val();
        self.frac_w.next = self.w.val() & self.frac_mask.val();
        self.frac_h.next = self.h.val() & self.frac_mask.val();
        self.inf.next = ((self.exp_w.val() == self.exp_mask.val()) && (self.frac_w.val() == self.zero32.val()))
            || ((self.exp_h.val() == self.exp_mask.val()) && (self.frac_h.val() == self.zero32.val()));
        self.nan.next = ((self.exp_w.val() == self.exp_mask.val()) && (self.frac_w.val() != self.zero32.val()))
            || ((self.exp_h.val() == self.exp_mask.val()) && (self.frac_h.val() != self.zero32.val()))
            || (self.inf.val()
                && (((self.w.val() & self.abs32.val()) == self.zero32.val())
                    || ((self.h.val() & self.abs32.val()) == self.zero32.val())));
        self.sign_xor.next = (self.w.val() ^ self.h.val()) & self.sign32.val();
        self.special.next = self.max_half.val();
        if self.sign_xor.val() != self.zero32.val() {
            self.special.next = self.max_half.val() | self.sign_bit.val();
        }
        if self.nan.val() {
            self.special.next = self.nan16.val();
        }
    }
}

/// A finite FP32 product to FP16, saturating, nearest even (or the class's result).
#[derive(LogicBlock)]
pub struct ToFp16 {
    /// The FP32 product (bits).
    pub product: Signal<In, Bits<32>>,
    /// An operand was not finite: `special` is the result.
    pub is_special: Signal<In, Bit>,
    /// The result then.
    pub special: Signal<In, Bits<16>>,
    /// The down operand (FP16 bits).
    pub a: Signal<Out, Bits<16>>,
    shift: StickyShift<16>,
    lo: Signal<Local, Bits<16>>,
    hi: Signal<Local, Bits<16>>,
    sign: Signal<Local, Bits<16>>,
    mag_hi: Signal<Local, Bits<16>>,
    exp: Signal<Local, Bits<16>>,
    top11: Signal<Local, Bits<16>>,
    normal: Signal<Local, Bits<16>>,
    round_n: Signal<Local, Bit>,
    d: Signal<Local, Bits<16>>,
    v0: Signal<Local, Bits<16>>,
    v4: Signal<Local, Bits<16>>,
    st0: Signal<Local, Bit>,
    st4: Signal<Local, Bit>,
    frac: Signal<Local, Bits<16>>,
    round_s: Signal<Local, Bit>,
    subnormal: Signal<Local, Bits<16>>,
    magnitude: Signal<Local, Bits<16>>,
    zero: Constant<Bits<16>>,
    one: Constant<Bits<16>>,
    sign_bit: Constant<Bits<16>>,
    abs_mask: Constant<Bits<16>>,
    exp8: Constant<Bits<16>>,
    frac7: Constant<Bits<16>>,
    hidden: Constant<Bits<16>>,
    frac10: Constant<Bits<16>>,
    sat_hi: Constant<Bits<16>>,
    sat_lo: Constant<Bits<16>>,
    max_half: Constant<Bits<16>>,
    sticky12: Constant<Bits<16>>,
    sticky13: Constant<Bits<16>>,
    k3: Constant<Bits<16>>,
    k4: Constant<Bits<16>>,
    k7: Constant<Bits<16>>,
    k10: Constant<Bits<16>>,
    k12: Constant<Bits<16>>,
    k13: Constant<Bits<16>>,
    k112: Constant<Bits<16>>,
    k113: Constant<Bits<16>>,
    m3: Constant<Bits<16>>,
}

impl Default for ToFp16 {
    fn default() -> ToFp16 {
        ToFp16 {
            product: Default::default(),
            is_special: Default::default(),
            special: Default::default(),
            a: Default::default(),
            shift: StickyShift::new(&[8, 4, 2, 1]),
            lo: Default::default(),
            hi: Default::default(),
            sign: Default::default(),
            mag_hi: Default::default(),
            exp: Default::default(),
            top11: Default::default(),
            normal: Default::default(),
            round_n: Default::default(),
            d: Default::default(),
            v0: Default::default(),
            v4: Default::default(),
            st0: Default::default(),
            st4: Default::default(),
            frac: Default::default(),
            round_s: Default::default(),
            subnormal: Default::default(),
            magnitude: Default::default(),
            zero: constant(0),
            one: constant(1),
            sign_bit: constant(0x8000),
            abs_mask: constant(0x7fff),
            exp8: constant(0xff),
            frac7: constant(0x7f),
            hidden: constant(0x400),
            frac10: constant(0x3ff),
            // 65504 = 0x477fe000 in FP32: its two halfwords.
            sat_hi: constant(0x477f),
            sat_lo: constant(0xe000),
            max_half: constant(0x7bff),
            sticky12: constant(0x0fff),
            sticky13: constant(0x1fff),
            k3: constant(3),
            k4: constant(4),
            k7: constant(7),
            k10: constant(10),
            k12: constant(12),
            k13: constant(13),
            k112: constant(112),
            k113: constant(113),
            m3: constant(0x7),
        }
    }
}

impl Logic for ToFp16 {
    #[hdl_gen]
    fn update(&mut self) {
        self.lo.next = self.product.val().get_bits::<16>(0);
        self.hi.next = self.product.val().get_bits::<16>(16);
        self.sign.next = self.hi.val() & self.sign_bit.val();
        self.mag_hi.next = self.hi.val() & self.abs_mask.val();
        self.exp.next = (self.mag_hi.val() >> self.k7.val()) & self.exp8.val();
        // The significand's top 11 bits (bits 23..13: hidden one, then 10 fraction bits).
        self.top11.next = ((self.mag_hi.val() & self.frac7.val()) << self.k3.val()) | (self.lo.val() >> self.k13.val());
        if self.exp.val() != self.zero.val() {
            self.top11.next = self.top11.val() | self.hidden.val();
        }
        // Normal FP16 (exponent field e - 112 in 1..30): guard bit 12, sticky bits 11..0.
        self.normal.next =
            ((self.exp.val() - self.k112.val()) << self.k10.val()) | (self.top11.val() & self.frac10.val());
        self.round_n.next = (((self.lo.val() >> self.k12.val()) & self.one.val()) != self.zero.val())
            && (((self.lo.val() & self.sticky12.val()) != self.zero.val())
                || ((self.top11.val() & self.one.val()) != self.zero.val()));
        if self.round_n.val() {
            self.normal.next = self.normal.val() + self.one.val();
        }
        // Subnormal FP16 (e <= 112): top11 shifted right by 113 - e (e at least 1; at most 12:
        // further bits are all sticky), 4 bits below for the guard.
        self.d.next = self.k12.val();
        if (self.exp.val() > self.zero.val()) && (self.exp.val() > (self.k113.val() - self.k12.val())) {
            self.d.next = self.k113.val() - self.exp.val();
        }
        self.v0.next = self.top11.val() << self.k4.val();
        self.st0.next = (self.lo.val() & self.sticky13.val()) != self.zero.val();
        self.shift.value.next = self.v0.val();
        self.shift.amount.next = self.d.val();
        self.shift.sticky_in.next = self.st0.val();
        self.v4.next = self.shift.shifted.val();
        self.st4.next = self.shift.sticky.val();
        self.frac.next = self.v4.val() >> self.k4.val();
        self.round_s.next = (((self.v4.val() >> self.k3.val()) & self.one.val()) != self.zero.val())
            && (self.st4.val()
                || ((self.v4.val() & self.m3.val()) != self.zero.val())
                || ((self.frac.val() & self.one.val()) != self.zero.val()));
        self.subnormal.next = self.frac.val();
        if self.round_s.val() {
            self.subnormal.next = self.frac.val() + self.one.val();
        }
        self.magnitude.next = self.subnormal.val();
        if self.exp.val() > self.k112.val() {
            self.magnitude.next = self.normal.val();
        }
        if (self.mag_hi.val() > self.sat_hi.val())
            || ((self.mag_hi.val() == self.sat_hi.val()) && (self.lo.val() >= self.sat_lo.val()))
        {
            self.magnitude.next = self.max_half.val();
        }
        self.a.next = self.magnitude.val() | self.sign.val();
        if self.is_special.val() {
            self.a.next = self.special.val();
        }
    }
}
