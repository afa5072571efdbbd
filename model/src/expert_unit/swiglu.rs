//! `swiglu`: the element-wise step between the two engines, in the dot engine's stream order
//! (as the RTL's `SwigluEngine`): per (channel, token) `h = silu(gate) * up` with the hardware's
//! piecewise-linear SiLU, the down operand `a = fp16(w * h)`, and, for a calibrated job, `|h|`
//! added to the token's running sum.
//!
//! Contract: when a user's up values come out of the dot engine (cycle V), the user's channels
//! of the wave go through one SwiGLU lane one a cycle, channel `u`'s operand out in cycle
//! `V + SWIGLU_OUT_AFTER_UP + u` ([`operand_at`]); the dot engine paces users so that the lane
//! keeps up. Energy is counted as five FP32 operations an element (the sigmoid segment's
//! multiply and add, `x sigmoid`, `times up`, `w h` and its rounding), six when calibrated (the
//! `|h|` sum, which is assumed to keep the lane's pace: its adder is not in RTL yet).

use super::dot_engine::WaveTiming;
use half::f16;
use lacuna_spec::a8w4::{down_operand, silu};
use lacuna_spec::expert_unit::SWIGLU_OUT_AFTER_UP;

/// FP32 operations per (channel, token), for energy.
pub fn ops(calibrated: bool) -> u64 {
    5 + calibrated as u64
}

/// The cycle the down operand of channel `u` of `wave` for its user `i` comes out.
pub fn operand_at(wave: &WaveTiming, u: u64, i: u64) -> u64 {
    wave.value_at(i, true) + SWIGLU_OUT_AFTER_UP + u
}

/// `h` and the down operand of one (channel, token).
pub fn apply(gate: f32, up: f32, weight: f32) -> (f32, f16) {
    let h = silu(gate) * up;
    (h, down_operand(weight, h))
}
