//! `swiglu::lane`: one SwiGLU lane: per (channel, token) `h = silu(gate) x up` with the
//! hardware's piecewise-linear SiLU and the down operand `a = fp16(w h)`:
//! `lacuna_model::expert_unit::swiglu::apply`, pipelined, one element a cycle.
//!
//! ```text
//!               +------------------------------ lane ------------------------------+
//!  in_valid --->| S0 x + 16                    S4 x * s, then 0 below -16, x at 16 |--> out_valid
//!  gate[32] --->| S1 segment i, ROMs y_i,      S5 h = silu * up                    |--> h[32]
//!  up[32] ----->|    slope_i, -x_i; x - x_i    S6 a = fp16(w h) (down_operand)     |--> a[16]
//!  weight[32] ->| S2 (x - x_i) * slope_i                                           |--> invalid
//!  reset, clock>| S3 s = y_i + that              (a register after every stage)    |
//!               +------------------------------------------------------------------+
//! ```
//!
//! Contract: an element presented in cycle t (`in_valid`) comes out in cycle t + [`LATENCY`],
//! one a cycle, in order. For finite `gate`, `up` and `weight`, `h` is the FP32 bit pattern of
//! `silu(gate) * up` and `a` the FP16 one of `down_operand(weight, h)`, each operation rounded
//! as `lacuna_spec::a8w4::silu` rounds it: the segment `i = floor((x + 16) * 8)` (clamped to
//! 255), `sigmoid = y_i + (x - x_i) * slope_i`, `silu = x * sigmoid`; 0 below -16, `x` at or
//! above 16. The three ROMs (`y_i`, `slope_i` and `-x_i`, 256 FP32 words each) are built from
//! the spec's `sigmoid_table` and `SIGMOID_LO` ([`crate::rom::Rom256`]), so the table has one
//! definition. `invalid`: an
//! operand is Inf or NaN, or an FP32 unit saw one; `h` and `a` are then unspecified.
//!
//! How: each FP operation is a unit of the shared arithmetic (`fp32_add`, `fp32_mul`) between
//! two pipeline registers; the segment is taken from `x + 16`'s bits (its exponent and top nine
//! significand bits), 16 bits wide as everything narrower than a word here.

use crate::expert_unit::swiglu::down_operand::DownOperand;
use crate::fp32_add::Fp32Add;
use crate::fp32_mul::Fp32Mul;
use crate::reg::Reg;
use crate::rom::Rom256;
use crate::wiring::constant;
use lacuna_spec::a8w4::{sigmoid_table, SIGMOID_LO, SIGMOID_SEGMENTS};
use rust_hdl::prelude::*;

/// Cycles from an element in to its `h` and `a` out.
pub const LATENCY: u64 = 7;

/// The ports of [`SwigluLane`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "an element is presented this cycle"),
    ("gate", "the channel's gate value for the token, IEEE binary32 bits"),
    ("up", "the channel's up value for the token, IEEE binary32 bits"),
    ("weight", "the token's gate weight for the expert, IEEE binary32 bits"),
    ("out_valid", "the element presented LATENCY (7) cycles ago comes out"),
    ("h", "silu(gate) * up, IEEE binary32 bits"),
    ("a", "fp16(weight * h) saturating, IEEE binary16 bits"),
    ("invalid", "an operand of that element was Inf or NaN; h and a are then unspecified"),
];

/// A ROM of one FP32 word per sigmoid segment.
fn segment_rom(word: impl Fn(usize) -> f32) -> Rom256 {
    Rom256::new((0..SIGMOID_SEGMENTS).map(|i| word(i).to_bits()).collect())
}
const _: () = assert!(SIGMOID_SEGMENTS == crate::rom::WORDS, "one ROM word per sigmoid segment");

