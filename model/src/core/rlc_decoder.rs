//! `rlc_decoder`: the three-stage pipelined run-length decoder.
//!
//! Contract: a slice enters D1 from the fetch buffer when it is ready and D1 is free (or frees this
//! cycle), then moves D1 -> D2 -> D3 one stage per cycle when the next stage is free. D1 unpacks the
//! C run lengths and masks entries outside the column; D2 scans lane totals and adds the column
//! carry (the row of the column's previous entry, -1 at its first slice); D3 produces the rows and
//! raises `RunOverrunsColumn` for a row at or past the panel's end. The model computes the rows when
//! the slice enters D1 (the carry only depends on earlier slices, which are ahead of it) and reports
//! the overrun when the slice reaches D3. For speed it also computes, in the same pass, the
//! multiplier's exact product of each entry and counts the slice's padding entries. The later stages
//! then only carry the result, in the cycles the contract gives them; nothing they compute depends
//! on time.

use crate::core::slice::{Decoded, RowProduct, Slice, Token};
use crate::PanelData;
use lacuna_spec::numerics::fp16_to_f32_table;

/// The decoder's three stages.
pub struct RlcDecoder {
    /// D1, D2, D3.
    pub stages: [Option<Token<Decoded>>; 3],
    carry: i64,
    /// A `gemv` job: no run lengths, every run 0.
    dense: bool,
    /// Buffers handed back by route, reused (the model's own bookkeeping).
    pub pool: Vec<Vec<RowProduct>>,
}

impl RlcDecoder {
    /// An empty decoder; `dense`: a `gemv` job's (every run 0).
    pub fn new(dense: bool) -> RlcDecoder {
        RlcDecoder { stages: [None, None, None], carry: 0, dense, pool: Vec::new() }
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
        let mut entries = self.pool.pop().unwrap_or_default();
        entries.clear();
        let (lo, hi) = (s.lo as usize, s.hi as usize);
        let mut padding = 0u32;
        let rows = pd.rows as i64;
        let mut carry = self.carry;
        let mut first_over: Option<(usize, i64)> = None;
        // Entry i's run is nibble i of `runs` (low nibble first): index from the byte of `lo`.
        // A gemv job has none: every run is 0 (chunk_fetch hands the decoder zeros).
        let dense = self.dense;
        let runs: &[u8] = if dense { &[] } else { &pd.runs[lo / 2..hi.div_ceil(2)] };
        let odd = lo & 1;
        let start = entries.len();
        entries.extend(pd.values[lo..hi].iter().enumerate().map(|(j, v)| {
            let n = j + odd;
            let run = if dense { 0 } else { (runs[n >> 1] >> ((n & 1) * 4)) & 0x0f };
            carry += run as i64 + 1;
            padding += lacuna_spec::numerics::is_zero(*v) as u32;
            if carry >= rows && first_over.is_none() {
                first_over = Some((j, carry));
            }
            // The multiplier's exact product (numerics::product, with table conversions).
            (carry as u32, t[v.to_bits() as usize] * x)
        }));
        self.carry = carry;
        // A malformed stream: flag it, and hand nothing past the panel to the datapath (a row
        // past the tile would address a register that does not exist). Rows only grow within a
        // column, so the entries past the panel are the slice's tail.
        let overrun = first_over.map(|(j, row)| {
            entries.truncate(start + j);
            row as u64
        });
        Decoded { slice: s, entries, padding, overrun }
    }
}

impl Default for RlcDecoder {
    fn default() -> RlcDecoder {
        RlcDecoder::new(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::slice::Column;
    use half::f16;

    #[test]
    fn an_overrunning_slice_is_flagged_and_hands_on_no_row_past_the_panel() {
        let values = [f16::from_f32(3.0); 8];
        // Runs 0, 1, then 15s: rows 0, 2, then 18, 34, ... past the 4-row panel. (The low nibble
        // is the earlier entry.)
        let runs = [0x10, 0xff, 0xff, 0xff];
        let colptr = [0u32, 8];
        let pd = PanelData { rows: 4, values: &values, runs: &runs, colptr: &colptr };
        let column = Column { panel: 0, k: 0, x: f16::from_f32(0.5), start: 0, end: 8 };
        let mut dec = RlcDecoder::new(false);
        dec.accept(Token::Work(Slice { column, chunk: 0, lo: 0, hi: 8, first: true }), &[pd]);
        let Some(Token::Work(d)) = &dec.stages[0] else { panic!("a slice is in D1") };
        assert_eq!(d.overrun, Some(18));
        assert_eq!(d.entries, vec![(0, 1.5), (2, 1.5)]);
    }
}
