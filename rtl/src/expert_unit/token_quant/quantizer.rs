//! `token_quant::quantizer` (`Quantizer`): a job's tokens quantized to A8, the unit's first step
//! (`lacuna_model::expert_unit::token_quant`): per token, its largest magnitude, `127 / amax`
//! and `amax / 127` ([`TokenScale`]), then every value times `127 / amax` rounded to INT8
//! ([`QuantLane`]s), `fp32_lanes` values a cycle.
//!
//! ```text
//!                +------------------------------- quantizer --------------------------------+
//!  start ------->| scan: token t's chunks c (fp32_lanes values) read one a cycle into the    |--> ready, idle
//!  tokens ------>|   lanes' running maxima of |x|; then the maxima to the token scale, 4 a     |--> rd_slot, rd_chunk
//!  hidden ------>|   cycle (their maximum); the next token's scan follows                    |<-- rd_value[F]
//!                | token scale: 127 / amax, amax / 127 (two dividers)                        |--> scale_valid, scale_slot, scale
//!                | quantize: once the scans are done, token t's chunks read again as soon as  |--> out_valid, out_slot, out_chunk
//!                |   its 127 / amax is in, one a cycle, through F quantizer lanes             |--> out_q[F]
//!  clear ------->|                                                                           |--> invalid
//!                +---------------------------------------------------------------------------+
//! ```
//!
//! Contract: a job (1 to `max_tokens` tokens of `hidden` values, 1 to `max_hidden`) is taken
//! with `start` in a cycle `ready` is high (idle); `clear` (a job's start) clears `invalid`. From
//! the next cycle the quantizer reads chunks: in a cycle it reads, `rd_slot` and `rd_chunk` name
//! the chunk, and `rd_value[l]` must be value `rd_chunk x F + l` of token `rd_slot` (lanes at or
//! past `hidden` are ignored). A token's chunks span its values rounded up to whole 32-value
//! groups (`ceil(ceil(hidden / 32) x 32 / F)` chunks), so that its INT8 rows are whole groups
//! with zeros past `hidden`, as the dot engine reads them. Every token's chunks are read twice: for its maximum (tokens in
//! order, each followed by `ceil(F / 4)` cycles that give the lanes' maxima to the token scale),
//! then, once every scan is read, for its INT8 values (tokens in order, each as soon as its
//! `127 / amax` is in, chunks back to back). Token `t`'s scale `amax / 127` (the spec's
//! `Int8Vector::quantize` scale: +0 below `ACT_FLUSH`) comes out with `scale_valid`,
//! `scale_slot`; each chunk's INT8 values `QUANT_LATENCY` (4) cycles after its second read with
//! `out_valid`, `out_slot`, `out_chunk` (`out_q[l]`: 0 for lanes past `hidden`), bit for bit
//! `Int8Vector::quantize`'s. `idle` from the cycle after the last chunk's values. `invalid`
//! (sticky until `clear`): a token had an Inf or NaN. The model's `token_quant::schedule` gives
//! every read, scale and output cycle.
//!
//! How: the lanes keep their running maxima in registers (one compare a lane a cycle: no tree in
//! the read's cycle); the token scale takes the maximum of four lanes' maxima a cycle (two
//! levels: the first four lanes', the registers shifting down four lanes a feed) and keeps its
//! own running maximum. A token's scan waits for its predecessor's maxima
//! to be taken (they share the lanes' registers); the token scale holds its input while a token
//! waits for the dividers, and the feed waits with it. The quantization reads only once the
//! scans are done, so one read port serves both.

use super::quant_lane::QuantLane;
use super::token_scale::TokenScale;
use crate::delay::Delay;
use crate::reg::Reg;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::a8w4::GROUP;
use lacuna_spec::expert_unit::QUANT_FEED_LANES;
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

