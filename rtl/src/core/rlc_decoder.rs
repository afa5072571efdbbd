//! `rlc_decoder`: the three-stage run-length decoder, D1 -> D2 -> D3.
//!
//! ```text
//!                  +----------------------- rlc_decoder -----------------------+
//!  in_valid ------>| D1: masks, increments (run + 1), their prefix over C      |--> in_ready
//!  in_marker/panel>| D2: the column's base row (carry), the carry updated;     |--> overrun, overrun_row
//!                  |     fp16_mul's front half of value x x per entry          |
//!  in_first ------>| D3: row = base + prefix - 1; valid = unmasked, row < rows |--> take (D3 -> multiplier)
//!  in_lo, in_hi -->|                                                           |--> d3_* (the slice in D3)
//!  in_value[e] --->|   a stage moves when the next is free or frees this cycle |--> empty
//!  in_run[e] ----->|                                                           |
//!  in_x, in_rows ->|                                                           |
//!  halt, mul_free >|                                                           |
//!                  +-----------------------------------------------------------+
//! ```
//!
//! Contract (docs/microarchitecture.md, "rlc_decoder"): a slice (or an end-of-panel marker) enters
//! D1 from the fetch buffer when D1 is free or frees this cycle and `halt` is low; it moves one
//! stage per cycle when the next stage is free or frees this cycle; it leaves D3 into the
//! multiplier when that is free (`mul_free`). Entry e of the slice is masked unless
//! `in_lo <= e < in_hi` (offsets in the chunk). Row of an unmasked entry: the previous entry's
//! row in the column (-1 at a column's first slice) plus its run plus one. An entry whose row is
//! at or past the panel's rows is dropped, and the cycle the slice moves into D3 raises
//! `overrun` with the first such row (a malformed stream).
//!
//! Where the sums are formed: D1 holds the inclusive prefix of the increments over the whole
//! slice (the document's in-lane prefixes plus lane scan, computed here as one Kogge-Stone
//! prefix over the slice: log2(entries) levels of adds, since 2026-12-07 (a chain of adds was
//! 148 FO4 on `edge`'s 32 entries)), D2 adds the column base, D3 holds the rows. The timing,
//! which is what the model fixes, is the same.
//!
//! The products begin here too (issue 19): the D1 -> D2 transfer runs the front half of each
//! entry's FP16 x FP16 multiply (`fp16_mul::Fp16MulFront`: the significand product, exponent sum,
//! sign and invalid flag, one 32-bit `partial` word) on D1's value and activation, and D2 and D3
//! carry that word where they carried the value; the multiplier stage finishes it (normalize and
//! pack). Without the split the whole multiplier sat behind D3's registers, 92 FO4 against an
//! 80 FO4 stage; the cycles are the same.

use crate::reg::Reg;
use crate::wiring::{constant, index_constants, many};
use rust_hdl::prelude::*;

