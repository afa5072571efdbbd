//! `fp16_mul`: one lane multiplier: FP16 x FP16 -> the exact FP32 product, in two halves that a
//! pipeline may put a register between.
//!
//! ```text
//!            +---------------+  partial[32]  +--------------+
//!   a[16] -->|               |-------------->|              |--> product[32]  exact a * b as FP32
//!   b[16] -->| fp16_mul_front|               | fp16_mul_back|--> invalid      a or b is Inf or NaN
//!            +---------------+               +--------------+
//!            \____________________ fp16_mul (both, combinational) ____________________/
//! ```
//!
//! Contract (docs/microarchitecture.md, numeric rules): for finite a and b, `product` is the
//! FP32 bit pattern of `f32::from(a) * f32::from(b)`, which is exact: the significands have 11 bits
//! (subnormals included), so their product has at most 22 and its exponent lies in FP32's normal
//! range (2^-48 .. 2^32). Zero operands give a zero with the sign `sign(a) xor sign(b)`. For Inf
//! or NaN operands `invalid` is raised and `product` is unspecified: the compiler never encodes
//! non-finite values, so the core reports them instead of computing with them.
//!
//! The halves (issue 19: the whole multiplier, ~70 FO4 on its own, made the stage after the
//! decoder's last register 92 FO4 against a budget of 80): the **front** forms the 22-bit significand product, the exponent sum, the
//! sign and the invalid flag, packed in one 32-bit `partial` word ([`PARTIAL_LAYOUT`]); the
//! **back** normalizes and packs the FP32 word. The core's decoder runs the front in its D1 -> D2
//! stage and carries `partial` where it carried the weight; its multiplier stage runs the back
//! (`core::rlc_decoder`, `core::multiplier`): the same cycles, shorter paths. [`Fp16Mul`] is the
//! two wired back to back, for the expert unit and the bit-exactness tests (which so cover both).
//!
//! How: significand product on rust-hdl's 16 x 16 multiplier, then the five-stage leading-zero
//! normalizer [`crate::normalize::Normalize`] (shift by 16, 8, 4, 2, 1), which also takes the
//! shifts off the exponent. The arithmetic is 32 bits wide throughout and every constant a
//! width-typed `Constant`, so that the Verilog is lint-clean (see `crate::widen` for how the
//! 16-bit operands reach 32 bits).

use crate::normalize::Normalize;
use crate::widen::Widen16;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The ports of [`Fp16Mul`] when it is a top module (`lacuna emit-verilog`, the unit tests).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "FP16 operand, IEEE binary16 bits"),
    ("b", "FP16 operand, IEEE binary16 bits"),
    ("product", "a * b, exact, IEEE binary32 bits"),
    ("invalid", "a or b is Inf or NaN; product is then unspecified"),
];

/// The fields of the `partial` word between the halves, low bit first: the significand product
/// (bits 0-21), the exponent field before normalizing (22-29: `ea + eb + 98`, at most 160), the
/// product's sign (30), invalid (31).
pub const PARTIAL_LAYOUT: &str = "sig_product[21:0] exponent[29:22] sign[30] invalid[31]";

/// Where the exponent field starts in the `partial` word (the significand product is below it).
const PARTIAL_EXP_SHIFT: u64 = 22;
/// The `partial` word's sign bit.
const PARTIAL_SIGN_BIT: u64 = 30;
/// The `partial` word's invalid bit.
const PARTIAL_INVALID_BIT: usize = 31;

/// The front half: operands to the `partial` word.
#[derive(LogicBlock)]
pub struct Fp16MulFront {
    /// FP16 operand (IEEE binary16 bits).
    pub a: Signal<In, Bits<16>>,
    /// FP16 operand.
    pub b: Signal<In, Bits<16>>,
    /// The significand product, exponent, sign and invalid flag ([`PARTIAL_LAYOUT`]).
    pub partial: Signal<Out, Bits<32>>,
    widen_a: Widen16,
    widen_b: Widen16,
    // Significands with the hidden bit, effective exponents (field, or 1 for a subnormal).
    a32: Signal<Local, Bits<32>>,
    b32: Signal<Local, Bits<32>>,
    expf_a: Signal<Local, Bits<32>>,
    expf_b: Signal<Local, Bits<32>>,
    sig_a: Signal<Local, Bits<16>>,
    sig_b: Signal<Local, Bits<16>>,
    exp_a: Signal<Local, Bits<32>>,
    exp_b: Signal<Local, Bits<32>>,
    sig_product: Signal<Local, Bits<32>>,
    e0: Signal<Local, Bits<32>>,
    flags: Signal<Local, Bits<32>>,
    frac10_16: Constant<Bits<16>>,
    hidden16: Constant<Bits<16>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    exp5: Constant<Bits<32>>,
    bias: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    invalid_field: Constant<Bits<32>>,
    k10: Constant<Bits<32>>,
    k15: Constant<Bits<32>>,
    k22: Constant<Bits<32>>,
}

