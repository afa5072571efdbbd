//! `pack`: bytes side by side in wider words (a Verilog concatenation), lint-clean.
//!
//! ```text
//!   byte[0..K] --> [ pack ] --> word[0..W] (N bits each)   byte k in word k / (N / 8),
//!                                                          bits 8 (k mod N / 8) + 7 .. ; 0 above
//! ```
//!
//! rust-hdl has no concatenation: the expert unit's token store keeps INT8 cells, which the
//! quantizer writes `fp32_lanes` at a time (packed into 32-bit words) and the dot engine reads 32
//! at a time (one 256-bit group). A leaf with generated Verilog, as `sram`; bits above the last
//! byte are zero. (One block with `Vec` ports: rust-hdl cannot address a `Vec` port of a block
//! that is itself in a `Vec`.)

use crate::wiring::many;
use rust_hdl::prelude::*;

/// `K` bytes packed into `ceil(8 K / N)` words of `N` bits (N a multiple of 8).
#[derive(LogicBlock)]
pub struct Pack<const N: usize> {
    /// The bytes.
    pub byte: Vec<Signal<In, Bits<8>>>,
    /// The words.
    pub word: Vec<Signal<Out, Bits<N>>>,
}

impl<const N: usize> Pack<N> {
    /// Packs `bytes` bytes (at least 1).
    pub fn new(bytes: usize) -> Pack<N> {
        assert!(bytes >= 1 && N % 8 == 0 && N >= 8);
        Pack { byte: many(bytes), word: many((8 * bytes).div_ceil(N)) }
    }
}

impl<const N: usize> Logic for Pack<N> {
    fn update(&mut self) {
        let per = N / 8;
        for (w, out) in self.word.iter_mut().enumerate() {
            let mut v: Bits<N> = 0.into();
            for (j, b) in self.byte.iter().skip(w * per).take(per).enumerate() {
                for i in 0..8 {
                    v = v.replace_bit(8 * j + i, b.val().get_bit(i));
                }
            }
            out.next = v;
        }
    }

    fn connect(&mut self) {
        for w in self.word.iter_mut() {
            w.connect();
        }
    }

    fn hdl(&self) -> Verilog {
        let per = N / 8;
        let mut v = String::from("always @(*) begin\n");
        for w in 0..self.word.len() {
            let bytes: Vec<usize> = (w * per..((w + 1) * per).min(self.byte.len())).collect();
            let mut parts: Vec<String> = bytes.iter().rev().map(|k| format!("byte${k}")).collect();
            let pad = N - 8 * bytes.len();
            if pad > 0 {
                parts.insert(0, format!("{pad}'h0"));
            }
            v.push_str(&format!("    word${w} = {{{}}};\n", parts.join(", ")));
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}
