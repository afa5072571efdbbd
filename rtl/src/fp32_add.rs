//! `fp32_add`: the accumulator's FP32 adder, round to nearest even, combinational.
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
//! How: order the operands by magnitude; align the smaller significand with three extra bits
//! (guard, round, sticky); add or subtract; renormalize (one right shift on a carry, or a left
//! shift by the leading-zero count found by a five-stage normalizer, limited so that the exponent
//! stays >= 1: a subnormal result); round to nearest even, which may carry into the exponent;
//! Inf when the exponent reaches 255. All arithmetic is 32 bits wide with width-typed constants,
//! for lint-clean Verilog.

use rust_hdl::prelude::*;

/// The ports of [`Fp32Add`] when it is a top module (`lacuna emit-verilog`, the unit tests).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "FP32 operand, IEEE binary32 bits"),
    ("b", "FP32 operand, IEEE binary32 bits"),
    ("sum", "a + b rounded to nearest, ties to even, IEEE binary32 bits"),
];

/// The FP32 round-to-nearest-even adder.
#[derive(LogicBlock)]
pub struct Fp32Add {
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// a + b, IEEE binary32 bits.
    pub sum: Signal<Out, Bits<32>>,
    mag_a: Signal<Local, Bits<32>>,
    mag_b: Signal<Local, Bits<32>>,
    sign_a: Signal<Local, Bits<32>>,
    sign_b: Signal<Local, Bits<32>>,
    field_a: Signal<Local, Bits<32>>,
    field_b: Signal<Local, Bits<32>>,
    sig_a: Signal<Local, Bits<32>>,
    sig_b: Signal<Local, Bits<32>>,
    eff_a: Signal<Local, Bits<32>>,
    eff_b: Signal<Local, Bits<32>>,
    sign_x: Signal<Local, Bits<32>>,
    sign_y: Signal<Local, Bits<32>>,
    exp_x: Signal<Local, Bits<32>>,
    exp_y: Signal<Local, Bits<32>>,
    sig_x: Signal<Local, Bits<32>>,
    sig_y: Signal<Local, Bits<32>>,
    d: Signal<Local, Bits<32>>,
    wide_x: Signal<Local, Bits<32>>,
    wide_y: Signal<Local, Bits<32>>,
    shifted_y: Signal<Local, Bits<32>>,
    lost_mask: Signal<Local, Bits<32>>,
    aligned_y: Signal<Local, Bits<32>>,
    s0: Signal<Local, Bits<32>>,
    s1: Signal<Local, Bits<32>>,
    e1: Signal<Local, Bits<32>>,
    w0: Signal<Local, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    w2: Signal<Local, Bits<32>>,
    w3: Signal<Local, Bits<32>>,
    w4: Signal<Local, Bits<32>>,
    c1: Signal<Local, Bits<32>>,
    c2: Signal<Local, Bits<32>>,
    c3: Signal<Local, Bits<32>>,
    c4: Signal<Local, Bits<32>>,
    c5: Signal<Local, Bits<32>>,
    limit: Signal<Local, Bits<32>>,
    sh: Signal<Local, Bits<32>>,
    s2: Signal<Local, Bits<32>>,
    e2: Signal<Local, Bits<32>>,
    guard: Signal<Local, Bits<32>>,
    low: Signal<Local, Bits<32>>,
    rest: Signal<Local, Bits<32>>,
    up: Signal<Local, Bits<32>>,
    m0: Signal<Local, Bits<32>>,
    m1: Signal<Local, Bits<32>>,
    e3: Signal<Local, Bits<32>>,
    field: Signal<Local, Bits<32>>,
    result_mag: Signal<Local, Bits<32>>,
    sign_r: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    hidden: Constant<Bits<32>>,
    max_exp: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k3: Constant<Bits<32>>,
    k4: Constant<Bits<32>>,
    k5: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k16: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    k31: Constant<Bits<32>>,
    clamp_d: Constant<Bits<32>>,
    carry_bit: Constant<Bits<32>>,
    m_overflow: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    inf: Constant<Bits<32>>,
    top16: Constant<Bits<32>>,
    top8: Constant<Bits<32>>,
    top4: Constant<Bits<32>>,
    top2: Constant<Bits<32>>,
    top1: Constant<Bits<32>>,
}

