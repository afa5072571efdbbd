//! `delay`: a value delayed by a fixed number of cycles, a chain of registers: the side band of
//! a pipeline whose arithmetic takes several cycles (`expert_unit::swiglu::lane`).
//!
//! ```text
//!            +-------------------------+
//!   d[T] --->| reg -> reg -> ... -> reg|---> q[T]   d of `cycles` cycles ago
//!            +-------------------------+
//! ```
//!
//! Contract: `q` at cycle t + `cycles` is `d` at cycle t (`cycles` >= 1); after a reset, `q` is
//! the type's zero until the first value arrives. Every register loads every cycle.

use crate::reg::Reg;
use rust_hdl::prelude::*;

/// `cycles` registers in a row.
#[derive(LogicBlock)]
pub struct Delay<T: Synth> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The value in.
    pub d: Signal<In, T>,
    /// The value of `cycles` cycles ago.
    pub q: Signal<Out, T>,
    regs: Vec<Reg<T>>,
}

impl<T: Synth> Delay<T> {
    /// A delay of `cycles` (at least 1) cycles.
    pub fn new(cycles: usize) -> Delay<T> {
        assert!(cycles >= 1, "a delay of at least one cycle");
        Delay {
            clock: Default::default(),
            reset: Default::default(),
            d: Default::default(),
            q: Default::default(),
            regs: (0..cycles).map(|_| Reg::default()).collect(),
        }
    }
}

impl<T: Synth> Logic for Delay<T> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..self.regs.len() {
            self.regs[i].clock.next = self.clock.val();
            self.regs[i].reset.next = self.reset.val();
        }
        self.regs[0].d.next = self.d.val();
        for i in 1..self.regs.len() {
            self.regs[i].d.next = self.regs[i - 1].q.val();
        }
        // rust-hdl indexes only with loop variables: the last assignment wins.
        for i in 0..self.regs.len() {
            self.q.next = self.regs[i].q.val();
        }
    }
}
