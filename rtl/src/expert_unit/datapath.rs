//! `datapath` (`ExpertDatapath`): the expert unit's datapath: the [`Quantizer`], the token store
//! it fills, and the [`ExpertPipe`] that reads it (`lacuna_model::expert_unit`, its quantization
//! and pipeline stages).
//!
//! ```text
//!                   +--------------------------------- datapath ----------------------------------+
//!  tok_start ------>| quantizer: tokens read twice (maxima, then INT8), tok_slot/tok_chunk reads  |--> tok_ready
//!  tokens, hidden ->|   --> token store: INT8 [slot][group][32], one chunk written a cycle          |--> tok_slot, tok_chunk
//!                   |   --> token scales: FP32 [slot]                                             |<-- tok_value[F]
//!  start, ... ----->| pipe: waves and means passes (once the tokens are written), the dot engine   |--> ready, mean_ready
//!  mean_start, ...->|   reading a group of the token store and its scale a cycle                  |--> dot_rec, down_rec, ...
//!  w, scale, ------>|   the staging records' reads as the pipe's                                  |
//!  col_q, col_scale |                                                                             |
//!  out_slot, ------>| the output store (the pipe's)                                               |--> out_value[L], idle
//!  out_block        |                                                                             |--> invalid, overrun
//!                   +-----------------------------------------------------------------------------+
//! ```
//!
//! Contract: `clear` (while idle) starts a job; its tokens are taken with `tok_start` in a cycle
//! `tok_ready` is high (`tokens` tokens of `hidden` values, latched: the job's hidden size for
//! every wave and pass), and read as the quantizer reads them (`tok_slot`, `tok_chunk`,
//! `tok_value`: the [`Quantizer`]'s contract). Waves (`start`, `units`, `users`, `rec_base`,
//! `user_slot`, `user_weight`) and means passes (`mean_start`, `mean_tokens`, `mean_expert`,
//! with `user_slot`) follow the [`ExpertPipe`]'s contract, except that `ready` and `mean_ready`
//! are low until every token's INT8 values are written (the cycle the quantizer is idle again)
//! and the groups a row are `ceil(hidden / 32)`. The staging reads (`dot_rec`, `w`, `scale`;
//! `down_rec`, `down_mean`, `col_block`, `col_q`, `col_scale`) are the pipe's; `out_value` is the
//! output store's row block `(out_slot, out_block)` when `idle`. `invalid`: the quantizer's or
//! the pipe's (sticky until `clear`); `overrun`: the pipe's. The model's `ExpertUnit` times the
//! same stages (`token_quant::schedule`, then `pipe::Pipe` from its end).
//!
//! How: the token store is one [`Sram`] of INT8 cells, a row a (token, group) of 32 values
//! (`slot << group_bits | group`), written a quantizer chunk (`fp32_lanes`, which divides 32) a
//! cycle at its offset in the group, read a whole row in the dot engine's cycle; the token
//! scales are registers, written as the quantizer gives them.

use super::pipe::ExpertPipe;
use super::token_quant::quantizer::Quantizer;
use crate::pack::Pack;
use crate::reg::Reg;
use crate::sram::Sram;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::a8w4::GROUP;
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

