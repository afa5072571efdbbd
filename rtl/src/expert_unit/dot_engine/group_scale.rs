//! `group_scale`: a group sum times its FP16 scale, rounded once to FP32: the dequantisation
//! step of rule 1 of `lacuna_spec::a8w4` (`f32(sum) * f32(scale)`), combinational.
//!
//! ```text
//!              +-------------+
//!  sum[16] --->|             |--> product[32]  f32(sum) * f32(scale), round to nearest even
//!  scale[16] ->| group_scale |--> invalid      scale is Inf or NaN
//!              +-------------+
//! ```
//!
//! Contract: for any INT16 `sum` (a group sum is at most 32,512 in magnitude: `group_dot`)
//! and a finite scale, `product` is the FP32 bit pattern of `(sum as f32) * f32::from(scale)`, the golden's
//! own expression. Both conversions are exact (16 and 11 significant bits), so the f32 product
//! rounds once: the exact product of at most 27 bits, rounded to nearest even. It never
//! overflows (`2^15 x 65504 < 2^31`) nor becomes subnormal (the smallest non-zero result is
//! `1 x 2^-24`); a zero takes the sign `sign(sum) xor sign(scale)`, as IEEE's product does.
//! For an Inf or NaN scale `invalid` is raised and `product` is unspecified (the channel
//! reader refuses such records: `lacuna_spec::a8w4::Int4Vector::read`).
//!
//! How: the magnitude of the sum times the scale's significand on rust-hdl's 16 x 16
//! multiplier, the leading-zero normalizer shared with [`crate::fp16_mul`] ([`crate::normalize`]),
//! then round to nearest even from the guard bit and the sticky bits below it, by adding the
//! round bit to the packed exponent and fraction (a carry out of the fraction steps the
//! exponent, as it should).

use crate::normalize::Normalize;
use crate::widen::Widen16;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The ports of [`GroupScale`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("sum", "a group sum, INT16 two's complement"),
    ("scale", "the group's scale, IEEE binary16 bits"),
    ("product", "f32(sum) * f32(scale) rounded to nearest even, IEEE binary32 bits"),
    ("invalid", "scale is Inf or NaN; product is then unspecified"),
];

/// INT16 x FP16 -> FP32, one rounding.
#[derive(LogicBlock)]
pub struct GroupScale {
    /// The group sum.
    pub sum: Signal<In, Bits<16>>,
    /// The scale (FP16 bits).
    pub scale: Signal<In, Bits<16>>,
    /// The rounded product (FP32 bits).
    pub product: Signal<Out, Bits<32>>,
    /// The scale is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    widen: Widen16,
    norm: Normalize,
    s32: Signal<Local, Bits<32>>,
    negative: Signal<Local, Bit>,
    magnitude: Signal<Local, Bits<16>>,
    expf: Signal<Local, Bits<32>>,
    exp: Signal<Local, Bits<32>>,
    sig: Signal<Local, Bits<16>>,
    exact: Signal<Local, Bits<32>>,
    w5: Signal<Local, Bits<32>>,
    e0: Signal<Local, Bits<32>>,
    e5: Signal<Local, Bits<32>>,
    word: Signal<Local, Bits<32>>,
    round_up: Signal<Local, Bit>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero16: Constant<Bits<16>>,
    sign16: Constant<Bits<16>>,
    frac10: Constant<Bits<16>>,
    hidden: Constant<Bits<16>>,
    exp5: Constant<Bits<32>>,
    bias: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    sticky_bits: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    k7: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k10: Constant<Bits<32>>,
    k15: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
}

impl Default for GroupScale {
    fn default() -> GroupScale {
        GroupScale {
            sum: Default::default(),
            scale: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
            widen: Default::default(),
            norm: Default::default(),
            s32: Default::default(),
            negative: Default::default(),
            magnitude: Default::default(),
            expf: Default::default(),
            exp: Default::default(),
            sig: Default::default(),
            exact: Default::default(),
            w5: Default::default(),
            e0: Default::default(),
            e5: Default::default(),
            word: Default::default(),
            round_up: Default::default(),
            zero: constant(0),
            one: constant(1),
            zero16: constant(0),
            sign16: constant(0x8000),
            frac10: constant(0x3ff),
            hidden: constant(0x400),
            exp5: constant(31),
            // Exponent field = e + 133 - shifts: see `update`.
            bias: constant(133),
            frac23: constant(0x7f_ffff),
            sticky_bits: constant(0x7f),
            sign_bit: constant(0x8000_0000),
            k7: constant(7),
            k8: constant(8),
            k10: constant(10),
            k15: constant(15),
            k23: constant(23),
        }
    }
}

impl Logic for GroupScale {
    #[hdl_gen]
    fn update(&mut self) {
        self.widen.narrow.next = self.scale.val();
        self.s32.next = self.widen.wide.val();
        // |sum| as an unsigned 16-bit value (-32768 gives 0x8000, its magnitude).
        self.negative.next = (self.sum.val() & self.sign16.val()) != self.zero16.val();
        self.magnitude.next = self.sum.val();
        if self.negative.val() {
            self.magnitude.next = self.zero16.val() - self.sum.val();
        }
        self.expf.next = (self.s32.val() >> self.k10.val()) & self.exp5.val();
        self.invalid.next = self.expf.val() == self.exp5.val();
        // The hidden one unless the exponent field is 0 (zero or subnormal: exponent 1).
        self.sig.next = self.scale.val() & self.frac10.val();
        self.exp.next = self.expf.val();
        if self.expf.val() == self.zero.val() {
            self.exp.next = self.one.val();
        } else {
            self.sig.next = (self.scale.val() & self.frac10.val()) | self.hidden.val();
        }
        // exact = |sum| x significand; the value is exact x 2^(e - 25). With its leading one
        // at bit p the exponent field is p + e - 25 + 127; the normalizer shifts it to bit 31,
        // so the field is e + 133 less the shifts.
        self.exact.next = self.magnitude.val() * self.sig.val();
        self.e0.next = self.exp.val() + self.bias.val();
        self.norm.w.next = self.exact.val();
        self.norm.e.next = self.e0.val();
        self.w5.next = self.norm.w_out.val();
        self.e5.next = self.norm.e_out.val();
        // 24 significant bits kept (31..8); bit 7 is the guard, 6..0 the sticky bits: round up
        // above the half, and at the half to the even neighbour.
        self.word.next = (self.e5.val() << self.k23.val()) | ((self.w5.val() >> self.k8.val()) & self.frac23.val());
        self.round_up.next = (((self.w5.val() >> self.k7.val()) & self.one.val()) != self.zero.val())
            && (((self.w5.val() & self.sticky_bits.val()) != self.zero.val())
                || (((self.w5.val() >> self.k8.val()) & self.one.val()) != self.zero.val()));
        if self.round_up.val() {
            self.word.next = self.word.val() + self.one.val();
        }
        if self.exact.val() == self.zero.val() {
            self.word.next = self.zero.val();
        }
        self.product.next = self.word.val();
        if self.negative.val() != (((self.s32.val() >> self.k15.val()) & self.one.val()) != self.zero.val()) {
            self.product.next = self.word.val() | self.sign_bit.val();
        }
    }
}
