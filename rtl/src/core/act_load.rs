//! `act_load`: copies x from memory into the activation SRAM, burst by burst, at job start.
//!
//! ```text
//!                 +------------- act_load -------------+
//!  x_base, cols ->| next: bytes of x requested so far  |--> req_valid, req_addr
//!  req_ready ---->| loaded: bytes of x in the SRAM     |--> loaded
//!  resp_valid --->|   (a response: one more burst)     |--> wr_enable, wr_index (to act_sram)
//!                 +------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md, "act_load"): asks for the bursts of x (2K bytes from
//! `x_base`, burst aligned) in address order, one per cycle when the memory port grants it
//! (`req_ready`). Responses come back in order, each presented in the cycle before its data is
//! due (the memory port's convention, docs/rtl.md), so `loaded` counts it from the next cycle,
//! as the model's `loaded(now)` does; the burst is written to the SRAM at the same edge.

use crate::reg::Reg;
use crate::wiring::constant;
use rust_hdl::prelude::*;

/// The activation loader.
#[derive(LogicBlock)]
pub struct ActLoad {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (a new job).
    pub reset: Signal<In, Bit>,
    /// Address of x (burst aligned).
    pub x_base: Signal<In, Bits<32>>,
    /// K: activations in x.
    pub cols: Signal<In, Bits<32>>,
    /// The memory port takes the request this cycle.
    pub req_ready: Signal<In, Bit>,
    /// A response for act_load arrives.
    pub resp_valid: Signal<In, Bit>,
    /// A burst is wanted.
    pub req_valid: Signal<Out, Bit>,
    /// Its address.
    pub req_addr: Signal<Out, Bits<32>>,
    /// Bytes of x in the SRAM.
    pub loaded: Signal<Out, Bits<32>>,
    /// Write the response into the SRAM.
    pub wr_enable: Signal<Out, Bit>,
    /// At this entry.
    pub wr_index: Signal<Out, Bits<32>>,
    next: Reg<Bits<32>>,
    done_bytes: Reg<Bits<32>>,
    x_bytes: Signal<Local, Bits<32>>,
    after: Signal<Local, Bits<32>>,
    burst: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
}

impl ActLoad {
    /// A loader of `burst`-byte requests.
    pub fn new(burst: u32) -> ActLoad {
        ActLoad {
            clock: Default::default(),
            reset: Default::default(),
            x_base: Default::default(),
            cols: Default::default(),
            req_ready: Default::default(),
            resp_valid: Default::default(),
            req_valid: Default::default(),
            req_addr: Default::default(),
            loaded: Default::default(),
            wr_enable: Default::default(),
            wr_index: Default::default(),
            next: Default::default(),
            done_bytes: Default::default(),
            x_bytes: Default::default(),
            after: Default::default(),
            burst: constant(burst as u64),
            one32: constant(1),
        }
    }
}

impl Logic for ActLoad {
    #[hdl_gen]
    fn update(&mut self) {
        self.next.clock.next = self.clock.val();
        self.next.reset.next = self.reset.val();
        self.next.d.next = self.next.q.val();
        self.done_bytes.clock.next = self.clock.val();
        self.done_bytes.reset.next = self.reset.val();
        self.done_bytes.d.next = self.done_bytes.q.val();
        self.x_bytes.next = self.cols.val() << self.one32.val();
        self.req_valid.next = self.next.q.val() < self.x_bytes.val();
        self.req_addr.next = self.x_base.val() + self.next.q.val();
        if self.req_valid.val() && self.req_ready.val() {
            self.next.d.next = self.next.q.val() + self.burst.val();
        }
        self.loaded.next = self.done_bytes.q.val();
        self.wr_enable.next = self.resp_valid.val();
        self.wr_index.next = self.done_bytes.q.val() >> self.one32.val();
        self.after.next = self.done_bytes.q.val() + self.burst.val();
        if self.after.val() > self.x_bytes.val() {
            self.after.next = self.x_bytes.val();
        }
        if self.resp_valid.val() {
            self.done_bytes.d.next = self.after.val();
        }
    }
}
