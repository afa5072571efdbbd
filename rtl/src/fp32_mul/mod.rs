//! `fp32_mul`: an FP32 multiplier, round to nearest even, in three thirds that a pipeline may
//! put registers between: the multiplies of the expert unit's FP32 lanes (a row's token scale,
//! SiLU's segment and product, `w h`, calibration's `w kappa`).
//!
//! ```text
//!            +-------+ hh hl lh ll info +--------+ hi lo exps +------+
//!   a[32] -->| front |----------------->| middle |----------->| back |--> product[32]  a * b,
//!   b[32] -->|       |     (5 x 32)     |        |  (3 x 32)  |      |--> invalid      nearest even
//!            +-------+                  +--------+            +------+
//!            \____ Fp32Mul (the three, combinational); Fp32MulPipe (a register after each of the first two) ____/
//! ```
//!
//! Contract: for finite a and b, `product` is the bit pattern of Rust's `a * b` on f32:
//! subnormal operands and results, signed zeros (the sign is `sign(a) xor sign(b)` always) and
//! overflow to +-Inf included. For an Inf or NaN operand `invalid` is raised and `product` is
//! unspecified (as [`crate::fp32_add`]'s: the lanes never compute on non-finite values; the unit
//! that feeds them reports them).
//!
//! The thirds (issue 19: the whole multiplier is ~139 FO4 in the suite's flow, against a clock
//! budget of ~80; cut in two halves, each was still 75-77 FO4 without the registers' own
//! delays): the **front** ([`front::Fp32MulFront`]) takes the fields and forms the four partial
//! products of the significands' 12-bit halves, the **middle** ([`middle::Fp32MulMiddle`]) sums
//! them into the exact 48-bit product, the **back** ([`back::Fp32MulBack`]) normalizes, rounds
//! and packs. [`Fp32Mul`] is the three wired in a row (the bit-exactness tests run it, so they
//! cover every third); [`Fp32MulPipe`] registers the words between them.

use crate::reg::Reg;
use rust_hdl::prelude::*;

pub mod back;
pub mod front;
pub mod middle;

use back::Fp32MulBack;
use front::Fp32MulFront;
use middle::Fp32MulMiddle;

/// The words between the thirds, low bit first.
pub const THIRDS_LAYOUT: &str = "front -> middle: hh, hl, lh, ll (the 24-bit partial products), \
     info: ea + eb [8:0], sign [16], invalid [17]; middle -> back: hi: product[47:24] at [23:0], \
     sign [24], invalid [25]; lo: product[23:0] at [23:0]; exps: ea + eb";

/// The exponent sum's field of the `info` word.
const INFO_EXPS_MASK: u64 = 0x1ff;
/// The sign bit of the `info` word.
const INFO_SIGN: u64 = 16;
/// The invalid bit of the `info` word.
const INFO_INVALID: u64 = 17;
/// The sign bit of the `hi` word (also the divider's, which uses the back third).
pub(crate) const HI_SIGN: u64 = 24;
/// The invalid bit of the `hi` word (`get_bit` in `hdl_gen` takes a literal: `back` writes 25).
pub(crate) const HI_INVALID: u64 = 25;

/// The ports of [`Fp32Mul`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("a", "FP32 operand, IEEE binary32 bits"),
    ("b", "FP32 operand, IEEE binary32 bits"),
    ("product", "a * b rounded to nearest, ties to even, IEEE binary32 bits"),
    ("invalid", "a or b is Inf or NaN; product is then unspecified"),
];

/// The ports of [`Fp32MulPipe`] when it is a top module (`lacuna_fp32_mul_pipe`).
pub const PIPE_PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high"),
    ("a", "FP32 operand, IEEE binary32 bits"),
    ("b", "FP32 operand, IEEE binary32 bits"),
    ("product", "a * b of two cycles before, rounded to nearest, ties to even"),
    ("invalid", "a or b of two cycles before was Inf or NaN; product is then unspecified"),
];

