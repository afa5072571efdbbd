//! `rom`: a read-only table of 256 32-bit words, combinational: the SwiGLU lane's sigmoid
//! segments (their values, slopes and left ends, built from the spec's table).
//!
//! ```text
//!                 +-----------+
//!   address[8] -->|  rom256   |--> data[32]   the word at address
//!                 +-----------+
//! ```
//!
//! Contract: `data` is word `address` of the words the block was built with, every cycle.
//!
//! How: a `case` over every one of the 256 addresses, with no `default` (every address has its
//! word, so the case is complete and infers no latch), which synthesis maps to logic or to a ROM.
//! rust-hdl's own `ROM` widget always adds a `default` arm; with it Yosys 0.23's `proc_rom`
//! leaves undriven wires behind when the design is flattened before `memory` (the suite's
//! structural check rejects them), so this block writes its own case.

use rust_hdl::prelude::*;

/// Words of a [`Rom256`].
pub const WORDS: usize = 256;

/// A ROM of 256 32-bit words.
#[derive(LogicBlock)]
pub struct Rom256 {
    /// Which word.
    pub address: Signal<In, Bits<8>>,
    /// The word.
    pub data: Signal<Out, Bits<32>>,
    _words: Vec<u32>,
}

impl Rom256 {
    /// A ROM holding `words` (exactly [`WORDS`] of them).
    pub fn new(words: Vec<u32>) -> Rom256 {
        assert_eq!(words.len(), WORDS, "a rom256 holds {WORDS} words");
        Rom256 { address: Default::default(), data: Default::default(), _words: words }
    }
}

impl Logic for Rom256 {
    fn update(&mut self) {
        self.data.next = (self._words[self.address.val().index()] as LiteralType).into();
    }

    fn connect(&mut self) {
        self.data.connect();
    }

    fn hdl(&self) -> Verilog {
        let cases: String =
            self._words.iter().enumerate().map(|(a, w)| format!("        8'h{a:02x}: data = 32'h{w:08x};\n")).collect();
        Verilog::Custom(format!("always @(*) begin\n    case (address)\n{cases}    endcase\nend\n"))
    }
}
