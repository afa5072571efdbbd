//! `act_sram`: the activation SRAM: x as FP16 entries, written a burst at a time by act_load and
//! read W consecutive entries at a time by act_scan.
//!
//! ```text
//!                 +---------------- act_sram ----------------+
//!  wr_enable ---->| mem[wr_index + j] <= half j of the burst |
//!  wr_index ----->|   (j < request_bytes / 2), at the edge   |
//!  wr_data[w] --->|                                          |
//!  rd_index ----->| rd_x[i] = mem[rd_index + i]               |--> rd_x[i]  (combinational)
//!                 +------------------------------------------+
//! ```
//!
//! Contract: `sram.activation_bytes / 2` entries; an index at or past the end reads 0 and writes
//! nothing. No reset: act_scan reads only what act_load has written (`loaded`). A leaf with
//! generated Verilog (an array indexed directly, which Yosys infers as a memory), as `reg_file`.

use crate::wiring::many;
use rust_hdl::prelude::*;

/// The activation SRAM.
#[derive(LogicBlock)]
pub struct ActSram {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Write a burst this cycle.
    pub wr_enable: Signal<In, Bit>,
    /// Entry of the burst's first FP16 value.
    pub wr_index: Signal<In, Bits<32>>,
    /// The burst, 32-bit words, least significant first (two FP16 values each, low half first).
    pub wr_data: Vec<Signal<In, Bits<32>>>,
    /// First entry read.
    pub rd_index: Signal<In, Bits<32>>,
    /// Entries rd_index + i.
    pub rd_x: Vec<Signal<Out, Bits<16>>>,
    _mem: Vec<u16>,
}

impl ActSram {
    /// `entries` FP16 entries, bursts of `burst_words` 32-bit words, reads of `width` entries.
    pub fn new(entries: usize, burst_words: usize, width: usize) -> ActSram {
        assert!(entries >= 1 && burst_words >= 1 && width >= 1);
        ActSram {
            clock: Default::default(),
            wr_enable: Default::default(),
            wr_index: Default::default(),
            wr_data: many(burst_words),
            rd_index: Default::default(),
            rd_x: many(width),
            _mem: vec![0; entries],
        }
    }
}

impl Logic for ActSram {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.wr_enable.val() {
            let base = self.wr_index.val().index();
            for (w, word) in self.wr_data.iter().enumerate() {
                let v = word.val().index() as u32;
                for (h, half) in [v as u16, (v >> 16) as u16].into_iter().enumerate() {
                    if let Some(slot) = self._mem.get_mut(base + 2 * w + h) {
                        *slot = half;
                    }
                }
            }
        }
        let base = self.rd_index.val().index();
        for i in 0..self.rd_x.len() {
            let v = self._mem.get(base + i).copied().unwrap_or(0);
            self.rd_x[i].next = (v as LiteralType).into();
        }
    }

    fn connect(&mut self) {
        for s in self.rd_x.iter_mut() {
            s.connect();
        }
    }

    fn hdl(&self) -> Verilog {
        let n = self._mem.len();
        let bits = (usize::BITS - (n - 1).leading_zeros()).max(1) as usize;
        let top = bits - 1;
        let mut v = format!("reg [15:0] mem [0:{}];\n", n - 1);
        for i in 0..self.rd_x.len() {
            v.push_str(&format!("wire [31:0] rd_at_{i} = rd_index + 32'd{i};\n"));
        }
        for j in 0..2 * self.wr_data.len() {
            v.push_str(&format!("wire [31:0] wr_at_{j} = wr_index + 32'd{j};\n"));
        }
        v.push_str("\nalways @(*) begin\n");
        for i in 0..self.rd_x.len() {
            v.push_str(&format!("    rd_x${i} = (rd_at_{i} < 32'd{n}) ? mem[rd_at_{i}[{top}:0]] : 16'h0;\n"));
        }
        v.push_str("end\n\nalways @(posedge clock) begin\n    if (wr_enable) begin\n");
        for j in 0..2 * self.wr_data.len() {
            let (w, lo) = (j / 2, 16 * (j % 2));
            v.push_str(&format!(
                "        if (wr_at_{j} < 32'd{n}) mem[wr_at_{j}[{top}:0]] <= wr_data${w}[{}:{lo}];\n",
                lo + 15
            ));
        }
        v.push_str("    end\nend\n");
        Verilog::Custom(v)
    }
}
