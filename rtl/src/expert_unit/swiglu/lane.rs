//! `swiglu::lane`: one SwiGLU lane: per (channel, token) `h = silu(gate) x up` with the
//! hardware's piecewise-linear SiLU and the down operand `a = fp16(w h)`:
//! `lacuna_model::expert_unit::swiglu::apply`, pipelined, one element a cycle.
//!
//! ```text
//!               +------------------------------- lane --------------------------------+
//!  in_valid --->| c0  x + 16 (fp32_add, 2 registers, then its own)                      |--> out_valid
//!  gate[32] --->| c3  segment i from its bits; ROMs y_i, slope_i, -x_i                  |--> h[32]
//!  up[32] ----->| c4  x - x_i         c7  times slope_i     c10 plus y_i                 |--> a[16]
//!  weight[32] ->| c13 x times that (0 below -16, x at or above 16)                      |--> invalid
//!  reset, clock>| c16 times up = h    c19 w h (fp32_mul)    c22 to FP16 (saturating)     |
//!               |  x, up, w, the range flags and the invalid flag ride in delay lines   |
//!               +-----------------------------------------------------------------------+
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
//! How (issue 19: with one FP32 unit a stage the lane was 154 FO4 against a budget of ~80):
//! every FP operation is a pipelined unit with its result registered after it: an add is
//! [`Fp32AddPipe`] of latency 2 (align | add and count | round) and 3 cycles, a multiply
//! [`Fp32MulPipe`] (front | middle | back) and 3 cycles; the segment and its ROM words take a
//! cycle of their own, and `w h` is rounded to FP16 ([`ToFp16`], with [`OperandClass`] for
//! non-finite operands) in a last cycle. The operands a later step needs wait in
//! [`Delay`] lines whose lengths follow from the schedule's constants (`T_*`), so one change of
//! a unit's latency moves everything after it. The segment is taken from `x + 16`'s bits (its
//! exponent and top nine significand bits), 16 bits wide as everything narrower than a word here.

use crate::delay::Delay;
use crate::expert_unit::swiglu::down_operand::{OperandClass, ToFp16};
use crate::fp32_add::pipe::Fp32AddPipe;
use crate::fp32_mul::Fp32MulPipe;
use crate::reg::Reg;
use crate::rom::Rom256;
use crate::wiring::constant;
use lacuna_spec::a8w4::{sigmoid_table, SIGMOID_LO, SIGMOID_SEGMENTS};
use rust_hdl::prelude::*;

/// The adders' pipeline registers (the timing report's `lacuna_fp32_add_pipe`: three sections
/// of at most ~50 FO4).
const ADD_PIPE: usize = 2;
/// Cycles of an add: its pipeline, then the register after it.
const ADD: usize = ADD_PIPE + 1;
/// Cycles of a multiply: its pipeline, then the register after it.
const MUL: usize = crate::fp32_mul::LATENCY as usize + 1;
/// The schedule: the cycle (after the element entered) each step's operands are presented.
const T_SEG: usize = ADD; // after x + 16 (at cycle 0)
const T_D: usize = T_SEG + 1;
const T_P: usize = T_D + ADD;
const T_S: usize = T_P + MUL;
const T_SILU: usize = T_S + ADD;
const T_H: usize = T_SILU + MUL;
const T_WH: usize = T_H + MUL;
const T_A: usize = T_WH + MUL;
const T_OUT: usize = T_A + 1;
/// The cycles a multiply's result (and flag) leaves its pipeline, before its register.
const MUL_P_OUT: usize = T_P + MUL - 1;
const SILU_SELECT: usize = T_SILU + MUL - 1;
const MUL_H_OUT: usize = T_H + MUL - 1;

/// Cycles from an element in to its `h` and `a` out.
pub const LATENCY: u64 = T_OUT as u64;
const _: () = assert!(LATENCY == 23, "PORTS says 23");