/// The ports of [`ExpertDatapath`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: nothing under way"),
    ("clear", "a job's start (while idle): no token row written yet; clears invalid and overrun"),
    ("tok_start", "take the job's tokens (when tok_ready): tokens and hidden below are latched"),
    ("tokens", "the job's tokens, 1..=max_tokens (slots 0..tokens)"),
    ("hidden", "values a token: the job's hidden size, 1..=max_hidden"),
    ("tok_ready", "a tok_start is taken this cycle (the quantizer is idle)"),
    ("tok_slot", "the quantizer's read: the token"),
    ("tok_chunk", "its chunk: values tok_chunk * F .. + F"),
    ("tok_value", "value tok_chunk * F + l of token tok_slot, IEEE binary32 bits, this cycle"),
    ("start", "take a wave (when ready): the pipe's wave ports below are latched"),
    ("units", "the wave's channels, one a dot unit: 1..=dot_units"),
    ("users", "the tokens the wave's expert serves, 1..=max_tokens"),
    ("rec_base", "the staging record of the wave's channel 0 (channel u: rec_base + u mod fetch_ahead_channels)"),
    ("user_slot", "user i's token slot (a wave's users, or a means pass's tokens)"),
    ("user_weight", "user i's routing weight for the wave's expert, IEEE binary32 bits"),
    ("ready", "a start would be taken this cycle (the tokens are written, the pipe ready)"),
    ("mean_start", "take a means pass (when mean_ready): tokens user_slot[0..mean_tokens] get mean vector mean_expert"),
    ("mean_tokens", "the means pass's tokens, 1..=max_tokens"),
    ("mean_expert", "the means pass's vector (an expert's unrouted mean), named back on down_rec while it issues"),
    ("mean_ready", "a mean_start would be taken this cycle (the tokens are written, every wave's passes taken, no start)"),
    ("dot_rec", "the staging record of the dot engine's wave's channel 0"),
    ("w", "record dot_rec + u: group dot_group of its gate (dot_up low) or up row, nibble k weight 32 dot_group + k, this cycle"),
    ("scale", "record dot_rec + u: that group's scale, IEEE binary16 bits, this cycle"),
    ("dot_group", "the group the dot engine reads this cycle"),
    ("dot_up", "its row: 0 gate, 1 up"),
    ("pass_taken", "the down engine takes a channel's pass this cycle"),
    ("down_rec", "the staging record of the pass issuing (a means pass: its mean_expert)"),
    ("down_mean", "the pass issuing is a means pass: col_scale is mean vector down_rec's values"),
    ("col_block", "the row block of the down engine's element (rows col_block * L + l)"),
    ("col_q", "record down_rec's down column: row col_block * L + l's INT4 weight, this cycle"),
    ("col_scale", "that row's group scale (a means pass: the mean vector's value), IEEE binary16 bits"),
    ("idle", "before this cycle's takes: the quantizer and the pipe idle; out_value is the output store"),
    ("out_slot", "the token slot read when idle"),
    ("out_block", "the row block read when idle"),
    ("out_value", "row out_block * L + l of token out_slot's output, IEEE binary32 bits (a slot no pass of the job wrote keeps an earlier job's rows)"),
    ("invalid", "sticky until clear: a token had an Inf or NaN, or an engine an Inf or NaN operand"),
    ("overrun", "sticky until clear: the pipe's SwiGLU engine took a user too early"),
];

/// Bits of a group index within a token's row of the store: `ceil(log2(ceil(max_hidden / 32)))`.
pub fn group_bits(arch: &Arch) -> u32 {
    arch.expert_unit.max_hidden.div_ceil(GROUP as u32).next_power_of_two().trailing_zeros()
}

/// The datapath.
#[derive(LogicBlock)]
pub struct ExpertDatapath {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A job's start.
    pub clear: Signal<In, Bit>,
    /// Take the tokens.
    pub tok_start: Signal<In, Bit>,
    /// The job's tokens.
    pub tokens: Signal<In, Bits<32>>,
    /// Values a token.
    pub hidden: Signal<In, Bits<32>>,
    /// A tok_start is taken.
    pub tok_ready: Signal<Out, Bit>,
    /// The quantizer's token read.
    pub tok_slot: Signal<Out, Bits<32>>,
    /// Its chunk.
    pub tok_chunk: Signal<Out, Bits<32>>,
    /// The chunk's values.
    pub tok_value: Vec<Signal<In, Bits<32>>>,
    /// Take a wave.
    pub start: Signal<In, Bit>,
    /// The wave's channels.
    pub units: Signal<In, Bits<32>>,
    /// Its users.
    pub users: Signal<In, Bits<32>>,
    /// The record of channel 0.
    pub rec_base: Signal<In, Bits<32>>,
    /// Each user's (or means token's) slot.
    pub user_slot: Vec<Signal<In, Bits<32>>>,
    /// Each user's weight.
    pub user_weight: Vec<Signal<In, Bits<32>>>,
    /// A start is taken.
    pub ready: Signal<Out, Bit>,
    /// Take a means pass.
    pub mean_start: Signal<In, Bit>,
    /// Its tokens.
    pub mean_tokens: Signal<In, Bits<32>>,
    /// Its mean vector.
    pub mean_expert: Signal<In, Bits<32>>,
    /// A mean_start is taken.
    pub mean_ready: Signal<Out, Bit>,
    /// The dot wave's first record.
    pub dot_rec: Signal<Out, Bits<32>>,
    /// Each unit's weights.
    pub w: Vec<Signal<In, Bits<128>>>,
    /// Their scales.
    pub scale: Vec<Signal<In, Bits<16>>>,
    /// The group read.
    pub dot_group: Signal<Out, Bits<32>>,
    /// Its row.
    pub dot_up: Signal<Out, Bit>,
    /// A pass is taken.
    pub pass_taken: Signal<Out, Bit>,
    /// The pass's record.
    pub down_rec: Signal<Out, Bits<32>>,
    /// A means pass issues.
    pub down_mean: Signal<Out, Bit>,
    /// The down engine's block.
    pub col_block: Signal<Out, Bits<32>>,
    /// The column's weights.
    pub col_q: Vec<Signal<In, Bits<4>>>,
    /// Their scales.
    pub col_scale: Vec<Signal<In, Bits<16>>>,
    /// Nothing under way.
    pub idle: Signal<Out, Bit>,
    /// The output row set read.
    pub out_slot: Signal<In, Bits<32>>,
    /// The block read.
    pub out_block: Signal<In, Bits<32>>,
    /// The outputs there.
    pub out_value: Vec<Signal<Out, Bits<32>>>,
    /// Invalid (sticky).
    pub invalid: Signal<Out, Bit>,
    /// Overrun (sticky).
    pub overrun: Signal<Out, Bit>,
    quantizer: Quantizer,
    pipe: ExpertPipe,
    /// INT8 cells: row `slot << group_bits | group`, 32 cells.
    store: Sram<8>,
    wr_pack: Pack<32>,
    rd_pack: Pack<256>,
    scales: Vec<Reg<Bits<32>>>,
    started: Reg<Bit>,
    hidden_r: Reg<Bits<32>>,
    written: Signal<Local, Bit>,
    x_scale: Signal<Local, Bits<32>>,
    t_index: Vec<Constant<Bits<32>>>,
    group_shift: Constant<Bits<32>>,
    chunk_shift: Constant<Bits<32>>,
    chunk_mask: Constant<Bits<32>>,
    lane_shift: Constant<Bits<32>>,
    group_round: Constant<Bits<32>>,
    five: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
}

