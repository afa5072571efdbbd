//! `fp32_mul::middle`: the multiplier's second third: the four partial products summed into the
//! exact 48-bit significand product as two 24-bit words `(h, l)`, `h x 2^24 + l`, with the sign
//! and invalid flag beside `h` and the exponent sum passed on ([`super::THIRDS_LAYOUT`]).

use super::{HI_INVALID, HI_SIGN, INFO_EXPS_MASK, INFO_INVALID, INFO_SIGN};
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The middle third.
#[derive(LogicBlock)]
pub struct Fp32MulMiddle {
    /// The high halves' product.
    pub hh: Signal<In, Bits<32>>,
    /// a's high half times b's low half.
    pub hl: Signal<In, Bits<32>>,
    /// a's low half times b's high half.
    pub lh: Signal<In, Bits<32>>,
    /// The low halves' product.
    pub ll: Signal<In, Bits<32>>,
    /// The front's exponent sum, sign and invalid flag.
    pub info: Signal<In, Bits<32>>,
    /// The product's high 24 bits, its sign and the invalid flag.
    pub hi: Signal<Out, Bits<32>>,
    /// The product's low 24 bits.
    pub lo: Signal<Out, Bits<32>>,
    /// The sum of the effective exponents.
    pub exps: Signal<Out, Bits<32>>,
    mid: Signal<Local, Bits<32>>,
    l_full: Signal<Local, Bits<32>>,
    h0: Signal<Local, Bits<32>>,
    flags: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    mask12: Constant<Bits<32>>,
    mask24: Constant<Bits<32>>,
    exps_mask: Constant<Bits<32>>,
    info_sign: Constant<Bits<32>>,
    info_invalid: Constant<Bits<32>>,
    hi_sign: Constant<Bits<32>>,
    hi_invalid: Constant<Bits<32>>,
    k12: Constant<Bits<32>>,
    k24: Constant<Bits<32>>,
}

impl Default for Fp32MulMiddle {
    fn default() -> Fp32MulMiddle {
        Fp32MulMiddle {
            hh: Default::default(),
            hl: Default::default(),
            lh: Default::default(),
            ll: Default::default(),
            info: Default::default(),
            hi: Default::default(),
            lo: Default::default(),
            exps: Default::default(),
            mid: Default::default(),
            l_full: Default::default(),
            h0: Default::default(),
            flags: Default::default(),
            zero: constant(0),
            mask12: constant(0xfff),
            mask24: constant(0xff_ffff),
            exps_mask: constant(INFO_EXPS_MASK),
            info_sign: constant(1 << INFO_SIGN),
            info_invalid: constant(1 << INFO_INVALID),
            hi_sign: constant(1 << HI_SIGN),
            hi_invalid: constant(1 << HI_INVALID),
            k12: constant(12),
            k24: constant(24),
        }
    }
}

impl Logic for Fp32MulMiddle {
    #[hdl_gen]
    fn update(&mut self) {
        self.mid.next = self.hl.val() + self.lh.val();
        self.l_full.next = self.ll.val() + ((self.mid.val() & self.mask12.val()) << self.k12.val());
        self.h0.next = (self.hh.val() + (self.mid.val() >> self.k12.val())) + (self.l_full.val() >> self.k24.val());
        self.flags.next = self.zero.val();
        if (self.info.val() & self.info_sign.val()) != self.zero.val() {
            self.flags.next = self.hi_sign.val();
        }
        if (self.info.val() & self.info_invalid.val()) != self.zero.val() {
            self.flags.next = self.flags.val() | self.hi_invalid.val();
        }
        self.hi.next = self.flags.val() | (self.h0.val() & self.mask24.val());
        self.lo.next = self.l_full.val() & self.mask24.val();
        self.exps.next = self.info.val() & self.exps_mask.val();
    }
}