const FEED: usize = QUANT_FEED_LANES as usize;
// The feed's candidates (`l + 4`) and its two compare levels are written for four.
const _: () = assert!(FEED == 4);
const _: () = assert!(super::quant_lane::LATENCY == lacuna_spec::expert_unit::QUANT_LATENCY);
const _: () = assert!(super::token_scale::READY_AFTER_LAST == lacuna_spec::expert_unit::TOKEN_SCALE_READY_AFTER_LAST);
const _: () = assert!(crate::fp32_div::LATENCY == lacuna_spec::expert_unit::DIVIDE_CYCLES);

/// The ports of [`Quantizer`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: no job under way"),
    ("clear", "clears invalid (a job's start)"),
    ("start", "take a job (when ready): tokens and hidden below are latched"),
    ("tokens", "the job's tokens, 1..=max_tokens (slots 0..tokens)"),
    ("hidden", "values a token, 1..=max_hidden"),
    ("ready", "a start is taken this cycle (no job under way)"),
    ("rd_slot", "the token read this cycle (when reading)"),
    ("rd_chunk", "its chunk: values rd_chunk * F .. + F"),
    ("rd_value", "value rd_chunk * F + l of token rd_slot, IEEE binary32 bits, this cycle"),
    ("scale_valid", "a token's scale comes out (tokens in order)"),
    ("scale_slot", "its token"),
    ("scale", "amax / 127 (+0 below ACT_FLUSH): the token's activation scale, IEEE binary32 bits"),
    ("out_valid", "a chunk's INT8 values come out (QUANT_LATENCY (4) cycles after its read)"),
    ("out_slot", "their token"),
    ("out_chunk", "their chunk"),
    ("out_q", "value out_chunk * F + l as INT8 (0 past hidden), two's complement"),
    ("idle", "no job under way"),
    ("invalid", "sticky until clear: a token had an Inf or NaN value"),
];

/// The quantizer.
#[derive(LogicBlock)]
pub struct Quantizer {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Clears `invalid`.
    pub clear: Signal<In, Bit>,
    /// Take a job.
    pub start: Signal<In, Bit>,
    /// Its tokens.
    pub tokens: Signal<In, Bits<32>>,
    /// Values a token.
    pub hidden: Signal<In, Bits<32>>,
    /// A start is taken.
    pub ready: Signal<Out, Bit>,
    /// The token read.
    pub rd_slot: Signal<Out, Bits<32>>,
    /// Its chunk.
    pub rd_chunk: Signal<Out, Bits<32>>,
    /// The chunk's values (FP32 bits).
    pub rd_value: Vec<Signal<In, Bits<32>>>,
    /// A token's scale comes out.
    pub scale_valid: Signal<Out, Bit>,
    /// Its token.
    pub scale_slot: Signal<Out, Bits<32>>,
    /// The scale (FP32 bits).
    pub scale: Signal<Out, Bits<32>>,
    /// A chunk's INT8 values come out.
    pub out_valid: Signal<Out, Bit>,
    /// Their token.
    pub out_slot: Signal<Out, Bits<32>>,
    /// Their chunk.
    pub out_chunk: Signal<Out, Bits<32>>,
    /// The values.
    pub out_q: Vec<Signal<Out, Bits<8>>>,
    /// No job under way.
    pub idle: Signal<Out, Bit>,
    /// A token was not finite (sticky).
    pub invalid: Signal<Out, Bit>,
    token_scale: TokenScale,
    lanes: Vec<QuantLane>,
    /// The lanes' running maxima of |x| (bits, sign cleared).
    lane_max: Vec<Reg<Bits<32>>>,
    active: Reg<Bit>,
    n_tokens: Reg<Bits<32>>,
    n_hidden: Reg<Bits<32>>,
    /// The values read a token: `hidden` rounded up to whole 32-value groups (the token store's
    /// rows), the lanes past `hidden` giving 0.
    n_span: Reg<Bits<32>>,
    /// The scan: reading a token's chunks, then feeding its maxima.
    scanning: Reg<Bit>,
    feeding: Reg<Bit>,
    s_tok: Reg<Bits<32>>,
    s_chunk: Reg<Bits<32>>,
    s_base: Reg<Bits<32>>,
    feed: Reg<Bits<32>>,
    /// The quantization: allowed once every scan is read.
    q_go: Reg<Bit>,
    q_left: Reg<Bit>,
    q_tok: Reg<Bits<32>>,
    q_chunk: Reg<Bits<32>>,
    q_base: Reg<Bits<32>>,
    /// Tokens whose 127 / amax is in, and those values.
    scaled: Reg<Bits<32>>,
    inv: Vec<Reg<Bits<32>>>,
    bad: Reg<Bit>,
    out_at: Delay<Bit>,
    slot_at: Delay<Bits<32>>,
    chunk_at: Delay<Bits<32>>,
    end_at: Delay<Bit>,
    base: Signal<Local, Bits<32>>,
    chunk_last: Signal<Local, Bit>,
    q_chunk_last: Signal<Local, Bit>,
    q_read: Signal<Local, Bit>,
    q_inv: Signal<Local, Bits<32>>,
    feed_last: Signal<Local, Bit>,
    fed: Signal<Local, Bit>,
    mag: Vec<Signal<Local, Bits<32>>>,
    cand: Vec<Signal<Local, Bits<32>>>,
    pair: Vec<Signal<Local, Bits<32>>>,
    top: Signal<Local, Bits<32>>,
    flagged: Signal<Local, Bit>,
    l_index: Vec<Constant<Bits<32>>>,
    t_index: Vec<Constant<Bits<32>>>,
    lanes_n: Constant<Bits<32>>,
    feeds_last: Constant<Bits<32>>,
    abs_mask: Constant<Bits<32>>,
    group_round: Constant<Bits<32>>,
    five: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
}

