//! `route`: delivers a slice's products to the FIFO of lane `row mod L`.
//!
//! Contract: holds one slice; per cycle each lane's FIFO takes as many of the slice's entries for
//! that lane as it has free slots, in entry order; the slice leaves when all are delivered. An
//! end-of-panel marker leaves when every FIFO is empty, every add has completed and drain is idle;
//! it then starts drain for that panel.

use crate::accumulator::Accumulator;
use crate::slice::{LaneSorted, Products, Token};

/// What the route stage holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Nothing.
    Empty,
    /// A slice whose entries wait in `pending`.
    Slice,
    /// An end-of-panel marker.
    EndPanel(u32),
}

/// The route stage.
pub struct Route {
    lanes: u32,
    /// Its content.
    pub held: Held,
    /// Entries of the held slice grouped by lane (register, product); lane l's still to deliver
    /// are `data.sorted[next[l]..end[l]]`.
    data: LaneSorted,
    next: Vec<usize>,
    end: Vec<usize>,
    /// Lanes with entries still to deliver.
    waiting: usize,
    /// Cycles in which some lane had entries it could not deliver while another lane's FIFO was
    /// empty (lanes idle because the work is unevenly spread).
    pub imbalance_cycles: u64,
}

impl Route {
    /// A route over `lanes` lanes.
    pub fn new(lanes: u32) -> Route {
        let l = lanes as usize;
        Route {
            lanes,
            held: Held::Empty,
            data: LaneSorted::default(),
            next: vec![0; l],
            end: vec![0; l],
            waiting: 0,
            imbalance_cycles: 0,
        }
    }

    /// Free to take the next slice.
    pub fn is_empty(&self) -> bool {
        matches!(self.held, Held::Empty)
    }

    /// Takes a slice from the multiplier (the stage must be empty); returns the previous slice's
    /// buffers for reuse.
    pub fn accept(&mut self, token: Token<Products>) -> Option<LaneSorted> {
        match token {
            Token::EndPanel(p) => {
                self.held = Held::EndPanel(p);
                None
            }
            Token::Work(products) => {
                let old = std::mem::replace(&mut self.data, products.data);
                self.waiting = 0;
                let mut start = 0u32;
                for l in 0..self.lanes as usize {
                    self.next[l] = start as usize;
                    self.end[l] = self.data.ends[l] as usize;
                    self.waiting += (self.end[l] > self.next[l]) as usize;
                    start = self.data.ends[l];
                }
                self.held = if self.waiting > 0 { Held::Slice } else { Held::Empty };
                Some(old)
            }
        }
    }

    /// One cycle of delivery. Returns (progress, the panel whose drain starts, if any).
    pub fn step(&mut self, now: u64, acc: &mut Accumulator, drain_idle: bool) -> (bool, Option<u32>) {
        match self.held {
            Held::Empty => (false, None),
            Held::EndPanel(p) => {
                if drain_idle && acc.quiet(now) {
                    self.held = Held::Empty;
                    (true, Some(p))
                } else {
                    (false, None)
                }
            }
            Held::Slice => {
                let mut progress = false;
                let mut blocked = false;
                let mut idle_lane = false;
                for l in 0..self.lanes as usize {
                    let pending = self.end[l] - self.next[l];
                    if pending > 0 {
                        let n = pending.min(acc.free(l));
                        for i in self.next[l]..self.next[l] + n {
                            acc.fifos.push(l, self.data.sorted[i]);
                        }
                        self.next[l] += n;
                        if n > 0 {
                            progress = true;
                            if n == pending {
                                self.waiting -= 1;
                            }
                        }
                        blocked |= n < pending;
                    }
                    idle_lane |= acc.fifos.is_empty(l);
                }
                if blocked && idle_lane {
                    self.imbalance_cycles += 1;
                }
                if self.waiting == 0 {
                    self.held = Held::Empty;
                    progress = true;
                }
                (progress, None)
            }
        }
    }
}
