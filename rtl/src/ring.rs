//! `ring`: the pointers of a circular queue of `depth` entries that pops at most one entry a
//! cycle: the queue control of act_scan's activation queue, colptr_fetch's column queue,
//! chunk_fetch's fetch buffer, drain's write ring and mem_port's request ids. (The accumulator
//! lane's product FIFO retires up to P entries a cycle and keeps its own pointers.)
//!
//! ```text
//!            +---------------------- ring ----------------------+
//!  pop ----->| head' = pop ? (head + 1) mod depth : head         |--> head  (the oldest entry)
//!  push[N] ->| count' = count - pop + push                       |--> tail  ((head + count) mod depth:
//!  reset --->|                                                   |           where the next entry goes)
//!  clock --->|>                                                  |--> count (entries held)
//!            +---------------------------------------------------+
//! ```
//!
//! Contract: the storage (flops or an SRAM, with as many write ports as the user pushes in a
//! cycle) stays with the user, which writes entry `i` of a cycle's pushes at
//! `(tail + i) mod depth` and reads the head at `head`; `head`, `tail` and `count` depend on the
//! registers only, so a user may decide `pop` and `push` from them in the same cycle. The user
//! never pops an empty ring nor pushes past `depth` (`count - pop + push <= depth`): the ring does
//! not check, as every user already holds a stricter condition of its own (a room check before it
//! pushes, a valid head before it pops). Reset empties it. N bits hold `2 * depth` (`tail` is
//! computed as `head + count` before the wrap).

use crate::reg::Reg;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The ring pointers of a queue of `depth` entries, N-bit.
#[derive(LogicBlock)]
pub struct Ring<const N: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: empty.
    pub reset: Signal<In, Bit>,
    /// The head leaves this cycle.
    pub pop: Signal<In, Bit>,
    /// Entries that enter at the tail this cycle.
    pub push: Signal<In, Bits<N>>,
    /// Index of the oldest entry.
    pub head: Signal<Out, Bits<N>>,
    /// Index where the next entry goes.
    pub tail: Signal<Out, Bits<N>>,
    /// Entries held.
    pub count: Signal<Out, Bits<N>>,
    head_r: Reg<Bits<N>>,
    count_r: Reg<Bits<N>>,
    next_head: Signal<Local, Bits<N>>,
    after_pop: Signal<Local, Bits<N>>,
    sum: Signal<Local, Bits<N>>,
    depth: Constant<Bits<N>>,
    one: Constant<Bits<N>>,
    zero: Constant<Bits<N>>,
}

impl<const N: usize> Ring<N> {
    /// The pointers of a ring of `depth` entries (1..2^(N-1)).
    pub fn new(depth: usize) -> Ring<N> {
        assert!(depth >= 1 && (N >= 64 || (2 * depth as u128) < (1u128 << N)), "a ring of {depth} in {N} bits");
        Ring {
            clock: Default::default(),
            reset: Default::default(),
            pop: Default::default(),
            push: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            head_r: Default::default(),
            count_r: Default::default(),
            next_head: Default::default(),
            after_pop: Default::default(),
            sum: Default::default(),
            depth: constant(depth as u64),
            one: constant(1),
            zero: constant(0),
        }
    }
}

impl<const N: usize> Logic for Ring<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.head_r.clock.next = self.clock.val();
        self.head_r.reset.next = self.reset.val();
        self.count_r.clock.next = self.clock.val();
        self.count_r.reset.next = self.reset.val();
        self.head.next = self.head_r.q.val();
        self.count.next = self.count_r.q.val();
        self.sum.next = self.head_r.q.val() + self.count_r.q.val();
        self.tail.next = self.sum.val();
        if self.sum.val() >= self.depth.val() {
            self.tail.next = self.sum.val() - self.depth.val();
        }
        self.next_head.next = self.head_r.q.val();
        self.after_pop.next = self.count_r.q.val();
        if self.pop.val() {
            self.after_pop.next = self.count_r.q.val() - self.one.val();
            self.next_head.next = self.head_r.q.val() + self.one.val();
            if self.next_head.val() == self.depth.val() {
                self.next_head.next = self.zero.val();
            }
        }
        self.head_r.d.next = self.next_head.val();
        self.count_r.d.next = self.after_pop.val() + self.push.val();
    }
}
