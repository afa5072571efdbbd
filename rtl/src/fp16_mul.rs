//! `fp16_mul`: one lane multiplier: FP16 x FP16 -> the exact FP32 product, combinational.
//!
//! ```text
//!            +-----------+
//!   a[16] -->|           |--> product[32]   exact a * b as FP32 (never rounds)
//!   b[16] -->| fp16_mul  |--> invalid       a or b is Inf or NaN (exponent field 31)
//!            +-----------+
//! ```
//!
//! Contract (docs/microarchitecture.md, numeric rules): for finite a and b, `product` is the
//! FP32 bit pattern of `f32::from(a) * f32::from(b)`, which is exact: the significands have 11 bits
//! (subnormals included), so their product has at most 22 and its exponent lies in FP32's normal
//! range (2^-48 .. 2^32). Zero operands give a zero with the sign `sign(a) xor sign(b)`. For Inf
//! or NaN operands `invalid` is raised and `product` is unspecified: the compiler never encodes
//! non-finite values, so the core reports them instead of computing with them.
//!
//! How: significand product on rust-hdl's 16 x 16 multiplier, then the five-stage leading-zero
//! normalizer [`crate::normalize::Normalize`] (shift by 16, 8, 4, 2, 1), which also takes the
//! shifts off the exponent. The
//! arithmetic is 32 bits wide throughout and every constant a width-typed `Constant`, so that the
//! Verilog is lint-clean (see `crate::widen` for how the 16-bit operands reach 32 bits).

use crate::normalize::Normalize;
use crate::widen::Widen16;
use rust_hdl::prelude::*;

/// The ports of [`Fp16Mul`] when it is a top module (`lacuna emit-verilog`, the unit tests).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "FP16 operand, IEEE binary16 bits"),
    ("b", "FP16 operand, IEEE binary16 bits"),
    ("product", "a * b, exact, IEEE binary32 bits"),
    ("invalid", "a or b is Inf or NaN; product is then unspecified"),
];

/// The FP16 x FP16 -> FP32 exact multiplier.
#[derive(LogicBlock)]
pub struct Fp16Mul {
    /// FP16 operand (IEEE binary16 bits).
    pub a: Signal<In, Bits<16>>,
    /// FP16 operand.
    pub b: Signal<In, Bits<16>>,
    /// The exact product, IEEE binary32 bits.
    pub product: Signal<Out, Bits<32>>,
    /// An operand is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    widen_a: Widen16,
    widen_b: Widen16,
    norm: Normalize,
    // Significands with the hidden bit, effective exponents (field, or 1 for a subnormal), the
    // 22-bit significand product; the normalizer: w0 holds the product at bits 31..10 and w5 has
    // its leading one at bit 31, e0 and e5 the exponent field before and after the shifts.
    a32: Signal<Local, Bits<32>>,
    b32: Signal<Local, Bits<32>>,
    expf_a: Signal<Local, Bits<32>>,
    expf_b: Signal<Local, Bits<32>>,
    sig_a: Signal<Local, Bits<16>>,
    sig_b: Signal<Local, Bits<16>>,
    frac10_16: Constant<Bits<16>>,
    hidden16: Constant<Bits<16>>,
    exp_a: Signal<Local, Bits<32>>,
    exp_b: Signal<Local, Bits<32>>,
    sig_product: Signal<Local, Bits<32>>,
    w0: Signal<Local, Bits<32>>,
    w5: Signal<Local, Bits<32>>,
    e0: Signal<Local, Bits<32>>,
    e5: Signal<Local, Bits<32>>,
    magnitude: Signal<Local, Bits<32>>,
    sign_a: Signal<Local, Bits<32>>,
    sign_b: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    exp5: Constant<Bits<32>>,
    max_exp: Constant<Bits<32>>,
    bias: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k10: Constant<Bits<32>>,
    k15: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
}