impl Quantizer {
    /// The quantizer of `arch`'s expert unit.
    pub fn from_arch(arch: &Arch) -> Quantizer {
        let u = &arch.expert_unit;
        let (lanes, tokens) = (u.fp32_lanes as usize, u.max_tokens as usize);
        let latency = super::quant_lane::LATENCY as usize;
        Quantizer {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            start: Default::default(),
            tokens: Default::default(),
            hidden: Default::default(),
            ready: Default::default(),
            rd_slot: Default::default(),
            rd_chunk: Default::default(),
            rd_value: many(lanes),
            scale_valid: Default::default(),
            scale_slot: Default::default(),
            scale: Default::default(),
            out_valid: Default::default(),
            out_slot: Default::default(),
            out_chunk: Default::default(),
            out_q: many(lanes),
            idle: Default::default(),
            invalid: Default::default(),
            token_scale: Default::default(),
            lanes: many(lanes),
            lane_max: many(lanes),
            active: Default::default(),
            n_tokens: Default::default(),
            n_hidden: Default::default(),
            n_span: Default::default(),
            scanning: Default::default(),
            feeding: Default::default(),
            s_tok: Default::default(),
            s_chunk: Default::default(),
            s_base: Default::default(),
            feed: Default::default(),
            q_go: Default::default(),
            q_left: Default::default(),
            q_tok: Default::default(),
            q_chunk: Default::default(),
            q_base: Default::default(),
            scaled: Default::default(),
            inv: many(tokens),
            bad: Default::default(),
            out_at: Delay::new(latency),
            slot_at: Delay::new(latency),
            chunk_at: Delay::new(latency),
            end_at: Delay::new(latency),
            base: Default::default(),
            chunk_last: Default::default(),
            q_chunk_last: Default::default(),
            q_read: Default::default(),
            q_inv: Default::default(),
            feed_last: Default::default(),
            fed: Default::default(),
            mag: many(lanes),
            cand: many(FEED),
            pair: many(2),
            top: Default::default(),
            flagged: Default::default(),
            l_index: index_constants(lanes),
            t_index: index_constants(tokens),
            lanes_n: constant(lanes as u64),
            feeds_last: constant((lanes.div_ceil(FEED) - 1) as u64),
            abs_mask: constant(0x7fff_ffff),
            group_round: constant(GROUP as u64 - 1),
            five: constant(GROUP.trailing_zeros() as u64),
            one: constant(1),
            zero: constant(0),
        }
    }
}

