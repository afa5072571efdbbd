//! `down_engine::lane`: one down lane: `sum = acc + (f32(a) * f32(scale)) * f32(q)`, the down
//! projection's step for one (row, token) (`lacuna_model::expert_unit::down_engine::accumulate`),
//! pipelined, one element a cycle.
//!
//! ```text
//!               +---------------------------- lane ----------------------------+
//!  in_valid --->| c0  fp16_mul: a x scale, exact                  -> register   |--> out_valid
//!  a[16] ------>| c1  down_scale: times q, rounded once           -> register   |--> sum[32]
//!  scale[16] -->| c2  fp32_add (2 registers): acc + product        -> register   |--> invalid
//!  q[4] ------->|     valid and invalid ride in delay lines                     |
//!  acc[32] ---->| (acc is read at c2, ACC_AT cycles after the element)          |
//!  reset, clock>+---------------------------------------------------------------+
//! ```
//!
//! Contract: an element presented in cycle t (`in_valid`, `a`, `scale`, `q`) takes the row's
//! running value `acc` in cycle t + [`ACC_AT`] and comes out in cycle t + [`LATENCY`] as
//! `sum = acc + down_product(a, scale, q)`, each operation rounded to nearest even exactly as
//! the spec's f32 arithmetic (`lacuna_spec::a8w4::down_product`, then an f32 add), one element a
//! cycle, in order. `acc` is read late on purpose: the row's store is read in cycle
//! t + [`ACC_AT`] and written at the end of cycle t + [`LATENCY`] (when `sum` is out), so the next
//! element of the same row may enter [`ROW_REUSE`] cycles after this one with no bypass (an
//! earlier one would read a value still in flight). `invalid`:
//! `a` or `scale` was Inf or NaN; `sum` is then unspecified. The unrouted experts' means go through
//! the same lane as `a = 1.0, scale = mean, q = 1` (the product is then exactly the mean).
//!
//! How (issue 19's budget of ~80 FO4 a stage): the combinational product
//! ([`super::down_product::DownProduct`], 94 FO4) is cut between its FP16 product (63 FO4) and
//! the multiply by `q` with its rounding ([`super::down_scale::DownScale`]); the add is
//! [`Fp32AddPipe`] of latency 2 (align | add and count | round) with its result registered.

use super::down_scale::DownScale;
use crate::delay::Delay;
use crate::fp16_mul::Fp16Mul;
use crate::fp32_add::pipe::Fp32AddPipe;
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// The adder's pipeline registers (as the SwiGLU lane's).
const ADD_PIPE: usize = 2;
/// The cycle (after the element) its product meets the row's value: after the FP16 product's
/// register and the rounded product's (the spec's `DOWN_ACC_AT`, which the model schedules by).
pub const ACC_AT: u64 = lacuna_spec::expert_unit::DOWN_ACC_AT;
/// Cycles from an element in to its sum out: the add's pipeline, then its register.
pub const LATENCY: u64 = ACC_AT + ADD_PIPE as u64 + 1;
/// The fewest cycles between two elements of the same row: the later one's read comes in the
/// cycle after the earlier one's write.
pub const ROW_REUSE: u64 = lacuna_spec::expert_unit::DOWN_ROW_REUSE;
const _: () = assert!(LATENCY == lacuna_spec::expert_unit::DOWN_LATENCY, "the spec's latency is the lane's");
const _: () = assert!(LATENCY == 5 && ACC_AT == 2 && ROW_REUSE == 4, "PORTS says 5 and 2");

/// The ports of [`DownLane`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "an element is presented this cycle"),
    ("a", "the down operand fp16(w h) (or a mean), IEEE binary16 bits"),
    ("scale", "the scale of the weight's group (1.0 for a mean), IEEE binary16 bits"),
    ("q", "the weight, INT4 two's complement (1 for a mean)"),
    ("acc", "the row's running value, read ACC_AT (2) cycles after its element, IEEE binary32 bits"),
    ("out_valid", "the element presented LATENCY (5) cycles ago comes out"),
    ("sum", "acc + (f32(a) * f32(scale)) * f32(q), each rounded to nearest even, IEEE binary32 bits"),
    ("invalid", "a or scale of that element was Inf or NaN; sum is then unspecified"),
];

