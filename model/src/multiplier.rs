//! `multiplier`: C exact FP16 x FP16 -> FP32 products per cycle, one pipeline stage.
//!
//! Contract: takes the slice leaving D3 when the stage is free (or frees this cycle) and hands on
//! (row, w * x_k) per entry, computed by `lacuna_spec::numerics::product` (exact).

use crate::slice::{Decoded, Products, Token};
use lacuna_spec::numerics::product;

/// Multiplies a decoded slice by its activation.
/// `buffer` is an empty vector to fill (recycled from the route stage).
pub fn multiply(token: Token<Decoded>, mut buffer: Vec<(u32, f32)>) -> Token<Products> {
    match token {
        Token::EndPanel(p) => Token::EndPanel(p),
        Token::Work(d) => {
            let x = d.slice.column.x;
            buffer.extend(d.entries.iter().map(|e| (e.row, product(e.value, x))));
            Token::Work(Products { panel: d.slice.column.panel, entries: buffer })
        }
    }
}