impl Logic for Quantizer {
    #[hdl_gen]
    fn update(&mut self) {
        self.token_scale.clock.next = self.clock.val();
        self.token_scale.reset.next = self.reset.val();
        self.active.clock.next = self.clock.val();
        self.active.reset.next = self.reset.val();
        self.n_tokens.clock.next = self.clock.val();
        self.n_tokens.reset.next = self.reset.val();
        self.n_hidden.clock.next = self.clock.val();
        self.n_hidden.reset.next = self.reset.val();
        self.n_span.clock.next = self.clock.val();
        self.n_span.reset.next = self.reset.val();
        self.scanning.clock.next = self.clock.val();
        self.scanning.reset.next = self.reset.val();
        self.feeding.clock.next = self.clock.val();
        self.feeding.reset.next = self.reset.val();
        self.s_tok.clock.next = self.clock.val();
        self.s_tok.reset.next = self.reset.val();
        self.s_chunk.clock.next = self.clock.val();
        self.s_chunk.reset.next = self.reset.val();
        self.s_base.clock.next = self.clock.val();
        self.s_base.reset.next = self.reset.val();
        self.feed.clock.next = self.clock.val();
        self.feed.reset.next = self.reset.val();
        self.q_go.clock.next = self.clock.val();
        self.q_go.reset.next = self.reset.val();
        self.q_left.clock.next = self.clock.val();
        self.q_left.reset.next = self.reset.val();
        self.q_tok.clock.next = self.clock.val();
        self.q_tok.reset.next = self.reset.val();
        self.q_chunk.clock.next = self.clock.val();
        self.q_chunk.reset.next = self.reset.val();
        self.q_base.clock.next = self.clock.val();
        self.q_base.reset.next = self.reset.val();
        self.scaled.clock.next = self.clock.val();
        self.scaled.reset.next = self.reset.val();
        self.bad.clock.next = self.clock.val();
        self.bad.reset.next = self.reset.val();
        self.out_at.clock.next = self.clock.val();
        self.out_at.reset.next = self.reset.val();
        self.slot_at.clock.next = self.clock.val();
        self.slot_at.reset.next = self.reset.val();
        self.chunk_at.clock.next = self.clock.val();
        self.chunk_at.reset.next = self.reset.val();
        self.end_at.clock.next = self.clock.val();
        self.end_at.reset.next = self.reset.val();
        for t in 0..self.inv.len() {
            self.inv[t].clock.next = self.clock.val();
            self.inv[t].reset.next = self.reset.val();
            self.inv[t].d.next = self.inv[t].q.val();
        }
        self.n_tokens.d.next = self.n_tokens.q.val();
        self.n_hidden.d.next = self.n_hidden.q.val();
        self.n_span.d.next = self.n_span.q.val();
        self.scanning.d.next = self.scanning.q.val();
        self.feeding.d.next = self.feeding.q.val();
        self.s_tok.d.next = self.s_tok.q.val();
        self.s_chunk.d.next = self.s_chunk.q.val();
        self.s_base.d.next = self.s_base.q.val();
        self.feed.d.next = self.feed.q.val();
        self.q_go.d.next = self.q_go.q.val();
        self.q_left.d.next = self.q_left.q.val();
        self.q_tok.d.next = self.q_tok.q.val();
        self.q_chunk.d.next = self.q_chunk.q.val();
        self.q_base.d.next = self.q_base.q.val();
        self.scaled.d.next = self.scaled.q.val();
        self.active.d.next = self.active.q.val();

        // The read port: the scan's chunk, or once the scans are read the quantization's (a
        // token's as soon as its 127 / amax is in).
        self.q_read.next = self.q_go.q.val() && self.q_left.q.val() && (self.q_tok.q.val() < self.scaled.q.val());
        self.rd_slot.next = self.s_tok.q.val();
        self.rd_chunk.next = self.s_chunk.q.val();
        self.base.next = self.s_base.q.val();
        if self.q_go.q.val() {
            self.rd_slot.next = self.q_tok.q.val();
            self.rd_chunk.next = self.q_chunk.q.val();
            self.base.next = self.q_base.q.val();
        }
        self.chunk_last.next = (self.s_base.q.val() + self.lanes_n.val()) >= self.n_span.q.val();
        self.q_chunk_last.next = (self.q_base.q.val() + self.lanes_n.val()) >= self.n_span.q.val();
        // Each lane's magnitude (0 past the token's end), into its running maximum.
        for l in 0..self.lane_max.len() {
            self.lane_max[l].clock.next = self.clock.val();
            self.lane_max[l].reset.next = self.reset.val();
            self.lane_max[l].d.next = self.lane_max[l].q.val();
            self.mag[l].next = self.zero.val();
            if (self.base.val() + self.l_index[l].val()) < self.n_hidden.q.val() {
                self.mag[l].next = self.rd_value[l].val() & self.abs_mask.val();
            }
            if self.scanning.q.val() {
                if (self.s_chunk.q.val() == self.zero.val()) || (self.mag[l].val() > self.lane_max[l].q.val()) {
                    self.lane_max[l].d.next = self.mag[l].val();
                }
            }
        }
        if self.scanning.q.val() {
            self.s_chunk.d.next = self.s_chunk.q.val() + self.one.val();
            self.s_base.d.next = self.s_base.q.val() + self.lanes_n.val();
            if self.chunk_last.val() {
                self.scanning.d.next = false;
                self.feeding.d.next = true;
                self.feed.d.next = self.zero.val();
                // The last token's scan is read: the quantization may read from now on.
                if self.s_tok.q.val() == (self.n_tokens.q.val() - self.one.val()) {
                    self.q_go.d.next = true;
                }
            }
        }

        // The feed: the maximum of the first four lanes' maxima a cycle to the token scale; the
        // maxima shift down four lanes as each four are taken (no multiplexer by the feed's
        // count before the compares: the path from the lanes' registers through the two compare
        // levels into the token scale's running maximum is the block's longest).
        for g in 0..self.cand.len() {
            self.cand[g].next = self.zero.val();
        }
        for g in 0..self.lane_max.len().min(FEED) {
            self.cand[g].next = self.lane_max[g].q.val();
        }
        self.pair[0].next = self.cand[0].val();
        if self.cand[1].val() > self.cand[0].val() {
            self.pair[0].next = self.cand[1].val();
        }
        self.pair[1].next = self.cand[2].val();
        if self.cand[3].val() > self.cand[2].val() {
            self.pair[1].next = self.cand[3].val();
        }
        self.top.next = self.pair[0].val();
        if self.pair[1].val() > self.pair[0].val() {
            self.top.next = self.pair[1].val();
        }
        self.feed_last.next = self.feed.q.val() == self.feeds_last.val();
        self.token_scale.in_valid.next = self.feeding.q.val();
        self.token_scale.x.next = self.top.val();
        self.token_scale.last.next = self.feed_last.val();
        self.fed.next = self.feeding.q.val() && self.token_scale.in_ready.val();
        if self.fed.val() {
            for l in 0..self.lane_max.len().saturating_sub(FEED) {
                self.lane_max[l].d.next = self.lane_max[l + 4].q.val();
            }
            for l in self.lane_max.len().saturating_sub(FEED)..self.lane_max.len() {
                self.lane_max[l].d.next = self.zero.val();
            }
            self.feed.d.next = self.feed.q.val() + self.one.val();
            if self.feed_last.val() {
                self.feeding.d.next = false;
                // The next token's scan (the lanes' registers are free again).
                if self.s_tok.q.val() != (self.n_tokens.q.val() - self.one.val()) {
                    self.scanning.d.next = true;
                    self.s_tok.d.next = self.s_tok.q.val() + self.one.val();
                    self.s_chunk.d.next = self.zero.val();
                    self.s_base.d.next = self.zero.val();
                }
            }
        }

        // The scales, tokens in order.
        self.scale_valid.next = self.token_scale.ready.val();
        self.scale_slot.next = self.scaled.q.val();
        self.scale.next = self.token_scale.scale.val();
        if self.token_scale.ready.val() {
            self.scaled.d.next = self.scaled.q.val() + self.one.val();
            for t in 0..self.inv.len() {
                if self.scaled.q.val() == self.t_index[t].val() {
                    self.inv[t].d.next = self.token_scale.inv.val();
                }
            }
        }

        // The quantization: the chunk's values times the token's 127 / amax.
        self.q_inv.next = self.inv[0].q.val();
        for t in 0..self.inv.len() {
            if self.q_tok.q.val() == self.t_index[t].val() {
                self.q_inv.next = self.inv[t].q.val();
            }
        }
        self.flagged.next = self.token_scale.ready.val() && self.token_scale.invalid.val();
        for l in 0..self.lanes.len() {
            self.lanes[l].clock.next = self.clock.val();
            self.lanes[l].reset.next = self.reset.val();
            self.lanes[l].in_valid.next = self.q_read.val();
            self.lanes[l].x.next = self.zero.val();
            if (self.base.val() + self.l_index[l].val()) < self.n_hidden.q.val() {
                self.lanes[l].x.next = self.rd_value[l].val();
            }
            self.lanes[l].inv.next = self.q_inv.val();
            self.out_q[l].next = self.lanes[l].q.val();
            if self.lanes[l].out_valid.val() && self.lanes[l].invalid.val() {
                self.flagged.next = true;
            }
        }
        if self.q_read.val() {
            self.q_chunk.d.next = self.q_chunk.q.val() + self.one.val();
            self.q_base.d.next = self.q_base.q.val() + self.lanes_n.val();
            if self.q_chunk_last.val() {
                self.q_chunk.d.next = self.zero.val();
                self.q_base.d.next = self.zero.val();
                self.q_tok.d.next = self.q_tok.q.val() + self.one.val();
                if self.q_tok.q.val() == (self.n_tokens.q.val() - self.one.val()) {
                    self.q_left.d.next = false;
                }
            }
        }
        self.out_at.d.next = self.q_read.val();
        self.slot_at.d.next = self.q_tok.q.val();
        self.chunk_at.d.next = self.q_chunk.q.val();
        self.end_at.d.next = self.q_read.val()
            && self.q_chunk_last.val()
            && (self.q_tok.q.val() == (self.n_tokens.q.val() - self.one.val()));
        self.out_valid.next = self.out_at.q.val();
        self.out_slot.next = self.slot_at.q.val();
        self.out_chunk.next = self.chunk_at.q.val();
        if self.end_at.q.val() {
            self.active.d.next = false;
        }
        self.bad.d.next = (self.bad.q.val() || self.flagged.val()) && !self.clear.val();
        self.invalid.next = self.bad.q.val();

        // A new job.
        self.ready.next = !self.active.q.val();
        self.idle.next = !self.active.q.val();
        if self.start.val() && !self.active.q.val() {
            self.active.d.next = true;
            self.n_tokens.d.next = self.tokens.val();
            self.n_hidden.d.next = self.hidden.val();
            self.n_span.d.next = ((self.hidden.val() + self.group_round.val()) >> self.five.val()) << self.five.val();
            self.scanning.d.next = true;
            self.feeding.d.next = false;
            self.s_tok.d.next = self.zero.val();
            self.s_chunk.d.next = self.zero.val();
            self.s_base.d.next = self.zero.val();
            self.q_go.d.next = false;
            self.q_left.d.next = true;
            self.q_tok.d.next = self.zero.val();
            self.q_chunk.d.next = self.zero.val();
            self.q_base.d.next = self.zero.val();
            self.scaled.d.next = self.zero.val();
        }
    }
}
