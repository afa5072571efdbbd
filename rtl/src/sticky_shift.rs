//! `sticky_shift`: a right shift that remembers whether any bit it shifted out was set: the
//! denormalizing shift of the FP units that round a result below the normal range
//! (`fp32_mul`, the expert unit's `down_operand`), combinational, N bits wide.
//!
//! ```text
//!                 +--------------+
//!   value[N] ---->|              |--> shifted[N]  value >> amount
//!   amount[N] --->| sticky_shift |--> sticky      sticky_in, or a bit shifted out was 1
//!   sticky_in --->|              |
//!                 +--------------+
//! ```
//!
//! Contract: `amount` is a sum of the block's steps (each at most once: the users cap it, e.g.
//! at 25 for steps 16, 8, 4, 2, 1); `shifted = value >> amount`; `sticky` is `sticky_in` or any
//! of the `amount` low bits of `value`.
//!
//! How: one stage per step, largest first: when `amount` has the step's bit, the low `step`
//! bits go into the sticky flag and the value moves down by `step`.

use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The shifter, N bits wide.
#[derive(LogicBlock)]
pub struct StickyShift<const N: usize> {
    /// The value.
    pub value: Signal<In, Bits<N>>,
    /// How far to shift (a sum of the steps).
    pub amount: Signal<In, Bits<N>>,
    /// Bits already lost below `value`.
    pub sticky_in: Signal<In, Bit>,
    /// `value >> amount`.
    pub shifted: Signal<Out, Bits<N>>,
    /// A set bit was lost (here or before).
    pub sticky: Signal<Out, Bit>,
    v: Signal<Local, Bits<N>>,
    st: Signal<Local, Bit>,
    steps: Vec<Constant<Bits<N>>>,
    masks: Vec<Constant<Bits<N>>>,
    zero: Constant<Bits<N>>,
}

impl<const N: usize> StickyShift<N> {
    /// A shifter by any sum of `steps` (powers of two, largest first).
    pub fn new(steps: &[u64]) -> StickyShift<N> {
        StickyShift {
            value: Default::default(),
            amount: Default::default(),
            sticky_in: Default::default(),
            shifted: Default::default(),
            sticky: Default::default(),
            v: Default::default(),
            st: Default::default(),
            steps: steps.iter().map(|&s| constant(s)).collect(),
            masks: steps.iter().map(|&s| constant((1 << s) - 1)).collect(),
            zero: constant(0),
        }
    }
}

impl<const N: usize> Logic for StickyShift<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.v.next = self.value.val();
        self.st.next = self.sticky_in.val();
        for s in 0..self.steps.len() {
            if (self.amount.val() & self.steps[s].val()) != self.zero.val() {
                self.st.next = self.st.val() || ((self.v.val() & self.masks[s].val()) != self.zero.val());
                self.v.next = self.v.val() >> self.steps[s].val();
            }
        }
        self.shifted.next = self.v.val();
        self.sticky.next = self.st.val();
    }
}