/// One SwiGLU lane.
#[derive(LogicBlock)]
pub struct SwigluLane {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// An element is presented.
    pub in_valid: Signal<In, Bit>,
    /// Gate value (FP32 bits).
    pub gate: Signal<In, Bits<32>>,
    /// Up value (FP32 bits).
    pub up: Signal<In, Bits<32>>,
    /// Gate weight (FP32 bits).
    pub weight: Signal<In, Bits<32>>,
    /// An element comes out.
    pub out_valid: Signal<Out, Bit>,
    /// Its h (FP32 bits).
    pub h: Signal<Out, Bits<32>>,
    /// Its down operand (FP16 bits).
    pub a: Signal<Out, Bits<16>>,
    /// It had a non-finite operand.
    pub invalid: Signal<Out, Bit>,
    add16: Fp32Add,
    add_d: Fp32Add,
    mul_p: Fp32Mul,
    add_s: Fp32Add,
    mul_silu: Fp32Mul,
    mul_h: Fp32Mul,
    operand: DownOperand,
    rom_y: Rom256,
    rom_slope: Rom256,
    rom_neg_x: Rom256,
    sub_lo: Signal<Local, Bits<16>>,
    sub_hi: Signal<Local, Bits<16>>,
    sub_exp: Signal<Local, Bits<16>>,
    top9: Signal<Local, Bits<16>>,
    index: Signal<Local, Bits<16>>,
    address: Signal<Local, Bits<8>>,
    s1_valid: Reg<Bit>,
    s1_sub: Reg<Bits<32>>,
    s1_x: Reg<Bits<32>>,
    s1_up: Reg<Bits<32>>,
    s1_w: Reg<Bits<32>>,
    s1_lo: Reg<Bit>,
    s1_hi: Reg<Bit>,
    s1_inv: Reg<Bit>,
    s2_valid: Reg<Bit>,
    s2_d: Reg<Bits<32>>,
    s2_x: Reg<Bits<32>>,
    s2_y: Reg<Bits<32>>,
    s2_slope: Reg<Bits<32>>,
    s2_up: Reg<Bits<32>>,
    s2_w: Reg<Bits<32>>,
    s2_lo: Reg<Bit>,
    s2_hi: Reg<Bit>,
    s2_inv: Reg<Bit>,
    s3_valid: Reg<Bit>,
    s3_p: Reg<Bits<32>>,
    s3_x: Reg<Bits<32>>,
    s3_y: Reg<Bits<32>>,
    s3_up: Reg<Bits<32>>,
    s3_w: Reg<Bits<32>>,
    s3_lo: Reg<Bit>,
    s3_hi: Reg<Bit>,
    s3_inv: Reg<Bit>,
    s4_valid: Reg<Bit>,
    s4_s: Reg<Bits<32>>,
    s4_x: Reg<Bits<32>>,
    s4_up: Reg<Bits<32>>,
    s4_w: Reg<Bits<32>>,
    s4_lo: Reg<Bit>,
    s4_hi: Reg<Bit>,
    s4_inv: Reg<Bit>,
    s5_valid: Reg<Bit>,
    s5_silu: Reg<Bits<32>>,
    s5_up: Reg<Bits<32>>,
    s5_w: Reg<Bits<32>>,
    s5_inv: Reg<Bit>,
    s6_valid: Reg<Bit>,
    s6_h: Reg<Bits<32>>,
    s6_w: Reg<Bits<32>>,
    s6_inv: Reg<Bit>,
    s7_valid: Reg<Bit>,
    s7_h: Reg<Bits<32>>,
    s7_a: Reg<Bits<16>>,
    s7_inv: Reg<Bit>,
    sixteen: Constant<Bits<32>>,
    exp_mask: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
    zero16: Constant<Bits<16>>,
    exp8: Constant<Bits<16>>,
    frac7: Constant<Bits<16>>,
    hidden9: Constant<Bits<16>>,
    last: Constant<Bits<16>>,
    k1: Constant<Bits<16>>,
    k7: Constant<Bits<16>>,
    k15: Constant<Bits<16>>,
    e_eighth: Constant<Bits<16>>,
    e_top: Constant<Bits<16>>,
}

