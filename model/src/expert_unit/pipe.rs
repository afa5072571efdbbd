//! `pipe`: the unit's compute pipeline, wave by wave: the dot engine, the SwiGLU engine, the two
//! operand banks between SwiGLU and the down engine, and the down engine (as the RTL's
//! `ExpertPipe`).
//!
//! Contract: a wave (up to `dot_units` channels of one expert, its records staged) is taken by
//! the dot engine ([`Waves`]) once it is asked for and the down engine has taken the last pass
//! of the wave before the previous one (the wave writes its down operands into bank `w mod 2`;
//! the down engine latches a pass's operands when it takes the pass, so the bank is free from
//! that cycle). SwiGLU gives channel `u`'s operand for user `i` in [`swiglu::operand_at`]'s cycle;
//! channel `u`'s pass (its column times each of the wave's users, plus any operand the caller
//! adds, such as the calibration's mean row) is asked for the cycle after its last user's operand
//! (and not before `hold`, the calibration statistics), in channel order, and taken by the down
//! engine's rule ([`Issue`]). Other passes (calibration terms, the unrouted means:
//! [`mean_passes`]) go through [`Pipe::pass`] in the job's order.

use super::dot_engine::{WaveTiming, Waves};
use super::down_engine::{Issue, PassTiming};
use super::swiglu;
use lacuna_spec::moe_trace::Routing;

/// The pipeline's state between waves.
#[derive(Clone, Debug)]
pub struct Pipe {
    dots: Waves,
    down: Issue,
    /// Per operand bank, the cycle the down engine took the last pass of the last wave that
    /// wrote it.
    banks: [u64; 2],
    waves: usize,
    /// The cycle after SwiGLU's last operand so far.
    swiglu_end: u64,
    /// No wave or pass is taken before it (the tokens are written).
    start: u64,
}

/// A wave's timing through the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaveRun {
    /// The dot engine's.
    pub dot: WaveTiming,
    /// Each channel's down pass.
    pub passes: Vec<PassTiming>,
}

/// A wave as the pipeline takes it.
#[derive(Clone, Copy, Debug)]
pub struct WaveAsk<'a> {
    /// The cycle it is asked for (its records staged).
    pub asked: u64,
    /// Its channels (1..=dot_units).
    pub units: u64,
    /// Groups a row.
    pub groups: u64,
    /// Row blocks of the down engine (`ceil(hidden / down_lanes)`).
    pub blocks: u32,
    /// The down passes' operand slots: the users' token slots, then any extra operand.
    pub slots: &'a [u32],
    /// Of them, the users (the first `users` slots).
    pub users: u64,
    /// No pass is taken before this cycle (the calibration statistics).
    pub hold: u64,
}

impl Pipe {
    /// An idle pipeline whose first wave or pass is taken at `start` or later (the job's tokens
    /// written).
    pub fn new(start: u64) -> Pipe {
        Pipe { dots: Waves::new(), down: Issue::new(), banks: [start; 2], waves: 0, swiglu_end: start, start }
    }

    /// Runs a wave of at least one user.
    pub fn wave(&mut self, w: &WaveAsk) -> WaveRun {
        let bank = self.waves % 2;
        let dot = self.dots.wave(w.asked.max(self.banks[bank]), w.users, w.groups, w.units);
        let passes: Vec<PassTiming> = (0..w.units)
            .map(|u| {
                // The channel's operands are all in the cycle after its last user's.
                let end = swiglu::operand_at(&dot, u, w.users - 1) + 1;
                self.swiglu_end = end;
                self.down.pass(end.max(w.hold), w.slots, w.blocks)
            })
            .collect();
        self.banks[bank] = passes.last().map_or(dot.taken, |p| p.taken);
        self.waves += 1;
        WaveRun { dot, passes }
    }

    /// A pass that is not a channel's (calibration terms, unrouted means), asked for in `asked`.
    pub fn pass(&mut self, asked: u64, slots: &[u32], blocks: u32) -> PassTiming {
        self.down.pass(asked.max(self.start), slots, blocks)
    }

    /// The cycle after SwiGLU's last operand so far (the pipeline's start before any).
    pub fn swiglu_end(&self) -> u64 {
        self.swiglu_end
    }

    /// The first cycle the down engine has nothing in flight.
    pub fn drained_at(&self) -> u64 {
        self.down.drained_at()
    }
}

/// The unrouted experts' means as down passes: per expert (ascending), the expert and the token
/// slots not routed to it (experts every token uses have none). Each pass's column is the expert's mean
/// vector (the down lanes' scales, with weights of 1) and each operand 1.0, so a lane adds
/// `(1 x mean_r) x 1 = mean_r` exactly, into the token's row, in the golden's order.
pub fn mean_passes(routing: &[Routing], experts: usize) -> Vec<(usize, Vec<u32>)> {
    (0..experts)
        .map(|e| {
            let routed = |r: &Routing| r.experts.iter().any(|x| x.0 as usize == e);
            (e, (0..routing.len() as u32).filter(|&t| !routed(&routing[t as usize])).collect::<Vec<u32>>())
        })
        .filter(|(_, slots)| !slots.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lacuna_spec::expert_unit::{DOT_LATENCY, SWIGLU_OUT_AFTER_UP};

    #[test]
    fn a_third_wave_waits_until_the_down_engine_took_the_first_waves_last_pass() {
        let mut p = Pipe::new(0);
        // One group, one user, 2 channels of 8 blocks each: the down engine is the bottleneck.
        let ask = |asked| WaveAsk { asked, units: 2, groups: 1, blocks: 8, slots: &[0], users: 1, hold: 0 };
        let a = p.wave(&ask(0));
        // The first channel's pass is asked the cycle after its operand.
        let first_operand = a.dot.value_at(0, true) + SWIGLU_OUT_AFTER_UP;
        assert_eq!(a.dot.value_at(0, true), a.dot.first + 1 + DOT_LATENCY);
        assert_eq!(a.passes[0].taken, first_operand + 1);
        assert_eq!(a.passes[1].taken, a.passes[0].last);
        let b = p.wave(&ask(0));
        assert_eq!(b.dot.taken, a.dot.last);
        let c = p.wave(&ask(0));
        assert_eq!(c.dot.taken, a.passes[1].taken);
        assert!(c.dot.taken > b.dot.last);
    }

    #[test]
    fn a_channels_pass_waits_for_the_hold() {
        let mut p = Pipe::new(0);
        let w = p.wave(&WaveAsk { asked: 3, units: 1, groups: 2, blocks: 1, slots: &[0, 4], users: 1, hold: 500 });
        assert_eq!(w.passes[0].taken, 500);
        assert_eq!(p.swiglu_end(), swiglu::operand_at(&w.dot, 0, 0) + 1);
    }
}
