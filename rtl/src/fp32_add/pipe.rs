//! `fp32_add::pipe`: the FP32 adder with its result `latency` cycles after its operands: the
//! accumulator's adder (`acc_add_latency` - 1 registers behind the issue cycle).
//!
//! ```text
//!   a, b --> align --[cut 1]--> sum, lzc --[cut 2]--> round --> (latency - 2 more registers) --> sum
//! ```
//!
//! Contract: `sum` at cycle t + latency is `a + b` of cycle t, bit for bit [`super::Fp32Add`]'s.
//! The registers go where the adder's delay is split most evenly (docs/synthesis.md, "Timing"):
//! latency 0 is the combinational adder; 1 cuts between `sum` and `round`; 2 cuts after `align`
//! and after `sum`; each cycle beyond 2 adds a register behind `round`. Every stage register
//! loads every cycle (no enable): the user carries a valid bit beside it.

use super::{align::Align, lzc::Lzc, round::Round, sum::Sum};
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// The ports of [`Fp32AddPipe`] when it is a top module (`lacuna_fp32_add_pipe`).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high"),
    ("a", "FP32 operand, IEEE binary32 bits"),
    ("b", "FP32 operand, IEEE binary32 bits"),
    ("sum", "a + b of LATENCY cycles ago, rounded to nearest, ties to even"),
];

/// The latency of the adder emitted on its own (`lacuna_fp32_add_pipe`): `edge`'s accumulator
/// adder (`acc_add_latency` 3, so two registers), the one whose stages the timing report shows.
pub const EMITTED_LATENCY: usize = 2;

/// The pipelined adder.
#[derive(LogicBlock)]
pub struct Fp32AddPipe {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// FP32 operand (IEEE binary32 bits).
    pub a: Signal<In, Bits<32>>,
    /// FP32 operand.
    pub b: Signal<In, Bits<32>>,
    /// a + b of `latency` cycles ago.
    pub sum: Signal<Out, Bits<32>>,
    align: Align,
    add: Sum,
    lzc: Lzc,
    round: Round,
    /// Cut 1 (after align): wide_x, aligned_y, exp_x, sign_x, sign_y.
    c1: Vec<Reg<Bits<32>>>,
    /// Cut 2 (after sum): s1, e1, lz, zero, sign.
    c2: Vec<Reg<Bits<32>>>,
    tail: Vec<Reg<Bits<32>>>,
    cut1: Constant<Bit>,
    cut2: Constant<Bit>,
    has_tail: Constant<Bit>,
}

impl Fp32AddPipe {
    /// An adder of `latency` cycles.
    pub fn new(latency: usize) -> Fp32AddPipe {
        let regs = |n: usize| (0..n).map(|_| Reg::default()).collect::<Vec<_>>();
        Fp32AddPipe {
            clock: Default::default(),
            reset: Default::default(),
            a: Default::default(),
            b: Default::default(),
            sum: Default::default(),
            align: Default::default(),
            add: Default::default(),
            lzc: Default::default(),
            round: Default::default(),
            c1: regs(5),
            c2: regs(5),
            // One register even when unused: rust-hdl cannot emit an empty array.
            tail: regs(latency.saturating_sub(2).max(1)),
            cut1: Constant::new(latency >= 2),
            cut2: Constant::new(latency >= 1),
            has_tail: Constant::new(latency >= 3),
        }
    }
}

impl Logic for Fp32AddPipe {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..self.c1.len() {
            self.c1[i].clock.next = self.clock.val();
            self.c1[i].reset.next = self.reset.val();
            self.c2[i].clock.next = self.clock.val();
            self.c2[i].reset.next = self.reset.val();
        }
        for i in 0..self.tail.len() {
            self.tail[i].clock.next = self.clock.val();
            self.tail[i].reset.next = self.reset.val();
        }
        self.align.a.next = self.a.val();
        self.align.b.next = self.b.val();
        self.c1[0].d.next = self.align.wide_x.val();
        self.c1[1].d.next = self.align.aligned_y.val();
        self.c1[2].d.next = self.align.exp_x.val();
        self.c1[3].d.next = self.align.sign_x.val();
        self.c1[4].d.next = self.align.sign_y.val();
        if self.cut1.val() {
            self.add.wide_x.next = self.c1[0].q.val();
            self.add.aligned_y.next = self.c1[1].q.val();
            self.add.exp_x.next = self.c1[2].q.val();
            self.add.sign_x.next = self.c1[3].q.val();
            self.add.sign_y.next = self.c1[4].q.val();
        } else {
            self.add.wide_x.next = self.align.wide_x.val();
            self.add.aligned_y.next = self.align.aligned_y.val();
            self.add.exp_x.next = self.align.exp_x.val();
            self.add.sign_x.next = self.align.sign_x.val();
            self.add.sign_y.next = self.align.sign_y.val();
        }
        self.c2[0].d.next = self.add.s1.val();
        self.c2[1].d.next = self.add.e1.val();
        self.lzc.s1.next = self.add.s1.val();
        self.c2[2].d.next = self.lzc.lz.val();
        self.c2[3].d.next = self.add.zero.val();
        self.c2[4].d.next = self.add.sign.val();
        if self.cut2.val() {
            self.round.s1.next = self.c2[0].q.val();
            self.round.e1.next = self.c2[1].q.val();
            self.round.lz.next = self.c2[2].q.val();
            self.round.zero.next = self.c2[3].q.val();
            self.round.sign.next = self.c2[4].q.val();
        } else {
            self.round.s1.next = self.add.s1.val();
            self.round.e1.next = self.add.e1.val();
            self.round.lz.next = self.lzc.lz.val();
            self.round.zero.next = self.add.zero.val();
            self.round.sign.next = self.add.sign.val();
        }
        self.tail[0].d.next = self.round.sum.val();
        for i in 1..self.tail.len() {
            self.tail[i].d.next = self.tail[i - 1].q.val();
        }
        self.sum.next = self.round.sum.val();
        if self.has_tail.val() {
            // rust-hdl indexes only with loop variables: the last assignment wins.
            for i in 0..self.tail.len() {
                self.sum.next = self.tail[i].q.val();
            }
        }
    }
}