impl Default for SwigluLane {
    fn default() -> SwigluLane {
        let table = sigmoid_table();
        SwigluLane {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            gate: Default::default(),
            up: Default::default(),
            weight: Default::default(),
            out_valid: Default::default(),
            h: Default::default(),
            a: Default::default(),
            invalid: Default::default(),
            add16: Default::default(),
            add_d: Default::default(),
            mul_p: Default::default(),
            add_s: Default::default(),
            mul_silu: Default::default(),
            mul_h: Default::default(),
            operand: Default::default(),
            rom_y: segment_rom(|i| table[i].0),
            rom_slope: segment_rom(|i| table[i].1),
            // -x_i, the spec's `SIGMOID_LO + i / 8` (exact in f32), negated.
            rom_neg_x: segment_rom(|i| -(SIGMOID_LO + i as f32 / 8.0)),
            sub_lo: Default::default(),
            sub_hi: Default::default(),
            sub_exp: Default::default(),
            top9: Default::default(),
            index: Default::default(),
            address: Default::default(),
            s1_valid: Default::default(),
            s1_sub: Default::default(),
            s1_x: Default::default(),
            s1_up: Default::default(),
            s1_w: Default::default(),
            s1_lo: Default::default(),
            s1_hi: Default::default(),
            s1_inv: Default::default(),
            s2_valid: Default::default(),
            s2_d: Default::default(),
            s2_x: Default::default(),
            s2_y: Default::default(),
            s2_slope: Default::default(),
            s2_up: Default::default(),
            s2_w: Default::default(),
            s2_lo: Default::default(),
            s2_hi: Default::default(),
            s2_inv: Default::default(),
            s3_valid: Default::default(),
            s3_p: Default::default(),
            s3_x: Default::default(),
            s3_y: Default::default(),
            s3_up: Default::default(),
            s3_w: Default::default(),
            s3_lo: Default::default(),
            s3_hi: Default::default(),
            s3_inv: Default::default(),
            s4_valid: Default::default(),
            s4_s: Default::default(),
            s4_x: Default::default(),
            s4_up: Default::default(),
            s4_w: Default::default(),
            s4_lo: Default::default(),
            s4_hi: Default::default(),
            s4_inv: Default::default(),
            s5_valid: Default::default(),
            s5_silu: Default::default(),
            s5_up: Default::default(),
            s5_w: Default::default(),
            s5_inv: Default::default(),
            s6_valid: Default::default(),
            s6_h: Default::default(),
            s6_w: Default::default(),
            s6_inv: Default::default(),
            s7_valid: Default::default(),
            s7_h: Default::default(),
            s7_a: Default::default(),
            s7_inv: Default::default(),
            sixteen: constant((-SIGMOID_LO).to_bits() as u64),
            exp_mask: constant(0x7f80_0000),
            sign_bit: constant(0x8000_0000),
            abs_mask: constant(0x7fff_ffff),
            zero: constant(0),
            zero16: constant(0),
            exp8: constant(0xff),
            frac7: constant(0x7f),
            hidden9: constant(0x100),
            last: constant(SIGMOID_SEGMENTS as u64 - 1),
            k1: constant(1),
            k7: constant(7),
            k15: constant(15),
            // (x + 16) x 8 reaches 1 at exponent field 124 (1/8); it is below 32 x 8 = 256 up
            // to field 131, and 132 is 32 (the clamp).
            e_eighth: constant(124),
            e_top: constant(132),
        }
    }
}