/// The decoder.
#[derive(LogicBlock)]
pub struct RlcDecoder {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// The fetch buffer's head is ready.
    pub in_valid: Signal<In, Bit>,
    /// It is an end-of-panel marker.
    pub in_marker: Signal<In, Bit>,
    /// Its panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Its column (carried for the fault report).
    pub in_k: Signal<In, Bits<32>>,
    /// The column's first slice.
    pub in_first: Signal<In, Bit>,
    /// First entry of the column in the chunk (offset).
    pub in_lo: Signal<In, Bits<8>>,
    /// One past its last entry in the chunk (offset).
    pub in_hi: Signal<In, Bits<8>>,
    /// The column's activation (FP16).
    pub in_x: Signal<In, Bits<16>>,
    /// Rows of the slice's panel.
    pub in_rows: Signal<In, Bits<32>>,
    /// The chunk's values (FP16).
    pub in_value: Vec<Signal<In, Bits<16>>>,
    /// The chunk's run lengths (low 4 bits; the rest is ignored).
    pub in_run: Vec<Signal<In, Bits<16>>>,
    /// No new slice may enter (a fault elsewhere; the decoder's own overrun halts it too).
    pub halt: Signal<In, Bit>,
    /// The multiplier is free or frees this cycle.
    pub mul_free: Signal<In, Bit>,
    /// D1 takes the fetch buffer's head this cycle.
    pub in_ready: Signal<Out, Bit>,
    /// D3 moves into the multiplier this cycle.
    pub take: Signal<Out, Bit>,
    /// D3 holds a marker.
    pub d3_marker: Signal<Out, Bit>,
    /// Its panel.
    pub d3_panel: Signal<Out, Bits<16>>,
    /// D3's entry e is valid.
    pub d3_entry_valid: Vec<Signal<Out, Bit>>,
    /// D3's entry e row.
    pub d3_row: Vec<Signal<Out, Bits<16>>>,
    /// D3's entry e: its product's front half (`fp16_mul::PARTIAL_LAYOUT`).
    pub d3_partial: Vec<Signal<Out, Bits<32>>>,
    /// A slice with an entry past the panel moves into D3 this cycle.
    pub overrun: Signal<Out, Bit>,
    /// The first such row.
    pub overrun_row: Signal<Out, Bits<32>>,
    /// That slice's panel.
    pub overrun_panel: Signal<Out, Bits<16>>,
    /// That slice's column.
    pub overrun_k: Signal<Out, Bits<32>>,
    /// All three stages are empty.
    pub empty: Signal<Out, Bit>,
    // D1
    d1_valid: Reg<Bit>,
    d1_marker: Reg<Bit>,
    d1_panel: Reg<Bits<16>>,
    d1_k: Reg<Bits<32>>,
    d1_first: Reg<Bit>,
    d1_x: Reg<Bits<16>>,
    d1_rows: Reg<Bits<32>>,
    d1_mask: Vec<Reg<Bit>>,
    d1_value: Vec<Reg<Bits<16>>>,
    d1_pre: Vec<Reg<Bits<16>>>,
    // D2
    d2_valid: Reg<Bit>,
    d2_marker: Reg<Bit>,
    d2_panel: Reg<Bits<16>>,
    d2_k: Reg<Bits<32>>,
    d2_rows: Reg<Bits<32>>,
    d2_base: Reg<Bits<32>>,
    d2_mask: Vec<Reg<Bit>>,
    d2_partial: Vec<Reg<Bits<32>>>,
    d2_pre: Vec<Reg<Bits<16>>>,
    // D3
    d3_valid: Reg<Bit>,
    d3_marker_r: Reg<Bit>,
    d3_panel_r: Reg<Bits<16>>,
    d3_entry_valid_r: Vec<Reg<Bit>>,
    d3_row_r: Vec<Reg<Bits<16>>>,
    d3_partial_r: Vec<Reg<Bits<32>>>,
    /// The front half of each entry's product, between D1 and D2.
    front: Vec<crate::fp16_mul::Fp16MulFront>,
    /// The row after the column's last decoded entry (0 at a column's start).
    carry: Reg<Bits<32>>,
    // Locals
    d3_free: Signal<Local, Bit>,
    move2: Signal<Local, Bit>,
    d2_free: Signal<Local, Bit>,
    move1: Signal<Local, Bit>,
    d1_free: Signal<Local, Bit>,
    accept: Signal<Local, Bit>,
    inc: Vec<Signal<Local, Bits<16>>>,
    // The prefix's levels (Kogge-Stone: level k adds the value 2^(k-1) entries back); seven
    // cover the 127 entries `Arch::rtl_fit` allows, the levels past log2(entries) only copy.
    ks1: Vec<Signal<Local, Bits<16>>>,
    ks2: Vec<Signal<Local, Bits<16>>>,
    ks3: Vec<Signal<Local, Bits<16>>>,
    ks4: Vec<Signal<Local, Bits<16>>>,
    ks5: Vec<Signal<Local, Bits<16>>>,
    ks6: Vec<Signal<Local, Bits<16>>>,
    ks7: Vec<Signal<Local, Bits<16>>>,
    base: Signal<Local, Bits<32>>,
    total: Signal<Local, Bits<32>>,
    row: Vec<Signal<Local, Bits<32>>>,
    over: Vec<Signal<Local, Bit>>,
    found: Vec<Signal<Local, Bit>>,
    pre32: Vec<Signal<Local, Bits<32>>>,
    widen: Vec<crate::widen::Widen16>,
    widen_total: crate::widen::Widen16,
    idx8: Vec<Constant<Bits<8>>>,
    one16: Constant<Bits<16>>,
    zero16: Constant<Bits<16>>,
    nibble: Constant<Bits<16>>,
    one32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
}

