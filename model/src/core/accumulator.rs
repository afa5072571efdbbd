//! `accumulator`: L lanes of R FP32 registers with in-order issue from per-lane FIFOs.
//!
//! Contract: row r lives in lane `r % L`, register `r / L`. Per cycle each lane issues up to
//! `acc_write_ports` entries from the head of its FIFO, in order. An entry issues only if no add to
//! its register is in flight: an add issued in cycle t completes in cycle t + `acc_add_latency`.
//! The first entry that cannot issue stops its lane for the cycle. While `drain` reads the
//! registers out, nothing issues. An entry that enters a FIFO in cycle t can issue from t + 1.
//!
//! How the model keeps the contract: issue is in order and an entry's issue cycle depends only on
//! the entries ahead of it in its lane, so the model works the issue cycle out when the entry
//! enters its FIFO (`offer`), adds it to its register then (the order of adds to a register is
//! the issue order either way), and charges its stall cycles. A FIFO then holds issue cycles only:
//! an entry leaves it in its issue cycle. Issue cycles never decrease along a lane, so the FIFO has
//! a free slot in cycle t exactly when the entry pushed `depth` entries ago issued by t: one
//! comparison, no bookkeeping of departures. Entries that arrive while drain reads wait unscheduled
//! until drain ends (`resume`); drain only starts when every FIFO is empty, so nothing scheduled
//! ever waits across a drain. A job that ends after a fault with entries still waiting takes back
//! what they charged for cycles past its end (`settle`).

use crate::core::slice::RowProduct;
use lacuna_spec::arch::MAX_LANE_QUEUE_DEPTH;
use lacuna_spec::numerics::accumulate;

/// Slots of a lane's ring: the latest `depth` entries fit whatever the arch's depth.
const RING: usize = MAX_LANE_QUEUE_DEPTH as usize;
const _: () = assert!(RING.is_power_of_two());

/// Per-cycle stall counts of the accumulator, in lane-cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct AccStalls {
    /// A lane's head entry waited for an add in flight to the same register.
    pub hazard: u64,
    /// A lane issued on all its write ports and still had entries waiting.
    pub port_limited: u64,
}

/// A scheduled entry in a lane FIFO.
#[derive(Clone, Copy, Default)]
struct Scheduled {
    /// Its issue cycle (it leaves the FIFO then).
    issue: u64,
    /// Hazard stall cycles it waited at the head of its lane: `issue - wait .. issue` (at most
    /// the add latency).
    wait: u32,
    /// 1 when the lane was port-limited in cycle `issue - wait - 1` while this entry waited.
    port_limited: u32,
}

/// One lane's FIFO and issue state.
#[derive(Clone, Copy)]
struct Lane {
    /// The latest scheduled entries: entry n at `n % RING`; a slot never written reads as
    /// issued in cycle 0.
    ring: [Scheduled; RING],
    /// Entries scheduled so far.
    pushed: u64,
    /// The issue cycle of its latest scheduled entry, and how many issued in that cycle.
    last_issue: u64,
    issued_at_last: u32,
    /// Entries waiting unscheduled for drain to end.
    deferred: u32,
}

impl Default for Lane {
    fn default() -> Lane {
        Lane { ring: [Scheduled::default(); RING], pushed: 0, last_issue: 0, issued_at_last: 0, deferred: 0 }
    }
}

/// One FP32 accumulator register and the cycle its add in flight completes.
#[derive(Clone, Copy, Default)]
struct Register {
    busy_until: u64,
    value: f32,
}

/// The register-file accumulators.
pub struct Accumulator {
    lanes: usize,
    ports: u32,
    latency: u64,
    depth: u64,
    lane: Vec<Lane>,
    /// (lane, register, product) of entries that arrived while drain reads, in arrival order.
    deferred: Vec<(u32, u32, f32)>,
    draining: bool,
    /// Row r's register (lane `r % L`, register `r / L`) at index r: L is a power of two.
    regs: Vec<Register>,
    /// Adds scheduled that a fault's end takes back (`settle`).
    adds_taken_back: u64,
    /// Stall counters.
    pub stalls: AccStalls,
}

impl Accumulator {
    /// `lanes` (a power of two) x `regs` registers, `ports` adds per lane per cycle, FIFOs of
    /// `depth` (at most `MAX_LANE_QUEUE_DEPTH`, as `Arch::validate` checks).
    pub fn new(lanes: u32, regs: u32, ports: u32, latency: u32, depth: u32) -> Accumulator {
        assert!(depth as usize <= RING, "lane_queue_depth {depth} exceeds {RING}");
        let l = lanes as usize;
        Accumulator {
            lanes: l,
            ports,
            latency: latency as u64,
            depth: depth as u64,
            lane: vec![Lane::default(); l],
            deferred: Vec::new(),
            draining: false,
            regs: vec![Register::default(); (lanes * regs) as usize],
            adds_taken_back: 0,
            stalls: AccStalls::default(),
        }
    }

    /// Adds issued.
    pub fn adds(&self) -> u64 {
        self.lane.iter().map(|l| l.pushed).sum::<u64>() - self.adds_taken_back
    }