impl Logic for SwigluLane {
    #[hdl_gen]
    fn update(&mut self) {
        self.s1_valid.clock.next = self.clock.val();
        self.s1_valid.reset.next = self.reset.val();
        self.s1_sub.clock.next = self.clock.val();
        self.s1_sub.reset.next = self.reset.val();
        self.s1_x.clock.next = self.clock.val();
        self.s1_x.reset.next = self.reset.val();
        self.s1_up.clock.next = self.clock.val();
        self.s1_up.reset.next = self.reset.val();
        self.s1_w.clock.next = self.clock.val();
        self.s1_w.reset.next = self.reset.val();
        self.s1_lo.clock.next = self.clock.val();
        self.s1_lo.reset.next = self.reset.val();
        self.s1_hi.clock.next = self.clock.val();
        self.s1_hi.reset.next = self.reset.val();
        self.s1_inv.clock.next = self.clock.val();
        self.s1_inv.reset.next = self.reset.val();
        self.s2_valid.clock.next = self.clock.val();
        self.s2_valid.reset.next = self.reset.val();
        self.s2_d.clock.next = self.clock.val();
        self.s2_d.reset.next = self.reset.val();
        self.s2_x.clock.next = self.clock.val();
        self.s2_x.reset.next = self.reset.val();
        self.s2_y.clock.next = self.clock.val();
        self.s2_y.reset.next = self.reset.val();
        self.s2_slope.clock.next = self.clock.val();
        self.s2_slope.reset.next = self.reset.val();
        self.s2_up.clock.next = self.clock.val();
        self.s2_up.reset.next = self.reset.val();
        self.s2_w.clock.next = self.clock.val();
        self.s2_w.reset.next = self.reset.val();
        self.s2_lo.clock.next = self.clock.val();
        self.s2_lo.reset.next = self.reset.val();
        self.s2_hi.clock.next = self.clock.val();
        self.s2_hi.reset.next = self.reset.val();
        self.s2_inv.clock.next = self.clock.val();
        self.s2_inv.reset.next = self.reset.val();
        self.s3_valid.clock.next = self.clock.val();
        self.s3_valid.reset.next = self.reset.val();
        self.s3_p.clock.next = self.clock.val();
        self.s3_p.reset.next = self.reset.val();
        self.s3_x.clock.next = self.clock.val();
        self.s3_x.reset.next = self.reset.val();
        self.s3_y.clock.next = self.clock.val();
        self.s3_y.reset.next = self.reset.val();
        self.s3_up.clock.next = self.clock.val();
        self.s3_up.reset.next = self.reset.val();
        self.s3_w.clock.next = self.clock.val();
        self.s3_w.reset.next = self.reset.val();
        self.s3_lo.clock.next = self.clock.val();
        self.s3_lo.reset.next = self.reset.val();
        self.s3_hi.clock.next = self.clock.val();
        self.s3_hi.reset.next = self.reset.val();
        self.s3_inv.clock.next = self.clock.val();
        self.s3_inv.reset.next = self.reset.val();
        self.s4_valid.clock.next = self.clock.val();
        self.s4_valid.reset.next = self.reset.val();
        self.s4_s.clock.next = self.clock.val();
        self.s4_s.reset.next = self.reset.val();
        self.s4_x.clock.next = self.clock.val();
        self.s4_x.reset.next = self.reset.val();
        self.s4_up.clock.next = self.clock.val();
        self.s4_up.reset.next = self.reset.val();
        self.s4_w.clock.next = self.clock.val();
        self.s4_w.reset.next = self.reset.val();
        self.s4_lo.clock.next = self.clock.val();
        self.s4_lo.reset.next = self.reset.val();
        self.s4_hi.clock.next = self.clock.val();
        self.s4_hi.reset.next = self.reset.val();
        self.s4_inv.clock.next = self.clock.val();
        self.s4_inv.reset.next = self.reset.val();
        self.s5_valid.clock.next = self.clock.val();
        self.s5_valid.reset.next = self.reset.val();
        self.s5_silu.clock.next = self.clock.val();
        self.s5_silu.reset.next = self.reset.val();
        self.s5_up.clock.next = self.clock.val();
        self.s5_up.reset.next = self.reset.val();
        self.s5_w.clock.next = self.clock.val();
        self.s5_w.reset.next = self.reset.val();
        self.s5_inv.clock.next = self.clock.val();
        self.s5_inv.reset.next = self.reset.val();
        self.s6_valid.clock.next = self.clock.val();
        self.s6_valid.reset.next = self.reset.val();
        self.s6_h.clock.next = self.clock.val();
        self.s6_h.reset.next = self.reset.val();
        self.s6_w.clock.next = self.clock.val();
        self.s6_w.reset.next = self.reset.val();
        self.s6_inv.clock.next = self.clock.val();
        self.s6_inv.reset.next = self.reset.val();
        self.s7_valid.clock.next = self.clock.val();
        self.s7_valid.reset.next = self.reset.val();
        self.s7_h.clock.next = self.clock.val();
        self.s7_h.reset.next = self.reset.val();
        self.s7_a.clock.next = self.clock.val();
        self.s7_a.reset.next = self.reset.val();
        self.s7_inv.clock.next = self.clock.val();
        self.s7_inv.reset.next = self.reset.val();
        // S0: x + 16; the range checks; the operands' classes.
        self.add16.a.next = self.gate.val();
        self.add16.b.next = self.sixteen.val();
        self.s1_valid.d.next = self.in_valid.val();
        self.s1_sub.d.next = self.add16.sum.val();
        self.s1_x.d.next = self.gate.val();
        self.s1_up.d.next = self.up.val();
        self.s1_w.d.next = self.weight.val();
        self.s1_lo.d.next = ((self.gate.val() & self.sign_bit.val()) != self.zero.val())
            && ((self.gate.val() & self.abs_mask.val()) > self.sixteen.val());
        self.s1_hi.d.next =
            ((self.gate.val() & self.sign_bit.val()) == self.zero.val()) && (self.gate.val() >= self.sixteen.val());
        self.s1_inv.d.next = ((self.gate.val() & self.exp_mask.val()) == self.exp_mask.val())
            || ((self.up.val() & self.exp_mask.val()) == self.exp_mask.val())
            || ((self.weight.val() & self.exp_mask.val()) == self.exp_mask.val());
        // S1: i = floor((x + 16) x 8): the top nine significand bits shifted down by
        // 132 - exponent (0 below 1/8), clamped to 255; the ROMs; x - x_i.
        self.sub_lo.next = self.s1_sub.q.val().get_bits::<16>(0);
        self.sub_hi.next = self.s1_sub.q.val().get_bits::<16>(16);
        self.sub_exp.next = (self.sub_hi.val() >> self.k7.val()) & self.exp8.val();
        self.top9.next = (self.hidden9.val() | ((self.sub_hi.val() & self.frac7.val()) << self.k1.val()))
            | (self.sub_lo.val() >> self.k15.val());
        self.index.next = self.zero16.val();
        if self.sub_exp.val() >= self.e_eighth.val() {
            self.index.next = self.top9.val();
            if self.sub_exp.val() < self.e_top.val() {
                self.index.next = self.top9.val() >> (self.e_top.val() - self.sub_exp.val());
            }
        }
        if self.index.val() > self.last.val() {
            self.index.next = self.last.val();
        }
        // (The clamp reads every bit of the index; the ROMs take its low 8.)
        self.address.next = self.index.val().get_bits::<8>(0);
        self.rom_y.address.next = self.address.val();
        self.rom_slope.address.next = self.address.val();
        self.rom_neg_x.address.next = self.address.val();
        self.add_d.a.next = self.s1_x.q.val();
        self.add_d.b.next = self.rom_neg_x.data.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_d.d.next = self.add_d.sum.val();
        self.s2_x.d.next = self.s1_x.q.val();
        self.s2_y.d.next = self.rom_y.data.val();
        self.s2_slope.d.next = self.rom_slope.data.val();
        self.s2_up.d.next = self.s1_up.q.val();
        self.s2_w.d.next = self.s1_w.q.val();
        self.s2_lo.d.next = self.s1_lo.q.val();
        self.s2_hi.d.next = self.s1_hi.q.val();
        self.s2_inv.d.next = self.s1_inv.q.val();
        // S2: (x - x_i) x slope_i.
        self.mul_p.a.next = self.s2_d.q.val();
        self.mul_p.b.next = self.s2_slope.q.val();
        self.s3_valid.d.next = self.s2_valid.q.val();
        self.s3_p.d.next = self.mul_p.product.val();
        self.s3_x.d.next = self.s2_x.q.val();
        self.s3_y.d.next = self.s2_y.q.val();
        self.s3_up.d.next = self.s2_up.q.val();
        self.s3_w.d.next = self.s2_w.q.val();
        self.s3_lo.d.next = self.s2_lo.q.val();
        self.s3_hi.d.next = self.s2_hi.q.val();
        self.s3_inv.d.next = self.s2_inv.q.val() || self.mul_p.invalid.val();
        // S3: the sigmoid, y_i + that.
        self.add_s.a.next = self.s3_y.q.val();
        self.add_s.b.next = self.s3_p.q.val();
        self.s4_valid.d.next = self.s3_valid.q.val();
        self.s4_s.d.next = self.add_s.sum.val();
        self.s4_x.d.next = self.s3_x.q.val();
        self.s4_up.d.next = self.s3_up.q.val();
        self.s4_w.d.next = self.s3_w.q.val();
        self.s4_lo.d.next = self.s3_lo.q.val();
        self.s4_hi.d.next = self.s3_hi.q.val();
        self.s4_inv.d.next = self.s3_inv.q.val();
        // S4: silu = x x sigmoid; 0 below the table, x at or above its end.
        self.mul_silu.a.next = self.s4_x.q.val();
        self.mul_silu.b.next = self.s4_s.q.val();
        self.s5_valid.d.next = self.s4_valid.q.val();
        self.s5_silu.d.next = self.mul_silu.product.val();
        if self.s4_lo.q.val() {
            self.s5_silu.d.next = self.zero.val();
        }
        if self.s4_hi.q.val() {
            self.s5_silu.d.next = self.s4_x.q.val();
        }
        self.s5_up.d.next = self.s4_up.q.val();
        self.s5_w.d.next = self.s4_w.q.val();
        self.s5_inv.d.next = self.s4_inv.q.val() || self.mul_silu.invalid.val();
        // S5: h = silu x up.
        self.mul_h.a.next = self.s5_silu.q.val();
        self.mul_h.b.next = self.s5_up.q.val();
        self.s6_valid.d.next = self.s5_valid.q.val();
        self.s6_h.d.next = self.mul_h.product.val();
        self.s6_w.d.next = self.s5_w.q.val();
        self.s6_inv.d.next = self.s5_inv.q.val() || self.mul_h.invalid.val();
        // S6: a = fp16(w h).
        self.operand.w.next = self.s6_w.q.val();
        self.operand.h.next = self.s6_h.q.val();
        self.s7_valid.d.next = self.s6_valid.q.val();
        self.s7_h.d.next = self.s6_h.q.val();
        self.s7_a.d.next = self.operand.a.val();
        self.s7_inv.d.next = self.s6_inv.q.val();
        self.out_valid.next = self.s7_valid.q.val();
        self.h.next = self.s7_h.q.val();
        self.a.next = self.s7_a.q.val();
        self.invalid.next = self.s7_inv.q.val();
    }
}