impl Default for Fp16Mul {
    fn default() -> Fp16Mul {
        Fp16Mul {
            a: Default::default(),
            b: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
            widen_a: Default::default(),
            widen_b: Default::default(),
            norm: Default::default(),
            a32: Default::default(),
            b32: Default::default(),
            expf_a: Default::default(),
            expf_b: Default::default(),
            sig_a: Default::default(),
            sig_b: Default::default(),
            frac10_16: Constant::new(0x3ff.into()),
            hidden16: Constant::new(0x400.into()),
            exp_a: Default::default(),
            exp_b: Default::default(),
            sig_product: Default::default(),
            w0: Default::default(),
            w5: Default::default(),
            e0: Default::default(),
            e5: Default::default(),
            magnitude: Default::default(),
            sign_a: Default::default(),
            sign_b: Default::default(),
            zero: Constant::new((0u64 as LiteralType).into()),
            one: Constant::new((1u64 as LiteralType).into()),
            exp5: Constant::new((31u64 as LiteralType).into()),
            max_exp: Constant::new((31u64 as LiteralType).into()),
            bias: Constant::new((98u64 as LiteralType).into()),
            frac23: Constant::new((8388607u64 as LiteralType).into()),
            sign_bit: Constant::new((2147483648u64 as LiteralType).into()),
            k8: Constant::new((8u64 as LiteralType).into()),
            k10: Constant::new((10u64 as LiteralType).into()),
            k15: Constant::new((15u64 as LiteralType).into()),
            k23: Constant::new((23u64 as LiteralType).into()),
        }
    }
}

impl Logic for Fp16Mul {
    #[hdl_gen]
    fn update(&mut self) {
        self.widen_a.narrow.next = self.a.val();
        self.widen_b.narrow.next = self.b.val();
        self.a32.next = self.widen_a.wide.val();
        self.b32.next = self.widen_b.wide.val();
        self.sign_a.next = (self.a32.val() >> self.k15.val()) & self.one.val();
        self.sign_b.next = (self.b32.val() >> self.k15.val()) & self.one.val();
        self.expf_a.next = (self.a32.val() >> self.k10.val()) & self.exp5.val();
        self.expf_b.next = (self.b32.val() >> self.k10.val()) & self.exp5.val();
        self.invalid.next = (self.expf_a.val() == self.max_exp.val()) || (self.expf_b.val() == self.max_exp.val());
        // The hidden one unless the exponent field is 0 (zero or subnormal: exponent 1).
        self.sig_a.next = self.a.val() & self.frac10_16.val();
        self.exp_a.next = self.expf_a.val();
        if self.expf_a.val() == self.zero.val() {
            self.exp_a.next = self.one.val();
        } else {
            self.sig_a.next = (self.a.val() & self.frac10_16.val()) | self.hidden16.val();
        }
        self.sig_b.next = self.b.val() & self.frac10_16.val();
        self.exp_b.next = self.expf_b.val();
        if self.expf_b.val() == self.zero.val() {
            self.exp_b.next = self.one.val();
        } else {
            self.sig_b.next = (self.b.val() & self.frac10_16.val()) | self.hidden16.val();
        }
        self.sig_product.next = self.sig_a.val() * self.sig_b.val();
        // Exponent field = ea + eb - 30 (biases) + 21 (leading one at product bit 21) - 20 (two
        // 10-bit fractions) + 127 = ea + eb + 98, less the normalizing shifts.
        self.w0.next = self.sig_product.val() << self.k10.val();
        self.e0.next = self.exp_a.val() + self.exp_b.val() + self.bias.val();
        self.norm.w.next = self.w0.val();
        self.norm.e.next = self.e0.val();
        self.w5.next = self.norm.w_out.val();
        self.e5.next = self.norm.e_out.val();
        // exponent field | the 23 bits below the leading one; zero stays zero; then the sign.
        self.magnitude.next =
            (self.e5.val() << self.k23.val()) | ((self.w5.val() >> self.k8.val()) & self.frac23.val());
        if self.sig_product.val() == self.zero.val() {
            self.magnitude.next = self.zero.val();
        }
        self.product.next = self.magnitude.val();
        if self.sign_a.val() != self.sign_b.val() {
            self.product.next = self.magnitude.val() | self.sign_bit.val();
        }
    }
}