impl ExpertDatapath {
    /// The datapath of `arch`'s expert unit (its `fp32_lanes` dividing 32: `Arch::rtl_fit`).
    pub fn from_arch(arch: &Arch) -> ExpertDatapath {
        let u = &arch.expert_unit;
        let (units, tokens, lanes, f) =
            (u.dot_units as usize, u.max_tokens as usize, u.down_lanes as usize, u.fp32_lanes as usize);
        assert!(GROUP % f == 0, "fp32_lanes divides 32 (rtl_fit)");
        let gbits = group_bits(arch);
        let per_group = GROUP / f;
        ExpertDatapath {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            tok_start: Default::default(),
            tokens: Default::default(),
            hidden: Default::default(),
            tok_ready: Default::default(),
            tok_slot: Default::default(),
            tok_chunk: Default::default(),
            tok_value: many(f),
            start: Default::default(),
            units: Default::default(),
            users: Default::default(),
            rec_base: Default::default(),
            user_slot: many(tokens),
            user_weight: many(tokens),
            ready: Default::default(),
            mean_start: Default::default(),
            mean_tokens: Default::default(),
            mean_expert: Default::default(),
            mean_ready: Default::default(),
            dot_rec: Default::default(),
            w: many(units),
            scale: many(units),
            dot_group: Default::default(),
            dot_up: Default::default(),
            pass_taken: Default::default(),
            down_rec: Default::default(),
            down_mean: Default::default(),
            col_block: Default::default(),
            col_q: many(lanes),
            col_scale: many(lanes),
            idle: Default::default(),
            out_slot: Default::default(),
            out_block: Default::default(),
            out_value: many(lanes),
            invalid: Default::default(),
            overrun: Default::default(),
            quantizer: Quantizer::from_arch(arch),
            pipe: ExpertPipe::from_arch(arch),
            store: Sram::partial(tokens << gbits, GROUP, 8, GROUP, f),
            wr_pack: Pack::new(f),
            rd_pack: Pack::new(GROUP),
            scales: many(tokens),
            started: Default::default(),
            hidden_r: Default::default(),
            written: Default::default(),
            x_scale: Default::default(),
            t_index: index_constants(tokens),
            group_shift: constant(gbits as u64),
            chunk_shift: constant(per_group.trailing_zeros() as u64),
            chunk_mask: constant((per_group - 1) as u64),
            lane_shift: constant(f.trailing_zeros() as u64),
            group_round: constant(GROUP as u64 - 1),
            five: constant(5),
            zero: constant(0),
        }
    }
}

