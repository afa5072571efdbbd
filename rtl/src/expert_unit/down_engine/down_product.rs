//! `down_product`: one down-lane product, `(f32(a) * f32(scale)) * f32(q)`: rule 3 of
//! `lacuna_spec::a8w4` (`lacuna_spec::a8w4::down_product`), combinational: the FP16 product
//! and [`super::down_scale::DownScale`] back to back.
//!
//! ```text
//!              +----------+ exact[32] +------------+
//!  a[16] ----->| fp16_mul |---------->| down_scale |--> product[32]  (a x scale) x q, nearest even
//!  scale[16] ->|          |--> invalid|            |
//!  q[4] ------------------------------>|            |
//!              +----------+           +------------+
//! ```
//!
//! Contract: for finite `a` and `scale` and any INT4 `q`, `product` is the FP32 bit pattern of
//! `lacuna_spec::a8w4::down_product(a, scale, q)`. The first product is exact
//! ([`crate::fp16_mul`]) and always normal or zero; times `|q| <= 8` it has at most 27
//! significant bits, rounded once to nearest even ([`super::down_scale`]); it never overflows nor
//! becomes subnormal. For an Inf or NaN operand `invalid` is raised and `product` is
//! unspecified. The down lane ([`super::lane::DownLane`]) registers between the two halves;
//! this block is the two chained, which the bit-exactness tests run (so they cover both).

use super::down_scale::DownScale;
use crate::fp16_mul::Fp16Mul;
use rust_hdl::prelude::*;

/// The ports of [`DownProduct`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "the channel's down operand fp16(w h), IEEE binary16 bits"),
    ("scale", "the scale of the weight's group, IEEE binary16 bits"),
    ("q", "the weight, INT4 two's complement"),
    ("product", "(f32(a) * f32(scale)) * f32(q), round to nearest even, IEEE binary32 bits"),
    ("invalid", "a or scale is Inf or NaN; product is then unspecified"),
];

/// FP16 x FP16 x INT4 -> FP32, one rounding.
#[derive(LogicBlock, Default)]
pub struct DownProduct {
    /// The down operand (FP16 bits).
    pub a: Signal<In, Bits<16>>,
    /// The group's scale (FP16 bits).
    pub scale: Signal<In, Bits<16>>,
    /// The weight (INT4).
    pub q: Signal<In, Bits<4>>,
    /// The rounded product (FP32 bits).
    pub product: Signal<Out, Bits<32>>,
    /// An operand is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    mul: Fp16Mul,
    times_q: DownScale,
}

impl Logic for DownProduct {
    #[hdl_gen]
    fn update(&mut self) {
        self.mul.a.next = self.a.val();
        self.mul.b.next = self.scale.val();
        self.invalid.next = self.mul.invalid.val();
        self.times_q.exact.next = self.mul.product.val();
        self.times_q.q.next = self.q.val();
        self.product.next = self.times_q.product.val();
    }
}
