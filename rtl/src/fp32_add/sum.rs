//! `fp32_add::sum`: the adder's second step: add or subtract the aligned significands, take a
//! carry out by one right shift (keeping the sticky bit), count the leading zeros for the
//! normalization, and settle the sign of an exact zero. Combinational.
//!
//! Contract: from [`super::align::Align`]'s outputs, `s1` is the 27-bit sum (after a carry's
//! shift) and `e1` its exponent; `lz` the leading zeros of `s1` below bit 26 (31 for 0, which `zero` overrides);
//! `zero` is 1 when the sum is exactly 0; `sign` is the result's sign: x's, except that an exact
//! zero from operands of opposite signs is +0 (round to nearest).

use rust_hdl::prelude::*;

/// Add, carry, count leading zeros.
#[derive(LogicBlock)]
pub struct Sum {
    /// x's significand << 3.
    pub wide_x: Signal<In, Bits<32>>,
    /// y's aligned significand with the sticky bit.
    pub aligned_y: Signal<In, Bits<32>>,
    /// x's effective exponent.
    pub exp_x: Signal<In, Bits<32>>,
    /// x's sign (bit 0).
    pub sign_x: Signal<In, Bits<32>>,
    /// y's sign (bit 0).
    pub sign_y: Signal<In, Bits<32>>,
    /// The sum, 27 bits (leading one wanted at bit 26).
    pub s1: Signal<Out, Bits<32>>,
    /// Its exponent.
    pub e1: Signal<Out, Bits<32>>,
    /// Its leading zeros below bit 26.
    pub lz: Signal<Out, Bits<32>>,
    /// 1: the sum is exactly zero.
    pub zero: Signal<Out, Bits<32>>,
    /// The result's sign (bit 0).
    pub sign: Signal<Out, Bits<32>>,
    s0: Signal<Local, Bits<32>>,
    w0: Signal<Local, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    w2: Signal<Local, Bits<32>>,
    w3: Signal<Local, Bits<32>>,
    w4: Signal<Local, Bits<32>>,
    c1: Signal<Local, Bits<32>>,
    c2: Signal<Local, Bits<32>>,
    c3: Signal<Local, Bits<32>>,
    c4: Signal<Local, Bits<32>>,
    k0: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k4: Constant<Bits<32>>,
    k5: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k16: Constant<Bits<32>>,
    carry_bit: Constant<Bits<32>>,
    top16: Constant<Bits<32>>,
    top8: Constant<Bits<32>>,
    top4: Constant<Bits<32>>,
    top2: Constant<Bits<32>>,
    top1: Constant<Bits<32>>,
}

impl Default for Sum {
    fn default() -> Sum {
        let k = |v: u64| Constant::new((v as LiteralType).into());
        Sum {
            wide_x: Default::default(),
            aligned_y: Default::default(),
            exp_x: Default::default(),
            sign_x: Default::default(),
            sign_y: Default::default(),
            s1: Default::default(),
            e1: Default::default(),
            lz: Default::default(),
            zero: Default::default(),
            sign: Default::default(),
            s0: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            w3: Default::default(),
            w4: Default::default(),
            c1: Default::default(),
            c2: Default::default(),
            c3: Default::default(),
            c4: Default::default(),
            k0: k(0),
            k1: k(1),
            k2: k(2),
            k4: k(4),
            k5: k(5),
            k8: k(8),
            k16: k(16),
            carry_bit: k(1 << 27),
            top16: k(0xffff_0000),
            top8: k(0xff00_0000),
            top4: k(0xf000_0000),
            top2: k(0xc000_0000),
            top1: k(0x8000_0000),
        }
    }
}

impl Logic for Sum {
    #[hdl_gen]
    fn update(&mut self) {
        self.s0.next = self.wide_x.val() + self.aligned_y.val();
        if self.sign_x.val() != self.sign_y.val() {
            self.s0.next = self.wide_x.val() - self.aligned_y.val();
        }
        // A carry out of the 27-bit sum: one right shift (keeping the sticky bit).
        self.s1.next = self.s0.val();
        self.e1.next = self.exp_x.val();
        if (self.s0.val() & self.carry_bit.val()) != self.k0.val() {
            self.s1.next = (self.s0.val() >> self.k1.val()) | (self.s0.val() & self.k1.val());
            self.e1.next = self.exp_x.val() + self.k1.val();
        }
        // Leading zeros of s1 (27 bits, leading one wanted at bit 26): normalize w0 = s1 << 5.
        self.w0.next = self.s1.val() << self.k5.val();
        self.w1.next = self.w0.val();
        self.c1.next = self.k0.val();
        if (self.w0.val() & self.top16.val()) == self.k0.val() {
            self.w1.next = self.w0.val() << self.k16.val();
            self.c1.next = self.k16.val();
        }
        self.w2.next = self.w1.val();
        self.c2.next = self.c1.val();
        if (self.w1.val() & self.top8.val()) == self.k0.val() {
            self.w2.next = self.w1.val() << self.k8.val();
            self.c2.next = self.c1.val() + self.k8.val();
        }
        self.w3.next = self.w2.val();
        self.c3.next = self.c2.val();
        if (self.w2.val() & self.top4.val()) == self.k0.val() {
            self.w3.next = self.w2.val() << self.k4.val();
            self.c3.next = self.c2.val() + self.k4.val();
        }
        self.w4.next = self.w3.val();
        self.c4.next = self.c3.val();
        if (self.w3.val() & self.top2.val()) == self.k0.val() {
            self.w4.next = self.w3.val() << self.k2.val();
            self.c4.next = self.c3.val() + self.k2.val();
        }
        self.lz.next = self.c4.val();
        if (self.w4.val() & self.top1.val()) == self.k0.val() {
            self.lz.next = self.c4.val() + self.k1.val();
        }
        // An exact zero: -0 only for (-0) + (-0); x + (-x) = +0 when rounding to nearest.
        self.zero.next = self.k0.val();
        self.sign.next = self.sign_x.val();
        if self.s0.val() == self.k0.val() {
            self.zero.next = self.k1.val();
            if self.sign_x.val() != self.sign_y.val() {
                self.sign.next = self.k0.val();
            }
        }
    }
}
