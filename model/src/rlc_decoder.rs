//! `rlc_decoder`: the three-stage pipelined run-length decoder.
//!
//! Contract: a slice enters D1 from the fetch buffer when it is ready and D1 is free (or frees this
//! cycle), then moves D1 -> D2 -> D3 one stage per cycle when the next stage is free. D1 unpacks the
//! C run lengths and masks entries outside the column; D2 scans lane totals and adds the column
//! carry (the row of the column's previous entry, -1 at its first slice); D3 produces the rows and
//! raises `RunOverrunsColumn` for a row at or past the panel's end. The model computes the rows when
//! the slice enters D1 (the carry only depends on earlier slices, which are ahead of it) and reports
//! the overrun when the slice reaches D3. For speed it also computes, in the same pass, what the
//! later stages will do with each entry: the multiplier's exact product and route's lane split
//! (lane `row mod L`, register `row div L`). Those stages then only carry the result, in the cycles
//! the contract gives them; nothing they compute depends on time.

use crate::slice::{Decoded, LaneSorted, Slice, Token};
use crate::PanelData;
use lacuna_spec::numerics::fp16_to_f32_table;
use lacuna_spec::rlc::run_at;

/// The decoder's three stages.
pub struct RlcDecoder {
    /// D1, D2, D3.
    pub stages: [Option<Token<Decoded>>; 3],
    carry: i64,
    lanes: u32,
    /// Buffers handed back by route, reused (the model's own bookkeeping).
    pub pool: Vec<LaneSorted>,
    scratch: Vec<(u32, u32, f32)>,
    slots: Vec<u32>,
}

impl RlcDecoder {
    /// A decoder feeding `lanes` lanes (a power of two).
    pub fn new(lanes: u32) -> RlcDecoder {
        RlcDecoder {
            stages: [None, None, None],
            carry: 0,
            lanes,
            pool: Vec::new(),
            scratch: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// All three stages empty.
    pub fn empty(&self) -> bool {
        self.stages.iter().all(Option::is_none)
    }

    /// Moves D2 -> D3 and D1 -> D2 where the next stage is free (D3 was emptied by the caller
    /// when the multiplier took its slice). Returns (progress, overrun of the slice now in D3).
    pub fn advance(&mut self) -> (bool, Option<(Slice, u64)>) {
        let mut progress = false;
        let mut overrun = None;
        if self.stages[2].is_none() && self.stages[1].is_some() {
            self.stages[2] = self.stages[1].take();
            if let Some(Token::Work(d)) = &self.stages[2] {
                overrun = d.overrun.map(|row| (d.slice, row));
            }
            progress = true;
        }
        if self.stages[1].is_none() && self.stages[0].is_some() {
            self.stages[1] = self.stages[0].take();
            progress = true;
        }
        (progress, overrun)
    }

    /// Takes a new slice into D1 (which must be free) and decodes it.
    pub fn accept(&mut self, token: Token<Slice>, panels: &[PanelData]) {
        debug_assert!(self.stages[0].is_none());
        self.stages[0] = Some(match token {
            Token::EndPanel(p) => Token::EndPanel(p),
            Token::Work(s) => Token::Work(self.decode(s, &panels[s.column.panel as usize])),
        });
    }

    fn decode(&mut self, s: Slice, pd: &PanelData) -> Decoded {
        if s.first {
            self.carry = -1;
        }
        let t = fp16_to_f32_table();
        let x = t[s.column.x.to_bits() as usize];
        let (mask, shift) = (self.lanes - 1, self.lanes.trailing_zeros());
        let mut data = self.pool.pop().unwrap_or_default();
        data.ends.clear();
        data.ends.resize(self.lanes as usize, 0);
        self.scratch.clear();
        let mut overrun = None;
        for i in s.lo as usize..s.hi as usize {
            self.carry += run_at(pd.runs, i) as i64 + 1;
            if self.carry >= pd.rows as i64 {
                // A malformed stream: flag it, and hand nothing past the panel to the datapath
                // (a row past the tile would address a register that does not exist).
                overrun.get_or_insert(self.carry as u64);
                continue;
            }
            let row = self.carry as u32;
            let lane = row & mask;
            data.ends[lane as usize] += 1;
            // The multiplier's exact product (numerics::product, with table conversions).
            self.scratch.push((lane, row >> shift, t[pd.values[i].to_bits() as usize] * x));
        }
        // Counting sort by lane, stable: route's per-lane order is the entry order.
        let mut at = 0u32;
        for e in data.ends.iter_mut() {
            at += *e;
            *e = at;
        }
        data.sorted.resize(self.scratch.len(), (0, 0.0));
        // Each lane's next slot starts where the previous lane's group ends.
        self.slots.clear();
        self.slots.push(0);
        self.slots.extend_from_slice(&data.ends[..data.ends.len() - 1]);
        for &(lane, reg, p) in &self.scratch {
            let slot = &mut self.slots[lane as usize];
            data.sorted[*slot as usize] = (reg, p);
            *slot += 1;
        }
        Decoded { slice: s, data, overrun }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slice::Column;
    use half::f16;

    #[test]
    fn an_overrunning_slice_is_flagged_and_hands_on_no_row_past_the_panel() {
        let values = [f16::ONE; 8];
        let runs = [0xff; 4]; // rows 15, 31, 47, ... of a 4-row panel
        let colptr = [0u32, 8];
        let pd = PanelData { rows: 4, values: &values, runs: &runs, colptr: &colptr };
        let column = Column { panel: 0, k: 0, x: f16::ONE, start: 0, end: 8 };
        let mut dec = RlcDecoder::new(4);
        dec.accept(Token::Work(Slice { column, chunk: 0, lo: 0, hi: 8, first: true }), &[pd]);
        let Some(Token::Work(d)) = &dec.stages[0] else { panic!("a slice is in D1") };
        assert_eq!(d.overrun, Some(15));
        // Lane l holds rows reg * 4 + l: every register must be 0 (rows 0..4).
        assert!(d.data.sorted.iter().all(|&(reg, _)| reg == 0));
    }
}
