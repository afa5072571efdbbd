//! `swiglu`: the element-wise step between the two engines, on the FP32 lanes: per (channel,
//! token) `h = silu(gate) * up` with the hardware's piecewise-linear SiLU, the down operand
//! `a = fp16(w * h)`, and, for a calibrated job, `|h|` added to the token's running sum.
//!
//! Contract: five FP32 lane operations per (channel, token) (the sigmoid segment's multiply and
//! add, `x sigmoid`, `times up`, `w h` and its rounding to FP16), six when calibrated (the `|h|`
//! sum); `ceil(ops x tokens / fp32_lanes)` cycles a channel.

use half::f16;
use lacuna_spec::a8w4::{down_operand, silu};

/// FP32 lane operations per (channel, token).
pub fn ops(calibrated: bool) -> u64 {
    5 + calibrated as u64
}

/// Cycles of one channel for `tokens` tokens.
pub fn cycles(tokens: usize, calibrated: bool, fp32_lanes: u32) -> u64 {
    (ops(calibrated) * tokens as u64).div_ceil(fp32_lanes as u64)
}

/// `h` and the down operand of one (channel, token).
pub fn apply(gate: f32, up: f32, weight: f32) -> (f32, f16) {
    let h = silu(gate) * up;
    (h, down_operand(weight, h))
}