impl RlcDecoder {
    /// A decoder for chunks of `entries` entries (at most 127).
    pub fn new(entries: usize) -> RlcDecoder {
        assert!((1..128).contains(&entries));
        RlcDecoder {
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
            mul_free: Default::default(),
            in_ready: Default::default(),
            take: Default::default(),
            d3_marker: Default::default(),
            d3_panel: Default::default(),
            d3_entry_valid: many(entries),
            d3_row: many(entries),
            d3_partial: many(entries),
            overrun: Default::default(),
            overrun_row: Default::default(),
            overrun_panel: Default::default(),
            overrun_k: Default::default(),
            empty: Default::default(),
            d1_valid: Default::default(),
            d1_marker: Default::default(),
            d1_panel: Default::default(),
            d1_k: Default::default(),
            d1_first: Default::default(),
            d1_x: Default::default(),
            d1_rows: Default::default(),
            d1_mask: many(entries),
            d1_value: many(entries),
            d1_pre: many(entries),
            d2_valid: Default::default(),
            d2_marker: Default::default(),
            d2_panel: Default::default(),
            d2_k: Default::default(),
            d2_rows: Default::default(),
            d2_base: Default::default(),
            d2_mask: many(entries),
            d2_partial: many(entries),
            d2_pre: many(entries),
            d3_valid: Default::default(),
            d3_marker_r: Default::default(),
            d3_panel_r: Default::default(),
            d3_entry_valid_r: many(entries),
            d3_row_r: many(entries),
            d3_partial_r: many(entries),
            front: many(entries),
            carry: Default::default(),
            d3_free: Default::default(),
            move2: Default::default(),
            d2_free: Default::default(),
            move1: Default::default(),
            d1_free: Default::default(),
            accept: Default::default(),
            inc: many(entries),
            ks1: many(entries),
            ks2: many(entries),
            ks3: many(entries),
            ks4: many(entries),
            ks5: many(entries),
            ks6: many(entries),
            ks7: many(entries),
            base: Default::default(),
            total: Default::default(),
            row: many(entries),
            over: many(entries),
            found: many(entries + 1),
            pre32: many(entries),
            widen: many(entries),
            widen_total: Default::default(),
            idx8: index_constants(entries),
            one16: constant(1),
            zero16: constant(0),
            nibble: constant(0x0f),
            one32: constant(1),
            zero32: constant(0),
        }
    }
}

