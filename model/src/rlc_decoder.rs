//! `rlc_decoder`: the three-stage pipelined run-length decoder.
//!
//! Contract: a slice enters D1 from the fetch buffer when it is ready and D1 is free (or frees this
//! cycle), then moves D1 -> D2 -> D3 one stage per cycle when the next stage is free. D1 unpacks the
//! C run lengths and masks entries outside the column; D2 scans lane totals and adds the column
//! carry (the row of the column's previous entry, -1 at its first slice); D3 produces the rows and
//! raises `RunOverrunsColumn` for a row at or past the panel's end. The model computes the rows when
//! the slice enters D1 (the carry only depends on earlier slices, which are ahead of it) and reports
//! the overrun when the slice reaches D3.

use crate::slice::{Decoded, DecodedEntry, Slice, Token};
use crate::PanelData;
use lacuna_spec::rlc::run_at;

/// The decoder's three stages.
#[derive(Default)]
pub struct RlcDecoder {
    /// D1, D2, D3.
    pub stages: [Option<Token<Decoded>>; 3],
    carry: i64,
    /// Entry vectors handed back by the multiplier, reused (the model's own bookkeeping).
    pub pool: Vec<Vec<DecodedEntry>>,
}

impl RlcDecoder {
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
        let mut entries = self.pool.pop().unwrap_or_default();
        let mut overrun = None;
        for i in s.lo as usize..s.hi as usize {
            self.carry += run_at(pd.runs, i) as i64 + 1;
            if self.carry >= pd.rows as i64 {
                // A malformed stream: flag it, and hand nothing past the panel to the datapath
                // (a row past the tile would address a register that does not exist).
                overrun.get_or_insert(self.carry as u64);
                continue;
            }
            entries.push(DecodedEntry { row: self.carry as u32, value: pd.values[i] });
        }
        Decoded { slice: s, entries, overrun }
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
        let mut dec = RlcDecoder::default();
        dec.accept(Token::Work(Slice { column, chunk: 0, lo: 0, hi: 8, first: true }), &[pd]);
        let Some(Token::Work(d)) = &dec.stages[0] else { panic!("a slice is in D1") };
        assert_eq!(d.overrun, Some(15));
        assert!(d.entries.iter().all(|e| e.row < 4));
    }
}
