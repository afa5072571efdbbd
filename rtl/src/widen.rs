//! `widen`: zero-extension of a 16-bit value to 32 bits, lint-clean.
//!
//! ```text
//!   narrow[16] --> [ widen16 ] --> wide[32]   wide = narrow, zero-extended
//! ```
//!
//! rust-hdl has no concatenation, and its `bit_cast` to a wider type emits `(x & 32'hffffffff)`,
//! which Verilator's `-Wall` flags (WIDTH: the AND's operand is narrower than its result). Its
//! 16 x 16 multiplier, on the other hand, yields a 32-bit product from 16-bit operands, so
//! `narrow * 16'h1` is the zero-extension with matching widths; synthesis reduces it to wires
//! (docs/synthesis.md shows no multiplier cells for it).

use rust_hdl::prelude::*;

/// Zero-extends 16 bits to 32.
#[derive(LogicBlock)]
pub struct Widen16 {
    /// The value.
    pub narrow: Signal<In, Bits<16>>,
    /// The same value, 32 bits wide.
    pub wide: Signal<Out, Bits<32>>,
    one: Constant<Bits<16>>,
}

impl Default for Widen16 {
    fn default() -> Widen16 {
        Widen16 { narrow: Default::default(), wide: Default::default(), one: Constant::new(1.into()) }
    }
}

impl Logic for Widen16 {
    #[hdl_gen]
    fn update(&mut self) {
        self.wide.next = self.narrow.val() * self.one.val();
    }
}
