//! `fp32_mul::back`: the multiplier's last third: the middle's product words
//! ([`super::THIRDS_LAYOUT`]) normalized, rounded to nearest even and packed (also the
//! divider's rounding: [`crate::fp32_div`]).
//!
//! How: a normalizer (24, then 16, 8, 4, 2, 1) moves the leading one to bit 23 of `h`, counting
//! the shifts `z`; the biased exponent is `ea + eb - 126 - z` (kept as `t = that + 256`, so it is
//! never negative). A normal result rounds from `l` (its top bit the guard, the rest sticky) by
//! adding the round bit to the packed word (a carry steps the exponent, and at 255 gives exactly
//! Inf's pattern); an exponent of 255 or more is Inf. A result below the normal range is shifted
//! right by `1 - e` (at most 25: all further bits are sticky) by
//! [`crate::sticky_shift::StickyShift`], collecting the bits shifted out, then rounded the same
//! way.

use super::HI_SIGN;
use crate::sticky_shift::StickyShift;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The last third.
#[derive(LogicBlock)]
pub struct Fp32MulBack {
    /// The middle's high word: product bits 47..24, sign, invalid.
    pub hi: Signal<In, Bits<32>>,
    /// The middle's low word: product bits 23..0.
    pub lo: Signal<In, Bits<32>>,
    /// The middle's exponent sum.
    pub exps: Signal<In, Bits<32>>,
    /// The rounded product.
    pub product: Signal<Out, Bits<32>>,
    /// An operand is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    h0: Signal<Local, Bits<32>>,
    l0: Signal<Local, Bits<32>>,
    // The normalizer's stages.
    h1: Signal<Local, Bits<32>>,
    l1: Signal<Local, Bits<32>>,
    z1: Signal<Local, Bits<32>>,
    h2: Signal<Local, Bits<32>>,
    l2: Signal<Local, Bits<32>>,
    z2: Signal<Local, Bits<32>>,
    h3: Signal<Local, Bits<32>>,
    l3: Signal<Local, Bits<32>>,
    z3: Signal<Local, Bits<32>>,
    h4: Signal<Local, Bits<32>>,
    l4: Signal<Local, Bits<32>>,
    z4: Signal<Local, Bits<32>>,
    h5: Signal<Local, Bits<32>>,
    l5: Signal<Local, Bits<32>>,
    z5: Signal<Local, Bits<32>>,
    h6: Signal<Local, Bits<32>>,
    l6: Signal<Local, Bits<32>>,
    z6: Signal<Local, Bits<32>>,
    // Exponent, the normal result, the subnormal shift and result.
    t: Signal<Local, Bits<32>>,
    e: Signal<Local, Bits<32>>,
    word_n: Signal<Local, Bits<32>>,
    round_n: Signal<Local, Bit>,
    d: Signal<Local, Bits<32>>,
    v0: Signal<Local, Bits<32>>,
    v5: Signal<Local, Bits<32>>,
    st0: Signal<Local, Bit>,
    st5: Signal<Local, Bit>,
    frac: Signal<Local, Bits<32>>,
    round_s: Signal<Local, Bit>,
    word_s: Signal<Local, Bits<32>>,
    word: Signal<Local, Bits<32>>,
    shift: StickyShift<32>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    mask24: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    inf: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k4: Constant<Bits<32>>,
    k7: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k16: Constant<Bits<32>>,
    k20: Constant<Bits<32>>,
    k22: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    k24: Constant<Bits<32>>,
    k25: Constant<Bits<32>>,
    k130: Constant<Bits<32>>,
    k255: Constant<Bits<32>>,
    k256: Constant<Bits<32>>,
    k257: Constant<Bits<32>>,
    top16: Constant<Bits<32>>,
    top8: Constant<Bits<32>>,
    top4: Constant<Bits<32>>,
    top2: Constant<Bits<32>>,
    top1: Constant<Bits<32>>,
    m7: Constant<Bits<32>>,
}