impl Default for Fp32Add {
    fn default() -> Fp32Add {
        Fp32Add {
            a: Default::default(),
            b: Default::default(),
            sum: Default::default(),
            mag_a: Default::default(),
            mag_b: Default::default(),
            sign_a: Default::default(),
            sign_b: Default::default(),
            field_a: Default::default(),
            field_b: Default::default(),
            sig_a: Default::default(),
            sig_b: Default::default(),
            eff_a: Default::default(),
            eff_b: Default::default(),
            sign_x: Default::default(),
            sign_y: Default::default(),
            exp_x: Default::default(),
            exp_y: Default::default(),
            sig_x: Default::default(),
            sig_y: Default::default(),
            d: Default::default(),
            wide_x: Default::default(),
            wide_y: Default::default(),
            shifted_y: Default::default(),
            lost_mask: Default::default(),
            aligned_y: Default::default(),
            s0: Default::default(),
            s1: Default::default(),
            e1: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            w3: Default::default(),
            w4: Default::default(),
            c1: Default::default(),
            c2: Default::default(),
            c3: Default::default(),
            c4: Default::default(),
            c5: Default::default(),
            limit: Default::default(),
            sh: Default::default(),
            s2: Default::default(),
            e2: Default::default(),
            guard: Default::default(),
            low: Default::default(),
            rest: Default::default(),
            up: Default::default(),
            m0: Default::default(),
            m1: Default::default(),
            e3: Default::default(),
            field: Default::default(),
            result_mag: Default::default(),
            sign_r: Default::default(),
            zero: Constant::new((0u64 as LiteralType).into()),
            one: Constant::new((1u64 as LiteralType).into()),
            abs_mask: Constant::new((2147483647u64 as LiteralType).into()),
            frac23: Constant::new((8388607u64 as LiteralType).into()),
            hidden: Constant::new((8388608u64 as LiteralType).into()),
            max_exp: Constant::new((255u64 as LiteralType).into()),
            k1: Constant::new((1u64 as LiteralType).into()),
            k2: Constant::new((2u64 as LiteralType).into()),
            k3: Constant::new((3u64 as LiteralType).into()),
            k4: Constant::new((4u64 as LiteralType).into()),
            k5: Constant::new((5u64 as LiteralType).into()),
            k8: Constant::new((8u64 as LiteralType).into()),
            k16: Constant::new((16u64 as LiteralType).into()),
            k23: Constant::new((23u64 as LiteralType).into()),
            k31: Constant::new((31u64 as LiteralType).into()),
            clamp_d: Constant::new((27u64 as LiteralType).into()),
            carry_bit: Constant::new((134217728u64 as LiteralType).into()),
            m_overflow: Constant::new((16777216u64 as LiteralType).into()),
            sign_bit: Constant::new((2147483648u64 as LiteralType).into()),
            inf: Constant::new((2139095040u64 as LiteralType).into()),
            top16: Constant::new((4294901760u64 as LiteralType).into()),
            top8: Constant::new((4278190080u64 as LiteralType).into()),
            top4: Constant::new((4026531840u64 as LiteralType).into()),
            top2: Constant::new((3221225472u64 as LiteralType).into()),
            top1: Constant::new((2147483648u64 as LiteralType).into()),
        }
    }
}

