//! `dot_unit`: one unit of the dot engine: a gate or up row of one token, group by group, into
//! its FP32 value: rule 1 of `lacuna_spec::a8w4` (`row_dot`), pipelined.
//!
//! ```text
//!                   +------------------------------ dot_unit ------------------------------+
//!  in_valid ------->| group_dot (2 stages) --> group_scale + fp32_add into the row's acc -->|--> out_valid
//!  first, last ---->|   (first: from +0)        (1 stage)                                   |--> value[32]
//!  x[8], w[8] ----->|                       --> after the last group: acc x token_scale   -->|--> invalid
//!  scale[16] ------>|                            (fp32_mul, 1 stage)                        |
//!  token_scale[32]->|  (first, last and the scales ride beside group_dot's stages)          |
//!                   +------------------------------------------------------------------------+
//! ```
//!
//! Contract: a row is its groups presented in order (`in_valid`), the first with `first`, the
//! last with `last` (a one-group row has both) and the token's scale; gaps between groups are
//! allowed, and a row may start the cycle after the previous one ended. The row's value comes
//! out [`LATENCY`] cycles after its last group went in (`out_valid`, `value`): the FP32 bit
//! pattern of `row_dot(x, w)`, i.e. `acc = 0; acc += f32(sum_g) * f32(scale_g)` in group order,
//! then `acc * s_x`, every operation rounded as f32 rounds it. `invalid`: a scale of the row was
//! Inf or NaN, or the token scale was; `value` is then unspecified.
//!
//! How: [`GroupDot`] for the exact sums; beside its two stages, registers carry each group's
//! `first`, `last`, FP16 scale and token scale; at its output [`GroupScale`] and the shared
//! [`Fp32Add`] add the scaled sum into the accumulator register (from +0 on `first`, as the
//! golden's `0f32 +` does); the last group's result goes through [`Fp32Mul`] with the token
//! scale into the output register.

use crate::expert_unit::dot_engine::group_dot::{GroupDot, WORDS};
use crate::expert_unit::dot_engine::group_scale::GroupScale;
use crate::fp32_add::Fp32Add;
use crate::fp32_mul::Fp32Mul;
use crate::reg::Reg;
use crate::wiring::{constant, many};
use rust_hdl::prelude::*;

/// Cycles from a row's last group in to its value out.
pub const LATENCY: u64 = crate::expert_unit::dot_engine::group_dot::LATENCY + 2;

/// The ports of [`DotUnit`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "a group of a row is presented this cycle"),
    ("first", "it is the row's first group (the accumulator starts from +0)"),
    ("last", "it is the row's last group (its value follows LATENCY (4) cycles later)"),
    ("x", "x_k: activations 4k..4k+3 of the group, INT8, lane 4k+b in bits 8b+7..8b"),
    ("w", "w_k: weights 4k..4k+3 of the group, INT4, lane 4k+b in bits 4b+3..4b"),
    ("scale", "the group's scale, IEEE binary16 bits"),
    ("token_scale", "the token's activation scale (read with the last group), IEEE binary32 bits"),
    ("out_valid", "a row's value comes out"),
    ("value", "the row's value: sum of the scaled group sums times the token scale, IEEE binary32 bits"),
    ("invalid", "a scale of that row or its token scale was Inf or NaN; value is then unspecified"),
];

/// The dot engine's unit: one row at a time.
#[derive(LogicBlock)]
pub struct DotUnit {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A group is presented.
    pub in_valid: Signal<In, Bit>,
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
    group_scale: GroupScale,
    add: Fp32Add,
    mul: Fp32Mul,
    // Beside group_dot's two stages.
    m1_first: Reg<Bit>,
    m1_last: Reg<Bit>,
    m1_scale: Reg<Bits<16>>,
    m1_token: Reg<Bits<32>>,
    m2_first: Reg<Bit>,
    m2_last: Reg<Bit>,
    m2_scale: Reg<Bits<16>>,
    m2_token: Reg<Bits<32>>,
    // The row's accumulator and its flag; the final multiply's inputs; the output.
    acc: Reg<Bits<32>>,
    acc_invalid: Reg<Bit>,
    fin_valid: Reg<Bit>,
    fin_token: Reg<Bits<32>>,
    out_r: Reg<Bits<32>>,
    out_valid_r: Reg<Bit>,
    out_invalid_r: Reg<Bit>,
    zero: Constant<Bits<32>>,
}

