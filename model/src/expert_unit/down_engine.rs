//! `down_engine`: the down projection, channel by channel, on `down_lanes` lanes: each adds one
//! product `(f32(a) * f32(scale)) * q` into a token's FP32 output row a cycle (rule 3 of
//! `lacuna_spec::a8w4`), so a channel's column is added to every token it serves in
//! `ceil(hidden x tokens / down_lanes)` cycles. The same lanes add the calibration terms and the
//! unrouted experts' means at the end of an expert or of the job.

use half::f16;
use lacuna_spec::a8w4::{down_product, Int4Vector, GROUP};

/// Cycles of `rows x vectors` lane operations.
pub fn cycles(rows: usize, vectors: usize, down_lanes: u32) -> u64 {
    (rows * vectors).div_ceil(down_lanes as usize) as u64
}

/// Adds `a * column` into `y` (one token's output).
pub fn accumulate(y: &mut [f32], a: f16, column: &Int4Vector) {
    for (r, y) in y.iter_mut().enumerate() {
        *y += down_product(a, column.scale(r / GROUP), column.value(r));
    }
}