/// The FP32 round-to-nearest-even multiplier, combinational: the thirds chained.
#[derive(LogicBlock, Default)]
pub struct Fp32Mul {
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// The rounded product.
    pub product: Signal<Out, Bits<32>>,
    /// An operand is Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    front: Fp32MulFront,
    middle: Fp32MulMiddle,
    back: Fp32MulBack,
}

impl Logic for Fp32Mul {
    #[hdl_gen]
    fn update(&mut self) {
        self.front.a.next = self.a.val();
        self.front.b.next = self.b.val();
        self.middle.hh.next = self.front.hh.val();
        self.middle.hl.next = self.front.hl.val();
        self.middle.lh.next = self.front.lh.val();
        self.middle.ll.next = self.front.ll.val();
        self.middle.info.next = self.front.info.val();
        self.back.hi.next = self.middle.hi.val();
        self.back.lo.next = self.middle.lo.val();
        self.back.exps.next = self.middle.exps.val();
        self.product.next = self.back.product.val();
        self.invalid.next = self.back.invalid.val();
    }
}

/// The latency of [`Fp32MulPipe`]: `product` at cycle t + LATENCY is `a * b` of cycle t.
pub const LATENCY: u64 = 2;
const _: () = assert!(LATENCY == 2, "PIPE_PORTS says two cycles");

/// The multiplier with a register after its front and after its middle: `product` and `invalid`
/// at cycle t + [`LATENCY`] are those of `a * b` at cycle t (the back is combinational after the
/// second register: the user registers its output, as a stage of its own). The register loads every cycle (no enable):
/// the user carries a valid bit beside it.
#[derive(LogicBlock)]
pub struct Fp32MulPipe {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// The product of the operands of two cycles before, rounded.
    pub product: Signal<Out, Bits<32>>,
    /// An operand of two cycles before was Inf or NaN.
    pub invalid: Signal<Out, Bit>,
    front: Fp32MulFront,
    middle: Fp32MulMiddle,
    back: Fp32MulBack,
    /// After the front: hh, hl, lh, ll, info.
    c1: Vec<Reg<Bits<32>>>,
    /// After the middle: hi, lo, exps.
    c2: Vec<Reg<Bits<32>>>,
}

impl Default for Fp32MulPipe {
    fn default() -> Fp32MulPipe {
        Fp32MulPipe {
            clock: Default::default(),
            reset: Default::default(),
            a: Default::default(),
            b: Default::default(),
            product: Default::default(),
            invalid: Default::default(),
            front: Default::default(),
            middle: Default::default(),
            back: Default::default(),
            c1: crate::wiring::many(5),
            c2: crate::wiring::many(3),
        }
    }
}

impl Logic for Fp32MulPipe {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..self.c1.len() {
            self.c1[i].clock.next = self.clock.val();
            self.c1[i].reset.next = self.reset.val();
        }
        for i in 0..self.c2.len() {
            self.c2[i].clock.next = self.clock.val();
            self.c2[i].reset.next = self.reset.val();
        }
        self.front.a.next = self.a.val();
        self.front.b.next = self.b.val();
        self.c1[0].d.next = self.front.hh.val();
        self.c1[1].d.next = self.front.hl.val();
        self.c1[2].d.next = self.front.lh.val();
        self.c1[3].d.next = self.front.ll.val();
        self.c1[4].d.next = self.front.info.val();
        self.middle.hh.next = self.c1[0].q.val();
        self.middle.hl.next = self.c1[1].q.val();
        self.middle.lh.next = self.c1[2].q.val();
        self.middle.ll.next = self.c1[3].q.val();
        self.middle.info.next = self.c1[4].q.val();
        self.c2[0].d.next = self.middle.hi.val();
        self.c2[1].d.next = self.middle.lo.val();
        self.c2[2].d.next = self.middle.exps.val();
        self.back.hi.next = self.c2[0].q.val();
        self.back.lo.next = self.c2[1].q.val();
        self.back.exps.next = self.c2[2].q.val();
        self.product.next = self.back.product.val();
        self.invalid.next = self.back.invalid.val();
    }
}
