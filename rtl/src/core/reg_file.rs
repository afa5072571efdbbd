//! `reg_file`: an accumulator lane's registers: R FP32 values with a scoreboard bit each.
//!
//! ```text
//!                  +--------------------------------------------+
//!  read_index[p]-->| value[read_index[p]], busy[read_index[p]]  |--> read_value[p], read_busy[p]
//!  drain_index --->| value[drain_index]                         |--> drain_value
//!  drain_clear --->|   ... and value[drain_index] <= +0.0       |
//!  wb_*[p] ------->| value[wb_index[p]] <= wb_value[p], busy <= 0|
//!  set_busy[p] --->| busy[read_index[p]] <= 1                   |--> any_busy
//!                  +--------------------------------------------+
//! ```
//!
//! Contract: reads are combinational; writes take effect at the rising edge. Write-backs clear the
//! register's busy bit; `set_busy[p]` sets the bit of `read_index[p]` (an add issued this cycle).
//! The lane guarantees that no two writes of one cycle hit the same register (the scoreboard). An
//! index at or past R reads +0.0 / not busy and writes nothing. Reset: every value +0.0, every
//! bit clear.
//!
//! Why a leaf with hand-written Verilog: as a `Vec` of registers with compare-and-select ports the
//! `edge` lane (256 registers, 3 read and 3 write ports) came to 2.8 MB of Verilated C++ and two
//! minutes of Yosys; an array indexed directly is a few dozen lines for both tools. The Verilog is
//! generated here from R and P; `update` is the same behaviour for rust-hdl's simulator.

use crate::wiring::many;
use rust_hdl::prelude::*;

/// The ports of [`RegFile`] as a top (block-level tests).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: values +0.0, busy bits clear"),
    ("read_index", "issue port p: the register it reads"),
    ("read_value", "issue port p: its value"),
    ("read_busy", "issue port p: its scoreboard bit"),
    ("set_busy", "issue port p issues a pipelined add: set the bit of read_index[p]"),
    ("wb_valid", "write-back port p writes this cycle"),
    ("wb_index", "write-back port p: the register"),
    ("wb_value", "write-back port p: the sum (clears the register's busy bit)"),
    ("drain_index", "the register drain reads"),
    ("drain_value", "its value"),
    ("drain_clear", "drain reads this cycle: the register becomes +0.0"),
    ("any_busy", "some register has an add in flight"),
];

/// R FP32 registers with P issue read ports, P write-back ports and a drain port.
#[derive(LogicBlock)]
pub struct RegFile {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Issue read ports.
    pub read_index: Vec<Signal<In, Bits<16>>>,
    /// Their values.
    pub read_value: Vec<Signal<Out, Bits<32>>>,
    /// Their scoreboard bits.
    pub read_busy: Vec<Signal<Out, Bit>>,
    /// Set the bit of `read_index[p]`.
    pub set_busy: Vec<Signal<In, Bit>>,
    /// Write-back valid.
    pub wb_valid: Vec<Signal<In, Bit>>,
    /// Write-back register.
    pub wb_index: Vec<Signal<In, Bits<16>>>,
    /// Write-back value.
    pub wb_value: Vec<Signal<In, Bits<32>>>,
    /// Drain read port.
    pub drain_index: Signal<In, Bits<16>>,
    /// Its value.
    pub drain_value: Signal<Out, Bits<32>>,
    /// Reset the drained register.
    pub drain_clear: Signal<In, Bit>,
    /// Some busy bit is set.
    pub any_busy: Signal<Out, Bit>,
    _value: Vec<Bits<32>>,
    _busy: Vec<bool>,
}

impl RegFile {
    /// `regs` registers (a power of two), `ports` issue and write-back ports.
    pub fn new(regs: usize, ports: usize) -> RegFile {
        assert!(regs.is_power_of_two() && regs <= 1 << 15 && ports >= 1);
        RegFile {
            clock: Default::default(),
            reset: Default::default(),
            read_index: many(ports),
            read_value: many(ports),
            read_busy: many(ports),
            set_busy: many(ports),
            wb_valid: many(ports),
            wb_index: many(ports),
            wb_value: many(ports),
            drain_index: Default::default(),
            drain_value: Default::default(),
            drain_clear: Default::default(),
            any_busy: Default::default(),
            _value: vec![Bits::default(); regs],
            _busy: vec![false; regs],
        }
    }