impl Default for DotUnit {
    fn default() -> DotUnit {
        DotUnit {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
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
            group_scale: Default::default(),
            add: Default::default(),
            mul: Default::default(),
            m1_first: Default::default(),
            m1_last: Default::default(),
            m1_scale: Default::default(),
            m1_token: Default::default(),
            m2_first: Default::default(),
            m2_last: Default::default(),
            m2_scale: Default::default(),
            m2_token: Default::default(),
            acc: Default::default(),
            acc_invalid: Default::default(),
            fin_valid: Default::default(),
            fin_token: Default::default(),
            out_r: Default::default(),
            out_valid_r: Default::default(),
            out_invalid_r: Default::default(),
            zero: constant(0),
        }
    }
}

impl Logic for DotUnit {
    #[hdl_gen]
    fn update(&mut self) {
        self.dot.clock.next = self.clock.val();
        self.dot.reset.next = self.reset.val();
        // Every register holds unless assigned below.
        self.m1_first.clock.next = self.clock.val();
        self.m1_first.reset.next = self.reset.val();
        self.m1_first.d.next = self.m1_first.q.val();
        self.m1_last.clock.next = self.clock.val();
        self.m1_last.reset.next = self.reset.val();
        self.m1_last.d.next = self.m1_last.q.val();
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
        self.m2_scale.clock.next = self.clock.val();
        self.m2_scale.reset.next = self.reset.val();
        self.m2_scale.d.next = self.m2_scale.q.val();
        self.m2_token.clock.next = self.clock.val();
        self.m2_token.reset.next = self.reset.val();
        self.m2_token.d.next = self.m2_token.q.val();
        self.acc.clock.next = self.clock.val();
        self.acc.reset.next = self.reset.val();
        self.acc.d.next = self.acc.q.val();
        self.acc_invalid.clock.next = self.clock.val();
        self.acc_invalid.reset.next = self.reset.val();
        self.acc_invalid.d.next = self.acc_invalid.q.val();
        self.fin_valid.clock.next = self.clock.val();
        self.fin_valid.reset.next = self.reset.val();
        self.fin_valid.d.next = self.fin_valid.q.val();
        self.fin_token.clock.next = self.clock.val();
        self.fin_token.reset.next = self.reset.val();
        self.fin_token.d.next = self.fin_token.q.val();
        self.out_r.clock.next = self.clock.val();
        self.out_r.reset.next = self.reset.val();
        self.out_r.d.next = self.out_r.q.val();
        self.out_valid_r.clock.next = self.clock.val();
        self.out_valid_r.reset.next = self.reset.val();
        self.out_valid_r.d.next = self.out_valid_r.q.val();
        self.out_invalid_r.clock.next = self.clock.val();
        self.out_invalid_r.reset.next = self.reset.val();
        self.out_invalid_r.d.next = self.out_invalid_r.q.val();
        // Stages 1 and 2: group_dot, with the group's metadata beside it.
        self.dot.in_valid.next = self.in_valid.val();
        for k in 0..self.x.len() {
            self.dot.x[k].next = self.x[k].val();
            self.dot.w[k].next = self.w[k].val();
        }
        self.m1_first.d.next = self.first.val();
        self.m1_last.d.next = self.last.val();
        self.m1_scale.d.next = self.scale.val();
        self.m1_token.d.next = self.token_scale.val();
        self.m2_first.d.next = self.m1_first.q.val();
        self.m2_last.d.next = self.m1_last.q.val();
        self.m2_scale.d.next = self.m1_scale.q.val();
        self.m2_token.d.next = self.m1_token.q.val();
        // Stage 3: the scaled sum added into the row's accumulator (from +0 on the first group).
        self.group_scale.sum.next = self.dot.sum.val();
        self.group_scale.scale.next = self.m2_scale.q.val();
        self.add.a.next = self.acc.q.val();
        if self.m2_first.q.val() {
            self.add.a.next = self.zero.val();
        }
        self.add.b.next = self.group_scale.product.val();
        self.fin_valid.d.next = false;
        if self.dot.out_valid.val() {
            self.acc.d.next = self.add.sum.val();
            self.acc_invalid.d.next =
                (self.acc_invalid.q.val() && !self.m2_first.q.val()) || self.group_scale.invalid.val();
            self.fin_valid.d.next = self.m2_last.q.val();
            self.fin_token.d.next = self.m2_token.q.val();
        }
        // Stage 4: the row's value times the token scale.
        self.mul.a.next = self.acc.q.val();
        self.mul.b.next = self.fin_token.q.val();
        self.out_valid_r.d.next = self.fin_valid.q.val();
        if self.fin_valid.q.val() {
            self.out_r.d.next = self.mul.product.val();
            // The multiplier flags a non-finite token scale (the accumulator of finite scaled
            // sums stays finite: at most 32,512 x 65,504 a group).
            self.out_invalid_r.d.next = self.acc_invalid.q.val() || self.mul.invalid.val();
        }
        self.out_valid.next = self.out_valid_r.q.val();
        self.value.next = self.out_r.q.val();
        self.invalid.next = self.out_invalid_r.q.val();
    }
}
