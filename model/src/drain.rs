//! `drain`: reads a finished panel's accumulators out and writes them to y.
//!
//! Contract: started by route at the end of a panel; reads one register row (L registers, rows
//! `r*L .. r*L + L`) per cycle, register 0 first, resetting them to +0.0, for `ceil(rows / L)`
//! cycles; the accumulator issues nothing meanwhile. Each output burst (aligned, `request_bytes`)
//! is queued for writing once all of the panel's rows in it are read; writes have the memory's
//! highest priority.

use crate::accumulator::Accumulator;
use crate::memory::{Memory, Traffic};
use std::collections::VecDeque;

/// The drain unit.
pub struct Drain {
    lanes: u32,
    reading: Option<(u32, u32, u32)>,
    buf: Vec<f32>,
    writes: VecDeque<u64>,
    next_burst: u64,
    /// The cycle the last write issued so far completes.
    pub last_write_done: u64,
}

impl Drain {
    /// A drain for `lanes` lanes.
    pub fn new(lanes: u32) -> Drain {
        Drain {
            lanes,
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

    /// Writes still to issue.
    pub fn writes_pending(&self) -> bool {
        !self.writes.is_empty()
    }

    /// Starts reading out panel `panel` of `rows` rows.
    pub fn start(&mut self, panel: u32, rows: u32) {
        self.reading = Some((panel, rows, 0));
    }

    /// One cycle: reads one register row into `y` (panel rows start at `row0`); queues the bursts
    /// of `[y_base + 4 * row0, ...)` that are complete. Returns true when it read.
    pub fn step(&mut self, acc: &mut Accumulator, y: &mut [f32], row0: usize, y_base: u64, burst: u64) -> bool {
        let Some((panel, rows, r)) = self.reading else { return false };
        acc.read_out(r, &mut self.buf);
        let l = self.lanes as usize;
        let first = r as usize * l;
        for (i, &v) in self.buf.iter().enumerate() {
            if first + i < rows as usize {
                y[row0 + first + i] = v;
            }
        }
        let done_rows = ((first + l).min(rows as usize)) as u64;
        let start = y_base + 4 * row0 as u64;
        let end = start + 4 * rows as u64;
        if r == 0 {
            self.next_burst = start / burst * burst;
        }
        let produced = start + 4 * done_rows;
        while self.next_burst < end && (self.next_burst + burst <= produced || produced == end) {
            self.writes.push_back(self.next_burst);
            self.next_burst += burst;
        }
        let next = r + 1;
        self.reading = if (next as u64) * (l as u64) >= rows as u64 { None } else { Some((panel, rows, next)) };
        true
    }

    /// Issue phase: writes the next queued burst. Returns true when accepted.
    pub fn issue(&mut self, now: u64, mem: &mut Memory) -> bool {
        if self.writes.is_empty() {
            return false;
        }
        match mem.request(now, Traffic::Outputs) {
            Some(done) => {
                self.writes.pop_front();
                self.last_write_done = self.last_write_done.max(done);
                true
            }
            None => false,
        }
    }
}