/// One down lane.
#[derive(LogicBlock)]
pub struct DownLane {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// An element is presented.
    pub in_valid: Signal<In, Bit>,
    /// The down operand (FP16 bits).
    pub a: Signal<In, Bits<16>>,
    /// The weight's group scale (FP16 bits).
    pub scale: Signal<In, Bits<16>>,
    /// The weight (INT4).
    pub q: Signal<In, Bits<4>>,
    /// The row's running value, ACC_AT cycles after the element (FP32 bits).
    pub acc: Signal<In, Bits<32>>,
    /// An element comes out.
    pub out_valid: Signal<Out, Bit>,
    /// Its sum (FP32 bits).
    pub sum: Signal<Out, Bits<32>>,
    /// It had a non-finite operand.
    pub invalid: Signal<Out, Bit>,
    mul: Fp16Mul,
    times_q: DownScale,
    add: Fp32AddPipe,
    r_exact: Reg<Bits<32>>,
    r_q: Reg<Bits<4>>,
    r_product: Reg<Bits<32>>,
    r_sum: Reg<Bits<32>>,
    /// Side band: the operands' flag from the FP16 product's register to the output.
    inv: Delay<Bit>,
    /// Side band: valid to the output.
    valid: Delay<Bit>,
}

impl Default for DownLane {
    fn default() -> DownLane {
        DownLane {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            a: Default::default(),
            scale: Default::default(),
            q: Default::default(),
            acc: Default::default(),
            out_valid: Default::default(),
            sum: Default::default(),
            invalid: Default::default(),
            mul: Default::default(),
            times_q: Default::default(),
            add: Fp32AddPipe::new(ADD_PIPE),
            r_exact: Default::default(),
            r_q: Default::default(),
            r_product: Default::default(),
            r_sum: Default::default(),
            inv: Delay::new(LATENCY as usize),
            valid: Delay::new(LATENCY as usize),
        }
    }
}

impl Logic for DownLane {
    #[hdl_gen]
    fn update(&mut self) {
        self.r_exact.clock.next = self.clock.val();
        self.r_exact.reset.next = self.reset.val();
        self.r_q.clock.next = self.clock.val();
        self.r_q.reset.next = self.reset.val();
        self.r_product.clock.next = self.clock.val();
        self.r_product.reset.next = self.reset.val();
        self.r_sum.clock.next = self.clock.val();
        self.r_sum.reset.next = self.reset.val();
        self.add.clock.next = self.clock.val();
        self.add.reset.next = self.reset.val();
        self.inv.clock.next = self.clock.val();
        self.inv.reset.next = self.reset.val();
        self.valid.clock.next = self.clock.val();
        self.valid.reset.next = self.reset.val();
        // c0: the exact FP16 product; the weight beside it.
        self.mul.a.next = self.a.val();
        self.mul.b.next = self.scale.val();
        self.r_exact.d.next = self.mul.product.val();
        self.r_q.d.next = self.q.val();
        self.inv.d.next = self.mul.invalid.val();
        self.valid.d.next = self.in_valid.val();
        // c1: times q, rounded once.
        self.times_q.exact.next = self.r_exact.q.val();
        self.times_q.q.next = self.r_q.q.val();
        self.r_product.d.next = self.times_q.product.val();
        // c2 (ACC_AT): into the row's value.
        self.add.a.next = self.acc.val();
        self.add.b.next = self.r_product.q.val();
        self.r_sum.d.next = self.add.sum.val();
        self.out_valid.next = self.valid.q.val();
        self.sum.next = self.r_sum.q.val();
        self.invalid.next = self.inv.q.val();
    }
}
