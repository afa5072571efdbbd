//! `fp32_add::lzc`: the adder's leading-zero count: how far [`super::round::Round`] shifts the
//! sum left to normalize it. Combinational.
//!
//! Contract: `lz` is the number of leading zeros of the 27-bit `s1` below bit 26 (0 when bit 26
//! is set; 31 for `s1` = 0, which the sum's `zero` overrides).
//!
//! How: `w0 = s1 << 5` shifted left by 16, 8, 4, 2 when its top bits are all zero, each adding
//! its shift to the count, and 1 more when the top bit is still clear. A block of its own (it
//! was the tail of [`super::sum::Sum`]) so that a pipeline may cut between the addition and the
//! count: `expert_unit::dot_engine::dot_unit`'s accumulation loop does.

use rust_hdl::prelude::*;

/// The leading-zero count of the sum.
#[derive(LogicBlock)]
pub struct Lzc {
    /// The sum, 27 bits (leading one wanted at bit 26).
    pub s1: Signal<In, Bits<32>>,
    /// Its leading zeros below bit 26.
    pub lz: Signal<Out, Bits<32>>,
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
    top16: Constant<Bits<32>>,
    top8: Constant<Bits<32>>,
    top4: Constant<Bits<32>>,
    top2: Constant<Bits<32>>,
    top1: Constant<Bits<32>>,
}

impl Default for Lzc {
    fn default() -> Lzc {
        let k = |v: u64| Constant::new((v as LiteralType).into());
        Lzc {
            s1: Default::default(),
            lz: Default::default(),
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
            top16: k(0xffff_0000),
            top8: k(0xff00_0000),
            top4: k(0xf000_0000),
            top2: k(0xc000_0000),
            top1: k(0x8000_0000),
        }
    }
}

impl Logic for Lzc {
    #[hdl_gen]
    fn update(&mut self) {
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
    }
}
