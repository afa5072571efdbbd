//! `dot_unit`: one unit of the dot engine: two rows (a token's gate and up rows of one channel)
//! group by group into their FP32 values: rule 1 of `lacuna_spec::a8w4` (`row_dot`), pipelined.
//!
//! ```text
//!                 +----------------------------------- dot_unit -----------------------------------+
//!  in_valid ----->| S1-S2 group_dot   S3 group_scale   S4 group_scale   S5 fp32_add   S6 round, |--> out_valid
//!  slot --------->|  (the exact        front (|sum| x   back (normalize,  align + sum   into the  |--> value[32]
//!  first, last -->|   INT16 sum)        significand)     round)           (acc[slot])   slot's acc |--> invalid
//!  x[8], w[8] --->|                                                                              |
//!  scale[16] ---->|  S7-S9: after a row's last group, its value x token_scale (fp32_mul, 3 thirds)  |
//!  token_scale -->|  (slot, first, last and the scales ride beside the stages)                      |
//!                 +-----------------------------------------------------------------------------------+
//! ```
//!
//! Contract: a row is its groups presented in order (`in_valid`) in one of two accumulator
//! slots (`slot`), the first with `first`, the last with `last` (a one-group row has both) and
//! the token's scale. Two groups of one slot are at least two cycles apart (the accumulation
//! loop: [`SLOT_SPACING`]); the two slots' rows interleave freely, so a token's gate and up rows
//! presented alternately (gate g, up g, gate g + 1, ...) keep the unit busy every cycle. Gaps are
//! allowed, and a slot's next row may start [`SLOT_SPACING`] cycles after its previous row's
//! last group. A row's value comes out [`LATENCY`] cycles after its last group went in
//! (`out_valid`, `value`): the FP32 bit pattern of `row_dot(x, w)`, i.e. `acc = 0;
//! acc += f32(sum_g) * f32(scale_g)` in group order, then `acc * s_x`, every operation rounded as
//! f32 rounds it. `invalid`: a scale of the row was Inf or NaN, or the token scale was; `value`
//! is then unspecified. Nothing checks the spacing: the engine's sequencer keeps it.
//!
//! How (issue 19: one FP32 adder in a one-cycle loop made this block 183 FO4 against a budget
//! of ~80): [`GroupDot`] for the exact sums; [`GroupScaleFront`] and [`GroupScaleBack`] in a
//! stage each; the accumulation on the steps of [`crate::fp32_add`] with a register between the
//! addition and the leading-zero count ([`Align`] and [`Sum`] in S5; [`Lzc`] and [`Round`] in
//! the whole unit's worst path 71.4 FO4, where the adder's own cut, after the count, left 84 in S5), so that a
//! slot's sum is back in its accumulator register two cycles after its group entered S5; the first group of a row is written as it is (`+0 + x` is `x`, except
//! `-0`, which becomes `+0`: the golden's `0f32 +`), so no zero operand is selected inside the
//! loop. A row's final value is captured beside its accumulator and multiplied by the token
//! scale on [`Fp32MulPipe`] (S7-S8) into the output register (S9).

use crate::expert_unit::dot_engine::group_dot::{GroupDot, WORDS};
use crate::expert_unit::dot_engine::group_scale::{GroupScaleBack, GroupScaleFront};
use crate::fp32_add::{align::Align, lzc::Lzc, round::Round, sum::Sum};
use crate::fp32_mul::Fp32MulPipe;
use crate::reg::Reg;
use crate::wiring::{constant, many};
use rust_hdl::prelude::*;

/// Cycles from a row's last group in to its value out: group_dot, the two halves of the
/// scaling, the two of the addition, the multiplier's two registers and the output register.
pub const LATENCY: u64 = crate::expert_unit::dot_engine::group_dot::LATENCY + 4 + crate::fp32_mul::LATENCY + 1;

/// The fewest cycles between two groups of one slot (the accumulation loop: S5 and S6).
pub const SLOT_SPACING: u64 = 2;
const _: () = assert!(LATENCY == 9 && SLOT_SPACING == 2, "PORTS says 9 and 2");

