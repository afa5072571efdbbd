//! `fp32_add::align`: the adder's first step: unpack both operands, order them by magnitude
//! (x: the larger), and align y's significand to x's exponent with three extra bits (guard,
//! round, sticky; what is shifted out sets the sticky bit). Combinational.
//!
//! Contract: `wide_x` is x's significand (hidden bit included) shifted left by 3; `aligned_y`
//! is y's, shifted left by 3 then right by `min(exp_x - exp_y, 27)` with the lost bits ORed into
//! bit 0; `exp_x` is x's effective exponent (1 for a zero or subnormal); `sign_x`, `sign_y` the
//! signs (bit 0). Zero or subnormal operands have no hidden bit.

use rust_hdl::prelude::*;

/// Unpack, order, align.
#[derive(LogicBlock)]
pub struct Align {
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// x's significand << 3.
    pub wide_x: Signal<Out, Bits<32>>,
    /// y's aligned significand, with the sticky bit.
    pub aligned_y: Signal<Out, Bits<32>>,
    /// x's effective exponent.
    pub exp_x: Signal<Out, Bits<32>>,
    /// x's sign (bit 0).
    pub sign_x: Signal<Out, Bits<32>>,
    /// y's sign (bit 0).
    pub sign_y: Signal<Out, Bits<32>>,
    mag_a: Signal<Local, Bits<32>>,
    mag_b: Signal<Local, Bits<32>>,
    field_a: Signal<Local, Bits<32>>,
    field_b: Signal<Local, Bits<32>>,
    sig_a: Signal<Local, Bits<32>>,
    sig_b: Signal<Local, Bits<32>>,
    eff_a: Signal<Local, Bits<32>>,
    eff_b: Signal<Local, Bits<32>>,
    exp_y: Signal<Local, Bits<32>>,
    sig_x: Signal<Local, Bits<32>>,
    sig_y: Signal<Local, Bits<32>>,
    d: Signal<Local, Bits<32>>,
    wide_y: Signal<Local, Bits<32>>,
    shifted_y: Signal<Local, Bits<32>>,
    lost_mask: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    hidden: Constant<Bits<32>>,
    k3: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    k31: Constant<Bits<32>>,
    clamp_d: Constant<Bits<32>>,
}

impl Default for Align {
    fn default() -> Align {
        let k = |v: u64| Constant::new((v as LiteralType).into());
        Align {
            a: Default::default(),
            b: Default::default(),
            wide_x: Default::default(),
            aligned_y: Default::default(),
            exp_x: Default::default(),
            sign_x: Default::default(),
            sign_y: Default::default(),
            mag_a: Default::default(),
            mag_b: Default::default(),
            field_a: Default::default(),
            field_b: Default::default(),
            sig_a: Default::default(),
            sig_b: Default::default(),
            eff_a: Default::default(),
            eff_b: Default::default(),
            exp_y: Default::default(),
            sig_x: Default::default(),
            sig_y: Default::default(),
            d: Default::default(),
            wide_y: Default::default(),
            shifted_y: Default::default(),
            lost_mask: Default::default(),
            zero: k(0),
            one: k(1),
            abs_mask: k(0x7fff_ffff),
            frac23: k(0x007f_ffff),
            hidden: k(0x0080_0000),
            k3: k(3),
            k23: k(23),
            k31: k(31),
            clamp_d: k(27),
        }
    }
}

impl Logic for Align {
    #[hdl_gen]
    fn update(&mut self) {
        // Unpack. A zero exponent field (zero or subnormal) has effective exponent 1, no hidden bit.
        self.mag_a.next = self.a.val() & self.abs_mask.val();
        self.mag_b.next = self.b.val() & self.abs_mask.val();
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
        self.sign_x.next = self.a.val() >> self.k31.val();
        self.exp_x.next = self.eff_a.val();
        self.sig_x.next = self.sig_a.val();
        self.sign_y.next = self.b.val() >> self.k31.val();
        self.exp_y.next = self.eff_b.val();
        self.sig_y.next = self.sig_b.val();
        if self.mag_a.val() < self.mag_b.val() {
            self.sign_x.next = self.b.val() >> self.k31.val();
            self.exp_x.next = self.eff_b.val();
            self.sig_x.next = self.sig_b.val();
            self.sign_y.next = self.a.val() >> self.k31.val();
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
    }
}
