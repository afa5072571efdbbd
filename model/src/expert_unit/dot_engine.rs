//! `dot_engine`: the gate and up projections, in waves of up to `dot_units` channels of one
//! expert, one channel a unit, on INT8 x INT4 group units (as the RTL's `DotEngine`).
//!
//! Contract: each unit takes one (token, row, group) a cycle and returns its exact INT32 sum of
//! `lacuna_spec::a8w4::GROUP` products; beside it an FP32 multiply then an FP32 add (each
//! rounded: not fused) scale the sum by the group's FP16 scale and add it to the row's
//! accumulator in group order, and the last group's result is multiplied by the token's
//! activation scale (rule 1 of `lacuna_spec::a8w4`). A wave is up to `dot_units` consecutive
//! channels of one expert, all in lock step: every cycle each unit takes the same (token, group,
//! gate or up) of its own channel, so one activation group read serves all units. A wave issues
//! its users' rows `(user, group, gate then up)` (user outer) one element a cycle, each user
//! `max(2 x groups, units)` cycles ([`Waves`]); a row's value comes out `DOT_LATENCY` cycles after
//! its last group.
//! A wave's last channels leave units idle when an expert's channels are not a multiple of
//! `dot_units`.

use lacuna_spec::a8w4::{group_dot, groups, ExpertChannel, Int8Vector};
use lacuna_spec::expert_unit::DOT_LATENCY;

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

/// The dot engine's wave timing, as the RTL's `DotEngine` issues: a wave is taken in a cycle
/// the previous wave ends (its last user's last cycle) or later, and issues its elements from the
/// next cycle, one a cycle (a unit's two accumulator slots alternate, so each slot's groups are
/// two cycles apart, its loop); each user takes `max(2 x groups, units)` cycles ([`pace`]), its
/// elements first.
#[derive(Clone, Copy, Debug, Default)]
pub struct Waves {
    last: Option<u64>,
}

/// Cycles a user of a wave of `units` channels takes: its `2 x groups` elements, at least
/// `units` (the SwiGLU engine's one lane takes the user's channels one a cycle meanwhile).
pub fn pace(groups: u64, units: u64) -> u64 {
    (2 * groups).max(units)
}

/// A wave's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaveTiming {
    /// The cycle the wave was taken.
    pub taken: u64,
    /// The cycle its first element issued.
    pub first: u64,
    /// Its last cycle (a next wave may be taken in it).
    pub last: u64,
    /// Groups a row.
    pub groups: u64,
    /// Cycles a user.
    pub pace: u64,
    /// Users.
    pub users: u64,
}

impl WaveTiming {
    /// The cycle user `i`'s gate (`up` false) or up row's value comes out.
    pub fn value_at(&self, i: u64, up: bool) -> u64 {
        self.first + self.pace * i + 2 * self.groups - 2 + up as u64 + DOT_LATENCY
    }

    /// The cycle element `k` (`0..2 x groups`) of user `i` issues.
    pub fn element_at(&self, i: u64, k: u64) -> u64 {
        self.first + self.pace * i + k
    }

    /// The cycle the wave's last value comes out.
    pub fn done_at(&self) -> u64 {
        self.value_at(self.users - 1, true)
    }
}

impl Waves {
    /// An idle engine.
    pub fn new() -> Waves {
        Waves::default()
    }

    /// The earliest cycle a wave is taken: any while idle, else the last cycle of the last wave.
    pub fn ready_at(&self) -> u64 {
        self.last.unwrap_or(0)
    }

    /// Issues a wave of `units` channels asked for in cycle `asked` over `users` tokens and
    /// `groups` groups a row (each at least 1).
    pub fn wave(&mut self, asked: u64, users: u64, groups: u64, units: u64) -> WaveTiming {
        let taken = asked.max(self.ready_at());
        let pace = pace(groups, units);
        let last = taken + pace * users;
        self.last = Some(last);
        WaveTiming { taken, first: taken + 1, last, groups, pace, users }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waves_follow_back_to_back_and_each_row_comes_out_the_dot_latency_after_its_last_group() {
        let mut w = Waves::new();
        // Two users of 3 groups, 2 channels: 12 elements from cycle 6.
        let a = w.wave(5, 2, 3, 2);
        assert_eq!((a.taken, a.first, a.last), (5, 6, 17));
        // User 0's gate: its last group is element 4 (cycle 10); up the cycle after.
        assert_eq!((a.value_at(0, false), a.value_at(0, true)), (10 + DOT_LATENCY, 11 + DOT_LATENCY));
        assert_eq!(a.value_at(1, true), a.done_at());
        assert_eq!(a.done_at(), a.last + DOT_LATENCY);
        // Asked early, the next is taken in the last cycle and follows at once.
        let b = w.wave(0, 1, 1, 1);
        assert_eq!((b.taken, b.first, b.last), (17, 18, 19));
        // Asked late, it waits for nothing.
        assert_eq!(w.wave(100, 1, 1, 1).first, 101);
    }

    #[test]
    fn a_user_of_more_channels_than_its_elements_waits_out_the_swiglu_lanes_pace() {
        let mut w = Waves::new();
        // One group (2 elements a user), 4 channels: 4 cycles a user.
        let a = w.wave(0, 3, 1, 4);
        assert_eq!((a.first, a.last, a.pace), (1, 12, 4));
        assert_eq!((a.element_at(1, 0), a.element_at(2, 1)), (5, 10));
        assert_eq!(a.value_at(2, true), 10 + DOT_LATENCY);
        assert_eq!(a.done_at(), a.last - 2 + DOT_LATENCY);
    }
}
