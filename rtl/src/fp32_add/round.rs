//! `fp32_add::round`: the adder's last step: normalize (shift left by the leading zeros, but
//! keep the exponent >= 1: a subnormal result), round to nearest even (which may carry into the
//! exponent), pack; Inf when the exponent reaches 255, a signed zero for an exact zero.
//! Combinational.
//!
//! Contract: from [`super::sum::Sum`]'s and [`super::lzc::Lzc`]'s outputs, `sum` is the IEEE binary32 result.

use rust_hdl::prelude::*;

/// Normalize, round, pack.
#[derive(LogicBlock)]
pub struct Round {
    /// The 27-bit sum.
    pub s1: Signal<In, Bits<32>>,
    /// Its exponent.
    pub e1: Signal<In, Bits<32>>,
    /// Its leading zeros below bit 26.
    pub lz: Signal<In, Bits<32>>,
    /// 1: the sum is exactly zero.
    pub zero: Signal<In, Bits<32>>,
    /// The result's sign (bit 0).
    pub sign: Signal<In, Bits<32>>,
    /// The result, IEEE binary32 bits.
    pub sum: Signal<Out, Bits<32>>,
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
    k0: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k3: Constant<Bits<32>>,
    k23: Constant<Bits<32>>,
    frac23: Constant<Bits<32>>,
    hidden: Constant<Bits<32>>,
    max_exp: Constant<Bits<32>>,
    m_overflow: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    inf: Constant<Bits<32>>,
}

impl Default for Round {
    fn default() -> Round {
        let k = |v: u64| Constant::new((v as LiteralType).into());
        Round {
            s1: Default::default(),
            e1: Default::default(),
            lz: Default::default(),
            zero: Default::default(),
            sign: Default::default(),
            sum: Default::default(),
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
            k0: k(0),
            k1: k(1),
            k2: k(2),
            k3: k(3),
            k23: k(23),
            frac23: k(0x007f_ffff),
            hidden: k(0x0080_0000),
            max_exp: k(255),
            m_overflow: k(1 << 24),
            sign_bit: k(0x8000_0000),
            inf: k(0x7f80_0000),
        }
    }
}

impl Logic for Round {
    #[hdl_gen]
    fn update(&mut self) {
        // Shift left by the leading zeros, but keep the exponent >= 1 (then the result is subnormal).
        self.limit.next = self.e1.val() - self.k1.val();
        self.sh.next = self.lz.val();
        if self.lz.val() > self.limit.val() {
            self.sh.next = self.limit.val();
        }
        self.s2.next = self.s1.val() << self.sh.val();
        self.e2.next = self.e1.val() - self.sh.val();
        // Round to nearest, ties to even: s2 = [26] leading | [25:3] fraction | guard | round | sticky.
        self.low.next = (self.s2.val() >> self.k3.val()) & self.k1.val();
        self.guard.next = (self.s2.val() >> self.k2.val()) & self.k1.val();
        self.rest.next = self.s2.val() & self.k3.val();
        self.up.next = self.k0.val();
        if (self.guard.val() == self.k1.val())
            && ((self.low.val() == self.k1.val()) || (self.rest.val() != self.k0.val()))
        {
            self.up.next = self.k1.val();
        }
        self.m0.next = (self.s2.val() >> self.k3.val()) + self.up.val();
        self.m1.next = self.m0.val();
        self.e3.next = self.e2.val();
        if self.m0.val() == self.m_overflow.val() {
            self.m1.next = self.m0.val() >> self.k1.val();
            self.e3.next = self.e2.val() + self.k1.val();
        }
        // A significand without its leading one is subnormal (exponent field 0); 255 and up is Inf.
        self.field.next = self.k0.val();
        if (self.m1.val() & self.hidden.val()) != self.k0.val() {
            self.field.next = self.e3.val();
        }
        self.result_mag.next = (self.field.val() << self.k23.val()) | (self.m1.val() & self.frac23.val());
        if self.field.val() >= self.max_exp.val() {
            self.result_mag.next = self.inf.val();
        }
        if self.zero.val() == self.k1.val() {
            self.result_mag.next = self.k0.val();
        }
        self.sum.next = self.result_mag.val();
        if self.sign.val() == self.k1.val() {
            self.sum.next = self.result_mag.val() | self.sign_bit.val();
        }
    }
}
