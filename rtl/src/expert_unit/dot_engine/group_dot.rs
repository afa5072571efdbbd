//! `group_dot`: one group unit of the dot engine: the exact INT32 sum of one group's
//! [`GROUP`] INT8 x INT4 products (`lacuna_spec::a8w4::group_dot`), pipelined in two stages.
//!
//! ```text
//!                +------------------------ group_dot -------------------------+
//!  in_valid ---->| stage 1: 8 quads, each 4 INT8 x INT4 shift-add products    |--> out_valid
//!  x[8] (32) --->|          and their sum (16 bits)          -> registers     |--> sum[16]  INT16
//!  w[8] (16) --->| stage 2: the 8 quad sums as a tree of adds -> registers    |
//!  reset, clock >|                                                            |
//!                +------------------------------------------------------------+
//! ```
//!
//! Contract: a group presented in cycle t (`in_valid`) comes out in cycle t + [`LATENCY`]
//! (`out_valid`, `sum`), one group a cycle, in order. Lane `i` of the group is the INT8 in bits
//! `8(i mod 4) ..` of `x[i / 4]` and the INT4 in bits `4(i mod 4) ..` of `w[i / 4]`: the
//! activation buffer's bytes and the channel record's packed nibbles (two a byte, the low nibble
//! first, little-endian), so a record's packed bytes feed the unit unchanged. `sum` is
//! `sum_i x_i * w_i` for activations in `-127..=127` (the quantizer's range,
//! `lacuna_spec::a8w4::INT8_MAX`): at most `32 x 127 x 8 = 32,512` in magnitude, so the sum is
//! exact in 16 bits, the same value an INT32 accumulator holds (`group_dot`'s `i32`), and the
//! unit carries 16; an activation of -128 is outside the contract (32 x -128 x -8 = 32,768
//! would wrap). A short last group is
//! presented with zero weights in its missing lanes (the record pads its last byte with 0).
//!
//! How: an INT4 weight `w = -8 w3 + 4 w2 + 2 w1 + w0` makes each product three adds and a
//! subtract of shifted copies of the sign-extended activation (no multiplier cells), in 16-bit
//! two's complement; rust-hdl has no concatenation, so each 8-bit field is taken out of its
//! halfword by a shift and a mask, and its sign copied into the top byte.

use crate::reg::Reg;
use crate::wiring::{constant, many};
use lacuna_spec::a8w4::GROUP;
use rust_hdl::prelude::*;

/// Cycles from a group in to its sum out.
pub const LATENCY: u64 = 2;
/// Lanes per input word (four INT8 activations in 32 bits, four INT4 weights in 16).
const LANES_PER_WORD: usize = 4;
/// Input words per group.
pub const WORDS: usize = GROUP / LANES_PER_WORD;
// The second stage's adder tree is written for eight quads.
const _: () = assert!(WORDS == 8, "group_dot's adder tree assumes 32-value groups");

/// The ports of [`GroupDot`] when it is a top module (`lacuna emit-verilog`, the unit tests).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: the pipeline empties"),
    ("in_valid", "a group is presented this cycle"),
    ("x", "x_k: activations 4k..4k+3, INT8 two's complement, lane 4k+b in bits 8b+7..8b"),
    ("w", "w_k: weights 4k..4k+3, INT4 two's complement, lane 4k+b in bits 4b+3..4b"),
    ("out_valid", "the group presented LATENCY (2) cycles ago comes out"),
    ("sum", "its exact sum of 32 INT8 x INT4 products, INT16 two's complement"),
];

/// One lane: a sign-extended INT8 times an INT4, 16-bit two's complement.
#[derive(LogicBlock)]
pub struct Lane {
    /// The halfword holding this lane's activation.
    pub x_half: Signal<In, Bits<16>>,
    /// The halfword holding this lane's weight.
    pub w_half: Signal<In, Bits<16>>,
    /// The product.
    pub product: Signal<Out, Bits<16>>,
    x: Signal<Local, Bits<16>>,
    w: Signal<Local, Bits<16>>,
    x_at: Constant<Bits<16>>,
    w_at: Constant<Bits<16>>,
    byte_mask: Constant<Bits<16>>,
    nibble: Constant<Bits<16>>,
    sign8: Constant<Bits<16>>,
    extend8: Constant<Bits<16>>,
    zero: Constant<Bits<16>>,
    b0: Constant<Bits<16>>,
    b1: Constant<Bits<16>>,
    b2: Constant<Bits<16>>,
    b3: Constant<Bits<16>>,
    k1: Constant<Bits<16>>,
    k2: Constant<Bits<16>>,
    k3: Constant<Bits<16>>,
}

impl Lane {
    /// Lane `b` of its word (0..4).
    pub fn new(b: usize) -> Lane {
        Lane {
            x_half: Default::default(),
            w_half: Default::default(),
            product: Default::default(),
            x: Default::default(),
            w: Default::default(),
            x_at: constant(8 * (b % 2) as u64),
            w_at: constant(4 * b as u64),
            byte_mask: constant(0xff),
            nibble: constant(0xf),
            sign8: constant(0x80),
            extend8: constant(0xff00),
            zero: constant(0),
            b0: constant(1),
            b1: constant(2),
            b2: constant(4),
            b3: constant(8),
            k1: constant(1),
            k2: constant(2),
            k3: constant(3),
        }
    }
}