/// The ports of [`DotUnit`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "a group of a row is presented this cycle"),
    ("slot", "the row's accumulator slot (0 or 1); a slot's groups are at least SLOT_SPACING (2) cycles apart"),
    ("first", "it is the row's first group (the accumulator starts from +0)"),
    ("last", "it is the row's last group (its value follows LATENCY (9) cycles later)"),
    ("x", "x_k: activations 4k..4k+3 of the group, INT8, lane 4k+b in bits 8b+7..8b"),
    ("w", "w_k: weights 4k..4k+3 of the group, INT4, lane 4k+b in bits 4b+3..4b"),
    ("scale", "the group's scale, IEEE binary16 bits"),
    ("token_scale", "the token's activation scale (read with the last group), IEEE binary32 bits"),
    ("out_valid", "a row's value comes out"),
    ("value", "the row's value: sum of the scaled group sums times the token scale, IEEE binary32 bits"),
    ("invalid", "a scale of that row or its token scale was Inf or NaN; value is then unspecified"),
];

/// The dot engine's unit: two rows in flight, one group a cycle.
#[derive(LogicBlock)]
pub struct DotUnit {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A group is presented.
    pub in_valid: Signal<In, Bit>,
    /// The row's accumulator slot.
    pub slot: Signal<In, Bit>,
    /// The row's first group.
    pub first: Signal<In, Bit>,
    /// The row's last group.
    pub last: Signal<In, Bit>,
    /// Activations, four a word.
    pub x: Vec<Signal<In, Bits<32>>>,
    /// Weights, four a halfword.
    pub w: Vec<Signal<In, Bits<16>>>,
    /// The group's scale (FP16 bits).
    pub scale: Signal<In, Bits<16>>,
    /// The token's scale (FP32 bits).
    pub token_scale: Signal<In, Bits<32>>,
    /// A row's value comes out.
    pub out_valid: Signal<Out, Bit>,
    /// The value (FP32 bits).
    pub value: Signal<Out, Bits<32>>,
    /// A scale of the row was not finite.
    pub invalid: Signal<Out, Bit>,
    dot: GroupDot,
    scale_front: GroupScaleFront,
    scale_back: GroupScaleBack,
    align: Align,
    add: Sum,
    lzc: Lzc,
    round: Round,
    mul: Fp32MulPipe,
    // The S5 operand from the issuing slot's accumulator; the S6 result written back.
    operand: Signal<Local, Bits<32>>,
    result: Signal<Local, Bits<32>>,
    result_inv: Signal<Local, Bit>,
    // Stage registers: m1/m2 beside group_dot, then s3..s5, the accumulators, the final value,
    // the multiplier's valid and flag beside its registers, the output.
    m1_first: Reg<Bit>,
    m1_last: Reg<Bit>,
    m1_slot: Reg<Bit>,
    m1_scale: Reg<Bits<16>>,
    m1_token: Reg<Bits<32>>,
    m2_first: Reg<Bit>,
    m2_last: Reg<Bit>,
    m2_slot: Reg<Bit>,
    m2_scale: Reg<Bits<16>>,
    m2_token: Reg<Bits<32>>,
    s3_valid: Reg<Bit>,
    s3_first: Reg<Bit>,
    s3_last: Reg<Bit>,
    s3_slot: Reg<Bit>,
    s3_token: Reg<Bits<32>>,
    s3_exact: Reg<Bits<32>>,
    s3_info: Reg<Bits<32>>,
    s4_valid: Reg<Bit>,
    s4_first: Reg<Bit>,
    s4_last: Reg<Bit>,
    s4_slot: Reg<Bit>,
    s4_token: Reg<Bits<32>>,
    s4_x: Reg<Bits<32>>,
    s4_inv: Reg<Bit>,
    s5_valid: Reg<Bit>,
    s5_first: Reg<Bit>,
    s5_last: Reg<Bit>,
    s5_slot: Reg<Bit>,
    s5_token: Reg<Bits<32>>,
    s5_x: Reg<Bits<32>>,
    s5_inv: Reg<Bit>,
    s5_s1: Reg<Bits<32>>,
    s5_e1: Reg<Bits<32>>,
    s5_zero: Reg<Bits<32>>,
    s5_sign: Reg<Bits<32>>,
    acc0: Reg<Bits<32>>,
    acc1: Reg<Bits<32>>,
    acc0_inv: Reg<Bit>,
    acc1_inv: Reg<Bit>,
    fin_valid: Reg<Bit>,
    fin_value: Reg<Bits<32>>,
    fin_token: Reg<Bits<32>>,
    fin_inv: Reg<Bit>,
    p1_valid: Reg<Bit>,
    p1_inv: Reg<Bit>,
    p2_valid: Reg<Bit>,
    p2_inv: Reg<Bit>,
    out_r: Reg<Bits<32>>,
    out_valid_r: Reg<Bit>,
    out_inv_r: Reg<Bit>,
    zero: Constant<Bits<32>>,
    sign_bit: Constant<Bits<32>>,
}

