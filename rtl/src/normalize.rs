//! `normalize`: the leading-zero normalizer shared by the FP units whose exact result is one
//! 32-bit word (`fp16_mul`, the expert unit's `group_scale`) and by the divider's operands
//! (`fp32_div`), combinational.
//!
//! ```text
//!              +-----------+
//!   w[32] ---->|           |--> w_out[32]  w shifted left until its bit 31 is set (w != 0)
//!   e[32] ---->| normalize |--> e_out[32]  e less the shift
//!              +-----------+
//! ```
//!
//! Contract: for `w != 0`, `w_out = w << s` and `e_out = e - s` with `s` the count of leading
//! zeros of `w` (so bit 31 of `w_out` is set); for `w = 0`, `w_out = 0` and `e_out = e - 31`
//! (the users replace a zero result themselves). `e` is modulo 2^32: `fp16_mul` and
//! `group_scale` keep it positive; `fp32_div`'s may wrap (a subnormal operand's 1 - 23), which
//! its exponent difference, also taken modulo 2^32, absorbs.
//!
//! How: five stages that shift by 16, 8, 4, 2 and 1 when the top bits they test are all zero,
//! each taking its shift off the exponent.

use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The normalizer.
#[derive(LogicBlock)]
pub struct Normalize {
    /// The word.
    pub w: Signal<In, Bits<32>>,
    /// Its exponent.
    pub e: Signal<In, Bits<32>>,
    /// The word with its leading one at bit 31.
    pub w_out: Signal<Out, Bits<32>>,
    /// The exponent less the shift.
    pub e_out: Signal<Out, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    w2: Signal<Local, Bits<32>>,
    w3: Signal<Local, Bits<32>>,
    w4: Signal<Local, Bits<32>>,
    e1: Signal<Local, Bits<32>>,
    e2: Signal<Local, Bits<32>>,
    e3: Signal<Local, Bits<32>>,
    e4: Signal<Local, Bits<32>>,
    zero: Constant<Bits<32>>,
    k1: Constant<Bits<32>>,
    k2: Constant<Bits<32>>,
    k4: Constant<Bits<32>>,
    k8: Constant<Bits<32>>,
    k16: Constant<Bits<32>>,
    top16: Constant<Bits<32>>,
    top8: Constant<Bits<32>>,
    top4: Constant<Bits<32>>,
    top2: Constant<Bits<32>>,
    top1: Constant<Bits<32>>,
}

impl Default for Normalize {
    fn default() -> Normalize {
        Normalize {
            w: Default::default(),
            e: Default::default(),
            w_out: Default::default(),
            e_out: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            w3: Default::default(),
            w4: Default::default(),
            e1: Default::default(),
            e2: Default::default(),
            e3: Default::default(),
            e4: Default::default(),
            zero: constant(0),
            k1: constant(1),
            k2: constant(2),
            k4: constant(4),
            k8: constant(8),
            k16: constant(16),
            top16: constant(0xffff_0000),
            top8: constant(0xff00_0000),
            top4: constant(0xf000_0000),
            top2: constant(0xc000_0000),
            top1: constant(0x8000_0000),
        }
    }
}

impl Logic for Normalize {
    #[hdl_gen]
    fn update(&mut self) {
        self.w1.next = self.w.val();
        self.e1.next = self.e.val();
        if (self.w.val() & self.top16.val()) == self.zero.val() {
            self.w1.next = self.w.val() << self.k16.val();
            self.e1.next = self.e.val() - self.k16.val();
        }
        self.w2.next = self.w1.val();
        self.e2.next = self.e1.val();
        if (self.w1.val() & self.top8.val()) == self.zero.val() {
            self.w2.next = self.w1.val() << self.k8.val();
            self.e2.next = self.e1.val() - self.k8.val();
        }
        self.w3.next = self.w2.val();
        self.e3.next = self.e2.val();
        if (self.w2.val() & self.top4.val()) == self.zero.val() {
            self.w3.next = self.w2.val() << self.k4.val();
            self.e3.next = self.e2.val() - self.k4.val();
        }
        self.w4.next = self.w3.val();
        self.e4.next = self.e3.val();
        if (self.w3.val() & self.top2.val()) == self.zero.val() {
            self.w4.next = self.w3.val() << self.k2.val();
            self.e4.next = self.e3.val() - self.k2.val();
        }
        self.w_out.next = self.w4.val();
        self.e_out.next = self.e4.val();
        if (self.w4.val() & self.top1.val()) == self.zero.val() {
            self.w_out.next = self.w4.val() << self.k1.val();
            self.e_out.next = self.e4.val() - self.k1.val();
        }
    }
}
