//! `token_quant`: the job's tokens quantized to A8 (`Int8Vector::quantize`) before the first
//! channel, timed as the RTL's `Quantizer` runs it.
//!
//! Contract: from the cycle after the job's start, each token's values are read `fp32_lanes` a
//! cycle (its values rounded up to whole 32-value groups: `ceil(32 ceil(hidden / 32) /
//! fp32_lanes)` chunks, zeros past `hidden`) into the lanes' running maxima, then the lanes'
//! maxima go to the token scale `QUANT_FEED_LANES` a cycle (`ceil(fp32_lanes / 4)` cycles), each
//! taken unless the previous token still waits for the two dividers (they take
//! `DIVIDE_CYCLES`; a token's scales come out `TOKEN_SCALE_READY_AFTER_LAST` cycles after its last
//! value when they were free); the next token's scan starts after the last of them is taken.
//! Once every scan is read, each token's chunks are read again, one a cycle, from the cycle after
//! its `127 / amax` is out, and their INT8 values come out `QUANT_LATENCY` cycles after the read
//! ([`schedule`]). The job's channels start once the last values are written ([`QuantTiming::done`]).
//! Energy is counted as 3 FP32 lane operations a value (its magnitude's compare, the multiply
//! and the rounding).

use lacuna_spec::expert_unit::{DIVIDE_CYCLES, QUANT_FEED_LANES, QUANT_LATENCY, TOKEN_SCALE_READY_AFTER_LAST};

/// FP32 lane operations a value, for energy.
pub const OPS_PER_VALUE: u64 = 3;

/// The quantizer's cycles for one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuantTiming {
    /// Per token, the cycle of its scan's first read.
    pub scan: Vec<u64>,
    /// Per token, the cycle the token scale took its last value.
    pub last_fed: Vec<u64>,
    /// Per token, the cycle its scales come out.
    pub ready: Vec<u64>,
    /// Per token, the cycle of its quantization's first read (its chunks follow one a cycle).
    pub quant: Vec<u64>,
    /// Chunks a token (`ceil(32 ceil(hidden / 32) / fp32_lanes)`).
    pub chunks: u64,
    /// The first cycle every token's INT8 values are written.
    pub done: u64,
}

/// The quantizer's cycles for `tokens` tokens (at least 1) of `hidden` values (at least 1) on
/// `lanes` FP32 lanes, the job taken in cycle `start`.
pub fn schedule(start: u64, tokens: usize, hidden: usize, lanes: u32) -> QuantTiming {
    // Whole 32-value groups (the token store's rows, zeros past `hidden`).
    let chunks = (lacuna_spec::a8w4::groups(hidden) * lacuna_spec::a8w4::GROUP).div_ceil(lanes as usize) as u64;
    let feeds = lanes.div_ceil(QUANT_FEED_LANES) as u64;
    let (mut scan, mut last_fed, mut ready) = (Vec::new(), Vec::new(), Vec::new());
    let mut t = start + 1;
    // When the previous token's divisions started: a token's values are not taken before it
    // (that token is held while the dividers finish the one before).
    let mut divide: Option<u64> = None;
    for _ in 0..tokens {
        scan.push(t);
        let first = (t + chunks).max(divide.unwrap_or(0));
        let last = first + feeds - 1;
        let starts = divide.map_or(last + 1, |d| (last + 1).max(d + DIVIDE_CYCLES));
        last_fed.push(last);
        ready.push(starts + TOKEN_SCALE_READY_AFTER_LAST - 1);
        divide = Some(starts);
        t = last + 1;
    }
    // The quantization reads once the last scan is read, each token once its scale is in.
    let mut quant: Vec<u64> = Vec::with_capacity(tokens);
    let mut next = scan[tokens - 1] + chunks;
    for r in &ready {
        let q = next.max(r + 1);
        quant.push(q);
        next = q + chunks;
    }
    let done = next - 1 + QUANT_LATENCY + 1;
    QuantTiming { scan, last_fed, ready, quant, chunks, done }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_waits_only_for_the_dividers_and_its_values_come_after_its_scale() {
        // 8 lanes, 20 values (a group of 32 with zeros): 4 chunks a token, 2 feed cycles.
        let q = schedule(10, 2, 20, 8);
        assert_eq!(q.chunks, 4);
        assert_eq!(q.scan, [11, 17]);
        assert_eq!(q.last_fed, [16, 22]);
        // Token 0's divisions start at 17 and end at 46: token 1 (last fed at 22) starts them
        // then, its scales 30 cycles after.
        assert_eq!(q.ready, [16 + TOKEN_SCALE_READY_AFTER_LAST, 17 + DIVIDE_CYCLES + 30]);
        assert_eq!(q.quant, [q.ready[0] + 1, q.ready[1] + 1]);
        assert_eq!(q.done, q.ready[1] + 1 + 4 + QUANT_LATENCY);
        // 32 lanes over 576 values: 18 chunks and 8 feeds a token, 3 cycles shorter than the
        // dividers: the lag grows by 3 a token, and from the ninth token on each waits for them.
        let e = schedule(0, 12, 576, 32);
        assert_eq!(e.last_fed[7], e.scan[7] + 18 + 7);
        assert!(e.last_fed[8] > e.scan[8] + 18 + 7);
    }
}
