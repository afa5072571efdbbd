//! `fp32_add::sum`: the adder's second step: add or subtract the aligned significands, take a
//! carry out by one right shift (keeping the sticky bit), and settle the sign of an exact zero.
//! Combinational. ([`super::lzc::Lzc`] then counts the leading zeros for the normalization.)
//!
//! Contract: from [`super::align::Align`]'s outputs, `s1` is the 27-bit sum (after a carry's
//! shift) and `e1` its exponent; `zero` is 1 when the sum is exactly 0; `sign` is the result's
//! sign: x's, except that an exact zero from operands of opposite signs is +0 (round to nearest).

use rust_hdl::prelude::*;

/// Add, carry, the sign.
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
    /// 1: the sum is exactly zero.
    pub zero: Signal<Out, Bits<32>>,
    /// The result's sign (bit 0).
    pub sign: Signal<Out, Bits<32>>,
    s0: Signal<Local, Bits<32>>,
    k0: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    carry_bit: Constant<Bits<32>>,
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
            zero: Default::default(),
            sign: Default::default(),
            s0: Default::default(),
            k0: k(0),
            k1: k(1),
            carry_bit: k(1 << 27),
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