impl Logic for ExpertDatapath {
    #[hdl_gen]
    fn update(&mut self) {
        self.quantizer.clock.next = self.clock.val();
        self.quantizer.reset.next = self.reset.val();
        self.pipe.clock.next = self.clock.val();
        self.pipe.reset.next = self.reset.val();
        self.store.clock.next = self.clock.val();
        self.started.clock.next = self.clock.val();
        self.started.reset.next = self.reset.val();
        self.hidden_r.clock.next = self.clock.val();
        self.hidden_r.reset.next = self.reset.val();
        self.quantizer.clear.next = self.clear.val();
        self.pipe.clear.next = self.clear.val();

        // The tokens: the quantizer's job, its reads.
        self.quantizer.start.next = self.tok_start.val();
        self.quantizer.tokens.next = self.tokens.val();
        self.quantizer.hidden.next = self.hidden.val();
        self.tok_ready.next = self.quantizer.ready.val();
        self.tok_slot.next = self.quantizer.rd_slot.val();
        self.tok_chunk.next = self.quantizer.rd_chunk.val();
        for l in 0..self.tok_value.len() {
            self.quantizer.rd_value[l].next = self.tok_value[l].val();
        }
        self.started.d.next = self.started.q.val() && !self.clear.val();
        self.hidden_r.d.next = self.hidden_r.q.val();
        if self.tok_start.val() && self.quantizer.ready.val() {
            self.started.d.next = true;
            self.hidden_r.d.next = self.hidden.val();
        }
        // Every token is written once the quantizer is idle again after the job's start.
        self.written.next = self.started.q.val() && self.quantizer.idle.val();

        // The quantizer's chunks into the token store, at their offset in the group's row; the
        // scales into registers.
        for k in 0..self.quantizer.out_q.len() {
            self.wr_pack.byte[k].next = self.quantizer.out_q[k].val();
        }
        for w in 0..self.wr_pack.word.len() {
            self.store.wr_data[w].next = self.wr_pack.word[w].val();
        }
        self.store.wr_enable.next = self.quantizer.out_valid.val();
        self.store.wr_row.next = (self.quantizer.out_slot.val() << self.group_shift.val())
            | (self.quantizer.out_chunk.val() >> self.chunk_shift.val());
        self.store.wr_offset.next = (self.quantizer.out_chunk.val() & self.chunk_mask.val()) << self.lane_shift.val();
        for t in 0..self.scales.len() {
            self.scales[t].clock.next = self.clock.val();
            self.scales[t].reset.next = self.reset.val();
            self.scales[t].d.next = self.scales[t].q.val();
            if self.quantizer.scale_valid.val() && (self.quantizer.scale_slot.val() == self.t_index[t].val()) {
                self.scales[t].d.next = self.quantizer.scale.val();
            }
        }

        // The pipe: waves and means passes once the tokens are written; the dot engine's reads
        // of the token store.
        self.pipe.start.next = self.start.val() && self.written.val();
        self.pipe.units.next = self.units.val();
        self.pipe.users.next = self.users.val();
        self.pipe.groups.next = (self.hidden_r.q.val() + self.group_round.val()) >> self.five.val();
        self.pipe.rows.next = self.hidden_r.q.val();
        self.pipe.rec_base.next = self.rec_base.val();
        for t in 0..self.user_slot.len() {
            self.pipe.user_slot[t].next = self.user_slot[t].val();
            self.pipe.user_weight[t].next = self.user_weight[t].val();
        }
        self.ready.next = self.pipe.ready.val() && self.written.val();
        self.pipe.mean_start.next = self.mean_start.val() && self.written.val();
        self.pipe.mean_tokens.next = self.mean_tokens.val();
        self.pipe.mean_expert.next = self.mean_expert.val();
        self.mean_ready.next = self.pipe.mean_ready.val() && self.written.val();
        self.store.rd_row.next = (self.pipe.x_slot.val() << self.group_shift.val()) | self.pipe.group.val();
        self.store.rd_offset.next = self.zero.val();
        for k in 0..self.rd_pack.byte.len() {
            self.rd_pack.byte[k].next = self.store.rd[k].val();
        }
        self.pipe.x.next = self.rd_pack.word[0].val();
        self.x_scale.next = self.scales[0].q.val();
        for t in 0..self.scales.len() {
            if self.pipe.x_slot.val() == self.t_index[t].val() {
                self.x_scale.next = self.scales[t].q.val();
            }
        }
        self.pipe.token_scale.next = self.x_scale.val();
        self.dot_rec.next = self.pipe.dot_rec.val();
        self.dot_group.next = self.pipe.group.val();
        self.dot_up.next = self.pipe.up.val();
        for u in 0..self.w.len() {
            self.pipe.w[u].next = self.w[u].val();
            self.pipe.scale[u].next = self.scale[u].val();
        }
        self.pass_taken.next = self.pipe.pass_taken.val();
        self.down_rec.next = self.pipe.down_rec.val();
        self.down_mean.next = self.pipe.down_mean.val();
        self.col_block.next = self.pipe.col_block.val();
        for l in 0..self.col_q.len() {
            self.pipe.col_q[l].next = self.col_q[l].val();
            self.pipe.col_scale[l].next = self.col_scale[l].val();
            self.out_value[l].next = self.pipe.rd_value[l].val();
        }
        self.pipe.rd_slot.next = self.out_slot.val();
        self.pipe.rd_block.next = self.out_block.val();
        self.idle.next = self.quantizer.idle.val() && self.pipe.idle.val();
        self.invalid.next = self.quantizer.invalid.val() || self.pipe.invalid.val();
        self.overrun.next = self.pipe.overrun.val();
    }
}