    /// Lane `l`'s scheduled entries that are still in its FIFO after the issue of cycle `now`
    /// (at most the latest `depth`), oldest first.
    fn waiting(&self, l: usize, now: u64) -> impl Iterator<Item = Scheduled> + '_ {
        let lane = &self.lane[l];
        (lane.pushed.saturating_sub(self.depth)..lane.pushed)
            .map(move |j| lane.ring[j as usize % RING])
            .filter(move |e| e.issue > now)
    }

    /// Entries in lane `l`'s FIFO after the issue of cycle `now`.
    pub fn occupancy(&self, l: usize, now: u64) -> usize {
        self.waiting(l, now).count() + self.lane[l].deferred as usize
    }

    /// Every FIFO empty and every add complete by cycle `now`.
    pub fn quiet(&self, now: u64) -> bool {
        self.deferred.is_empty() && self.last_done() <= now
    }

    /// The cycle the last add issued so far completes (0 before any). Issue cycles never
    /// decrease along a lane, so it is the latest lane's.
    pub fn last_done(&self) -> u64 {
        self.lane.iter().filter(|l| l.pushed > 0).map(|l| l.last_issue + self.latency).max().unwrap_or(0)
    }

    /// The earliest issue after cycle `now`: a FIFO slot frees then.
    pub fn next_event(&self, now: u64) -> Option<u64> {
        (0..self.lanes).filter_map(|l| self.waiting(l, now).next().map(|e| e.issue)).min()
    }

    /// Drain starts reading: entries arriving from now on wait.
    pub fn hold(&mut self) {
        self.draining = true;
    }

    /// Drain has finished: the waiting entries may issue from cycle `from`.
    pub fn resume(&mut self, from: u64) {
        self.draining = false;
        let mut waiting = std::mem::take(&mut self.deferred);
        let mut stalls = self.stalls;
        for &(l, reg, p) in &waiting {
            let l = l as usize;
            self.lane[l].deferred -= 1;
            let row = reg as usize * self.lanes + l;
            schedule(self.ports, self.latency, &mut self.lane[l], &mut self.regs[row], &mut stalls, p, from);
        }
        self.stalls = stalls;
        waiting.clear();
        self.deferred = waiting;
    }

    /// Offers `entries` (row in the panel, product), in order, each to the FIFO of its lane
    /// `row mod L` in cycle `now`, after the issue of that cycle; keeps, in order, those whose FIFO
    /// is full (once full in a cycle, a FIFO stays full until the next cycle's issue). Returns
    /// true when any entry got in.
    pub fn offer(&mut self, entries: &mut Vec<RowProduct>, now: u64) -> bool {
        let mask = self.lanes as u32 - 1;
        let before = entries.len();
        if self.draining {
            // Every scheduled entry has issued (drain starts on an empty accumulator).
            let shift = self.lanes.trailing_zeros();
            entries.retain(|&(row, p)| {
                let l = (row & mask) as usize;
                if self.lane[l].deferred as u64 == self.depth {
                    return true;
                }
                self.lane[l].deferred += 1;
                self.deferred.push((l as u32, row >> shift, p));
                false
            });
            return entries.len() < before;
        }
        // Locals, so that the loop keeps them in registers.
        let (ports, latency, depth) = (self.ports, self.latency, self.depth);
        let (lanes, regs) = (&mut self.lane[..], &mut self.regs[..]);
        let mut stalls = self.stalls;
        let mut kept = 0;
        for j in 0..entries.len() {
            let (row, p) = entries[j];
            let l = (row & mask) as usize;
            let lane = &mut lanes[l];
            // Full when the entry pushed `depth` ago is still waiting (then so are all after it).
            if lane.ring[lane.pushed.wrapping_sub(depth) as usize % RING].issue > now {
                entries[kept] = (row, p);
                kept += 1;
                continue;
            }
            schedule(ports, latency, lane, &mut regs[row as usize], &mut stalls, p, now + 1);
        }
        entries.truncate(kept);
        self.stalls = stalls;
        kept < before
    }

    /// The job ends in cycle `end` (after a fault): entries scheduled to issue later never issue;
    /// takes back their adds and the stall cycles charged past `end`.
    pub fn settle(&mut self, end: u64) {
        for l in 0..self.lanes {
            let late: Vec<Scheduled> = self.waiting(l, end).collect();
            for e in late {
                self.adds_taken_back += 1;
                let head = e.issue - e.wait as u64;
                let counted = e.issue.min(end + 1).saturating_sub(head);
                self.stalls.hazard -= e.wait as u64 - counted;
                // (An entry charged a port-limited cycle past `end` issues past it too.)
                if e.port_limited == 1 && head - 1 > end {
                    self.stalls.port_limited -= 1;
                }
            }
        }
    }

    /// Reads register row `r` (rows `r*L .. r*L + L`) for drain and resets it to +0.0.
    pub fn read_out(&mut self, r: u32, out: &mut [f32]) {
        let row = &mut self.regs[r as usize * self.lanes..(r as usize + 1) * self.lanes];
        for (o, reg) in out.iter_mut().zip(row) {
            *o = reg.value;
            reg.value = 0.0;
        }
    }
}

/// Works out the issue cycle of an entry (product `p`) that enters `lane` behind every entry
/// scheduled there so far and may issue from cycle `from`; adds it to its register `reg`, records
/// it in the lane's ring and charges its stalls.
#[inline(always)]
fn schedule(ports: u32, latency: u64, lane: &mut Lane, reg: &mut Register, stalls: &mut AccStalls, p: f32, from: u64) {
    let last = lane.last_issue;
    // Written without branches: which way each goes depends on the data and mispredicts.
    // Port-limited: the previous entries used every port of cycle `last` with this one waiting.
    let port_limited = (from <= last) & (lane.issued_at_last == ports);
    let head = from.max(last) + port_limited as u64;
    let issue = head.max(reg.busy_until);
    stalls.port_limited += port_limited as u64;
    stalls.hazard += issue - head;
    lane.issued_at_last = lane.issued_at_last * (issue == last) as u32 + 1;
    lane.last_issue = issue;
    lane.ring[lane.pushed as usize % RING] =
        Scheduled { issue, wait: (issue - head) as u32, port_limited: port_limited as u32 };
    lane.pushed += 1;
    reg.value = accumulate(reg.value, p);
    reg.busy_until = issue + latency;
}