impl Default for Fp32MulBack {
    fn default() -> Fp32MulBack {
        Fp32MulBack {
            hi: Default::default(),
            lo: Default::default(),
            exps: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
            h0: Default::default(),
            l0: Default::default(),
            h1: Default::default(),
            l1: Default::default(),
            z1: Default::default(),
            h2: Default::default(),
            l2: Default::default(),
            z2: Default::default(),
            h3: Default::default(),
            l3: Default::default(),
            z3: Default::default(),
            h4: Default::default(),
            l4: Default::default(),
            z4: Default::default(),
            h5: Default::default(),
            l5: Default::default(),
            z5: Default::default(),
            h6: Default::default(),
            l6: Default::default(),
            z6: Default::default(),
            t: Default::default(),
            e: Default::default(),
            word_n: Default::default(),
            round_n: Default::default(),
            d: Default::default(),
            v0: Default::default(),
            v5: Default::default(),
            st0: Default::default(),
            st5: Default::default(),
            frac: Default::default(),
            round_s: Default::default(),
            word_s: Default::default(),
            word: Default::default(),
            shift: StickyShift::new(&[16, 8, 4, 2, 1]),
            zero: constant(0),
            one: constant(1),
            frac23: constant(0x7f_ffff),
            mask24: constant(0xff_ffff),
            sign_field: constant(1 << HI_SIGN),
            inf: constant(0x7f80_0000),
            k1: constant(1),
            k2: constant(2),
            k4: constant(4),
            k7: constant(7),
            k8: constant(8),
            k16: constant(16),
            k20: constant(20),
            k22: constant(22),
            k23: constant(23),
            k24: constant(24),
            k25: constant(25),
            k130: constant(130),
            k255: constant(255),
            k256: constant(256),
            k257: constant(257),
            top16: constant(0xff_ff00),
            top8: constant(0xff_0000),
            top4: constant(0xf0_0000),
            top2: constant(0xc0_0000),
            top1: constant(0x80_0000),
            m7: constant(0x7f),
        }
    }
}

