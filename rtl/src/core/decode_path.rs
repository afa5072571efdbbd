//! `decode_path`: the run-length decoder and the multiplier, wired: from the fetch buffer's head to
//! route's input, as one block for block-level co-simulation and for the core.
//!
//! ```text
//!  fetch buffer head --> [ rlc_decoder D1 -> D2 -> D3 ] --> [ multiplier ] --> route
//!        in_ready <--            overrun, overrun_row            out_valid/out_*, out_ready
//! ```

use super::multiplier::Multiplier;
use super::rlc_decoder::RlcDecoder;
use crate::wiring::many;
use rust_hdl::prelude::*;

/// The ports of [`DecodePath`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset, active high"),
    ("in_valid", "the fetch buffer's head slice (or marker) has all its data"),
    ("in_marker", "the head is an end-of-panel marker"),
    ("in_panel", "its panel"),
    ("in_k", "its column (carried for the fault report)"),
    ("in_first", "the slice is its column's first"),
    ("in_lo", "first entry of the column in the chunk (offset 0..C)"),
    ("in_hi", "one past its last entry in the chunk (offset)"),
    ("in_x", "the column's activation, FP16"),
    ("in_rows", "rows of the slice's panel"),
    ("in_value", "chunk entry e: its FP16 value"),
    ("in_run", "chunk entry e: its run length (low 4 bits)"),
    ("halt", "a fault elsewhere: no new slice enters"),
    ("out_ready", "route takes the multiplier's token this cycle"),
    ("in_ready", "the decoder takes the head this cycle"),
    ("overrun", "a slice with an entry past its panel reaches D3 this cycle (error)"),
    ("overrun_row", "the first such row"),
    ("overrun_panel", "that slice's panel"),
    ("overrun_k", "that slice's column"),
    ("invalid", "a slice with an Inf or NaN operand enters the multiplier stage (error)"),
    ("empty", "decoder and multiplier hold nothing"),
    ("out_valid", "the multiplier stage holds a token"),
    ("out_marker", "it is an end-of-panel marker"),
    ("out_panel", "its panel"),
    ("out_entry_valid", "entry e is valid"),
    ("out_row", "entry e: its row in the panel"),
    ("out_product", "entry e: its exact FP32 product"),
];

/// Decoder + multiplier.
#[derive(LogicBlock)]
pub struct DecodePath {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Head ready.
    pub in_valid: Signal<In, Bit>,
    /// Head is a marker.
    pub in_marker: Signal<In, Bit>,
    /// Its panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Its column.
    pub in_k: Signal<In, Bits<32>>,
    /// Column's first slice.
    pub in_first: Signal<In, Bit>,
    /// Column start in the chunk.
    pub in_lo: Signal<In, Bits<8>>,
    /// Column end in the chunk.
    pub in_hi: Signal<In, Bits<8>>,
    /// Activation.
    pub in_x: Signal<In, Bits<16>>,
    /// Panel rows.
    pub in_rows: Signal<In, Bits<32>>,
    /// Values.
    pub in_value: Vec<Signal<In, Bits<16>>>,
    /// Runs.
    pub in_run: Vec<Signal<In, Bits<16>>>,
    /// Fault elsewhere.
    pub halt: Signal<In, Bit>,
    /// Route takes.
    pub out_ready: Signal<In, Bit>,
    /// Head taken.
    pub in_ready: Signal<Out, Bit>,
    /// Overrun.
    pub overrun: Signal<Out, Bit>,
    /// Overrun row.
    pub overrun_row: Signal<Out, Bits<32>>,
    /// Overrun panel.
    pub overrun_panel: Signal<Out, Bits<16>>,
    /// Overrun column.
    pub overrun_k: Signal<Out, Bits<32>>,
    /// Non-finite operand.
    pub invalid: Signal<Out, Bit>,
    /// Nothing held.
    pub empty: Signal<Out, Bit>,
    /// Token held.
    pub out_valid: Signal<Out, Bit>,
    /// Marker.
    pub out_marker: Signal<Out, Bit>,
    /// Panel.
    pub out_panel: Signal<Out, Bits<16>>,
    /// Entry valid.
    pub out_entry_valid: Vec<Signal<Out, Bit>>,
    /// Entry row.
    pub out_row: Vec<Signal<Out, Bits<16>>>,
    /// Entry product.
    pub out_product: Vec<Signal<Out, Bits<32>>>,
    dec: RlcDecoder,
    mul: Multiplier,
}

