//! `accumulator`: L lanes of R FP32 registers with in-order issue from per-lane FIFOs.
//!
//! Contract: row r lives in lane `r % L`, register `r / L`. Per cycle each lane issues up to
//! `acc_write_ports` entries from the head of its FIFO, in order. An entry issues only if no add to
//! its register is in flight: an add issued in cycle t completes in cycle t + `acc_add_latency`.
//! The first entry that cannot issue stops its lane for the cycle. While `drain` reads the
//! registers out, nothing issues.

use lacuna_spec::numerics::accumulate;
use std::collections::VecDeque;

/// Per-cycle stall counts of the accumulator, in lane-cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AccStalls {
    /// A lane's head entry waited for an add in flight to the same register.
    pub hazard: u64,
    /// A lane issued on all its write ports and still had entries waiting.
    pub port_limited: u64,
}

/// The register-file accumulators.
pub struct Accumulator {
    lanes: usize,
    ports: usize,
    latency: u64,
    depth: usize,
    /// Per-lane FIFOs of (register, product).
    pub fifos: Vec<VecDeque<(u32, f32)>>,
    regs: Vec<f32>,
    busy_until: Vec<u64>,
    last_done: u64,
    /// Stall counters.
    pub stalls: AccStalls,
    /// Adds issued.
    pub adds: u64,
}

impl Accumulator {
    /// `lanes` x `regs` registers, `ports` adds per lane per cycle, FIFOs of `depth`.
    pub fn new(lanes: u32, regs: u32, ports: u32, latency: u32, depth: u32) -> Accumulator {
        let n = (lanes * regs) as usize;
        Accumulator {
            lanes: lanes as usize,
            ports: ports as usize,
            latency: latency as u64,
            depth: depth as usize,
            fifos: vec![VecDeque::new(); lanes as usize],
            regs: vec![0.0; n],
            busy_until: vec![0; n],
            last_done: 0,
            stalls: AccStalls::default(),
            adds: 0,
        }
    }

    /// Free FIFO slots of lane `l`.
    pub fn free(&self, l: usize) -> usize {
        self.depth - self.fifos[l].len()
    }

    /// Every FIFO empty and every add complete by cycle `now`.
    pub fn quiet(&self, now: u64) -> bool {
        self.fifos.iter().all(VecDeque::is_empty) && self.last_done <= now
    }

    /// The cycle the last add in flight completes.
    pub fn last_done(&self) -> u64 {
        self.last_done
    }

    /// The earliest cycle after `now` at which a blocked head entry may issue.
    pub fn next_event(&self, now: u64) -> Option<u64> {
        self.fifos
            .iter()
            .enumerate()
            .filter_map(|(l, f)| f.front().map(|&(reg, _)| self.busy_until[self.index(l, reg)]))
            .filter(|&t| t > now)
            .min()
    }

    fn index(&self, lane: usize, reg: u32) -> usize {
        reg as usize * self.lanes + lane
    }

    /// One cycle of issue. Returns true when anything issued.
    pub fn step(&mut self, now: u64) -> bool {
        let mut progress = false;
        for l in 0..self.lanes {
            let mut issued = 0;
            while let Some(&(reg, p)) = self.fifos[l].front() {
                if issued == self.ports {
                    self.stalls.port_limited += 1;
                    break;
                }
                let i = self.index(l, reg);
                if self.busy_until[i] > now {
                    self.stalls.hazard += 1;
                    break;
                }
                self.regs[i] = accumulate(self.regs[i], p);
                self.busy_until[i] = now + self.latency;
                self.last_done = self.last_done.max(now + self.latency);
                self.fifos[l].pop_front();
                self.adds += 1;
                issued += 1;
                progress = true;
            }
        }
        progress
    }

    /// Reads register row `r` (rows `r*L .. r*L + L`) for drain and resets it to +0.0.
    pub fn read_out(&mut self, r: u32, out: &mut [f32]) {
        for (l, o) in out.iter_mut().enumerate() {
            let i = self.index(l, r);
            *o = self.regs[i];
            self.regs[i] = 0.0;
        }
    }
}
