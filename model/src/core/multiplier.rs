//! `multiplier`: C exact FP16 x FP16 -> FP32 products per cycle, one pipeline stage.
//!
//! Contract: takes the slice leaving D3 when the stage is free (or frees this cycle) and hands on
//! (row, w * x_k) per entry, computed by `lacuna_spec::numerics::product` (exact).

use crate::core::slice::{Decoded, Products, Token};

/// Hands a decoded slice on as products. The products themselves (`w * x_k`, exact, as
/// `lacuna_spec::numerics::product`) are computed with the decode, when the slice enters D1
/// (see `rlc_decoder`): this stage holds the slice for its cycle.
pub fn multiply(token: Token<Decoded>) -> Token<Products> {
    match token {
        Token::EndPanel(p) => Token::EndPanel(p),
        Token::Work(d) => Token::Work(Products { panel: d.slice.column.panel, entries: d.entries }),
    }
}