impl Logic for RlcDecoder {
    #[hdl_gen]
    fn update(&mut self) {
        // Clocks, resets, and every register holds unless a transfer below loads it.
        self.d1_valid.clock.next = self.clock.val();
        self.d1_valid.reset.next = self.reset.val();
        self.d1_marker.clock.next = self.clock.val();
        self.d1_marker.reset.next = self.reset.val();
        self.d1_marker.d.next = self.d1_marker.q.val();
        self.d1_panel.clock.next = self.clock.val();
        self.d1_panel.reset.next = self.reset.val();
        self.d1_panel.d.next = self.d1_panel.q.val();
        self.d1_k.clock.next = self.clock.val();
        self.d1_k.reset.next = self.reset.val();
        self.d1_k.d.next = self.d1_k.q.val();
        self.d1_first.clock.next = self.clock.val();
        self.d1_first.reset.next = self.reset.val();
        self.d1_first.d.next = self.d1_first.q.val();
        self.d1_x.clock.next = self.clock.val();
        self.d1_x.reset.next = self.reset.val();
        self.d1_x.d.next = self.d1_x.q.val();
        self.d1_rows.clock.next = self.clock.val();
        self.d1_rows.reset.next = self.reset.val();
        self.d1_rows.d.next = self.d1_rows.q.val();
        self.d2_valid.clock.next = self.clock.val();
        self.d2_valid.reset.next = self.reset.val();
        self.d2_marker.clock.next = self.clock.val();
        self.d2_marker.reset.next = self.reset.val();
        self.d2_marker.d.next = self.d2_marker.q.val();
        self.d2_panel.clock.next = self.clock.val();
        self.d2_panel.reset.next = self.reset.val();
        self.d2_panel.d.next = self.d2_panel.q.val();
        self.d2_k.clock.next = self.clock.val();
        self.d2_k.reset.next = self.reset.val();
        self.d2_k.d.next = self.d2_k.q.val();
        self.d2_rows.clock.next = self.clock.val();
        self.d2_rows.reset.next = self.reset.val();
        self.d2_rows.d.next = self.d2_rows.q.val();
        self.d2_base.clock.next = self.clock.val();
        self.d2_base.reset.next = self.reset.val();
        self.d2_base.d.next = self.d2_base.q.val();
        self.d3_valid.clock.next = self.clock.val();
        self.d3_valid.reset.next = self.reset.val();
        self.d3_marker_r.clock.next = self.clock.val();
        self.d3_marker_r.reset.next = self.reset.val();
        self.d3_marker_r.d.next = self.d3_marker_r.q.val();
        self.d3_panel_r.clock.next = self.clock.val();
        self.d3_panel_r.reset.next = self.reset.val();
        self.d3_panel_r.d.next = self.d3_panel_r.q.val();
        self.carry.clock.next = self.clock.val();
        self.carry.reset.next = self.reset.val();
        self.carry.d.next = self.carry.q.val();
        for e in 0..self.d1_mask.len() {
            self.d1_mask[e].clock.next = self.clock.val();
            self.d1_mask[e].reset.next = self.reset.val();
            self.d1_mask[e].d.next = self.d1_mask[e].q.val();
            self.d1_value[e].clock.next = self.clock.val();
            self.d1_value[e].reset.next = self.reset.val();
            self.d1_value[e].d.next = self.d1_value[e].q.val();
            self.d1_pre[e].clock.next = self.clock.val();
            self.d1_pre[e].reset.next = self.reset.val();
            self.d1_pre[e].d.next = self.d1_pre[e].q.val();
            self.d2_mask[e].clock.next = self.clock.val();
            self.d2_mask[e].reset.next = self.reset.val();
            self.d2_mask[e].d.next = self.d2_mask[e].q.val();
            self.d2_partial[e].clock.next = self.clock.val();
            self.d2_partial[e].reset.next = self.reset.val();
            self.d2_partial[e].d.next = self.d2_partial[e].q.val();
            self.d2_pre[e].clock.next = self.clock.val();
            self.d2_pre[e].reset.next = self.reset.val();
            self.d2_pre[e].d.next = self.d2_pre[e].q.val();
            self.d3_entry_valid_r[e].clock.next = self.clock.val();
            self.d3_entry_valid_r[e].reset.next = self.reset.val();
            self.d3_entry_valid_r[e].d.next = self.d3_entry_valid_r[e].q.val();
            self.d3_row_r[e].clock.next = self.clock.val();
            self.d3_row_r[e].reset.next = self.reset.val();
            self.d3_row_r[e].d.next = self.d3_row_r[e].q.val();
            self.d3_partial_r[e].clock.next = self.clock.val();
            self.d3_partial_r[e].reset.next = self.reset.val();
            self.d3_partial_r[e].d.next = self.d3_partial_r[e].q.val();
            self.front[e].a.next = self.d1_value[e].q.val();
            self.front[e].b.next = self.d1_x.q.val();
        }

        // Who moves this cycle: from the multiplier upstream.
        self.take.next = self.d3_valid.q.val() && self.mul_free.val();
        self.d3_free.next = !self.d3_valid.q.val() || self.take.val();
        self.move2.next = self.d2_valid.q.val() && self.d3_free.val();
        self.d2_free.next = !self.d2_valid.q.val() || self.move2.val();
        self.move1.next = self.d1_valid.q.val() && self.d2_free.val();
        self.d1_free.next = !self.d1_valid.q.val() || self.move1.val();
        self.empty.next = !self.d1_valid.q.val() && !self.d2_valid.q.val() && !self.d3_valid.q.val();

        // D3 -> multiplier.
        self.d3_marker.next = self.d3_marker_r.q.val();
        self.d3_panel.next = self.d3_panel_r.q.val();
        for e in 0..self.d3_row.len() {
            self.d3_entry_valid[e].next = self.d3_entry_valid_r[e].q.val();
            self.d3_row[e].next = self.d3_row_r[e].q.val();
            self.d3_partial[e].next = self.d3_partial_r[e].q.val();
        }
        self.d3_valid.d.next = self.d3_valid.q.val() && !self.take.val();

        // D2 -> D3: rows = base + prefix - 1; entries at or past the panel's rows are dropped,
        // the first of them reported.
        self.found[0].next = false;
        self.overrun_panel.next = self.d2_panel.q.val();
        self.overrun_k.next = self.d2_k.q.val();
        self.overrun_row.next = self.zero32.val();
        for e in 0..self.row.len() {
            self.widen[e].narrow.next = self.d2_pre[e].q.val();
            self.pre32[e].next = self.widen[e].wide.val();
            self.row[e].next = self.d2_base.q.val() + self.pre32[e].val() - self.one32.val();
            self.over[e].next = self.d2_mask[e].q.val() && (self.row[e].val() >= self.d2_rows.q.val());
            self.found[e + 1].next = self.found[e].val() || self.over[e].val();
            if self.over[e].val() && !self.found[e].val() {
                self.overrun_row.next = self.row[e].val();
            }
        }
        self.overrun.next = false;
        for e in 0..self.found.len() {
            self.overrun.next = self.move2.val() && !self.d2_marker.q.val() && self.found[e].val();
        }
        if self.move2.val() {
            self.d3_valid.d.next = true;
            self.d3_marker_r.d.next = self.d2_marker.q.val();
            self.d3_panel_r.d.next = self.d2_panel.q.val();
            for e in 0..self.row.len() {
                self.d3_entry_valid_r[e].d.next =
                    self.d2_mask[e].q.val() && !self.over[e].val() && !self.d2_marker.q.val();
                self.d3_row_r[e].d.next = self.row[e].val().get_bits::<16>(0);
                self.d3_partial_r[e].d.next = self.d2_partial[e].q.val();
            }
        }
        self.d2_valid.d.next = self.d2_valid.q.val() && !self.move2.val();

        // D1 -> D2: the column's base row; the carry moves past the slice.
        self.base.next = self.carry.q.val();
        if self.d1_first.q.val() {
            self.base.next = self.zero32.val();
        }
        // The slice's total increment is its last prefix (the last assignment wins).
        for e in 0..self.d1_pre.len() {
            self.widen_total.narrow.next = self.d1_pre[e].q.val();
        }
        self.total.next = self.widen_total.wide.val();
        if self.move1.val() {
            self.d2_valid.d.next = true;
            self.d2_marker.d.next = self.d1_marker.q.val();
            self.d2_panel.d.next = self.d1_panel.q.val();
            self.d2_k.d.next = self.d1_k.q.val();
            self.d2_rows.d.next = self.d1_rows.q.val();
            self.d2_base.d.next = self.base.val();
            for e in 0..self.d1_pre.len() {
                self.d2_mask[e].d.next = self.d1_mask[e].q.val();
                self.d2_partial[e].d.next = self.front[e].partial.val();
                self.d2_pre[e].d.next = self.d1_pre[e].q.val();
            }
            if !self.d1_marker.q.val() {
                self.carry.d.next = self.base.val() + self.total.val();
            }
        }
        self.d1_valid.d.next = self.d1_valid.q.val() && !self.move1.val();

        // Fetch buffer -> D1: masks, increments and their prefix. A fault stops the fetch at
        // once, this cycle's overrun included.
        self.in_ready.next = self.d1_free.val() && !self.halt.val() && !self.overrun.val();
        self.accept.next = self.in_ready.val() && self.in_valid.val();
        for e in 0..self.inc.len() {
            self.inc[e].next = self.zero16.val();
            if (self.idx8[e].val() >= self.in_lo.val()) && (self.idx8[e].val() < self.in_hi.val()) {
                self.inc[e].next = (self.in_run[e].val() & self.nibble.val()) + self.one16.val();
            }
        }
        // The inclusive prefix in log2(entries) levels of adds (a chain of 32 adds was 148 FO4
        // on `edge`; the sums are the chain's, the increments being non-negative integers).
        for e in 0..self.inc.len() {
            self.ks1[e].next = self.inc[e].val();
        }
        for e in 1..self.inc.len() {
            self.ks1[e].next = self.inc[e].val() + self.inc[e - 1].val();
        }
        for e in 0..self.inc.len() {
            self.ks2[e].next = self.ks1[e].val();
        }
        for e in 2..self.inc.len() {
            self.ks2[e].next = self.ks1[e].val() + self.ks1[e - 2].val();
        }
        for e in 0..self.inc.len() {
            self.ks3[e].next = self.ks2[e].val();
        }
        for e in 4..self.inc.len() {
            self.ks3[e].next = self.ks2[e].val() + self.ks2[e - 4].val();
        }
        for e in 0..self.inc.len() {
            self.ks4[e].next = self.ks3[e].val();
        }
        for e in 8..self.inc.len() {
            self.ks4[e].next = self.ks3[e].val() + self.ks3[e - 8].val();
        }
        for e in 0..self.inc.len() {
            self.ks5[e].next = self.ks4[e].val();
        }
        for e in 16..self.inc.len() {
            self.ks5[e].next = self.ks4[e].val() + self.ks4[e - 16].val();
        }
        for e in 0..self.inc.len() {
            self.ks6[e].next = self.ks5[e].val();
        }
        for e in 32..self.inc.len() {
            self.ks6[e].next = self.ks5[e].val() + self.ks5[e - 32].val();
        }
        for e in 0..self.inc.len() {
            self.ks7[e].next = self.ks6[e].val();
        }
        for e in 64..self.inc.len() {
            self.ks7[e].next = self.ks6[e].val() + self.ks6[e - 64].val();
        }
        // D1's contents load whenever D1 is free; they count only once accepted (`d1_valid`),
        // so the acceptance (which waits on this cycle's overrun in D2) drives one register,
        // not every entry's.
        if self.d1_free.val() {
            for e in 0..self.d1_mask.len() {
                self.d1_mask[e].d.next =
                    (self.idx8[e].val() >= self.in_lo.val()) && (self.idx8[e].val() < self.in_hi.val());
                self.d1_value[e].d.next = self.in_value[e].val();
                self.d1_pre[e].d.next = self.ks7[e].val();
            }
        }
        if self.accept.val() {
            self.d1_valid.d.next = true;
            self.d1_marker.d.next = self.in_marker.val();
            self.d1_panel.d.next = self.in_panel.val();
            self.d1_k.d.next = self.in_k.val();
            self.d1_first.d.next = self.in_first.val();
            self.d1_x.d.next = self.in_x.val();
            self.d1_rows.d.next = self.in_rows.val();
        }
    }
}
