//! `group_scale`: a group sum times its FP16 scale, rounded once to FP32: the dequantisation
//! step of rule 1 of `lacuna_spec::a8w4` (`f32(sum) * f32(scale)`), in two halves that a
//! pipeline may put a register between.
//!
//! ```text
//!              +-------+  exact, info  +------+
//!  sum[16] --->| front |-------------->| back |--> product[32]  f32(sum) * f32(scale), nearest even
//!  scale[16] ->|       |   (2 x 32)    |      |--> invalid      scale is Inf or NaN
//!              +-------+               +------+
//!              \___ GroupScale (both, combinational): the top module `lacuna_group_scale` ___/
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
//! How: the **front** ([`GroupScaleFront`]) multiplies the magnitude of the sum by the scale's
//! significand on rust-hdl's 16 x 16 multiplier (the exact product, at most 27 bits) and forms
//! the exponent, the product's sign and the invalid flag ([`INFO_LAYOUT`]); the **back**
//! ([`GroupScaleBack`]) normalizes with the leading-zero normalizer shared with
//! [`crate::fp16_mul`] ([`crate::normalize`]), then rounds to nearest even from the guard bit and
//! the sticky bits below it, by adding the round bit to the packed exponent and fraction (a carry
//! out of the fraction steps the exponent, as it should). Whole, the block is ~80 FO4 in the
//! suite's flow, the whole clock budget (issue 19): `dot_unit` registers between the halves.

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

/// The `info` word between the halves, low bit first.
pub const INFO_LAYOUT: &str = "exponent field before normalizing [7:0], sign [8], invalid [9]";

/// The exponent field of `info` (at most 30 + 133).
const INFO_EXP_MASK: u64 = 0xff;
/// The product's sign in `info`.
const INFO_SIGN: u64 = 8;
/// The invalid flag in `info` (`get_bit` in `hdl_gen` takes a literal: `back` writes 9).
const INFO_INVALID: u64 = 9;

/// INT16 x FP16 -> FP32, one rounding: the halves wired back to back.
#[derive(LogicBlock, Default)]
pub struct GroupScale {
    /// The group sum.
    pub sum: Signal<In, Bits<16>>,
    /// The scale (FP16 bits).
    pub scale: Signal<In, Bits<16>>,
    /// The rounded product (FP32 bits).
    pub product: Signal<Out, Bits<32>>,
    /// The scale is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    front: GroupScaleFront,
    back: GroupScaleBack,
}

impl Logic for GroupScale {
    #[hdl_gen]
    fn update(&mut self) {
        self.front.sum.next = self.sum.val();
        self.front.scale.next = self.scale.val();
        self.back.exact.next = self.front.exact.val();
        self.back.info.next = self.front.info.val();
        self.product.next = self.back.product.val();
        self.invalid.next = self.back.invalid.val();
    }
}

/// The front half: the exact product of the magnitudes, the exponent, sign and flag.
#[derive(LogicBlock)]
pub struct GroupScaleFront {
    /// The group sum.
    pub sum: Signal<In, Bits<16>>,
    /// The scale (FP16 bits).
    pub scale: Signal<In, Bits<16>>,
    /// |sum| x the scale's significand, exact.
    pub exact: Signal<Out, Bits<32>>,
    /// The exponent field before normalizing, the sign and the invalid flag ([`INFO_LAYOUT`]).
    pub info: Signal<Out, Bits<32>>,
    widen: Widen16,
    s32: Signal<Local, Bits<32>>,
    negative: Signal<Local, Bit>,
    magnitude: Signal<Local, Bits<16>>,
    expf: Signal<Local, Bits<32>>,
    exp: Signal<Local, Bits<32>>,
    sig: Signal<Local, Bits<16>>,
    flags: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero16: Constant<Bits<16>>,
    sign16: Constant<Bits<16>>,
    frac10: Constant<Bits<16>>,
    hidden: Constant<Bits<16>>,
    exp5: Constant<Bits<32>>,
    bias: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    invalid_field: Constant<Bits<32>>,
    k10: Constant<Bits<32>>,
    k15: Constant<Bits<32>>,
}

