//! `multiplier`: the pipeline stage after D3: C exact FP16 x FP16 -> FP32 products, finished.
//!
//! ```text
//!                    +------------------- multiplier -------------------+
//!  take ------------>| C x fp16_mul_back (partial[e]) --> stage registers|--> out_valid, out_marker
//!  in_partial[e] --->|                                                  |--> out_entry_valid[e]
//!  in_entry_valid -->|                                                  |--> out_row[e], out_product[e]
//!  in_row[e] ------->|                                                  |--> free, invalid
//!  out_ready ------->|                                                  |
//!                    +--------------------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md, "multiplier"): one stage; it takes the slice leaving D3
//! (`take`) when it is free or frees this cycle (`free` = empty, or route takes its token now:
//! `out_ready`). `invalid`: a taken slice holds an Inf or NaN operand on an unmasked entry (the
//! compiler never encodes one; the core reports it rather than computing with it).
//!
//! The products' front half (significand product, exponent, sign, invalid) was formed between
//! the decoder's D1 and D2 (`rlc_decoder`); this stage normalizes and packs them
//! (`fp16_mul::Fp16MulBack`), so no stage holds the whole multiplier (issue 19).

use crate::fp16_mul::Fp16MulBack;
use crate::reg::Reg;
use crate::wiring::many;
use rust_hdl::prelude::*;

/// The multiplier stage.
#[derive(LogicBlock)]
pub struct Multiplier {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// D3's token moves in this cycle.
    pub take: Signal<In, Bit>,
    /// It is an end-of-panel marker.
    pub in_marker: Signal<In, Bit>,
    /// Its panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Entry e is unmasked (and not past the panel).
    pub in_entry_valid: Vec<Signal<In, Bit>>,
    /// Entry e's row.
    pub in_row: Vec<Signal<In, Bits<16>>>,
    /// Entry e's product, front half (`fp16_mul::PARTIAL_LAYOUT`).
    pub in_partial: Vec<Signal<In, Bits<32>>>,
    /// Route takes the held token this cycle.
    pub out_ready: Signal<In, Bit>,
    /// Empty after this cycle: D3 may move in.
    pub free: Signal<Out, Bit>,
    /// A non-finite operand on an unmasked entry of the token taken this cycle.
    pub invalid: Signal<Out, Bit>,
    /// A token is held.
    pub out_valid: Signal<Out, Bit>,
    /// It is a marker.
    pub out_marker: Signal<Out, Bit>,
    /// Its panel.
    pub out_panel: Signal<Out, Bits<16>>,
    /// Entry e is valid.
    pub out_entry_valid: Vec<Signal<Out, Bit>>,
    /// Entry e's row.
    pub out_row: Vec<Signal<Out, Bits<16>>>,
    /// Entry e's product (FP32).
    pub out_product: Vec<Signal<Out, Bits<32>>>,
    units: Vec<Fp16MulBack>,
    valid: Reg<Bit>,
    marker: Reg<Bit>,
    panel: Reg<Bits<16>>,
    entry_valid: Vec<Reg<Bit>>,
    row: Vec<Reg<Bits<16>>>,
    product: Vec<Reg<Bits<32>>>,
}

impl Multiplier {
    /// A stage of `entries` multipliers.
    pub fn new(entries: usize) -> Multiplier {
        Multiplier {
            clock: Default::default(),
            reset: Default::default(),
            take: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_entry_valid: many(entries),
            in_row: many(entries),
            in_partial: many(entries),
            out_ready: Default::default(),
            free: Default::default(),
            invalid: Default::default(),
            out_valid: Default::default(),
            out_marker: Default::default(),
            out_panel: Default::default(),
            out_entry_valid: many(entries),
            out_row: many(entries),
            out_product: many(entries),
            units: many(entries),
            valid: Default::default(),
            marker: Default::default(),
            panel: Default::default(),
            entry_valid: many(entries),
            row: many(entries),
            product: many(entries),
        }
    }
}

impl Logic for Multiplier {
    #[hdl_gen]
    fn update(&mut self) {
        self.valid.clock.next = self.clock.val();
        self.valid.reset.next = self.reset.val();
        self.marker.clock.next = self.clock.val();
        self.marker.reset.next = self.reset.val();
        self.marker.d.next = self.marker.q.val();
        self.panel.clock.next = self.clock.val();
        self.panel.reset.next = self.reset.val();
        self.panel.d.next = self.panel.q.val();
        self.free.next = !self.valid.q.val() || self.out_ready.val();
        self.valid.d.next = self.valid.q.val() && !self.out_ready.val();
        self.out_valid.next = self.valid.q.val();
        self.out_marker.next = self.marker.q.val();
        self.out_panel.next = self.panel.q.val();
        if self.take.val() {
            self.valid.d.next = true;
            self.marker.d.next = self.in_marker.val();
            self.panel.d.next = self.in_panel.val();
        }
        self.invalid.next = false;
        for e in 0..self.units.len() {
            self.units[e].partial.next = self.in_partial[e].val();
            self.entry_valid[e].clock.next = self.clock.val();
            self.entry_valid[e].reset.next = self.reset.val();
            self.entry_valid[e].d.next = self.entry_valid[e].q.val();
            self.row[e].clock.next = self.clock.val();
            self.row[e].reset.next = self.reset.val();
            self.row[e].d.next = self.row[e].q.val();
            self.product[e].clock.next = self.clock.val();
            self.product[e].reset.next = self.reset.val();
            self.product[e].d.next = self.product[e].q.val();
            if self.take.val() {
                self.entry_valid[e].d.next = self.in_entry_valid[e].val() && !self.in_marker.val();
                self.row[e].d.next = self.in_row[e].val();
                self.product[e].d.next = self.units[e].product.val();
                if self.in_entry_valid[e].val() && !self.in_marker.val() && self.units[e].invalid.val() {
                    self.invalid.next = true;
                }
            }
            self.out_entry_valid[e].next = self.entry_valid[e].q.val();
            self.out_row[e].next = self.row[e].q.val();
            self.out_product[e].next = self.product[e].q.val();
        }
    }
}
