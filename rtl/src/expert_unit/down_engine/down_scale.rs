//! `down_scale`: the second half of a down-lane product: an exact FP32 product `a x scale`
//! (normal or zero, from [`crate::fp16_mul::Fp16Mul`]) times an INT4 weight, rounded once:
//! `f32(a x scale) * f32(q)` (rule 3 of `lacuna_spec::a8w4`), combinational.
//!
//! ```text
//!               +------------+
//!  exact[32] -->| x |q|,     |--> product[32]  exact x q, round to nearest even
//!  q[4] ------->| normalize, |
//!               | round, sign|
//!               +------------+
//! ```
//!
//! Contract: for `exact` the FP32 bits of a product of two finite FP16 values (normal or zero:
//! at least `2^-48`, at most `65504^2 < 2^32`) and any INT4 `q`, `product` is the FP32 bit
//! pattern of `f32::from_bits(exact) * q as f32`. A zero takes the sign
//! `sign(exact) xor (q < 0)`, as IEEE's product with `f32(q)` does (`f32(0)` is +0).
//!
//! How: the significand times `|q|` as shift-and-add (no multiplier cells: `|q|` has four
//! bits); the result, with its leading one at bit 23 to 26, moved to bit 31 (a fixed shift of
//! 5, then 2 and 1 as needed), rounded from the guard and sticky bits by adding the round bit to
//! the packed exponent and fraction. (The sticky bits are in fact always zero: an FP16 x FP16
//! product has at most 22 significant bits, times `|q|` at most 25, one guard bit below the kept
//! 24. The unit rounds in full so that its correctness does not rest on that argument; a
//! mutation that drops the sticky bits is therefore not caught by any test, by construction.)
//! Its own block so that a lane can put a register between the FP16 product and this half
//! ([`super::lane`]).

use crate::wiring::constant;
use rust_hdl::prelude::*;

/// An exact FP32 product times INT4, one rounding.
#[derive(LogicBlock)]
pub struct DownScale {
    /// The exact product `a x scale` (FP32 bits, normal or zero).
    pub exact: Signal<In, Bits<32>>,
    /// The weight (INT4).
    pub q: Signal<In, Bits<4>>,
    /// The rounded product (FP32 bits).
    pub product: Signal<Out, Bits<32>>,
    magnitude_q: Signal<Local, Bits<4>>,
    sig: Signal<Local, Bits<32>>,
    wide: Signal<Local, Bits<32>>,
    w0: Signal<Local, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    w2: Signal<Local, Bits<32>>,
    e0: Signal<Local, Bits<32>>,
    e1: Signal<Local, Bits<32>>,
    e2: Signal<Local, Bits<32>>,
    word: Signal<Local, Bits<32>>,
    round_up: Signal<Local, Bit>,
    negative: Signal<Local, Bit>,
    zero4: Constant<Bits<4>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    hidden: Constant<Bits<32>>,
    exp8: Constant<Bits<32>>,
    sticky_bits: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k3: Constant<Bits<32>>,
    k5: Constant<Bits<32>>,
    k7: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    top2: Constant<Bits<32>>,
    top1: Constant<Bits<32>>,
}

impl Default for DownScale {
    fn default() -> DownScale {
        DownScale {
            exact: Default::default(),
            q: Default::default(),
            product: Default::default(),
            magnitude_q: Default::default(),
            sig: Default::default(),
            wide: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            e0: Default::default(),
            e1: Default::default(),
            e2: Default::default(),
            word: Default::default(),
            round_up: Default::default(),
            negative: Default::default(),
            zero4: constant(0),
            zero: constant(0),
            one: constant(1),
            abs_mask: constant(0x7fff_ffff),
            frac23: constant(0x7f_ffff),
            hidden: constant(0x80_0000),
            exp8: constant(0xff),
            sticky_bits: constant(0x7f),
            sign_bit: constant(0x8000_0000),
            k1: constant(1),
            k2: constant(2),
            k3: constant(3),
            k5: constant(5),
            k7: constant(7),
            k8: constant(8),
            k23: constant(23),
            top2: constant(0xc000_0000),
            top1: constant(0x8000_0000),
        }
    }
}

impl Logic for DownScale {
    #[hdl_gen]
    fn update(&mut self) {
        // q's sign and magnitude (-8 gives 8, 0b1000).
        self.negative.next = self.q.val().get_bit(3);
        self.magnitude_q.next = self.q.val();
        if self.negative.val() {
            self.magnitude_q.next = self.zero4.val() - self.q.val();
        }
        // The exact product is normal or zero: its significand with the hidden one.
        self.sig.next = (self.exact.val() & self.frac23.val()) | self.hidden.val();
        self.wide.next = self.zero.val();
        if self.magnitude_q.val().get_bit(0) {
            self.wide.next = self.wide.val() + self.sig.val();
        }
        if self.magnitude_q.val().get_bit(1) {
            self.wide.next = self.wide.val() + (self.sig.val() << self.k1.val());
        }
        if self.magnitude_q.val().get_bit(2) {
            self.wide.next = self.wide.val() + (self.sig.val() << self.k2.val());
        }
        if self.magnitude_q.val().get_bit(3) {
            self.wide.next = self.wide.val() + (self.sig.val() << self.k3.val());
        }
        // wide has its leading one at bit 23..26 (|q| in 1..8): at bit 26 the exponent grows by
        // 3, so start from e + 3 with the product moved up by 5 and take back the shifts.
        self.w0.next = self.wide.val() << self.k5.val();
        self.e0.next = ((self.exact.val() >> self.k23.val()) & self.exp8.val()) + self.k3.val();
        self.w1.next = self.w0.val();
        self.e1.next = self.e0.val();
        if (self.w0.val() & self.top2.val()) == self.zero.val() {
            self.w1.next = self.w0.val() << self.k2.val();
            self.e1.next = self.e0.val() - self.k2.val();
        }
        self.w2.next = self.w1.val();
        self.e2.next = self.e1.val();
        if (self.w1.val() & self.top1.val()) == self.zero.val() {
            self.w2.next = self.w1.val() << self.k1.val();
            self.e2.next = self.e1.val() - self.k1.val();
        }
        self.word.next = (self.e2.val() << self.k23.val()) | ((self.w2.val() >> self.k8.val()) & self.frac23.val());
        self.round_up.next = (((self.w2.val() >> self.k7.val()) & self.one.val()) != self.zero.val())
            && (((self.w2.val() & self.sticky_bits.val()) != self.zero.val())
                || (((self.w2.val() >> self.k8.val()) & self.one.val()) != self.zero.val()));
        if self.round_up.val() {
            self.word.next = self.word.val() + self.one.val();
        }
        if ((self.exact.val() & self.abs_mask.val()) == self.zero.val()) || (self.magnitude_q.val() == self.zero4.val())
        {
            self.word.next = self.zero.val();
        }
        self.product.next = self.word.val() | (self.exact.val() & self.sign_bit.val());
        if self.negative.val() {
            self.product.next = self.word.val() | ((self.exact.val() & self.sign_bit.val()) ^ self.sign_bit.val());
        }
    }
}