impl Default for GroupScaleFront {
    fn default() -> GroupScaleFront {
        GroupScaleFront {
            sum: Default::default(),
            scale: Default::default(),
            exact: Default::default(),
            info: Default::default(),
            widen: Default::default(),
            s32: Default::default(),
            negative: Default::default(),
            magnitude: Default::default(),
            expf: Default::default(),
            exp: Default::default(),
            sig: Default::default(),
            flags: Default::default(),
            zero: constant(0),
            one: constant(1),
            zero16: constant(0),
            sign16: constant(0x8000),
            frac10: constant(0x3ff),
            hidden: constant(0x400),
            exp5: constant(31),
            // Exponent field = e + 133 - shifts: see `update`.
            bias: constant(133),
            sign_field: constant(1 << INFO_SIGN),
            invalid_field: constant(1 << INFO_INVALID),
            k10: constant(10),
            k15: constant(15),
        }
    }
}

impl Logic for GroupScaleFront {
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
        // The hidden one unless the exponent field is 0 (zero or subnormal: exponent 1).
        self.sig.next = self.scale.val() & self.frac10.val();
        self.exp.next = self.expf.val();
        if self.expf.val() == self.zero.val() {
            self.exp.next = self.one.val();
        } else {
            self.sig.next = (self.scale.val() & self.frac10.val()) | self.hidden.val();
        }
        // exact = |sum| x significand; the value is exact x 2^(e - 25). With its leading one
        // at bit p the exponent field is p + e - 25 + 127; the back's normalizer shifts it to
        // bit 31, so the field is e + 133 less the shifts.
        self.exact.next = self.magnitude.val() * self.sig.val();
        self.flags.next = self.zero.val();
        if self.negative.val() != (((self.s32.val() >> self.k15.val()) & self.one.val()) != self.zero.val()) {
            self.flags.next = self.sign_field.val();
        }
        if self.expf.val() == self.exp5.val() {
            self.flags.next = self.flags.val() | self.invalid_field.val();
        }
        self.info.next = self.flags.val() | (self.exp.val() + self.bias.val());
    }
}

/// The back half: normalize, round to nearest even, pack.
#[derive(LogicBlock)]
pub struct GroupScaleBack {
    /// The front's exact product.
    pub exact: Signal<In, Bits<32>>,
    /// The front's exponent, sign and flag ([`INFO_LAYOUT`]).
    pub info: Signal<In, Bits<32>>,
    /// The rounded product (FP32 bits).
    pub product: Signal<Out, Bits<32>>,
    /// The scale was Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    norm: Normalize,
    w5: Signal<Local, Bits<32>>,
    e5: Signal<Local, Bits<32>>,
    word: Signal<Local, Bits<32>>,
    round_up: Signal<Local, Bit>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    exp_mask: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    sticky_bits: Constant<Bits<32>>,
    k7: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    k_sign: Constant<Bits<32>>,
}

impl Default for GroupScaleBack {
    fn default() -> GroupScaleBack {
        GroupScaleBack {
            exact: Default::default(),
            info: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
            norm: Default::default(),
            w5: Default::default(),
            e5: Default::default(),
            word: Default::default(),
            round_up: Default::default(),
            zero: constant(0),
            one: constant(1),
            exp_mask: constant(INFO_EXP_MASK),
            sign_field: constant(1 << INFO_SIGN),
            frac23: constant(0x7f_ffff),
            sticky_bits: constant(0x7f),
            k7: constant(7),
            k8: constant(8),
            k23: constant(23),
            // The sign moves from bit INFO_SIGN to bit 31.
            k_sign: constant(31 - INFO_SIGN),
        }
    }
}

impl Logic for GroupScaleBack {
    #[hdl_gen]
    fn update(&mut self) {
        self.invalid.next = self.info.val().get_bit(9); // INFO_INVALID (hdl_gen takes a literal)
        self.norm.w.next = self.exact.val();
        self.norm.e.next = self.info.val() & self.exp_mask.val();
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
        self.product.next = self.word.val() | ((self.info.val() & self.sign_field.val()) << self.k_sign.val());
    }
}
