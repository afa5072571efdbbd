//! `sram`: an on-chip memory of cells written a row at a time and read as a run of consecutive
//! cells: the fetch buffer's burst stores (FP16 values, 4-bit runs) and its slice descriptors.
//!
//! ```text
//!                 +------------------------- sram -------------------------+
//!  wr_enable ---->| row wr_row, cell wr_offset + i <= bits [i*U +: U] of   |
//!  wr_row ------->|   the wr_data words (at the edge; ROWS rows of CELLS   |
//!  wr_offset ---->|   cells of U bits; a whole row, or WRITE cells of it)  |
//!  wr_data[w] --->|                                                        |
//!  rd_row ------->| rd[j] = cell rd_offset + j of row rd_row, zero-extended|--> rd[j] (combinational)
//!  rd_offset ---->|   (cells past the row's end read 0)                    |
//!                 +--------------------------------------------------------+
//! ```
//!
//! Contract: reads are combinational; a write takes effect at the rising edge; a row index at or
//! past ROWS reads 0 and writes nothing. No reset: readers only read rows they have seen written
//! (the fetch buffer's sequence counters). A leaf with generated Verilog (one array indexed
//! directly, which Yosys infers as a memory), as `reg_file` and `act_sram`.

use crate::wiring::many;
use rust_hdl::prelude::*;

/// ROWS x CELLS cells of U bits, read `N`-bit wide (U <= N).
#[derive(LogicBlock)]
pub struct Sram<const N: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Write a row this cycle.
    pub wr_enable: Signal<In, Bit>,
    /// The row written.
    pub wr_row: Signal<In, Bits<32>>,
    /// Its first cell written (0 for whole-row writes).
    pub wr_offset: Signal<In, Bits<32>>,
    /// The cells written packed into 32-bit words, the first in the low bits of word 0.
    pub wr_data: Vec<Signal<In, Bits<32>>>,
    /// The row read.
    pub rd_row: Signal<In, Bits<32>>,
    /// Its first cell read.
    pub rd_offset: Signal<In, Bits<32>>,
    /// Cells rd_offset + j, zero-extended.
    pub rd: Vec<Signal<Out, Bits<N>>>,
    _rows: usize,
    _cells: usize,
    _cell_bits: usize,
    _write_cells: usize,
    _mem: Vec<u32>,
}

impl<const N: usize> Sram<N> {
    /// `rows` rows of `cells` cells of `cell_bits` bits (4, 8, 16 or 32; a row a whole number of
    /// 32-bit words or less than one), read `width` cells at a time.
    pub fn new(rows: usize, cells: usize, cell_bits: usize, width: usize) -> Sram<N> {
        Sram::partial(rows, cells, cell_bits, width, cells)
    }

    /// The same, written `write_cells` cells at a time from `wr_offset` (a whole number of
    /// 32-bit words, or fewer than 32 bits in the low bits of one word).
    pub fn partial(rows: usize, cells: usize, cell_bits: usize, width: usize, write_cells: usize) -> Sram<N> {
        assert!(rows >= 1 && cells >= 1 && width >= 1 && [4, 8, 16, 32].contains(&cell_bits));
        let write_bits = write_cells * cell_bits;
        assert!(cell_bits <= N && (1..=cells).contains(&write_cells) && (write_bits % 32 == 0 || write_bits < 32));
        Sram {
            clock: Default::default(),
            wr_enable: Default::default(),
            wr_row: Default::default(),
            wr_offset: Default::default(),
            wr_data: many(write_bits.div_ceil(32)),
            rd_row: Default::default(),
            rd_offset: Default::default(),
            rd: many(width),
            _rows: rows,
            _cells: cells,
            _cell_bits: cell_bits,
            _write_cells: write_cells,
            _mem: vec![0; rows * cells],
        }
    }
}

impl<const N: usize> Logic for Sram<N> {
    fn update(&mut self) {
        let (cells, u) = (self._cells, self._cell_bits);
        let mask = if u == 32 { u32::MAX } else { (1u32 << u) - 1 };
        if self.clock.pos_edge() && self.wr_enable.val() {
            let (row, offset) = (self.wr_row.val().index(), self.wr_offset.val().index());
            for i in 0..self._write_cells {
                if row < self._rows && offset + i < cells {
                    let word = self.wr_data[i * u / 32].val().index() as u32;
                    self._mem[row * cells + offset + i] = (word >> (i * u % 32)) & mask;
                }
            }
        }
        let (row, offset) = (self.rd_row.val().index(), self.rd_offset.val().index());
        for j in 0..self.rd.len() {
            let v = if row < self._rows && offset + j < cells { self._mem[row * cells + offset + j] } else { 0 };
            self.rd[j].next = (v as LiteralType).into();
        }
    }

    fn connect(&mut self) {
        for s in self.rd.iter_mut() {
            s.connect();
        }
    }

    fn hdl(&self) -> Verilog {
        let (rows, cells, u) = (self._rows, self._cells, self._cell_bits);
        let n = rows * cells;
        let bits = (usize::BITS - (n - 1).leading_zeros()).max(1) as usize;
        let top = bits - 1;
        let mut v = format!("reg [{}:0] mem [0:{}];\n", u - 1, n - 1);
        // Cell addresses as 32-bit sums, compared in full so that every bit of the indices is used.
        v.push_str(&format!("wire [31:0] rd_base = rd_row * 32'd{cells};\n"));
        v.push_str(&format!("wire [31:0] wr_base = wr_row * 32'd{cells};\n"));
        let wc = self._write_cells;
        for i in 0..wc {
            v.push_str(&format!("wire [31:0] wr_cell_{i} = wr_offset + 32'd{i};\n"));
            v.push_str(&format!("wire [31:0] wr_at_{i} = wr_base + wr_cell_{i};\n"));
        }
        for j in 0..self.rd.len() {
            v.push_str(&format!("wire [31:0] rd_cell_{j} = rd_offset + 32'd{j};\n"));
            v.push_str(&format!("wire [31:0] rd_at_{j} = rd_base + rd_cell_{j};\n"));
        }
        v.push_str("\nalways @(*) begin\n");
        for j in 0..self.rd.len() {
            let value = if u == N {
                format!("mem[rd_at_{j}[{top}:0]]")
            } else {
                format!("{{{}'h0, mem[rd_at_{j}[{top}:0]]}}", N - u)
            };
            v.push_str(&format!(
                "    rd${j} = (rd_row < 32'd{rows} && rd_cell_{j} < 32'd{cells} && rd_at_{j} < 32'd{n}) ? {value} : {N}'h0;\n"
            ));
        }
        v.push_str("end\n\nalways @(posedge clock) begin\n");
        v.push_str(&format!("    if (wr_enable && wr_row < 32'd{rows}) begin\n"));
        for i in 0..wc {
            let (w, lo) = (i * u / 32, i * u % 32);
            v.push_str(&format!(
                "        if (wr_cell_{i} < 32'd{cells} && wr_at_{i} < 32'd{n}) mem[wr_at_{i}[{top}:0]] <= wr_data${w}[{}:{lo}];\n",
                lo + u - 1
            ));
        }
        v.push_str("    end\nend\n");
        let write_bits = wc * u;
        if write_bits < 32 {
            // A sub-word write uses the word's low bits (Verilator's lint ignores `unused*`).
            v.push_str(&format!("wire unused_wr_data = ^wr_data$0[31:{write_bits}];\n"));
        }
        Verilog::Custom(v)
    }
}