impl Default for DotUnit {
    fn default() -> DotUnit {
        DotUnit {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            slot: Default::default(),
            first: Default::default(),
            last: Default::default(),
            x: many(WORDS),
            w: many(WORDS),
            scale: Default::default(),
            token_scale: Default::default(),
            out_valid: Default::default(),
            value: Default::default(),
            invalid: Default::default(),
            dot: Default::default(),
            scale_front: Default::default(),
            scale_back: Default::default(),
            align: Default::default(),
            add: Default::default(),
            lzc: Default::default(),
            round: Default::default(),
            mul: Default::default(),
            operand: Default::default(),
            result: Default::default(),
            result_inv: Default::default(),
            m1_first: Default::default(),
            m1_last: Default::default(),
            m1_slot: Default::default(),
            m1_scale: Default::default(),
            m1_token: Default::default(),
            m2_first: Default::default(),
            m2_last: Default::default(),
            m2_slot: Default::default(),
            m2_scale: Default::default(),
            m2_token: Default::default(),
            s3_valid: Default::default(),
            s3_first: Default::default(),
            s3_last: Default::default(),
            s3_slot: Default::default(),
            s3_token: Default::default(),
            s3_exact: Default::default(),
            s3_info: Default::default(),
            s4_valid: Default::default(),
            s4_first: Default::default(),
            s4_last: Default::default(),
            s4_slot: Default::default(),
            s4_token: Default::default(),
            s4_x: Default::default(),
            s4_inv: Default::default(),
            s5_valid: Default::default(),
            s5_first: Default::default(),
            s5_last: Default::default(),
            s5_slot: Default::default(),
            s5_token: Default::default(),
            s5_x: Default::default(),
            s5_inv: Default::default(),
            s5_s1: Default::default(),
            s5_e1: Default::default(),
            s5_zero: Default::default(),
            s5_sign: Default::default(),
            acc0: Default::default(),
            acc1: Default::default(),
            acc0_inv: Default::default(),
            acc1_inv: Default::default(),
            fin_valid: Default::default(),
            fin_value: Default::default(),
            fin_token: Default::default(),
            fin_inv: Default::default(),
            p1_valid: Default::default(),
            p1_inv: Default::default(),
            p2_valid: Default::default(),
            p2_inv: Default::default(),
            out_r: Default::default(),
            out_valid_r: Default::default(),
            out_inv_r: Default::default(),
            zero: constant(0),
            sign_bit: constant(0x8000_0000),
        }
    }
}

