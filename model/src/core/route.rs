//! `route`: delivers a slice's products to the FIFO of lane `row mod L`.
//!
//! Contract: holds one slice; per cycle each lane's FIFO takes as many of the slice's entries for
//! that lane as it has free slots, in entry order; the slice leaves when all are delivered. An
//! end-of-panel marker leaves when every FIFO is empty, every add has completed and drain is idle;
//! it then starts drain for that panel.
//!
//! The model offers the held entries to the FIFOs in entry order once per cycle
//! (`Accumulator::offer`); what a full lane cannot take stays, still in entry order, for the next
//! cycle. That is the contract's per-lane split without sorting the slice by lane (once a lane's
//! FIFO is full in a cycle it stays full until the next cycle's issue, so no later entry of that
//! lane gets in ahead of an earlier one).

use crate::core::accumulator::Accumulator;
use crate::core::slice::{Products, RowProduct, Token};

/// What the route stage holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// Nothing.
    Empty,
    /// A slice whose entries wait in `entries`.
    Slice,
    /// An end-of-panel marker.
    EndPanel(u32),
}

/// The route stage.
pub struct Route {
    lanes: u32,
    /// Its content.
    pub held: Held,
    /// The held slice's entries not yet delivered, in entry order.
    entries: Vec<RowProduct>,
    /// Cycles in which some lane had entries it could not deliver while another lane's FIFO was
    /// empty (lanes idle because the work is unevenly spread).
    pub imbalance_cycles: u64,
}

impl Route {
    /// A route over `lanes` lanes (a power of two).
    pub fn new(lanes: u32) -> Route {
        Route { lanes, held: Held::Empty, entries: Vec::new(), imbalance_cycles: 0 }
    }

    /// Free to take the next slice.
    pub fn is_empty(&self) -> bool {
        matches!(self.held, Held::Empty)
    }

    /// Takes a slice from the multiplier (the stage must be empty); returns the previous slice's
    /// buffer for reuse.
    pub fn accept(&mut self, token: Token<Products>) -> Option<Vec<RowProduct>> {
        match token {
            Token::EndPanel(p) => {
                self.held = Held::EndPanel(p);
                None
            }
            Token::Work(products) => {
                let old = std::mem::replace(&mut self.entries, products.entries);
                self.held = if self.entries.is_empty() { Held::Empty } else { Held::Slice };
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
                let delivered = acc.offer(&mut self.entries, now);
                if !self.entries.is_empty() {
                    // Blocked: is some lane idle meanwhile?
                    if (0..self.lanes as usize).any(|l| acc.occupancy(l, now) == 0) {
                        self.imbalance_cycles += 1;
                    }
                    (delivered, None)
                } else {
                    self.held = Held::Empty;
                    (true, None)
                }
            }
        }
    }
}
