//! `token_quant::quant_lane`: one lane of a token's quantization to INT8: `q = clamp(round(x *
//! inv))` (`lacuna_spec::a8w4::Int8Vector::quantize`'s values), pipelined, one value a cycle.
//!
//! ```text
//!               +----------------------- quant_lane -----------------------+
//!  in_valid --->| c0  x * inv (Fp32MulPipe, 2 registers)     -> register    |--> out_valid
//!  x[32] ------>| c3  to_int8: nearest even, +-127            -> register    |--> q[8]
//!  inv[32] ---->|     valid and the multiply's invalid flag in delay lines  |--> invalid
//!  reset, clock>+-----------------------------------------------------------+
//! ```
//!
//! Contract: a value presented in cycle t comes out in cycle t + [`LATENCY`] as `q`, the INT8
//! of `(x * inv).round_ties_even().clamp(-127, 127)` with `x * inv` rounded to nearest even as
//! f32 does; one value a cycle, in order. `inv` is the token's `127 / amax`
//! ([`super::token_scale::TokenScale`]), 0 for a flushed token (then every `q` is 0, as the
//! spec's). `invalid`: `x` or `inv` was Inf or NaN; `q` is then unspecified.

use super::to_int8::ToInt8;
use crate::delay::Delay;
use crate::fp32_mul::Fp32MulPipe;
use crate::reg::Reg;
use rust_hdl::prelude::*;

/// Cycles of the multiply: its pipeline, then the register after it.
const MUL: u64 = crate::fp32_mul::LATENCY + 1;
/// Cycles from a value in to its INT8 out: the multiply, then the rounding's register.
pub const LATENCY: u64 = MUL + 1;
const _: () = assert!(LATENCY == 4, "PORTS says 4");

/// The ports of [`QuantLane`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "a value is presented this cycle"),
    ("x", "the token's value, IEEE binary32 bits"),
    ("inv", "the token's 127 / amax (0 when flushed), IEEE binary32 bits"),
    ("out_valid", "the value presented LATENCY (4) cycles ago comes out"),
    ("q", "round_ties_even(x * inv) clamped to -127..=127, INT8 two's complement"),
    ("invalid", "x or inv of that value was Inf or NaN; q is then unspecified"),
];

/// One quantization lane.
#[derive(LogicBlock)]
pub struct QuantLane {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A value is presented.
    pub in_valid: Signal<In, Bit>,
    /// The value (FP32 bits).
    pub x: Signal<In, Bits<32>>,
    /// The token's 127 / amax (FP32 bits).
    pub inv: Signal<In, Bits<32>>,
    /// A value comes out.
    pub out_valid: Signal<Out, Bit>,
    /// Its INT8.
    pub q: Signal<Out, Bits<8>>,
    /// It had a non-finite operand.
    pub invalid: Signal<Out, Bit>,
    mul: Fp32MulPipe,
    round: ToInt8,
    r_p: Reg<Bits<32>>,
    r_q: Reg<Bits<8>>,
    /// Side band: the multiply's flag (out of its pipeline) to the output.
    inv_flag: Delay<Bit>,
    /// Side band: valid to the output.
    valid: Delay<Bit>,
}

impl Default for QuantLane {
    fn default() -> QuantLane {
        QuantLane {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            x: Default::default(),
            inv: Default::default(),
            out_valid: Default::default(),
            q: Default::default(),
            invalid: Default::default(),
            mul: Default::default(),
            round: Default::default(),
            r_p: Default::default(),
            r_q: Default::default(),
            inv_flag: Delay::new((LATENCY - crate::fp32_mul::LATENCY) as usize),
            valid: Delay::new(LATENCY as usize),
        }
    }
}

impl Logic for QuantLane {
    #[hdl_gen]
    fn update(&mut self) {
        self.mul.clock.next = self.clock.val();
        self.mul.reset.next = self.reset.val();
        self.r_p.clock.next = self.clock.val();
        self.r_p.reset.next = self.reset.val();
        self.r_q.clock.next = self.clock.val();
        self.r_q.reset.next = self.reset.val();
        self.inv_flag.clock.next = self.clock.val();
        self.inv_flag.reset.next = self.reset.val();
        self.valid.clock.next = self.clock.val();
        self.valid.reset.next = self.reset.val();
        // c0: x * inv on the pipelined multiplier.
        self.mul.a.next = self.x.val();
        self.mul.b.next = self.inv.val();
        self.valid.d.next = self.in_valid.val();
        // c2: the product leaves the multiplier; c3: rounded to INT8.
        self.r_p.d.next = self.mul.product.val();
        self.inv_flag.d.next = self.mul.invalid.val();
        self.round.p.next = self.r_p.q.val();
        self.r_q.d.next = self.round.q.val();
        self.out_valid.next = self.valid.q.val();
        self.q.next = self.r_q.q.val();
        self.invalid.next = self.inv_flag.q.val();
    }
}