impl DecodePath {
    /// The decode path of `arch` (one chunk a cycle).
    pub fn from_arch(arch: &lacuna_spec::Arch) -> DecodePath {
        DecodePath::new(arch.chunk_entries() as usize)
    }

    /// For chunks of `entries` entries.
    pub fn new(entries: usize) -> DecodePath {
        DecodePath {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_k: Default::default(),
            in_first: Default::default(),
            in_lo: Default::default(),
            in_hi: Default::default(),
            in_x: Default::default(),
            in_rows: Default::default(),
            in_value: many(entries),
            in_run: many(entries),
            halt: Default::default(),
            out_ready: Default::default(),
            in_ready: Default::default(),
            overrun: Default::default(),
            overrun_row: Default::default(),
            overrun_panel: Default::default(),
            overrun_k: Default::default(),
            invalid: Default::default(),
            empty: Default::default(),
            out_valid: Default::default(),
            out_marker: Default::default(),
            out_panel: Default::default(),
            out_entry_valid: many(entries),
            out_row: many(entries),
            out_product: many(entries),
            dec: RlcDecoder::new(entries),
            mul: Multiplier::new(entries),
        }
    }
}

impl Logic for DecodePath {
    #[hdl_gen]
    fn update(&mut self) {
        self.dec.clock.next = self.clock.val();
        self.dec.reset.next = self.reset.val();
        self.mul.clock.next = self.clock.val();
        self.mul.reset.next = self.reset.val();
        self.dec.in_valid.next = self.in_valid.val();
        self.dec.in_marker.next = self.in_marker.val();
        self.dec.in_panel.next = self.in_panel.val();
        self.dec.in_k.next = self.in_k.val();
        self.dec.in_first.next = self.in_first.val();
        self.dec.in_lo.next = self.in_lo.val();
        self.dec.in_hi.next = self.in_hi.val();
        self.dec.in_x.next = self.in_x.val();
        self.dec.in_rows.next = self.in_rows.val();
        self.dec.halt.next = self.halt.val();
        self.dec.mul_free.next = self.mul.free.val();
        self.mul.take.next = self.dec.take.val();
        self.mul.in_marker.next = self.dec.d3_marker.val();
        self.mul.in_panel.next = self.dec.d3_panel.val();
        self.mul.out_ready.next = self.out_ready.val();
        for e in 0..self.in_value.len() {
            self.dec.in_value[e].next = self.in_value[e].val();
            self.dec.in_run[e].next = self.in_run[e].val();
            self.mul.in_entry_valid[e].next = self.dec.d3_entry_valid[e].val();
            self.mul.in_row[e].next = self.dec.d3_row[e].val();
            self.mul.in_partial[e].next = self.dec.d3_partial[e].val();
            self.out_entry_valid[e].next = self.mul.out_entry_valid[e].val();
            self.out_row[e].next = self.mul.out_row[e].val();
            self.out_product[e].next = self.mul.out_product[e].val();
        }
        self.in_ready.next = self.dec.in_ready.val();
        self.overrun.next = self.dec.overrun.val();
        self.overrun_row.next = self.dec.overrun_row.val();
        self.overrun_panel.next = self.dec.overrun_panel.val();
        self.overrun_k.next = self.dec.overrun_k.val();
        self.invalid.next = self.mul.invalid.val();
        self.empty.next = self.dec.empty.val() && !self.mul.out_valid.val();
        self.out_valid.next = self.mul.out_valid.val();
        self.out_marker.next = self.mul.out_marker.val();
        self.out_panel.next = self.mul.out_panel.val();
    }
}
