//! `drain`: reads a finished panel's accumulators out and writes them to y.
//!
//! Contract: started by route at the end of a panel; reads one register row (L registers, rows
//! `r*L .. r*L + L`) per cycle, register 0 first, resetting them to +0.0, for `ceil(rows / L)`
//! cycles; the accumulator issues nothing meanwhile. Each output burst (aligned, `request_bytes`)
//! is queued for writing once all of the panel's rows in it are read; under fixed-priority
//! arbitration writes have the memory's highest priority. The queued bursts wait in a write buffer of one tile's output plus one burst
//! (`capacity`: `Arch::drain_buffer_bursts`, `ceil(4 * tile_rows / request_bytes) + 1` bursts); a row whose bursts would not fit
//! is not read this cycle (drain stalls until writes leave), so the buffer is bounded as the
//! hardware's must be. It fills only when panels finish faster than the memory takes their writes
//! (e.g. empty panels back to back on a narrow port).

use crate::core::accumulator::Accumulator;
use crate::memory::{MemClient, Requester};
use std::collections::VecDeque;

/// The drain unit.
pub struct Drain {
    lanes: u32,
    capacity: usize,
    reading: Option<(u32, u32, u32)>,
    buf: Vec<f32>,
    writes: VecDeque<u64>,
    next_burst: u64,
    /// The cycle the last write issued so far completes.
    pub last_write_done: u64,
}

impl Drain {
    /// A drain for `lanes` lanes with a write buffer of `capacity` bursts (at least 1).
    pub fn new(lanes: u32, capacity: usize) -> Drain {
        Drain {
            lanes,
            capacity: capacity.max(1),
            reading: None,
            buf: vec![0.0; lanes as usize],
            writes: VecDeque::new(),
            next_burst: 0,
            last_write_done: 0,
        }
    }

    /// Not reading registers.
    pub fn idle(&self) -> bool {
        self.reading.is_none()
    }

    /// The panel being read out.
    pub fn panel(&self) -> Option<u32> {
        self.reading.map(|(p, _, _)| p)
    }

    /// The register row the next step reads, while reading.
    pub fn row(&self) -> Option<u32> {
        self.reading.map(|(_, _, r)| r)
    }

    /// The address of the next write the issue phase offers, if any.
    pub fn next_write(&self) -> Option<u64> {
        self.writes.front().copied()
    }

    /// Writes still to issue.
    pub fn writes_pending(&self) -> bool {
        !self.writes.is_empty()
    }

    /// Starts reading out panel `panel` of `rows` rows.
    pub fn start(&mut self, panel: u32, rows: u32) {
        self.reading = Some((panel, rows, 0));
    }

    /// One cycle: reads one register row into `y` (panel rows start at `row0`); queues the bursts
    /// of `[y_base + 4 * row0, ...)` that are complete. Returns true when it read; false when idle
    /// or when the row's bursts would not fit the write buffer.
    pub fn step(&mut self, acc: &mut Accumulator, y: &mut [f32], row0: usize, y_base: u64, burst: u64) -> bool {
        let Some((panel, rows, r)) = self.reading else { return false };
        let l = self.lanes as usize;
        let first = r as usize * l;
        let done_rows = ((first + l).min(rows as usize)) as u64;
        let start = y_base + 4 * row0 as u64;
        let end = start + 4 * rows as u64;
        let produced = start + 4 * done_rows;
        // The bursts this row completes: from the first not yet queued, each once all of the
        // panel's rows in it are read.
        let from = if r == 0 { start / burst * burst } else { self.next_burst };
        let mut queued = 0;
        while from + queued * burst < end && (from + (queued + 1) * burst <= produced || produced == end) {
            queued += 1;
        }
        if self.writes.len() + queued as usize > self.capacity {
            return false;
        }
        acc.read_out(r, &mut self.buf);
        for (i, &v) in self.buf.iter().enumerate() {
            if first + i < rows as usize {
                y[row0 + first + i] = v;
            }
        }
        self.writes.extend((0..queued).map(|i| from + i * burst));
        self.next_burst = from + queued * burst;
        let next = r + 1;
        self.reading = if (next as u64) * (l as u64) >= rows as u64 { None } else { Some((panel, rows, next)) };
        true
    }
}

/// Issue phase: the next queued output burst.
impl Requester for Drain {
    fn wanted(&self) -> Option<(MemClient, u64)> {
        self.writes.front().map(|&addr| (MemClient::Outputs, addr))
    }

    fn granted(&mut self, done: u64, _burst: u64) {
        self.writes.pop_front();
        self.last_write_done = self.last_write_done.max(done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{Memory, Requester};
    use lacuna_spec::arch::MemoryParams;

    #[test]
    fn drain_stalls_while_its_write_buffer_is_full_and_resumes_when_a_write_leaves() {
        // 4 lanes, 16-byte bursts: every register row completes one burst; room for two.
        let mut acc = Accumulator::new(4, 8, 1, 2, 2);
        let mut drain = Drain::new(4, 2);
        let mut y = vec![1.0f32; 32];
        drain.start(0, 32);
        assert!(drain.step(&mut acc, &mut y, 0, 0, 16));
        assert!(drain.step(&mut acc, &mut y, 0, 0, 16));
        assert!(!drain.step(&mut acc, &mut y, 0, 0, 16), "a third burst does not fit");
        assert_eq!(y[8], 1.0, "the stalled row is not read");
        let mut mem = Memory::new(&MemoryParams {
            technology: "test".into(),
            bytes_per_cycle: 16,
            latency_cycles: 4,
            max_outstanding: 4,
            request_bytes: 16,
            arbitration: Default::default(),
        });
        assert!(drain.issue(0, &mut mem));
        assert!(drain.step(&mut acc, &mut y, 0, 0, 16));
        assert_eq!(y[8], 0.0);
        assert_eq!(drain.writes.iter().copied().collect::<Vec<_>>(), vec![16, 32]);
    }

    #[test]
    fn the_write_buffer_holds_one_tile_of_output_plus_a_burst() {
        let arch = lacuna_spec::Arch::preset("edge").unwrap();
        assert_eq!(arch.drain_buffer_bursts(), 4096 * 4 / 64 + 1);
    }
}
