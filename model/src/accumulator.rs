//! `accumulator`: L lanes of R FP32 registers with in-order issue from per-lane FIFOs.
//!
//! Contract: row r lives in lane `r % L`, register `r / L`. Per cycle each lane issues up to
//! `acc_write_ports` entries from the head of its FIFO, in order. An entry issues only if no add to
//! its register is in flight: an add issued in cycle t completes in cycle t + `acc_add_latency`.
//! The first entry that cannot issue stops its lane for the cycle. While `drain` reads the
//! registers out, nothing issues.

use lacuna_spec::numerics::accumulate;

/// Per-cycle stall counts of the accumulator, in lane-cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AccStalls {
    /// A lane's head entry waited for an add in flight to the same register.
    pub hazard: u64,
    /// A lane issued on all its write ports and still had entries waiting.
    pub port_limited: u64,
}

/// Per-lane FIFOs of (register, product), as one flat ring buffer per lane.
pub struct Fifos {
    depth: usize,
    slots: Vec<(u32, f32)>,
    head: Vec<usize>,
    len: Vec<usize>,
}

impl Fifos {
    fn new(lanes: usize, depth: usize) -> Fifos {
        Fifos { depth, slots: vec![(0, 0.0); lanes * depth], head: vec![0; lanes], len: vec![0; lanes] }
    }

    /// Entries waiting in lane `l`.
    #[inline]
    pub fn len(&self, l: usize) -> usize {
        self.len[l]
    }

    /// True when lane `l` holds nothing.
    #[inline]
    pub fn is_empty(&self, l: usize) -> bool {
        self.len[l] == 0
    }

    /// Appends to lane `l` (which must have room).
    #[inline]
    pub fn push(&mut self, l: usize, v: (u32, f32)) {
        debug_assert!(self.len[l] < self.depth);
        let mut i = self.head[l] + self.len[l];
        if i >= self.depth {
            i -= self.depth;
        }
        self.slots[l * self.depth + i] = v;
        self.len[l] += 1;
    }

    #[inline]
    fn front(&self, l: usize) -> Option<(u32, f32)> {
        (self.len[l] > 0).then(|| self.slots[l * self.depth + self.head[l]])
    }

    #[inline]
    fn pop(&mut self, l: usize) {
        self.head[l] += 1;
        if self.head[l] == self.depth {
            self.head[l] = 0;
        }
        self.len[l] -= 1;
    }

    fn all_empty(&self) -> bool {
        self.len.iter().all(|&n| n == 0)
    }
}

/// The register-file accumulators.
pub struct Accumulator {
    lanes: usize,
    ports: usize,
    latency: u64,
    depth: usize,
    /// Per-lane FIFOs of (register, product).
    pub fifos: Fifos,
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
            fifos: Fifos::new(lanes as usize, depth as usize),
            regs: vec![0.0; n],
            busy_until: vec![0; n],
            last_done: 0,
            stalls: AccStalls::default(),
            adds: 0,
        }
    }

    /// Free FIFO slots of lane `l`.
    pub fn free(&self, l: usize) -> usize {
        self.depth - self.fifos.len(l)
    }

    /// Every FIFO empty and every add complete by cycle `now`.
    pub fn quiet(&self, now: u64) -> bool {
        self.fifos.all_empty() && self.last_done <= now
    }

    /// The cycle the last add in flight completes.
    pub fn last_done(&self) -> u64 {
        self.last_done
    }

    /// The earliest cycle after `now` at which a blocked head entry may issue.
    pub fn next_event(&self, now: u64) -> Option<u64> {
        (0..self.lanes)
            .filter_map(|l| self.fifos.front(l).map(|(reg, _)| self.busy_until[self.index(l, reg)]))
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
            while let Some((reg, p)) = self.fifos.front(l) {
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
                self.fifos.pop(l);
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
