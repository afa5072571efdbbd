//! `multiplier`: C exact FP16 x FP16 -> FP32 products per cycle, one pipeline stage.
//!
//! Contract: takes the slice leaving D3 when the stage is free (or frees this cycle) and hands on
//! (row, w * x_k) per entry, computed by `lacuna_spec::numerics::product` (exact).

use crate::slice::{Decoded, DecodedEntry, Products, Token};
use lacuna_spec::numerics::{fp16_to_f32_table, product};

/// Multiplies a decoded slice by its activation.
/// `buffer` is an empty vector to fill (recycled from the route stage); the decoded entries'
/// vector is handed back, emptied, for the decoder to reuse.
pub fn multiply(token: Token<Decoded>, mut buffer: Vec<(u32, f32)>) -> (Token<Products>, Option<Vec<DecodedEntry>>) {
    match token {
        Token::EndPanel(p) => (Token::EndPanel(p), None),
        Token::Work(mut d) => {
            // The same exact product as `numerics::product`, with table conversions.
            let t = fp16_to_f32_table();
            let x = t[d.slice.column.x.to_bits() as usize];
            debug_assert!(d
                .entries
                .iter()
                .all(|e| t[e.value.to_bits() as usize] * x == product(e.value, d.slice.column.x)));
            buffer.extend(d.entries.iter().map(|e| (e.row, t[e.value.to_bits() as usize] * x)));
            d.entries.clear();
            (Token::Work(Products { panel: d.slice.column.panel, entries: buffer }), Some(d.entries))
        }
    }
}
