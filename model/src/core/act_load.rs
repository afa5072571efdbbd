//! `act_load`: copies the activation vector x from memory into the activation SRAM at job start.
//!
//! Contract: issues the bursts of x in address order, one per cycle when the memory accepts;
//! `loaded(now)` is how many bytes (from x's start) are in the SRAM in cycle `now`. Bursts complete
//! in issue order (memory contract), so the loaded prefix only grows.

use crate::memory::{MemClient, Requester};
use std::collections::VecDeque;

/// The activation loader.
pub struct ActLoad {
    x_base: u64,
    x_bytes: u64,
    next: u64,
    in_flight: VecDeque<(u64, u64)>,
    loaded: u64,
}

impl ActLoad {
    /// Loads `x_bytes` from `x_base` (burst aligned).
    pub fn new(x_base: u64, x_bytes: u64) -> ActLoad {
        ActLoad { x_base, x_bytes, next: x_base, in_flight: VecDeque::new(), loaded: 0 }
    }

    /// Bytes of x in the SRAM as of cycle `now`.
    pub fn loaded(&mut self, now: u64) -> u64 {
        while let Some(&(done, end)) = self.in_flight.front() {
            if done > now {
                break;
            }
            self.loaded = end.min(self.x_bytes);
            self.in_flight.pop_front();
        }
        self.loaded
    }

    /// All of x is loaded.
    pub fn complete(&self) -> bool {
        self.loaded >= self.x_bytes
    }

    /// The next cycle in which more bytes arrive.
    pub fn next_event(&self) -> Option<u64> {
        self.in_flight.front().map(|&(d, _)| d)
    }
}

/// Issue phase: the next burst of x, in address order.
impl Requester for ActLoad {
    fn wanted(&self) -> Option<(MemClient, u64)> {
        (self.next < self.x_base + self.x_bytes).then_some((MemClient::Activations, self.next))
    }

    fn granted(&mut self, done: u64, burst: u64) {
        self.next += burst;
        self.in_flight.push_back((done, self.next - self.x_base));
    }
}
