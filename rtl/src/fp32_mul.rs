//! `fp32_mul`: an FP32 multiplier, round to nearest even, combinational: the multiplies of the
//! expert unit's FP32 lanes (a row's token scale, SiLU's segment and product, `w h`,
//! calibration's `w kappa`).
//!
//! ```text
//!            +-----------+
//!   a[32] -->|           |--> product[32]  a * b rounded to nearest, ties to even (IEEE 754)
//!   b[32] -->| fp32_mul  |--> invalid      a or b is Inf or NaN
//!            +-----------+
//! ```
//!
//! Contract: for finite a and b, `product` is the bit pattern of Rust's `a * b` on f32:
//! subnormal operands and results, signed zeros (the sign is `sign(a) xor sign(b)` always) and
//! overflow to +-Inf included. For an Inf or NaN operand `invalid` is raised and `product` is
//! unspecified (as [`crate::fp32_add`]'s: the lanes never compute on non-finite values; the unit
//! that feeds them reports them).
//!
//! How: rust-hdl multiplies 16 x 16 bits only, so each 24-bit significand is split into two
//! 12-bit halves and the 48-bit product is formed from the four partial products as a pair of
//! 24-bit words `(h, l)`; a normalizer (24, then 16, 8, 4, 2, 1) moves the leading one to bit 23
//! of `h`, counting the shifts `z`; the biased exponent is `ea + eb - 126 - z` (kept as
//! `t = that + 256`, so it is never negative). A normal result rounds from `l` (its top bit
//! the guard, the rest sticky) by adding the round bit to the packed word (a carry steps the
//! exponent, and at 255 gives exactly Inf's pattern); an exponent of 255 or more is Inf. A
//! result below the normal range is shifted right by `1 - e` (at most 25: all further bits are
//! sticky) by [`crate::sticky_shift::StickyShift`], collecting the bits shifted out, then
//! rounded the same way.

use crate::sticky_shift::StickyShift;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The ports of [`Fp32Mul`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "FP32 operand, IEEE binary32 bits"),
    ("b", "FP32 operand, IEEE binary32 bits"),
    ("product", "a * b rounded to nearest, ties to even, IEEE binary32 bits"),
    ("invalid", "a or b is Inf or NaN; product is then unspecified"),
];

/// The FP32 round-to-nearest-even multiplier.
#[derive(LogicBlock)]
pub struct Fp32Mul {
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// The rounded product.
    pub product: Signal<Out, Bits<32>>,
    /// An operand is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
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
    // The partial products and the 48-bit product as (h0, l0).
    hh: Signal<Local, Bits<32>>,
    hl: Signal<Local, Bits<32>>,
    lh: Signal<Local, Bits<32>>,
    ll: Signal<Local, Bits<32>>,
    mid: Signal<Local, Bits<32>>,
    l_full: Signal<Local, Bits<32>>,
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
    mask12: Constant<Bits<16>>,
    mask7: Constant<Bits<16>>,
    hidden12: Constant<Bits<16>>,
    k4_16: Constant<Bits<16>>,
    k12_16: Constant<Bits<16>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    exp8: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    mask12_32: Constant<Bits<32>>,
    mask24: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    inf: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k4: Constant<Bits<32>>,
    k7: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k12: Constant<Bits<32>>,
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

impl Default for Fp32Mul {
    fn default() -> Fp32Mul {
        Fp32Mul {
            a: Default::default(),
            b: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
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
            hh: Default::default(),
            hl: Default::default(),
            lh: Default::default(),
            ll: Default::default(),
            mid: Default::default(),
            l_full: Default::default(),
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
            mask12: constant(0x0fff),
            mask7: constant(0x007f),
            hidden12: constant(0x0800),
            k4_16: constant(4),
            k12_16: constant(12),
            zero: constant(0),
            one: constant(1),
            exp8: constant(0xff),
            frac23: constant(0x7f_ffff),
            mask12_32: constant(0xfff),
            mask24: constant(0xff_ffff),
            sign_bit: constant(0x8000_0000),
            inf: constant(0x7f80_0000),
            k1: constant(1),
            k2: constant(2),
            k4: constant(4),
            k7: constant(7),
            k8: constant(8),
            k12: constant(12),
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

impl Logic for Fp32Mul {
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
        self.invalid.next = (self.ea_f.val() == self.exp8.val()) || (self.eb_f.val() == self.exp8.val());
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
        // The 48-bit product as h0 x 2^24 + l0, both below 2^24.
        self.hh.next = self.ma_hi.val() * self.mb_hi.val();
        self.hl.next = self.ma_hi.val() * self.mb_lo.val();
        self.lh.next = self.ma_lo.val() * self.mb_hi.val();
        self.ll.next = self.ma_lo.val() * self.mb_lo.val();
        self.mid.next = self.hl.val() + self.lh.val();
        self.l_full.next = self.ll.val() + ((self.mid.val() & self.mask12_32.val()) << self.k12.val());
        self.h0.next = (self.hh.val() + (self.mid.val() >> self.k12.val())) + (self.l_full.val() >> self.k24.val());
        self.l0.next = self.l_full.val() & self.mask24.val();
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
        self.t.next = ((self.ea.val() + self.eb.val()) + self.k130.val()) - self.z6.val();
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
        self.product.next = self.word.val() | ((self.a.val() ^ self.b.val()) & self.sign_bit.val());
    }
}