    fn at(&self, index: Bits<16>) -> Option<usize> {
        let i = index.index();
        (i < self._value.len()).then_some(i)
    }
}

impl Logic for RegFile {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.reset.val() {
                self._value.iter_mut().for_each(|v| *v = Bits::default());
                self._busy.iter_mut().for_each(|b| *b = false);
            } else {
                for p in 0..self.read_index.len() {
                    if let Some(i) = self.at(self.read_index[p].val()).filter(|_| self.set_busy[p].val()) {
                        self._busy[i] = true;
                    }
                    if let Some(i) = self.at(self.wb_index[p].val()).filter(|_| self.wb_valid[p].val()) {
                        self._value[i] = self.wb_value[p].val();
                        self._busy[i] = false;
                    }
                }
                if let Some(i) = self.at(self.drain_index.val()).filter(|_| self.drain_clear.val()) {
                    self._value[i] = Bits::default();
                }
            }
        }
        for p in 0..self.read_index.len() {
            let i = self.at(self.read_index[p].val());
            self.read_value[p].next = i.map_or(Bits::default(), |i| self._value[i]);
            self.read_busy[p].next = i.is_some_and(|i| self._busy[i]);
        }
        self.drain_value.next = self.at(self.drain_index.val()).map_or(Bits::default(), |i| self._value[i]);
        self.any_busy.next = self._busy.iter().any(|&b| b);
    }

    fn connect(&mut self) {
        for p in 0..self.read_value.len() {
            self.read_value[p].connect();
            self.read_busy[p].connect();
        }
        self.drain_value.connect();
        self.any_busy.connect();
    }

    fn hdl(&self) -> Verilog {
        let regs = self._value.len();
        let bits = regs.trailing_zeros().max(1) as usize;
        let top = bits - 1;
        let mut v = String::new();
        v.push_str(&format!("reg [31:0] value [0:{}];\nreg [{}:0] busy;\n\n", regs - 1, regs - 1));
        // Reads: the full index is compared with R, so that every bit of it is used.
        v.push_str("always @(*) begin\n");
        for p in 0..self.read_index.len() {
            v.push_str(&format!(
                "    read_value${p} = (read_index${p} < 16'd{regs}) ? value[read_index${p}[{top}:0]] : 32'h0;\n    read_busy${p} = (read_index${p} < 16'd{regs}) ? busy[read_index${p}[{top}:0]] : 1'b0;\n"
            ));
        }
        v.push_str(&format!(
            "    drain_value = (drain_index < 16'd{regs}) ? value[drain_index[{top}:0]] : 32'h0;\n    any_busy = |busy;\nend\n\n"
        ));
        // Writes, in the order of `update`: busy set, write-back (value, busy clear), drain clear.
        v.push_str("always @(posedge clock) begin\n    if (reset) begin\n");
        // Unrolled: Verilator 5.006 rejects a non-blocking array write inside a for loop.
        for r in 0..regs {
            v.push_str(&format!("        value[{r}] <= 32'h0;\n"));
        }
        v.push_str(&format!("        busy <= {regs}'h0;\n    end else begin\n"));
        for p in 0..self.read_index.len() {
            v.push_str(&format!(
                "        if (set_busy${p} && read_index${p} < 16'd{regs}) busy[read_index${p}[{top}:0]] <= 1'b1;\n        if (wb_valid${p} && wb_index${p} < 16'd{regs}) begin\n            value[wb_index${p}[{top}:0]] <= wb_value${p};\n            busy[wb_index${p}[{top}:0]] <= 1'b0;\n        end\n"
            ));
        }
        v.push_str(&format!(
            "        if (drain_clear && drain_index < 16'd{regs}) value[drain_index[{top}:0]] <= 32'h0;\n    end\nend\n"
        ));
        Verilog::Custom(v)
    }
}