impl Logic for Fp32Add {
    #[hdl_gen]
    fn update(&mut self) {
        // Unpack. A zero exponent field (zero or subnormal) has effective exponent 1, no hidden bit.
        self.mag_a.next = self.a.val() & self.abs_mask.val();
        self.mag_b.next = self.b.val() & self.abs_mask.val();
        self.sign_a.next = self.a.val() >> self.k31.val();
        self.sign_b.next = self.b.val() >> self.k31.val();
        self.field_a.next = self.mag_a.val() >> self.k23.val();
        self.field_b.next = self.mag_b.val() >> self.k23.val();
        self.sig_a.next = self.a.val() & self.frac23.val();
        self.eff_a.next = self.one.val();
        if self.field_a.val() != self.zero.val() {
            self.sig_a.next = (self.a.val() & self.frac23.val()) | self.hidden.val();
            self.eff_a.next = self.field_a.val();
        }
        self.sig_b.next = self.b.val() & self.frac23.val();
        self.eff_b.next = self.one.val();
        if self.field_b.val() != self.zero.val() {
            self.sig_b.next = (self.b.val() & self.frac23.val()) | self.hidden.val();
            self.eff_b.next = self.field_b.val();
        }
        // x: the operand of larger magnitude; y: the other.
        self.sign_x.next = self.sign_a.val();
        self.exp_x.next = self.eff_a.val();
        self.sig_x.next = self.sig_a.val();
        self.sign_y.next = self.sign_b.val();
        self.exp_y.next = self.eff_b.val();
        self.sig_y.next = self.sig_b.val();
        if self.mag_a.val() < self.mag_b.val() {
            self.sign_x.next = self.sign_b.val();
            self.exp_x.next = self.eff_b.val();
            self.sig_x.next = self.sig_b.val();
            self.sign_y.next = self.sign_a.val();
            self.exp_y.next = self.eff_a.val();
            self.sig_y.next = self.sig_a.val();
        }
        // Align y with three extra bits; what is shifted out sets the sticky bit.
        self.d.next = self.exp_x.val() - self.exp_y.val();
        if self.d.val() > self.clamp_d.val() {
            self.d.next = self.clamp_d.val();
        }
        self.wide_x.next = self.sig_x.val() << self.k3.val();
        self.wide_y.next = self.sig_y.val() << self.k3.val();
        self.shifted_y.next = self.wide_y.val() >> self.d.val();
        self.lost_mask.next = (self.one.val() << self.d.val()) - self.one.val();
        self.aligned_y.next = self.shifted_y.val();
        if (self.wide_y.val() & self.lost_mask.val()) != self.zero.val() {
            self.aligned_y.next = self.shifted_y.val() | self.one.val();
        }
        self.s0.next = self.wide_x.val() + self.aligned_y.val();
        if self.sign_x.val() != self.sign_y.val() {
            self.s0.next = self.wide_x.val() - self.aligned_y.val();
        }
        // A carry out of the 27-bit sum: one right shift (keeping the sticky bit).
        self.s1.next = self.s0.val();
        self.e1.next = self.exp_x.val();
        if (self.s0.val() & self.carry_bit.val()) != self.zero.val() {
            self.s1.next = (self.s0.val() >> self.k1.val()) | (self.s0.val() & self.one.val());
            self.e1.next = self.exp_x.val() + self.one.val();
        }
        // Leading zeros of s1 (27 bits, leading one wanted at bit 26): normalize w0 = s1 << 5.
        self.w0.next = self.s1.val() << self.k5.val();
        self.w1.next = self.w0.val();
        self.c1.next = self.zero.val();
        if (self.w0.val() & self.top16.val()) == self.zero.val() {
            self.w1.next = self.w0.val() << self.k16.val();
            self.c1.next = self.k16.val();
        }
        self.w2.next = self.w1.val();
        self.c2.next = self.c1.val();
        if (self.w1.val() & self.top8.val()) == self.zero.val() {
            self.w2.next = self.w1.val() << self.k8.val();
            self.c2.next = self.c1.val() + self.k8.val();
        }
        self.w3.next = self.w2.val();
        self.c3.next = self.c2.val();
        if (self.w2.val() & self.top4.val()) == self.zero.val() {
            self.w3.next = self.w2.val() << self.k4.val();
            self.c3.next = self.c2.val() + self.k4.val();
        }
        self.w4.next = self.w3.val();
        self.c4.next = self.c3.val();
        if (self.w3.val() & self.top2.val()) == self.zero.val() {
            self.w4.next = self.w3.val() << self.k2.val();
            self.c4.next = self.c3.val() + self.k2.val();
        }
        self.c5.next = self.c4.val();
        if (self.w4.val() & self.top1.val()) == self.zero.val() {
            self.c5.next = self.c4.val() + self.k1.val();
        }
        // Shift left by the leading zeros, but keep the exponent >= 1 (then the result is subnormal).
        self.limit.next = self.e1.val() - self.one.val();
        self.sh.next = self.c5.val();
        if self.c5.val() > self.limit.val() {
            self.sh.next = self.limit.val();
        }
        self.s2.next = self.s1.val() << self.sh.val();
        self.e2.next = self.e1.val() - self.sh.val();
        // Round to nearest, ties to even: s2 = [26] leading | [25:3] fraction | guard | round | sticky.
        self.low.next = (self.s2.val() >> self.k3.val()) & self.one.val();
        self.guard.next = (self.s2.val() >> self.k2.val()) & self.one.val();
        self.rest.next = self.s2.val() & self.k3.val();
        self.up.next = self.zero.val();
        if (self.guard.val() == self.one.val())
            && ((self.low.val() == self.one.val()) || (self.rest.val() != self.zero.val()))
        {
            self.up.next = self.one.val();
        }
        self.m0.next = (self.s2.val() >> self.k3.val()) + self.up.val();
        self.m1.next = self.m0.val();
        self.e3.next = self.e2.val();
        if self.m0.val() == self.m_overflow.val() {
            self.m1.next = self.m0.val() >> self.k1.val();
            self.e3.next = self.e2.val() + self.one.val();
        }
        // A significand without its leading one is subnormal (exponent field 0); 255 and up is Inf.
        self.field.next = self.zero.val();
        if (self.m1.val() & self.hidden.val()) != self.zero.val() {
            self.field.next = self.e3.val();
        }
        self.result_mag.next = (self.field.val() << self.k23.val()) | (self.m1.val() & self.frac23.val());
        if self.field.val() >= self.max_exp.val() {
            self.result_mag.next = self.inf.val();
        }
        // An exact zero: -0 only for (-0) + (-0); x + (-x) = +0 when rounding to nearest.
        self.sign_r.next = self.sign_x.val();
        if self.s0.val() == self.zero.val() {
            self.result_mag.next = self.zero.val();
            if self.sign_x.val() != self.sign_y.val() {
                self.sign_r.next = self.zero.val();
            }
        }
        self.sum.next = self.result_mag.val();
        if self.sign_r.val() == self.one.val() {
            self.sum.next = self.result_mag.val() | self.sign_bit.val();
        }
    }
}
