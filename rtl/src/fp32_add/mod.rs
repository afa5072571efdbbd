//! `fp32_add`: the FP32 adder, round to nearest even: combinational ([`Fp32Add`]) or pipelined
//! ([`pipe::Fp32AddPipe`], the accumulator's).
//!
//! ```text
//!            +-----------+
//!   a[32] -->|           |--> sum[32]   a + b, rounded to nearest, ties to even (IEEE 754)
//!   b[32] -->| fp32_add  |
//!            +-----------+
//! ```
//!
//! Contract (docs/microarchitecture.md, numeric rules): for finite a and b, `sum` is the bit
//! pattern of Rust's `a + b` on f32: zeros of both signs (x + (-x) = +0), subnormal operands and
//! results, and overflow to +-Inf included. The accumulator only ever sees sums of exact FP16
//! products (multiples of 2^-48, far from both ends of FP32's range), but the adder is exact over
//! every finite input so that the claim needs no range argument. For an Inf or NaN operand `sum`
//! is unspecified: the multiplier flags non-finite FP16 inputs, and the accumulator lane flags a
//! register that overflowed to Inf before it is added to (reading the adder's own flag there would
//! put the lane's issue logic and the adder in one combinational loop for Verilator).
//!
//! How, in three steps (the second in two blocks), one file each (the pipelined adder registers
//! between the steps):
//! [`align::Align`] orders the operands by magnitude and aligns the smaller significand with three
//! extra bits (guard, round, sticky); [`sum::Sum`] adds or subtracts and shifts a carry out, and
//! [`lzc::Lzc`] counts the sum's leading zeros (a five-stage normalizer); [`round::Round`] shifts
//! left by them,
//! limited so that the exponent stays >= 1 (a subnormal result), rounds to nearest even (which may
//! carry into the exponent) and packs, Inf when the exponent reaches 255. All arithmetic is 32
//! bits wide with width-typed constants, for lint-clean Verilog.

use rust_hdl::prelude::*;

pub mod align;
pub mod lzc;
pub mod pipe;
pub mod round;
pub mod sum;

/// The ports of [`Fp32Add`] when it is a top module (`lacuna emit-verilog`, the unit tests).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "FP32 operand, IEEE binary32 bits"),
    ("b", "FP32 operand, IEEE binary32 bits"),
    ("sum", "a + b rounded to nearest, ties to even, IEEE binary32 bits"),
];

/// The FP32 round-to-nearest-even adder, combinational: the three steps chained.
#[derive(LogicBlock, Default)]
pub struct Fp32Add {
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// a + b, IEEE binary32 bits.
    pub sum: Signal<Out, Bits<32>>,
    align: align::Align,
    add: sum::Sum,
    lzc: lzc::Lzc,
    round: round::Round,
}

impl Logic for Fp32Add {
    #[hdl_gen]
    fn update(&mut self) {
        self.align.a.next = self.a.val();
        self.align.b.next = self.b.val();
        self.add.wide_x.next = self.align.wide_x.val();
        self.add.aligned_y.next = self.align.aligned_y.val();
        self.add.exp_x.next = self.align.exp_x.val();
        self.add.sign_x.next = self.align.sign_x.val();
        self.add.sign_y.next = self.align.sign_y.val();
        self.lzc.s1.next = self.add.s1.val();
        self.round.s1.next = self.add.s1.val();
        self.round.e1.next = self.add.e1.val();
        self.round.lz.next = self.lzc.lz.val();
        self.round.zero.next = self.add.zero.val();
        self.round.sign.next = self.add.sign.val();
        self.sum.next = self.round.sum.val();
    }
}
