//! `reg`: a register with a synchronous reset, the only state element of the RTL.
//!
//! ```text
//!            +---------+
//!   d[T]  -->|         |--> q[T]    q <= reset ? INIT : d   at each rising clock edge
//!   reset -->|   reg   |
//!   clock -->|>        |
//!            +---------+
//! ```
//!
//! rust-hdl's own `DFF` sets its initial value with an `initial` block, which ASIC flows ignore;
//! this register resets synchronously to `init` instead, so that the emitted Verilog has no
//! simulation-only construct.

use rust_hdl::prelude::*;

/// A register of `T` with synchronous reset to a constant.
#[derive(Clone, Debug, LogicBlock)]
pub struct Reg<T: Synth> {
    /// Next value.
    pub d: Signal<In, T>,
    /// Current value.
    pub q: Signal<Out, T>,
    /// Synchronous reset (active high).
    pub reset: Signal<In, Bit>,
    /// Clock.
    pub clock: Signal<In, Clock>,
    init: Constant<T>,
}

impl<T: Synth> Reg<T> {
    /// A register that resets to `init`.
    pub fn new(init: T) -> Reg<T> {
        Reg {
            d: Default::default(),
            q: Default::default(),
            reset: Default::default(),
            clock: Default::default(),
            init: Constant::new(init),
        }
    }
}

impl<T: Synth> Default for Reg<T> {
    fn default() -> Reg<T> {
        Reg::new(T::default())
    }
}

impl<T: Synth> Logic for Reg<T> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            self.q.next = if self.reset.val() { self.init.val() } else { self.d.val() };
        }
    }
    fn connect(&mut self) {
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom("always @(posedge clock) begin\n    if (reset) q <= init;\n    else q <= d;\nend\n".to_string())
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "reg".into(),
            clock: "clock".into(),
            inputs: vec!["d".into(), "reset".into()],
            outputs: vec!["q".into()],
        }]
    }
}

/// Wires `clock` and `reset` to every listed register and makes each hold its value unless the
/// block assigns `d` later in its `update`.
#[macro_export]
macro_rules! reg_setup {
    ($self:ident, $($reg:ident),+ $(,)?) => {
        $($self.$reg.clock.next = $self.clock.val();)+
        $($self.$reg.reset.next = $self.reset.val();)+
        $($self.$reg.d.next = $self.$reg.q.val();)+
    };
}
