//! `dot_engine`: the gate and up projections of one channel for the tokens routed to its expert,
//! on `dot_units` INT8 x INT4 group units.
//!
//! Contract: each unit takes one (token, row, group) a cycle and returns its exact INT32 sum of
//! `lacuna_spec::a8w4::GROUP` products; beside it an FP32 multiply then an FP32 add (each
//! rounded: not fused) scale the sum by the group's FP16 scale and add it to the row's
//! accumulator in group order, and the last group's
//! result is multiplied by the token's activation scale (rule 1 of `lacuna_spec::a8w4`). A
//! channel takes `ceil(2 x groups x tokens / dot_units)` cycles.

use lacuna_spec::a8w4::{group_dot, groups, ExpertChannel, Int8Vector};

/// Cycles of one channel for `tokens` tokens.
pub fn cycles(hidden: usize, tokens: usize, dot_units: u32) -> u64 {
    (2 * groups(hidden) * tokens).div_ceil(dot_units as usize) as u64
}

/// Group operations of one channel for `tokens` tokens.
pub fn group_ops(hidden: usize, tokens: usize) -> u64 {
    (2 * groups(hidden) * tokens) as u64
}

/// The channel's gate and up results for each of `tokens` (quantized inputs).
pub fn gate_up(channel: &ExpertChannel, tokens: &[&Int8Vector]) -> Vec<(f32, f32)> {
    let rows = [&channel.gate, &channel.up];
    tokens
        .iter()
        .map(|x| {
            let mut acc = [0f32; 2];
            for g in 0..groups(channel.gate.len()) {
                for (a, row) in acc.iter_mut().zip(rows) {
                    *a += group_dot(&x.values, row, g) as f32 * row.scale(g).to_f32();
                }
            }
            (acc[0] * x.scale, acc[1] * x.scale)
        })
        .collect()
}
