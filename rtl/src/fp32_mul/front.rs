//! `fp32_mul::front`: the multiplier's first third: the operands' fields and the four partial
//! products of the significands ([`super::THIRDS_LAYOUT`]).
//!
//! How: rust-hdl multiplies 16 x 16 bits only, so each 24-bit significand is split into two
//! 12-bit halves, multiplied pairwise. The effective exponents (the field, or 1 for a zero or
//! subnormal operand, whose hidden bit is then 0) are summed; the sign is `sign(a) xor sign(b)`.

use super::{INFO_INVALID, INFO_SIGN};
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The first third.
#[derive(LogicBlock)]
pub struct Fp32MulFront {
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// The high halves' product (< 2^24).
    pub hh: Signal<Out, Bits<32>>,
    /// a's high half times b's low half.
    pub hl: Signal<Out, Bits<32>>,
    /// a's low half times b's high half.
    pub lh: Signal<Out, Bits<32>>,
    /// The low halves' product.
    pub ll: Signal<Out, Bits<32>>,
    /// The sum of the effective exponents (2 ..= 508), the sign and the invalid flag
    /// (`INFO_LAYOUT`).
    pub info: Signal<Out, Bits<32>>,
    // Operand fields: the 16-bit halves of each word, the significands' 12-bit halves, the
    // exponent fields and effective exponents.
    a_lo16: Signal<Local, Bits<16>>,
    a_hi16: Signal<Local, Bits<16>>,
    b_lo16: Signal<Local, Bits<16>>,
    b_hi16: Signal<Local, Bits<16>>,
    ma_lo: Signal<Local, Bits<16>>,
    ma_hi: Signal<Local, Bits<16>>,
    mb_lo: Signal<Local, Bits<16>>,
    mb_hi: Signal<Local, Bits<16>>,
    ea_f: Signal<Local, Bits<32>>,
    eb_f: Signal<Local, Bits<32>>,
    ea: Signal<Local, Bits<32>>,
    eb: Signal<Local, Bits<32>>,
    flags: Signal<Local, Bits<32>>,
    mask12: Constant<Bits<16>>,
    mask7: Constant<Bits<16>>,
    hidden12: Constant<Bits<16>>,
    k4_16: Constant<Bits<16>>,
    k12_16: Constant<Bits<16>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    exp8: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    invalid_field: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    k31: Constant<Bits<32>>,
}

impl Default for Fp32MulFront {
    fn default() -> Fp32MulFront {
        Fp32MulFront {
            a: Default::default(),
            b: Default::default(),
            hh: Default::default(),
            hl: Default::default(),
            lh: Default::default(),
            ll: Default::default(),
            info: Default::default(),
            a_lo16: Default::default(),
            a_hi16: Default::default(),
            b_lo16: Default::default(),
            b_hi16: Default::default(),
            ma_lo: Default::default(),
            ma_hi: Default::default(),
            mb_lo: Default::default(),
            mb_hi: Default::default(),
            ea_f: Default::default(),
            eb_f: Default::default(),
            ea: Default::default(),
            eb: Default::default(),
            flags: Default::default(),
            mask12: constant(0x0fff),
            mask7: constant(0x007f),
            hidden12: constant(0x0800),
            k4_16: constant(4),
            k12_16: constant(12),
            zero: constant(0),
            one: constant(1),
            exp8: constant(0xff),
            sign_field: constant(1 << INFO_SIGN),
            invalid_field: constant(1 << INFO_INVALID),
            k23: constant(23),
            k31: constant(31),
        }
    }
}

impl Logic for Fp32MulFront {
    #[hdl_gen]
    fn update(&mut self) {
        // Fields. A significand's halves: bits 11..0 and 23..12 (the hidden one at bit 11 of the
        // high half unless the exponent field is 0: then the exponent is 1).
        self.a_lo16.next = self.a.val().get_bits::<16>(0);
        self.a_hi16.next = self.a.val().get_bits::<16>(16);
        self.b_lo16.next = self.b.val().get_bits::<16>(0);
        self.b_hi16.next = self.b.val().get_bits::<16>(16);
        self.ea_f.next = (self.a.val() >> self.k23.val()) & self.exp8.val();
        self.eb_f.next = (self.b.val() >> self.k23.val()) & self.exp8.val();
        self.ma_lo.next = self.a_lo16.val() & self.mask12.val();
        self.mb_lo.next = self.b_lo16.val() & self.mask12.val();
        self.ma_hi.next =
            (self.a_lo16.val() >> self.k12_16.val()) | ((self.a_hi16.val() & self.mask7.val()) << self.k4_16.val());
        self.mb_hi.next =
            (self.b_lo16.val() >> self.k12_16.val()) | ((self.b_hi16.val() & self.mask7.val()) << self.k4_16.val());
        self.ea.next = self.ea_f.val();
        if self.ea_f.val() == self.zero.val() {
            self.ea.next = self.one.val();
        } else {
            self.ma_hi.next = self.ma_hi.val() | self.hidden12.val();
        }
        self.eb.next = self.eb_f.val();
        if self.eb_f.val() == self.zero.val() {
            self.eb.next = self.one.val();
        } else {
            self.mb_hi.next = self.mb_hi.val() | self.hidden12.val();
        }
        // The four partial products of the 12-bit halves (the middle third sums them).
        self.hh.next = self.ma_hi.val() * self.mb_hi.val();
        self.hl.next = self.ma_hi.val() * self.mb_lo.val();
        self.lh.next = self.ma_lo.val() * self.mb_hi.val();
        self.ll.next = self.ma_lo.val() * self.mb_lo.val();
        self.flags.next = self.zero.val();
        if (((self.a.val() ^ self.b.val()) >> self.k31.val()) & self.one.val()) == self.one.val() {
            self.flags.next = self.sign_field.val();
        }
        if (self.ea_f.val() == self.exp8.val()) || (self.eb_f.val() == self.exp8.val()) {
            self.flags.next = self.flags.val() | self.invalid_field.val();
        }
        self.info.next = self.flags.val() | (self.ea.val() + self.eb.val());
    }
}
