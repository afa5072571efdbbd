//! `route`: delivers a slice's products to the FIFO of lane `row mod L`.
//!
//! Contract: holds one slice; per cycle each lane's FIFO takes as many of the slice's entries for
//! that lane as it has free slots, in entry order; the slice leaves when all are delivered. An
//! end-of-panel marker leaves when every FIFO is empty, every add has completed and drain is idle;
//! it then starts drain for that panel.

use crate::accumulator::Accumulator;
use crate::slice::{Products, Token};
use std::collections::VecDeque;

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
    /// Entries of the held slice still to deliver, per lane: (register, product).
    pending: Vec<VecDeque<(u32, f32)>>,
    /// Cycles in which some lane had entries it could not deliver while another lane's FIFO was
    /// empty (lanes idle because the work is unevenly spread).
    pub imbalance_cycles: u64,
}

impl Route {
    /// A route over `lanes` lanes.
    pub fn new(lanes: u32) -> Route {
        Route { lanes, held: Held::Empty, pending: vec![VecDeque::new(); lanes as usize], imbalance_cycles: 0 }
    }

    /// Free to take the next slice.
    pub fn is_empty(&self) -> bool {
        matches!(self.held, Held::Empty)
    }

    /// Takes a slice from the multiplier (the stage must be empty); returns the slice's entry
    /// buffer for reuse.
    pub fn accept(&mut self, token: Token<Products>) -> Option<Vec<(u32, f32)>> {
        match token {
            Token::EndPanel(p) => {
                self.held = Held::EndPanel(p);
                None
            }
            Token::Work(mut products) => {
                for &(row, p) in &products.entries {
                    self.pending[(row % self.lanes) as usize].push_back((row / self.lanes, p));
                }
                self.held = Held::Slice;
                products.entries.clear();
                Some(products.entries)
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
                let per_lane = &mut self.pending;
                let mut progress = false;
                let mut blocked = false;
                let mut idle_lane = false;
                for (l, pending) in per_lane.iter_mut().enumerate() {
                    let n = pending.len().min(acc.free(l));
                    for _ in 0..n {
                        acc.fifos[l].push_back(pending.pop_front().expect("counted"));
                    }
                    progress |= n > 0;
                    blocked |= !pending.is_empty();
                    idle_lane |= acc.fifos[l].is_empty();
                }
                if blocked && idle_lane {
                    self.imbalance_cycles += 1;
                }
                if per_lane.iter().all(VecDeque::is_empty) {
                    self.held = Held::Empty;
                    progress = true;
                }
                (progress, None)
            }
        }
    }
}