impl Logic for Lane {
    #[hdl_gen]
    fn update(&mut self) {
        self.x.next = (self.x_half.val() >> self.x_at.val()) & self.byte_mask.val();
        if (self.x.val() & self.sign8.val()) != self.zero.val() {
            self.x.next = self.x.val() | self.extend8.val();
        }
        self.w.next = (self.w_half.val() >> self.w_at.val()) & self.nibble.val();
        // w = -8 w3 + 4 w2 + 2 w1 + w0: shifted copies of x, the sign bit's subtracted.
        self.product.next = self.zero.val();
        if (self.w.val() & self.b0.val()) != self.zero.val() {
            self.product.next = self.product.val() + self.x.val();
        }
        if (self.w.val() & self.b1.val()) != self.zero.val() {
            self.product.next = self.product.val() + (self.x.val() << self.k1.val());
        }
        if (self.w.val() & self.b2.val()) != self.zero.val() {
            self.product.next = self.product.val() + (self.x.val() << self.k2.val());
        }
        if (self.w.val() & self.b3.val()) != self.zero.val() {
            self.product.next = self.product.val() - (self.x.val() << self.k3.val());
        }
    }
}

/// Four lanes of one word and their sum.
#[derive(LogicBlock)]
pub struct Quad {
    /// Four activations.
    pub x: Signal<In, Bits<32>>,
    /// Four weights.
    pub w: Signal<In, Bits<16>>,
    /// The sum of their four products.
    pub sum: Signal<Out, Bits<16>>,
    lanes: Vec<Lane>,
    low: Signal<Local, Bits<16>>,
    high: Signal<Local, Bits<16>>,
}

impl Default for Quad {
    fn default() -> Quad {
        Quad {
            x: Default::default(),
            w: Default::default(),
            sum: Default::default(),
            lanes: (0..LANES_PER_WORD).map(Lane::new).collect(),
            low: Default::default(),
            high: Default::default(),
        }
    }
}

impl Logic for Quad {
    #[hdl_gen]
    fn update(&mut self) {
        // Lanes 0 and 1 take the low halfword, 2 and 3 the high one (each lane shifts its
        // byte down itself).
        self.low.next = self.x.val().get_bits::<16>(0);
        self.high.next = self.x.val().get_bits::<16>(16);
        self.lanes[0].x_half.next = self.low.val();
        self.lanes[1].x_half.next = self.low.val();
        self.lanes[2].x_half.next = self.high.val();
        self.lanes[3].x_half.next = self.high.val();
        for b in 0..self.lanes.len() {
            self.lanes[b].w_half.next = self.w.val();
        }
        self.sum.next = (self.lanes[0].product.val() + self.lanes[1].product.val())
            + (self.lanes[2].product.val() + self.lanes[3].product.val());
    }
}

/// The group unit.
#[derive(LogicBlock)]
pub struct GroupDot {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A group is presented.
    pub in_valid: Signal<In, Bit>,
    /// Activations, four a word.
    pub x: Vec<Signal<In, Bits<32>>>,
    /// Weights, four a halfword.
    pub w: Vec<Signal<In, Bits<16>>>,
    /// A sum comes out.
    pub out_valid: Signal<Out, Bit>,
    /// The sum, INT16.
    pub sum: Signal<Out, Bits<16>>,
    quads: Vec<Quad>,
    s1: Vec<Reg<Bits<16>>>,
    v1: Reg<Bit>,
    v2: Reg<Bit>,
    out: Reg<Bits<16>>,
}

impl Default for GroupDot {
    fn default() -> GroupDot {
        GroupDot {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            x: many(WORDS),
            w: many(WORDS),
            out_valid: Default::default(),
            sum: Default::default(),
            quads: many(WORDS),
            s1: many(WORDS),
            v1: Default::default(),
            v2: Default::default(),
            out: Default::default(),
        }
    }
}

impl Logic for GroupDot {
    #[hdl_gen]
    fn update(&mut self) {
        self.v1.clock.next = self.clock.val();
        self.v1.reset.next = self.reset.val();
        self.v2.clock.next = self.clock.val();
        self.v2.reset.next = self.reset.val();
        self.out.clock.next = self.clock.val();
        self.out.reset.next = self.reset.val();
        for k in 0..self.s1.len() {
            self.s1[k].clock.next = self.clock.val();
            self.s1[k].reset.next = self.reset.val();
            // Stage 1: each quad's four products and their sum.
            self.quads[k].x.next = self.x[k].val();
            self.quads[k].w.next = self.w[k].val();
            self.s1[k].d.next = self.quads[k].sum.val();
        }
        self.v1.d.next = self.in_valid.val();
        // Stage 2: the eight quad sums, as a tree of three adder levels.
        self.out.d.next = ((self.s1[0].q.val() + self.s1[1].q.val()) + (self.s1[2].q.val() + self.s1[3].q.val()))
            + ((self.s1[4].q.val() + self.s1[5].q.val()) + (self.s1[6].q.val() + self.s1[7].q.val()));
        self.v2.d.next = self.v1.q.val();
        self.out_valid.next = self.v2.q.val();
        self.sum.next = self.out.q.val();
    }
}