impl Default for Fp16MulFront {
    fn default() -> Fp16MulFront {
        Fp16MulFront {
            a: Default::default(),
            b: Default::default(),
            partial: Default::default(),
            widen_a: Default::default(),
            widen_b: Default::default(),
            a32: Default::default(),
            b32: Default::default(),
            expf_a: Default::default(),
            expf_b: Default::default(),
            sig_a: Default::default(),
            sig_b: Default::default(),
            exp_a: Default::default(),
            exp_b: Default::default(),
            sig_product: Default::default(),
            e0: Default::default(),
            flags: Default::default(),
            frac10_16: constant(0x3ff),
            hidden16: constant(0x400),
            zero: constant(0),
            one: constant(1),
            exp5: constant(31),
            bias: constant(98),
            sign_field: constant(1 << PARTIAL_SIGN_BIT),
            invalid_field: constant(1 << PARTIAL_INVALID_BIT),
            k10: constant(10),
            k15: constant(15),
            k22: constant(PARTIAL_EXP_SHIFT),
        }
    }
}

impl Logic for Fp16MulFront {
    #[hdl_gen]
    fn update(&mut self) {
        self.widen_a.narrow.next = self.a.val();
        self.widen_b.narrow.next = self.b.val();
        self.a32.next = self.widen_a.wide.val();
        self.b32.next = self.widen_b.wide.val();
        self.expf_a.next = (self.a32.val() >> self.k10.val()) & self.exp5.val();
        self.expf_b.next = (self.b32.val() >> self.k10.val()) & self.exp5.val();
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
        // 10-bit fractions) + 127 = ea + eb + 98, less the normalizing shifts (the back's).
        self.e0.next = self.exp_a.val() + self.exp_b.val() + self.bias.val();
        self.flags.next = self.zero.val();
        if (((self.a32.val() ^ self.b32.val()) >> self.k15.val()) & self.one.val()) == self.one.val() {
            self.flags.next = self.sign_field.val();
        }
        if (self.expf_a.val() == self.exp5.val()) || (self.expf_b.val() == self.exp5.val()) {
            self.flags.next = self.flags.val() | self.invalid_field.val();
        }
        self.partial.next = self.flags.val() | (self.e0.val() << self.k22.val()) | self.sig_product.val();
    }
}

/// The back half: the `partial` word to the FP32 product.
#[derive(LogicBlock)]
pub struct Fp16MulBack {
    /// The front's word ([`PARTIAL_LAYOUT`]).
    pub partial: Signal<In, Bits<32>>,
    /// The exact product, IEEE binary32 bits.
    pub product: Signal<Out, Bits<32>>,
    /// An operand was Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    norm: Normalize,
    // The normalizer: w0 holds the product at bits 31..10 and w5 has its leading one at bit 31,
    // e0 and e5 the exponent field before and after the shifts.
    sig_product: Signal<Local, Bits<32>>,
    w0: Signal<Local, Bits<32>>,
    w5: Signal<Local, Bits<32>>,
    e0: Signal<Local, Bits<32>>,
    e5: Signal<Local, Bits<32>>,
    magnitude: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    sig_field: Constant<Bits<32>>,
    exp_field: Constant<Bits<32>>,
    sign_field: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k10: Constant<Bits<32>>,
    k22: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
}

impl Default for Fp16MulBack {
    fn default() -> Fp16MulBack {
        Fp16MulBack {
            partial: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
            norm: Default::default(),
            sig_product: Default::default(),
            w0: Default::default(),
            w5: Default::default(),
            e0: Default::default(),
            e5: Default::default(),
            magnitude: Default::default(),
            zero: constant(0),
            sig_field: constant((1 << PARTIAL_EXP_SHIFT) - 1),
            exp_field: constant(0xff),
            sign_field: constant(1 << PARTIAL_SIGN_BIT),
            frac23: constant((1 << 23) - 1),
            sign_bit: constant(1 << 31),
            k8: constant(8),
            k10: constant(10),
            k22: constant(PARTIAL_EXP_SHIFT),
            k23: constant(23),
        }
    }
}

impl Logic for Fp16MulBack {
    #[hdl_gen]
    fn update(&mut self) {
        self.invalid.next = self.partial.val().get_bit(31); // PARTIAL_INVALID_BIT (hdl_gen takes a literal)
        self.sig_product.next = self.partial.val() & self.sig_field.val();
        self.e0.next = (self.partial.val() >> self.k22.val()) & self.exp_field.val();
        self.w0.next = self.sig_product.val() << self.k10.val();
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
        if (self.partial.val() & self.sign_field.val()) != self.zero.val() {
            self.product.next = self.magnitude.val() | self.sign_bit.val();
        }
    }
}

/// The FP16 x FP16 -> FP32 exact multiplier: the two halves, combinational.
#[derive(LogicBlock, Default)]
pub struct Fp16Mul {
    /// FP16 operand (IEEE binary16 bits).
    pub a: Signal<In, Bits<16>>,
    /// FP16 operand.
    pub b: Signal<In, Bits<16>>,
    /// The exact product, IEEE binary32 bits.
    pub product: Signal<Out, Bits<32>>,
    /// An operand is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    front: Fp16MulFront,
    back: Fp16MulBack,
}

impl Logic for Fp16Mul {
    #[hdl_gen]
    fn update(&mut self) {
        self.front.a.next = self.a.val();
        self.front.b.next = self.b.val();
        self.back.partial.next = self.front.partial.val();
        self.product.next = self.back.product.val();
        self.invalid.next = self.back.invalid.val();
    }
}