impl Logic for Fp32MulBack {
    #[hdl_gen]
    fn update(&mut self) {
        self.h0.next = self.hi.val() & self.mask24.val();
        self.l0.next = self.lo.val() & self.mask24.val();
        // Bit 25 is HI_INVALID (`get_bit` in `hdl_gen` takes a literal).
        self.invalid.next = self.hi.val().get_bit(25);
        // Normalize: the leading one to bit 23 of h, z the shifts (24 when h is empty).
        self.h1.next = self.h0.val();
        self.l1.next = self.l0.val();
        self.z1.next = self.zero.val();
        if self.h0.val() == self.zero.val() {
            self.h1.next = self.l0.val();
            self.l1.next = self.zero.val();
            self.z1.next = self.k24.val();
        }
        self.h2.next = self.h1.val();
        self.l2.next = self.l1.val();
        self.z2.next = self.z1.val();
        if (self.h1.val() & self.top16.val()) == self.zero.val() {
            self.h2.next = ((self.h1.val() << self.k16.val()) & self.mask24.val()) | (self.l1.val() >> self.k8.val());
            self.l2.next = (self.l1.val() << self.k16.val()) & self.mask24.val();
            self.z2.next = self.z1.val() + self.k16.val();
        }
        self.h3.next = self.h2.val();
        self.l3.next = self.l2.val();
        self.z3.next = self.z2.val();
        if (self.h2.val() & self.top8.val()) == self.zero.val() {
            self.h3.next = ((self.h2.val() << self.k8.val()) & self.mask24.val()) | (self.l2.val() >> self.k16.val());
            self.l3.next = (self.l2.val() << self.k8.val()) & self.mask24.val();
            self.z3.next = self.z2.val() + self.k8.val();
        }
        self.h4.next = self.h3.val();
        self.l4.next = self.l3.val();
        self.z4.next = self.z3.val();
        if (self.h3.val() & self.top4.val()) == self.zero.val() {
            self.h4.next = ((self.h3.val() << self.k4.val()) & self.mask24.val()) | (self.l3.val() >> self.k20.val());
            self.l4.next = (self.l3.val() << self.k4.val()) & self.mask24.val();
            self.z4.next = self.z3.val() + self.k4.val();
        }
        self.h5.next = self.h4.val();
        self.l5.next = self.l4.val();
        self.z5.next = self.z4.val();
        if (self.h4.val() & self.top2.val()) == self.zero.val() {
            self.h5.next = ((self.h4.val() << self.k2.val()) & self.mask24.val()) | (self.l4.val() >> self.k22.val());
            self.l5.next = (self.l4.val() << self.k2.val()) & self.mask24.val();
            self.z5.next = self.z4.val() + self.k2.val();
        }
        self.h6.next = self.h5.val();
        self.l6.next = self.l5.val();
        self.z6.next = self.z5.val();
        if (self.h5.val() & self.top1.val()) == self.zero.val() {
            self.h6.next = ((self.h5.val() << self.k1.val()) & self.mask24.val()) | (self.l5.val() >> self.k23.val());
            self.l6.next = (self.l5.val() << self.k1.val()) & self.mask24.val();
            self.z6.next = self.z5.val() + self.k1.val();
        }
        // t = biased exponent + 256 = ea + eb - 126 - z + 256 (ea, eb >= 1, z <= 47: t > 0).
        self.t.next = (self.exps.val() + self.k130.val()) - self.z6.val();
        self.e.next = self.t.val() - self.k256.val();
        // Normal: h's 24 bits kept, l's top bit the guard, the rest sticky.
        self.word_n.next = (self.e.val() << self.k23.val()) | (self.h6.val() & self.frac23.val());
        self.round_n.next = (((self.l6.val() >> self.k23.val()) & self.one.val()) != self.zero.val())
            && (((self.l6.val() & self.frac23.val()) != self.zero.val())
                || ((self.h6.val() & self.one.val()) != self.zero.val()));
        if self.round_n.val() {
            self.word_n.next = self.word_n.val() + self.one.val();
        }
        if self.e.val() >= self.k255.val() {
            self.word_n.next = self.inf.val();
        }
        // Subnormal: h shifted right by d = 1 - e (capped at 25), with 8 bits below for the
        // guard and the bits shifted out collected as sticky.
        self.d.next = self.k257.val() - self.t.val();
        if self.d.val() > self.k25.val() {
            self.d.next = self.k25.val();
        }
        self.v0.next = self.h6.val() << self.k8.val();
        self.st0.next = self.l6.val() != self.zero.val();
        self.shift.value.next = self.v0.val();
        self.shift.amount.next = self.d.val();
        self.shift.sticky_in.next = self.st0.val();
        self.v5.next = self.shift.shifted.val();
        self.st5.next = self.shift.sticky.val();
        self.frac.next = self.v5.val() >> self.k8.val();
        self.round_s.next = (((self.v5.val() >> self.k7.val()) & self.one.val()) != self.zero.val())
            && (self.st5.val()
                || ((self.v5.val() & self.m7.val()) != self.zero.val())
                || ((self.frac.val() & self.one.val()) != self.zero.val()));
        self.word_s.next = self.frac.val();
        if self.round_s.val() {
            self.word_s.next = self.frac.val() + self.one.val();
        }
        self.word.next = self.word_s.val();
        if self.t.val() >= self.k257.val() {
            self.word.next = self.word_n.val();
        }
        if (self.h0.val() == self.zero.val()) && (self.l0.val() == self.zero.val()) {
            self.word.next = self.zero.val();
        }
        // The sign from the front's bit, moved to bit 31.
        self.product.next = self.word.val() | ((self.hi.val() & self.sign_field.val()) << self.k7.val());
    }
}