impl Logic for DotUnit {
    #[hdl_gen]
    fn update(&mut self) {
        self.dot.clock.next = self.clock.val();
        self.dot.reset.next = self.reset.val();
        self.mul.clock.next = self.clock.val();
        self.mul.reset.next = self.reset.val();
        // Every register holds unless assigned below.
        self.m1_first.clock.next = self.clock.val();
        self.m1_first.reset.next = self.reset.val();
        self.m1_first.d.next = self.m1_first.q.val();
        self.m1_last.clock.next = self.clock.val();
        self.m1_last.reset.next = self.reset.val();
        self.m1_last.d.next = self.m1_last.q.val();
        self.m1_slot.clock.next = self.clock.val();
        self.m1_slot.reset.next = self.reset.val();
        self.m1_slot.d.next = self.m1_slot.q.val();
        self.m1_scale.clock.next = self.clock.val();
        self.m1_scale.reset.next = self.reset.val();
        self.m1_scale.d.next = self.m1_scale.q.val();
        self.m1_token.clock.next = self.clock.val();
        self.m1_token.reset.next = self.reset.val();
        self.m1_token.d.next = self.m1_token.q.val();
        self.m2_first.clock.next = self.clock.val();
        self.m2_first.reset.next = self.reset.val();
        self.m2_first.d.next = self.m2_first.q.val();
        self.m2_last.clock.next = self.clock.val();
        self.m2_last.reset.next = self.reset.val();
        self.m2_last.d.next = self.m2_last.q.val();
        self.m2_slot.clock.next = self.clock.val();
        self.m2_slot.reset.next = self.reset.val();
        self.m2_slot.d.next = self.m2_slot.q.val();
        self.m2_scale.clock.next = self.clock.val();
        self.m2_scale.reset.next = self.reset.val();
        self.m2_scale.d.next = self.m2_scale.q.val();
        self.m2_token.clock.next = self.clock.val();
        self.m2_token.reset.next = self.reset.val();
        self.m2_token.d.next = self.m2_token.q.val();
        self.s3_valid.clock.next = self.clock.val();
        self.s3_valid.reset.next = self.reset.val();
        self.s3_valid.d.next = self.s3_valid.q.val();
        self.s3_first.clock.next = self.clock.val();
        self.s3_first.reset.next = self.reset.val();
        self.s3_first.d.next = self.s3_first.q.val();
        self.s3_last.clock.next = self.clock.val();
        self.s3_last.reset.next = self.reset.val();
        self.s3_last.d.next = self.s3_last.q.val();
        self.s3_slot.clock.next = self.clock.val();
        self.s3_slot.reset.next = self.reset.val();
        self.s3_slot.d.next = self.s3_slot.q.val();
        self.s3_token.clock.next = self.clock.val();
        self.s3_token.reset.next = self.reset.val();
        self.s3_token.d.next = self.s3_token.q.val();
        self.s3_exact.clock.next = self.clock.val();
        self.s3_exact.reset.next = self.reset.val();
        self.s3_exact.d.next = self.s3_exact.q.val();
        self.s3_info.clock.next = self.clock.val();
        self.s3_info.reset.next = self.reset.val();
        self.s3_info.d.next = self.s3_info.q.val();
        self.s4_valid.clock.next = self.clock.val();
        self.s4_valid.reset.next = self.reset.val();
        self.s4_valid.d.next = self.s4_valid.q.val();
        self.s4_first.clock.next = self.clock.val();
        self.s4_first.reset.next = self.reset.val();
        self.s4_first.d.next = self.s4_first.q.val();
        self.s4_last.clock.next = self.clock.val();
        self.s4_last.reset.next = self.reset.val();
        self.s4_last.d.next = self.s4_last.q.val();
        self.s4_slot.clock.next = self.clock.val();
        self.s4_slot.reset.next = self.reset.val();
        self.s4_slot.d.next = self.s4_slot.q.val();
        self.s4_token.clock.next = self.clock.val();
        self.s4_token.reset.next = self.reset.val();
        self.s4_token.d.next = self.s4_token.q.val();
        self.s4_x.clock.next = self.clock.val();
        self.s4_x.reset.next = self.reset.val();
        self.s4_x.d.next = self.s4_x.q.val();
        self.s4_inv.clock.next = self.clock.val();
        self.s4_inv.reset.next = self.reset.val();
        self.s4_inv.d.next = self.s4_inv.q.val();
        self.s5_valid.clock.next = self.clock.val();
        self.s5_valid.reset.next = self.reset.val();
        self.s5_valid.d.next = self.s5_valid.q.val();
        self.s5_first.clock.next = self.clock.val();
        self.s5_first.reset.next = self.reset.val();
        self.s5_first.d.next = self.s5_first.q.val();
        self.s5_last.clock.next = self.clock.val();
        self.s5_last.reset.next = self.reset.val();
        self.s5_last.d.next = self.s5_last.q.val();
        self.s5_slot.clock.next = self.clock.val();
        self.s5_slot.reset.next = self.reset.val();
        self.s5_slot.d.next = self.s5_slot.q.val();
        self.s5_token.clock.next = self.clock.val();
        self.s5_token.reset.next = self.reset.val();
        self.s5_token.d.next = self.s5_token.q.val();
        self.s5_x.clock.next = self.clock.val();
        self.s5_x.reset.next = self.reset.val();
        self.s5_x.d.next = self.s5_x.q.val();
        self.s5_inv.clock.next = self.clock.val();
        self.s5_inv.reset.next = self.reset.val();
        self.s5_inv.d.next = self.s5_inv.q.val();
        self.s5_s1.clock.next = self.clock.val();
        self.s5_s1.reset.next = self.reset.val();
        self.s5_s1.d.next = self.s5_s1.q.val();
        self.s5_e1.clock.next = self.clock.val();
        self.s5_e1.reset.next = self.reset.val();
        self.s5_e1.d.next = self.s5_e1.q.val();
        self.s5_zero.clock.next = self.clock.val();
        self.s5_zero.reset.next = self.reset.val();
        self.s5_zero.d.next = self.s5_zero.q.val();
        self.s5_sign.clock.next = self.clock.val();
        self.s5_sign.reset.next = self.reset.val();
        self.s5_sign.d.next = self.s5_sign.q.val();
        self.acc0.clock.next = self.clock.val();
        self.acc0.reset.next = self.reset.val();
        self.acc0.d.next = self.acc0.q.val();
        self.acc1.clock.next = self.clock.val();
        self.acc1.reset.next = self.reset.val();
        self.acc1.d.next = self.acc1.q.val();
        self.acc0_inv.clock.next = self.clock.val();
        self.acc0_inv.reset.next = self.reset.val();
        self.acc0_inv.d.next = self.acc0_inv.q.val();
        self.acc1_inv.clock.next = self.clock.val();
        self.acc1_inv.reset.next = self.reset.val();
        self.acc1_inv.d.next = self.acc1_inv.q.val();
        self.fin_valid.clock.next = self.clock.val();
        self.fin_valid.reset.next = self.reset.val();
        self.fin_valid.d.next = self.fin_valid.q.val();
        self.fin_value.clock.next = self.clock.val();
        self.fin_value.reset.next = self.reset.val();
        self.fin_value.d.next = self.fin_value.q.val();
        self.fin_token.clock.next = self.clock.val();
        self.fin_token.reset.next = self.reset.val();
        self.fin_token.d.next = self.fin_token.q.val();
        self.fin_inv.clock.next = self.clock.val();
        self.fin_inv.reset.next = self.reset.val();
        self.fin_inv.d.next = self.fin_inv.q.val();
        self.p1_valid.clock.next = self.clock.val();
        self.p1_valid.reset.next = self.reset.val();
        self.p1_valid.d.next = self.p1_valid.q.val();
        self.p1_inv.clock.next = self.clock.val();
        self.p1_inv.reset.next = self.reset.val();
        self.p1_inv.d.next = self.p1_inv.q.val();
        self.p2_valid.clock.next = self.clock.val();
        self.p2_valid.reset.next = self.reset.val();
        self.p2_valid.d.next = self.p2_valid.q.val();
        self.p2_inv.clock.next = self.clock.val();
        self.p2_inv.reset.next = self.reset.val();
        self.p2_inv.d.next = self.p2_inv.q.val();
        self.out_r.clock.next = self.clock.val();
        self.out_r.reset.next = self.reset.val();
        self.out_r.d.next = self.out_r.q.val();
        self.out_valid_r.clock.next = self.clock.val();
        self.out_valid_r.reset.next = self.reset.val();
        self.out_valid_r.d.next = self.out_valid_r.q.val();
        self.out_inv_r.clock.next = self.clock.val();
        self.out_inv_r.reset.next = self.reset.val();
        self.out_inv_r.d.next = self.out_inv_r.q.val();
        // S1 and S2: group_dot, with the group's metadata beside it.
        self.dot.in_valid.next = self.in_valid.val();
        for k in 0..self.x.len() {
            self.dot.x[k].next = self.x[k].val();
            self.dot.w[k].next = self.w[k].val();
        }
        self.m1_first.d.next = self.first.val();
        self.m1_last.d.next = self.last.val();
        self.m1_slot.d.next = self.slot.val();
        self.m1_scale.d.next = self.scale.val();
        self.m1_token.d.next = self.token_scale.val();
        self.m2_first.d.next = self.m1_first.q.val();
        self.m2_last.d.next = self.m1_last.q.val();
        self.m2_slot.d.next = self.m1_slot.q.val();
        self.m2_scale.d.next = self.m1_scale.q.val();
        self.m2_token.d.next = self.m1_token.q.val();
        // S3: the scaling's front half.
        self.scale_front.sum.next = self.dot.sum.val();
        self.scale_front.scale.next = self.m2_scale.q.val();
        self.s3_valid.d.next = self.dot.out_valid.val();
        self.s3_first.d.next = self.m2_first.q.val();
        self.s3_last.d.next = self.m2_last.q.val();
        self.s3_slot.d.next = self.m2_slot.q.val();
        self.s3_token.d.next = self.m2_token.q.val();
        self.s3_exact.d.next = self.scale_front.exact.val();
        self.s3_info.d.next = self.scale_front.info.val();
        // S4: its back half: the scaled group sum.
        self.scale_back.exact.next = self.s3_exact.q.val();
        self.scale_back.info.next = self.s3_info.q.val();
        self.s4_valid.d.next = self.s3_valid.q.val();
        self.s4_first.d.next = self.s3_first.q.val();
        self.s4_last.d.next = self.s3_last.q.val();
        self.s4_slot.d.next = self.s3_slot.q.val();
        self.s4_token.d.next = self.s3_token.q.val();
        self.s4_x.d.next = self.scale_back.product.val();
        self.s4_inv.d.next = self.scale_back.invalid.val();
        // S5: the slot's accumulator plus the scaled sum, aligned and added.
        self.operand.next = self.acc0.q.val();
        if self.s4_slot.q.val() {
            self.operand.next = self.acc1.q.val();
        }
        self.align.a.next = self.operand.val();
        self.align.b.next = self.s4_x.q.val();
        self.add.wide_x.next = self.align.wide_x.val();
        self.add.aligned_y.next = self.align.aligned_y.val();
        self.add.exp_x.next = self.align.exp_x.val();
        self.add.sign_x.next = self.align.sign_x.val();
        self.add.sign_y.next = self.align.sign_y.val();
        self.s5_s1.d.next = self.add.s1.val();
        self.s5_e1.d.next = self.add.e1.val();
        self.s5_zero.d.next = self.add.zero.val();
        self.s5_sign.d.next = self.add.sign.val();
        self.s5_valid.d.next = self.s4_valid.q.val();
        self.s5_first.d.next = self.s4_first.q.val();
        self.s5_last.d.next = self.s4_last.q.val();
        self.s5_slot.d.next = self.s4_slot.q.val();
        self.s5_token.d.next = self.s4_token.q.val();
        self.s5_x.d.next = self.s4_x.q.val();
        self.s5_inv.d.next = self.s4_inv.q.val();
        // S6: the leading zeros counted, normalized and rounded, written back; a row's first
        // group is written as it is (+0 + x = x, and +0 + -0 = +0).
        self.lzc.s1.next = self.s5_s1.q.val();
        self.round.s1.next = self.s5_s1.q.val();
        self.round.e1.next = self.s5_e1.q.val();
        self.round.lz.next = self.lzc.lz.val();
        self.round.zero.next = self.s5_zero.q.val();
        self.round.sign.next = self.s5_sign.q.val();
        self.result.next = self.round.sum.val();
        self.result_inv.next = self.s5_inv.q.val();
        if self.s5_first.q.val() {
            self.result.next = self.s5_x.q.val();
            if self.s5_x.q.val() == self.sign_bit.val() {
                self.result.next = self.zero.val();
            }
        } else if self.s5_slot.q.val() {
            self.result_inv.next = self.s5_inv.q.val() || self.acc1_inv.q.val();
        } else {
            self.result_inv.next = self.s5_inv.q.val() || self.acc0_inv.q.val();
        }
        self.fin_valid.d.next = false;
        if self.s5_valid.q.val() {
            if self.s5_slot.q.val() {
                self.acc1.d.next = self.result.val();
                self.acc1_inv.d.next = self.result_inv.val();
            } else {
                self.acc0.d.next = self.result.val();
                self.acc0_inv.d.next = self.result_inv.val();
            }
            self.fin_valid.d.next = self.s5_last.q.val();
            self.fin_value.d.next = self.result.val();
            self.fin_inv.d.next = self.result_inv.val();
            self.fin_token.d.next = self.s5_token.q.val();
        }
        // S7 to S9: the row's value times the token scale, into the output register.
        self.mul.a.next = self.fin_value.q.val();
        self.mul.b.next = self.fin_token.q.val();
        self.p1_valid.d.next = self.fin_valid.q.val();
        self.p1_inv.d.next = self.fin_inv.q.val();
        self.p2_valid.d.next = self.p1_valid.q.val();
        self.p2_inv.d.next = self.p1_inv.q.val();
        self.out_valid_r.d.next = self.p2_valid.q.val();
        if self.p2_valid.q.val() {
            self.out_r.d.next = self.mul.product.val();
            // The multiplier flags a non-finite token scale (the accumulator of finite scaled
            // sums stays finite: at most 32,512 x 65,504 a group).
            self.out_inv_r.d.next = self.p2_inv.q.val() || self.mul.invalid.val();
        }
        self.out_valid.next = self.out_valid_r.q.val();
        self.value.next = self.out_r.q.val();
        self.invalid.next = self.out_inv_r.q.val();
    }
}