/// The ports of [`SwigluLane`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "an element is presented this cycle"),
    ("gate", "the channel's gate value for the token, IEEE binary32 bits"),
    ("up", "the channel's up value for the token, IEEE binary32 bits"),
    ("weight", "the token's gate weight for the expert, IEEE binary32 bits"),
    ("out_valid", "the element presented LATENCY (23) cycles ago comes out"),
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
    add16: Fp32AddPipe,
    add_d: Fp32AddPipe,
    mul_p: Fp32MulPipe,
    add_s: Fp32AddPipe,
    mul_silu: Fp32MulPipe,
    mul_h: Fp32MulPipe,
    mul_wh: Fp32MulPipe,
    classes: OperandClass,
    to_fp16: ToFp16,
    rom_y: Rom256,
    rom_slope: Rom256,
    rom_neg_x: Rom256,
    lo: Signal<Local, Bit>,
    hi: Signal<Local, Bit>,
    inv: Signal<Local, Bit>,
    sub_lo: Signal<Local, Bits<16>>,
    sub_hi: Signal<Local, Bits<16>>,
    sub_exp: Signal<Local, Bits<16>>,
    top9: Signal<Local, Bits<16>>,
    index: Signal<Local, Bits<16>>,
    address: Signal<Local, Bits<8>>,
    /// Side band: gate, for x - x_i.
    x4: Delay<Bits<32>>,
    /// Side band: gate, for x s.
    x13: Delay<Bits<32>>,
    /// Side band: gate, for the table's upper end.
    x15: Delay<Bits<32>>,
    /// Side band: x below the table.
    lo15: Delay<Bit>,
    /// Side band: x at or above its end.
    hi15: Delay<Bit>,
    /// Side band: slope_i, for the product.
    slope7: Delay<Bits<32>>,
    /// Side band: y_i, for the sum.
    y10: Delay<Bits<32>>,
    /// Side band: up.
    up16: Delay<Bits<32>>,
    /// Side band: the weight.
    w19: Delay<Bits<32>>,
    /// Side band: the operands' flag up to mul_p's.
    inv9: Delay<Bit>,
    /// Side band: the flag up to mul_silu's.
    inv15: Delay<Bit>,
    /// Side band: the flag up to mul_h's.
    inv18: Delay<Bit>,
    /// Side band: the flag to the output.
    inv23: Delay<Bit>,
    /// Side band: the operand class's result.
    special22: Delay<Bits<16>>,
    /// Side band: h to the output.
    h23: Delay<Bits<32>>,
    /// Side band: valid to the output.
    valid23: Delay<Bit>,
    r_sub: Reg<Bits<32>>,
    r_y: Reg<Bits<32>>,
    r_slope: Reg<Bits<32>>,
    r_neg_x: Reg<Bits<32>>,
    r_d: Reg<Bits<32>>,
    r_p: Reg<Bits<32>>,
    r_s: Reg<Bits<32>>,
    r_silu: Reg<Bits<32>>,
    r_h: Reg<Bits<32>>,
    r_prod: Reg<Bits<32>>,
    r_special: Reg<Bit>,
    r_a: Reg<Bits<16>>,
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
            add16: Fp32AddPipe::new(ADD_PIPE),
            add_d: Fp32AddPipe::new(ADD_PIPE),
            mul_p: Default::default(),
            add_s: Fp32AddPipe::new(ADD_PIPE),
            mul_silu: Default::default(),
            mul_h: Default::default(),
            mul_wh: Default::default(),
            classes: Default::default(),
            to_fp16: Default::default(),
            rom_y: segment_rom(|i| table[i].0),
            rom_slope: segment_rom(|i| table[i].1),
            // -x_i, the spec's `SIGMOID_LO + i / 8` (exact in f32), negated.
            rom_neg_x: segment_rom(|i| -(SIGMOID_LO + i as f32 / 8.0)),
            lo: Default::default(),
            hi: Default::default(),
            inv: Default::default(),
            sub_lo: Default::default(),
            sub_hi: Default::default(),
            sub_exp: Default::default(),
            top9: Default::default(),
            index: Default::default(),
            address: Default::default(),
            x4: Delay::new(T_D),
            x13: Delay::new(T_SILU - T_D),
            x15: Delay::new(SILU_SELECT - T_SILU),
            lo15: Delay::new(SILU_SELECT),
            hi15: Delay::new(SILU_SELECT),
            slope7: Delay::new(T_P - T_D),
            y10: Delay::new(T_S - T_D),
            up16: Delay::new(T_H),
            w19: Delay::new(T_WH),
            inv9: Delay::new(MUL_P_OUT),
            inv15: Delay::new(SILU_SELECT - MUL_P_OUT),
            inv18: Delay::new(MUL_H_OUT - SILU_SELECT),
            inv23: Delay::new(T_OUT - MUL_H_OUT),
            special22: Delay::new(T_A - T_WH),
            h23: Delay::new(T_OUT - T_WH),
            valid23: Delay::new(T_OUT),
            r_sub: Default::default(),
            r_y: Default::default(),
            r_slope: Default::default(),
            r_neg_x: Default::default(),
            r_d: Default::default(),
            r_p: Default::default(),
            r_s: Default::default(),
            r_silu: Default::default(),
            r_h: Default::default(),
            r_prod: Default::default(),
            r_special: Default::default(),
            r_a: Default::default(),
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
        self.x4.clock.next = self.clock.val();
        self.x4.reset.next = self.reset.val();
        self.x13.clock.next = self.clock.val();
        self.x13.reset.next = self.reset.val();
        self.x15.clock.next = self.clock.val();
        self.x15.reset.next = self.reset.val();
        self.lo15.clock.next = self.clock.val();
        self.lo15.reset.next = self.reset.val();
        self.hi15.clock.next = self.clock.val();
        self.hi15.reset.next = self.reset.val();
        self.slope7.clock.next = self.clock.val();
        self.slope7.reset.next = self.reset.val();
        self.y10.clock.next = self.clock.val();
        self.y10.reset.next = self.reset.val();
        self.up16.clock.next = self.clock.val();
        self.up16.reset.next = self.reset.val();
        self.w19.clock.next = self.clock.val();
        self.w19.reset.next = self.reset.val();
        self.inv9.clock.next = self.clock.val();
        self.inv9.reset.next = self.reset.val();
        self.inv15.clock.next = self.clock.val();
        self.inv15.reset.next = self.reset.val();
        self.inv18.clock.next = self.clock.val();
        self.inv18.reset.next = self.reset.val();
        self.inv23.clock.next = self.clock.val();
        self.inv23.reset.next = self.reset.val();
        self.special22.clock.next = self.clock.val();
        self.special22.reset.next = self.reset.val();
        self.h23.clock.next = self.clock.val();
        self.h23.reset.next = self.reset.val();
        self.valid23.clock.next = self.clock.val();
        self.valid23.reset.next = self.reset.val();
        self.r_sub.clock.next = self.clock.val();
        self.r_sub.reset.next = self.reset.val();
        self.r_y.clock.next = self.clock.val();
        self.r_y.reset.next = self.reset.val();
        self.r_slope.clock.next = self.clock.val();
        self.r_slope.reset.next = self.reset.val();
        self.r_neg_x.clock.next = self.clock.val();
        self.r_neg_x.reset.next = self.reset.val();
        self.r_d.clock.next = self.clock.val();
        self.r_d.reset.next = self.reset.val();
        self.r_p.clock.next = self.clock.val();
        self.r_p.reset.next = self.reset.val();
        self.r_s.clock.next = self.clock.val();
        self.r_s.reset.next = self.reset.val();
        self.r_silu.clock.next = self.clock.val();
        self.r_silu.reset.next = self.reset.val();
        self.r_h.clock.next = self.clock.val();
        self.r_h.reset.next = self.reset.val();
        self.r_special.clock.next = self.clock.val();
        self.r_special.reset.next = self.reset.val();
        self.r_prod.clock.next = self.clock.val();
        self.r_prod.reset.next = self.reset.val();
        self.r_a.clock.next = self.clock.val();
        self.r_a.reset.next = self.reset.val();
        self.add16.clock.next = self.clock.val();
        self.add16.reset.next = self.reset.val();
        self.add_d.clock.next = self.clock.val();
        self.add_d.reset.next = self.reset.val();
        self.add_s.clock.next = self.clock.val();
        self.add_s.reset.next = self.reset.val();
        self.mul_p.clock.next = self.clock.val();
        self.mul_p.reset.next = self.reset.val();
        self.mul_silu.clock.next = self.clock.val();
        self.mul_silu.reset.next = self.reset.val();
        self.mul_h.clock.next = self.clock.val();
        self.mul_h.reset.next = self.reset.val();
        self.mul_wh.clock.next = self.clock.val();
        self.mul_wh.reset.next = self.reset.val();
        // Cycle 0: x + 16; the range checks and the operands' classes, into delay lines.
        self.add16.a.next = self.gate.val();
        self.add16.b.next = self.sixteen.val();
        self.lo.next = ((self.gate.val() & self.sign_bit.val()) != self.zero.val())
            && ((self.gate.val() & self.abs_mask.val()) > self.sixteen.val());
        self.hi.next =
            ((self.gate.val() & self.sign_bit.val()) == self.zero.val()) && (self.gate.val() >= self.sixteen.val());
        self.inv.next = ((self.gate.val() & self.exp_mask.val()) == self.exp_mask.val())
            || ((self.up.val() & self.exp_mask.val()) == self.exp_mask.val())
            || ((self.weight.val() & self.exp_mask.val()) == self.exp_mask.val());
        self.valid23.d.next = self.in_valid.val();
        self.x4.d.next = self.gate.val();
        self.lo15.d.next = self.lo.val();
        self.hi15.d.next = self.hi.val();
        self.up16.d.next = self.up.val();
        self.w19.d.next = self.weight.val();
        self.inv9.d.next = self.inv.val();
        self.r_sub.d.next = self.add16.sum.val();
        // T_SEG: i = floor((x + 16) x 8): the top nine significand bits shifted down by
        // 132 - exponent (0 below 1/8), clamped to 255; the ROMs.
        self.sub_lo.next = self.r_sub.q.val().get_bits::<16>(0);
        self.sub_hi.next = self.r_sub.q.val().get_bits::<16>(16);
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
        self.r_y.d.next = self.rom_y.data.val();
        self.r_slope.d.next = self.rom_slope.data.val();
        self.r_neg_x.d.next = self.rom_neg_x.data.val();
        // T_D: x - x_i.
        self.add_d.a.next = self.x4.q.val();
        self.add_d.b.next = self.r_neg_x.q.val();
        self.r_d.d.next = self.add_d.sum.val();
        self.x13.d.next = self.x4.q.val();
        self.slope7.d.next = self.r_slope.q.val();
        self.y10.d.next = self.r_y.q.val();
        // T_P: (x - x_i) x slope_i.
        self.mul_p.a.next = self.r_d.q.val();
        self.mul_p.b.next = self.slope7.q.val();
        self.r_p.d.next = self.mul_p.product.val();
        self.inv15.d.next = self.inv9.q.val() || self.mul_p.invalid.val();
        // T_S: the sigmoid, y_i + that.
        self.add_s.a.next = self.y10.q.val();
        self.add_s.b.next = self.r_p.q.val();
        self.r_s.d.next = self.add_s.sum.val();
        // T_SILU: x x sigmoid; 0 below the table, x at or above its end.
        self.mul_silu.a.next = self.x13.q.val();
        self.mul_silu.b.next = self.r_s.q.val();
        self.x15.d.next = self.x13.q.val();
        self.r_silu.d.next = self.mul_silu.product.val();
        if self.lo15.q.val() {
            self.r_silu.d.next = self.zero.val();
        }
        if self.hi15.q.val() {
            self.r_silu.d.next = self.x15.q.val();
        }
        self.inv18.d.next = self.inv15.q.val() || self.mul_silu.invalid.val();
        // T_H: h = silu x up.
        self.mul_h.a.next = self.r_silu.q.val();
        self.mul_h.b.next = self.up16.q.val();
        self.r_h.d.next = self.mul_h.product.val();
        self.inv23.d.next = self.inv18.q.val() || self.mul_h.invalid.val();
        // T_WH: w h, and its class (a non-finite operand decides the result).
        self.mul_wh.a.next = self.w19.q.val();
        self.mul_wh.b.next = self.r_h.q.val();
        self.classes.w.next = self.w19.q.val();
        self.classes.h.next = self.r_h.q.val();
        self.special22.d.next = self.classes.special.val();
        self.h23.d.next = self.r_h.q.val();
        self.r_prod.d.next = self.mul_wh.product.val();
        self.r_special.d.next = self.mul_wh.invalid.val();
        // T_A: a = fp16(w h), saturating.
        self.to_fp16.product.next = self.r_prod.q.val();
        self.to_fp16.special.next = self.special22.q.val();
        self.to_fp16.is_special.next = self.r_special.q.val();
        self.r_a.d.next = self.to_fp16.a.val();
        self.out_valid.next = self.valid23.q.val();
        self.h.next = self.h23.q.val();
        self.a.next = self.r_a.q.val();
        self.invalid.next = self.inv23.q.val();
    }
}
