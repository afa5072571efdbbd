//! `down_engine`: the down projection, channel by channel, on `down_lanes` lanes: each adds one
//! product `(f32(a) * f32(scale)) * q` into a token's FP32 output row a cycle (rule 3 of
//! `lacuna_spec::a8w4`). A channel is a pass: per operand (a token it serves, and for a
//! calibrated expert its channels' mean row), row block by row block (`down_lanes` rows), one
//! block a cycle, so `vectors x ceil(hidden / down_lanes)` cycles, plus a stall where a block
//! would return to a row within the lane's reuse distance ([`Issue`], as the RTL's
//! `DownEngine`). The same lanes add the calibration terms and the unrouted experts' means at
//! the end of an expert or of the job.

use half::f16;
use lacuna_spec::a8w4::{down_product, Int4Vector, GROUP};

/// Adds `a * column` into `y` (one token's output).
pub fn accumulate(y: &mut [f32], a: f16, column: &Int4Vector) {
    for (r, y) in y.iter_mut().enumerate() {
        *y += down_product(a, column.scale(r / GROUP), column.value(r));
    }
}

/// The down engine's issue timing, element by element, as the RTL's `DownEngine` issues: a
/// pass (one channel's column times each of its operand vectors) is taken in a cycle the
/// previous pass issues its last element or later, and issues its elements `(vector, block)`
/// (`vector` outer) one a cycle from the next cycle, except that an element waits until
/// `DOWN_ROW_REUSE` cycles after the last issue of its `(slot, block)` (a lane reads its row
/// `DOWN_ACC_AT` cycles after the element and writes it `DOWN_LATENCY` cycles after).
#[derive(Clone, Debug, Default)]
pub struct Issue {
    /// The cycle of the last element issued.
    last: Option<u64>,
    /// The issues of the last `DOWN_ROW_REUSE` cycles: (cycle, slot, block).
    recent: std::collections::VecDeque<(u64, u32, u32)>,
}

/// A pass's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassTiming {
    /// The cycle the pass was taken (its operands latched).
    pub taken: u64,
    /// The cycle its first element issued.
    pub first: u64,
    /// The cycle its last element issued (a next pass may be taken in it).
    pub last: u64,
}

impl Issue {
    /// An idle engine.
    pub fn new() -> Issue {
        Issue::default()
    }

    /// The earliest cycle a pass is taken: any while idle, else the cycle of the last issue.
    pub fn ready_at(&self) -> u64 {
        self.last.unwrap_or(0)
    }

    /// The cycle of the last element issued, if any.
    pub fn last_issue(&self) -> Option<u64> {
        self.last
    }

    /// Issues a pass asked for in cycle `asked` over `slots` (one operand vector each) and
    /// `blocks` row blocks (`ceil(rows / down_lanes)`, at least 1).
    pub fn pass(&mut self, asked: u64, slots: &[u32], blocks: u32) -> PassTiming {
        self.pass_elements(asked, slots, blocks).0
    }

    /// [`Issue::pass`], with the cycle each element issued (`vector` outer, `block` inner).
    pub fn pass_elements(&mut self, asked: u64, slots: &[u32], blocks: u32) -> (PassTiming, Vec<u64>) {
        use lacuna_spec::expert_unit::DOWN_ROW_REUSE;
        let taken = asked.max(self.ready_at());
        let mut t = taken;
        let mut cycles = Vec::with_capacity(slots.len() * blocks as usize);
        for &slot in slots {
            for b in 0..blocks {
                t += 1;
                if let Some(&(at, ..)) = self.recent.iter().rev().find(|&&(_, s, x)| s == slot && x == b) {
                    t = t.max(at + DOWN_ROW_REUSE);
                }
                cycles.push(t);
                self.recent.push_back((t, slot, b));
                while self.recent.front().is_some_and(|&(at, ..)| at + DOWN_ROW_REUSE <= t) {
                    self.recent.pop_front();
                }
            }
        }
        self.last = Some(t);
        let first = cycles.first().copied().unwrap_or(t);
        (PassTiming { taken, first, last: t }, cycles)
    }

    /// The first cycle with nothing in flight after the passes so far (each element's row
    /// written at the end of cycle issue + `DOWN_LATENCY`).
    pub fn drained_at(&self) -> u64 {
        self.last.map_or(0, |t| t + lacuna_spec::expert_unit::DOWN_LATENCY + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lacuna_spec::expert_unit::DOWN_ROW_REUSE;

    #[test]
    fn passes_follow_back_to_back_and_a_block_waits_for_its_row_reuse_distance() {
        let mut issue = Issue::new();
        // Two operands of 8 blocks: no block repeats within a pass, 16 cycles from cycle 1.
        let p = issue.pass(0, &[0, 1], 8);
        assert_eq!(p, PassTiming { taken: 0, first: 1, last: 16 });
        // The next pass, asked early, is taken in that last cycle and follows at once: slot 1's
        // block 0 issued at 9, long ago.
        let q = issue.pass(3, &[1], 8);
        assert_eq!(q, PassTiming { taken: 16, first: 17, last: 24 });
        // One block per operand: slot 2 right after slot 2 waits ROW_REUSE cycles, and within
        // one pass too (a pass may repeat a slot).
        let r = issue.pass(24, &[2], 1);
        let s = issue.pass(0, &[2], 1);
        assert_eq!((r.first, s.first), (25, 25 + DOWN_ROW_REUSE));
        let (_, cycles) = issue.pass_elements(0, &[3, 3, 4], 1);
        assert_eq!(cycles, [s.last + 1, s.last + 1 + DOWN_ROW_REUSE, s.last + 2 + DOWN_ROW_REUSE]);
        assert_eq!(issue.drained_at(), s.last + 2 + DOWN_ROW_REUSE + 6);
    }
}
