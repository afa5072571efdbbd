//! `pipe` (`ExpertPipe`): the unit's compute pipeline, wave by wave: the [`DotEngine`], the
//! [`SwigluEngine`], two operand banks between SwiGLU and the [`DownEngine`], and the down engine
//! (`lacuna_model::expert_unit::pipe`).
//!
//! ```text
//!                +------------------------------------ pipe ------------------------------------+
//!  start ------->| wave w (bank w mod 2): counts, user slots and weights, first record         |--> ready
//!  units, users ->|   dot engine: gate/up values --> SwiGLU (weight by user) --> bank[u][user]  |--> x_slot, group, up
//!  groups, rows ->|   channel u's pass once its last user's operand is in and the down engine   |<-- x, token_scale
//!  rec_base ---->|   is ready: vectors = users, op_a = bank[u][*], op_slot = slots,             |--> dot_rec
//!  user_slot[T]->|   op_first = the token's first pass in the job                               |<-- w[U], scale[U]
//!  user_weight[T]>|   down engine: rows of the output store                                      |--> pass_taken, down_rec, col_block
//!                |                                                                              |<-- col_q[L], col_scale[L]
//!  mean_start, ->| means pass: tokens user_slot[0..mean_tokens], a = 1.0, q = 1, scales = mean  |--> mean_ready, down_mean
//!  mean_tokens,  |   vector mean_expert (col_scale)                                            |
//!  mean_expert   |                                                                              |
//!  rd_slot, ---->| (rd_*: the output store, read when idle)                                     |--> idle, rd_value[L]
//!  rd_block      |                                                                              |--> invalid, overrun
//!                +------------------------------------------------------------------------------+
//! ```
//!
//! Contract: `clear` (while idle) starts a job: no token slot has been written yet, and the
//! engines' sticky flags clear. A wave (1 to `dot_units` consecutive channels of one expert, 1 to
//! `max_tokens` users, the job's `groups` and `rows`, the hidden size) is taken with `start` in a
//! cycle `ready` is high: the dot engine would take it and the wave's operand bank (wave `w`
//! writes bank `w mod 2`) is free, i.e. the down engine has taken the last pass of the wave before
//! the previous one (in this cycle or earlier); its counts, users' slots and routing weights are
//! latched then. Its records are `rec_base + u` (mod `fetch_ahead_channels`, the staging buffer)
//! for channel `u`: while the dot engine issues the wave, `dot_rec` is `rec_base` and `w[u]`,
//! `scale[u]` must be the dot engine's (`x_slot`, `group`, `up`) read of record `dot_rec + u`;
//! `x`, `token_scale` the token store's. SwiGLU's operands go into the wave's bank as they come
//! out; channel `u`'s down pass (its column times each user's operand, into the user's token
//! rows, from +0 where it is the token's first pass in the job) is asked for the cycle after its
//! last user's operand and taken when the down engine is ready, in channel order (`pass_taken`
//! in the cycle it is taken); while it issues, `down_rec` is its record and `col_q`, `col_scale`
//! must be that record's down column at `col_block`. A means pass (the unrouted experts' means,
//! one pass per expert over the tokens not routed to it, after the job's waves) is taken with
//! `mean_start` in a cycle `mean_ready` is high (every wave's passes taken, the down engine ready,
//! no `start`): its tokens are `user_slot[0..mean_tokens]`, each operand 1.0 and each weight 1, so
//! that each lane adds the mean vector's value of its row exactly; while it issues, `down_mean` is
//! high, `down_rec` is `mean_expert` and `col_scale` must be that mean vector's values at
//! `col_block`. `idle`: no wave or pass pending and every
//! engine drained; the output store's row block `(rd_slot, rd_block)` is then `rd_value`.
//! `invalid` (any engine's) and `overrun` (SwiGLU's) are sticky until `clear`. A job keeps one
//! `groups` and `rows` (SwiGLU's pace relies on it). The model's `pipe::Pipe` gives the same wave
//! and pass cycles; its values are the golden's (`lacuna_golden::expert`), channel by channel in
//! the job's order.
//!
//! How: the operand banks are one [`Sram`] of `2 x dot_units` rows (bank, channel) of
//! `max_tokens` FP16 cells, written one cell a cycle by SwiGLU and read a whole row by the pass
//! being taken (the down engine latches it); the waves' slots and weights are two-row [`Sram`]s
//! (bank), written whole at the wave's start. Four bank pointers follow the waves through the
//! stages (the next wave's, the dot engine's outputs', SwiGLU's outputs', the next pass's), each
//! flipping at its wave's last element, since every stage keeps the waves' order.

mod ports;

use crate::expert_unit::dot_engine::engine::DotEngine;
use crate::expert_unit::down_engine::engine::DownEngine;
use crate::expert_unit::swiglu::engine::SwigluEngine;
use crate::reg::Reg;
use crate::sram::Sram;
use crate::widen::Widen16;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

pub use ports::PORTS;

/// The pipeline.
#[derive(LogicBlock)]
pub struct ExpertPipe {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A job's start.
    pub clear: Signal<In, Bit>,
    /// Take a wave.
    pub start: Signal<In, Bit>,
    /// The wave's channels.
    pub units: Signal<In, Bits<32>>,
    /// Its users.
    pub users: Signal<In, Bits<32>>,
    /// Groups a row.
    pub groups: Signal<In, Bits<32>>,
    /// The hidden size.
    pub rows: Signal<In, Bits<32>>,
    /// The record of channel 0.
    pub rec_base: Signal<In, Bits<32>>,
    /// Each user's token slot.
    pub user_slot: Vec<Signal<In, Bits<32>>>,
    /// Each user's routing weight (FP32 bits).
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
    /// The dot engine's token slot.
    pub x_slot: Signal<Out, Bits<32>>,
    /// Its group.
    pub group: Signal<Out, Bits<32>>,
    /// Its row.
    pub up: Signal<Out, Bit>,
    /// The token's activations.
    pub x: Signal<In, Bits<256>>,
    /// The token's scale.
    pub token_scale: Signal<In, Bits<32>>,
    /// The dot wave's first record.
    pub dot_rec: Signal<Out, Bits<32>>,
    /// Each unit's weights.
    pub w: Vec<Signal<In, Bits<128>>>,
    /// Their scales.
    pub scale: Vec<Signal<In, Bits<16>>>,
    /// A pass is taken.
    pub pass_taken: Signal<Out, Bit>,
    /// The pass's record (or mean vector).
    pub down_rec: Signal<Out, Bits<32>>,
    /// The pass issuing is a means pass.
    pub down_mean: Signal<Out, Bit>,
    /// The down engine's block.
    pub col_block: Signal<Out, Bits<32>>,
    /// The column's weights there.
    pub col_q: Vec<Signal<In, Bits<4>>>,
    /// Their scales.
    pub col_scale: Vec<Signal<In, Bits<16>>>,
    /// Nothing pending.
    pub idle: Signal<Out, Bit>,
    /// The output row set read.
    pub rd_slot: Signal<In, Bits<32>>,
    /// The block read.
    pub rd_block: Signal<In, Bits<32>>,
    /// The outputs there.
    pub rd_value: Vec<Signal<Out, Bits<32>>>,
    /// An engine's operand was invalid (sticky).
    pub invalid: Signal<Out, Bit>,
    /// SwiGLU overran (sticky).
    pub overrun: Signal<Out, Bit>,
    dot: DotEngine,
    swiglu: SwigluEngine,
    down: DownEngine,
    /// Operand banks: row `bank x dot_units + channel`, cell `user`.
    operands: Sram<16>,
    a_wide: Widen16,
    /// Per bank (row): the wave's users' slots and weights.
    slots: Sram<32>,
    weights: Sram<32>,
    /// Per bank: the wave's channels, users, first record; whether its passes are pending; how
    /// many of its channels have all their operands in.
    n_units: Vec<Reg<Bits<32>>>,
    n_users: Vec<Reg<Bits<32>>>,
    rec: Vec<Reg<Bits<32>>>,
    busy: Vec<Reg<Bit>>,
    done: Vec<Reg<Bits<32>>>,
    /// The bank of the next wave, of the dot engine's outputs, of SwiGLU's, of the next pass.
    wave_bank: Reg<Bits<32>>,
    dot_bank: Reg<Bits<32>>,
    sw_bank: Reg<Bits<32>>,
    pass_bank: Reg<Bits<32>>,
    /// The next pass's channel in its wave.
    pass_unit: Reg<Bits<32>>,
    /// Token slots with a row written in this job.
    touched: Vec<Reg<Bit>>,
    rows_r: Reg<Bits<32>>,
    dot_rec_r: Reg<Bits<32>>,
    down_rec_r: Reg<Bits<32>>,
    /// The pass issuing is a means pass.
    mean_r: Reg<Bit>,
    // The selected bank's values, per pointer.
    dot_users: Signal<Local, Bits<32>>,
    sw_units: Signal<Local, Bits<32>>,
    sw_users: Signal<Local, Bits<32>>,
    p_units: Signal<Local, Bits<32>>,
    p_users: Signal<Local, Bits<32>>,
    p_rec: Signal<Local, Bits<32>>,
    p_busy: Signal<Local, Bit>,
    p_done: Signal<Local, Bits<32>>,
    w_busy: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    pass: Signal<Local, Bit>,
    pass_last: Signal<Local, Bit>,
    frees: Signal<Local, Bit>,
    rec_next: Signal<Local, Bits<32>>,
    mean_ok: Signal<Local, Bit>,
    mean_take: Signal<Local, Bit>,
    /// The pass taken this cycle: its operands' slots and count.
    sel_slot: Vec<Signal<Local, Bits<32>>>,
    sel_vectors: Signal<Local, Bits<32>>,
    first: Vec<Signal<Local, Bit>>,
    /// SwiGLU's `h`, for the calibration's `sum |h|` (not built yet; lint ignores `unused*`).
    unused_h: Signal<Local, Bits<32>>,
    b_index: Vec<Constant<Bits<32>>>,
    t_index: Vec<Constant<Bits<32>>>,
    dot_units: Constant<Bits<32>>,
    /// A means pass's operand (FP16 1.0) and weights (INT4 1).
    a_one: Constant<Bits<16>>,
    q_one: Constant<Bits<4>>,
    staging: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
}

impl ExpertPipe {
    /// The pipeline of `arch`'s expert unit.
    pub fn from_arch(arch: &Arch) -> ExpertPipe {
        let u = &arch.expert_unit;
        let (units, tokens, lanes) = (u.dot_units as usize, u.max_tokens as usize, u.down_lanes as usize);
        ExpertPipe {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            start: Default::default(),
            units: Default::default(),
            users: Default::default(),
            groups: Default::default(),
            rows: Default::default(),
            rec_base: Default::default(),
            user_slot: many(tokens),
            user_weight: many(tokens),
            ready: Default::default(),
            mean_start: Default::default(),
            mean_tokens: Default::default(),
            mean_expert: Default::default(),
            mean_ready: Default::default(),
            x_slot: Default::default(),
            group: Default::default(),
            up: Default::default(),
            x: Default::default(),
            token_scale: Default::default(),
            dot_rec: Default::default(),
            w: many(units),
            scale: many(units),
            pass_taken: Default::default(),
            down_rec: Default::default(),
            down_mean: Default::default(),
            col_block: Default::default(),
            col_q: many(lanes),
            col_scale: many(lanes),
            idle: Default::default(),
            rd_slot: Default::default(),
            rd_block: Default::default(),
            rd_value: many(lanes),
            invalid: Default::default(),
            overrun: Default::default(),
            dot: DotEngine::from_arch(arch),
            swiglu: SwigluEngine::from_arch(arch),
            down: DownEngine::from_arch(arch),
            operands: Sram::partial(2 * units, tokens, 16, tokens, 1),
            a_wide: Default::default(),
            slots: Sram::new(2, tokens, 32, tokens),
            weights: Sram::new(2, tokens, 32, 1),
            n_units: many(2),
            n_users: many(2),
            rec: many(2),
            busy: many(2),
            done: many(2),
            wave_bank: Default::default(),
            dot_bank: Default::default(),
            sw_bank: Default::default(),
            pass_bank: Default::default(),
            pass_unit: Default::default(),
            touched: many(tokens),
            rows_r: Default::default(),
            dot_rec_r: Default::default(),
            down_rec_r: Default::default(),
            mean_r: Default::default(),
            dot_users: Default::default(),
            sw_units: Default::default(),
            sw_users: Default::default(),
            p_units: Default::default(),
            p_users: Default::default(),
            p_rec: Default::default(),
            p_busy: Default::default(),
            p_done: Default::default(),
            w_busy: Default::default(),
            take: Default::default(),
            pass: Default::default(),
            pass_last: Default::default(),
            frees: Default::default(),
            rec_next: Default::default(),
            mean_ok: Default::default(),
            mean_take: Default::default(),
            sel_slot: many(tokens),
            sel_vectors: Default::default(),
            first: many(tokens),
            unused_h: Default::default(),
            b_index: index_constants(2),
            t_index: index_constants(tokens),
            dot_units: constant(units as u64),
            a_one: Constant::new(0x3c00.into()),
            q_one: Constant::new(1.into()),
            staging: constant(u.fetch_ahead_channels as u64),
            one: constant(1),
            zero: constant(0),
        }
    }
}

impl Logic for ExpertPipe {
    #[hdl_gen]
    fn update(&mut self) {
        self.dot.clock.next = self.clock.val();
        self.dot.reset.next = self.reset.val();
        self.swiglu.clock.next = self.clock.val();
        self.swiglu.reset.next = self.reset.val();
        self.down.clock.next = self.clock.val();
        self.down.reset.next = self.reset.val();
        self.operands.clock.next = self.clock.val();
        self.slots.clock.next = self.clock.val();
        self.weights.clock.next = self.clock.val();
        self.wave_bank.clock.next = self.clock.val();
        self.wave_bank.reset.next = self.reset.val();
        self.dot_bank.clock.next = self.clock.val();
        self.dot_bank.reset.next = self.reset.val();
        self.sw_bank.clock.next = self.clock.val();
        self.sw_bank.reset.next = self.reset.val();
        self.pass_bank.clock.next = self.clock.val();
        self.pass_bank.reset.next = self.reset.val();
        self.pass_unit.clock.next = self.clock.val();
        self.pass_unit.reset.next = self.reset.val();
        self.rows_r.clock.next = self.clock.val();
        self.rows_r.reset.next = self.reset.val();
        self.dot_rec_r.clock.next = self.clock.val();
        self.dot_rec_r.reset.next = self.reset.val();
        self.down_rec_r.clock.next = self.clock.val();
        self.down_rec_r.reset.next = self.reset.val();
        self.mean_r.clock.next = self.clock.val();
        self.mean_r.reset.next = self.reset.val();
        for t in 0..self.touched.len() {
            self.touched[t].clock.next = self.clock.val();
            self.touched[t].reset.next = self.reset.val();
            self.touched[t].d.next = self.touched[t].q.val() && !self.clear.val();
        }
        for b in 0..2 {
            self.n_units[b].clock.next = self.clock.val();
            self.n_units[b].reset.next = self.reset.val();
            self.n_units[b].d.next = self.n_units[b].q.val();
            self.n_users[b].clock.next = self.clock.val();
            self.n_users[b].reset.next = self.reset.val();
            self.n_users[b].d.next = self.n_users[b].q.val();
            self.rec[b].clock.next = self.clock.val();
            self.rec[b].reset.next = self.reset.val();
            self.rec[b].d.next = self.rec[b].q.val();
            self.busy[b].clock.next = self.clock.val();
            self.busy[b].reset.next = self.reset.val();
            self.busy[b].d.next = self.busy[b].q.val();
            self.done[b].clock.next = self.clock.val();
            self.done[b].reset.next = self.reset.val();
            self.done[b].d.next = self.done[b].q.val();
        }
        self.dot.clear.next = self.clear.val();
        self.swiglu.clear.next = self.clear.val();
        self.down.clear.next = self.clear.val();

        // Each pointer's bank: its wave's counts.
        self.dot_users.next = self.n_users[0].q.val();
        self.sw_units.next = self.n_units[0].q.val();
        self.sw_users.next = self.n_users[0].q.val();
        self.p_units.next = self.n_units[0].q.val();
        self.p_users.next = self.n_users[0].q.val();
        self.p_rec.next = self.rec[0].q.val();
        self.p_busy.next = self.busy[0].q.val();
        self.p_done.next = self.done[0].q.val();
        self.w_busy.next = self.busy[0].q.val();
        for b in 0..2 {
            if self.dot_bank.q.val() == self.b_index[b].val() {
                self.dot_users.next = self.n_users[b].q.val();
            }
            if self.sw_bank.q.val() == self.b_index[b].val() {
                self.sw_units.next = self.n_units[b].q.val();
                self.sw_users.next = self.n_users[b].q.val();
            }
            if self.pass_bank.q.val() == self.b_index[b].val() {
                self.p_units.next = self.n_units[b].q.val();
                self.p_users.next = self.n_users[b].q.val();
                self.p_rec.next = self.rec[b].q.val();
                self.p_busy.next = self.busy[b].q.val();
                self.p_done.next = self.done[b].q.val();
            }
            if self.wave_bank.q.val() == self.b_index[b].val() {
                self.w_busy.next = self.busy[b].q.val();
            }
        }

        // The next pass: its channel's operands all in, the down engine ready. The wave's last
        // pass frees its bank in the cycle it is taken (the down engine latches the operands).
        self.pass.next = self.p_busy.val() && (self.pass_unit.q.val() < self.p_done.val()) && self.down.ready.val();
        self.pass_last.next = self.pass_unit.q.val() == (self.p_units.val() - self.one.val());
        self.frees.next = self.pass.val() && self.pass_last.val() && (self.pass_bank.q.val() == self.wave_bank.q.val());
        self.pass_taken.next = self.pass.val();
        // A means pass: once every wave's passes are taken (a wave asked in the same cycle wins).
        self.mean_ok.next =
            self.down.ready.val() && !self.busy[0].q.val() && !self.busy[1].q.val() && !self.start.val();
        self.mean_ready.next = self.mean_ok.val();
        self.mean_take.next = self.mean_start.val() && self.mean_ok.val();

        // A wave: the dot engine ready and its bank free.
        self.dot.start.next = self.start.val() && (!self.w_busy.val() || self.frees.val());
        self.take.next = self.dot.start.val() && self.dot.ready.val();
        self.ready.next = self.dot.ready.val() && (!self.w_busy.val() || self.frees.val());
        self.dot.units.next = self.units.val();
        self.dot.users.next = self.users.val();
        self.dot.groups.next = self.groups.val();
        for t in 0..self.user_slot.len() {
            self.dot.user_slot[t].next = self.user_slot[t].val();
            self.slots.wr_data[t].next = self.user_slot[t].val();
            self.weights.wr_data[t].next = self.user_weight[t].val();
        }
        self.slots.wr_enable.next = self.take.val();
        self.slots.wr_row.next = self.wave_bank.q.val();
        self.slots.wr_offset.next = self.zero.val();
        self.weights.wr_enable.next = self.take.val();
        self.weights.wr_row.next = self.wave_bank.q.val();
        self.weights.wr_offset.next = self.zero.val();
        self.wave_bank.d.next = self.wave_bank.q.val();
        self.rows_r.d.next = self.rows_r.q.val();
        self.dot_rec_r.d.next = self.dot_rec_r.q.val();
        if self.take.val() {
            self.wave_bank.d.next = self.one.val() - self.wave_bank.q.val();
            self.rows_r.d.next = self.rows.val();
            self.dot_rec_r.d.next = self.rec_base.val();
        }

        // The dot engine's reads, and its values to SwiGLU with their user's weight.
        self.x_slot.next = self.dot.x_slot.val();
        self.group.next = self.dot.group.val();
        self.up.next = self.dot.up.val();
        self.dot.x.next = self.x.val();
        self.dot.token_scale.next = self.token_scale.val();
        self.dot_rec.next = self.dot_rec_r.q.val();
        for u in 0..self.w.len() {
            self.dot.w[u].next = self.w[u].val();
            self.dot.scale[u].next = self.scale[u].val();
            self.swiglu.in_valid[u].next = self.dot.out_valid[u].val();
            self.swiglu.value[u].next = self.dot.value[u].val();
        }
        self.swiglu.in_user.next = self.dot.out_user.val();
        self.swiglu.in_up.next = self.dot.out_up.val();
        self.weights.rd_row.next = self.dot_bank.q.val();
        self.weights.rd_offset.next = self.dot.out_user.val();
        self.swiglu.in_weight.next = self.weights.rd[0].val();
        self.dot_bank.d.next = self.dot_bank.q.val();
        if self.dot.out_valid[0].val()
            && self.dot.out_up.val()
            && (self.dot.out_user.val() == (self.dot_users.val() - self.one.val()))
        {
            self.dot_bank.d.next = self.one.val() - self.dot_bank.q.val();
        }

        // SwiGLU's operands into their bank; a channel is done with its last user's.
        self.unused_h.next = self.swiglu.h.val();
        self.a_wide.narrow.next = self.swiglu.a.val();
        self.operands.wr_enable.next = self.swiglu.out_valid.val();
        self.operands.wr_row.next = self.swiglu.out_unit.val();
        if self.sw_bank.q.val() != self.zero.val() {
            self.operands.wr_row.next = self.dot_units.val() + self.swiglu.out_unit.val();
        }
        self.operands.wr_offset.next = self.swiglu.out_user.val();
        self.operands.wr_data[0].next = self.a_wide.wide.val();
        self.sw_bank.d.next = self.sw_bank.q.val();
        if self.swiglu.out_valid.val() && (self.swiglu.out_user.val() == (self.sw_users.val() - self.one.val())) {
            for b in 0..2 {
                if self.sw_bank.q.val() == self.b_index[b].val() {
                    self.done[b].d.next = self.swiglu.out_unit.val() + self.one.val();
                }
            }
            if self.swiglu.out_unit.val() == (self.sw_units.val() - self.one.val()) {
                self.sw_bank.d.next = self.one.val() - self.sw_bank.q.val();
            }
        }

        // The pass: the channel's operand row and its users' slots, read as it is taken.
        self.operands.rd_row.next = self.pass_unit.q.val();
        if self.pass_bank.q.val() != self.zero.val() {
            self.operands.rd_row.next = self.dot_units.val() + self.pass_unit.q.val();
        }
        self.operands.rd_offset.next = self.zero.val();
        self.slots.rd_row.next = self.pass_bank.q.val();
        self.slots.rd_offset.next = self.zero.val();
        self.down.start.next = self.pass.val() || self.mean_take.val();
        self.down.rows.next = self.rows_r.q.val();
        self.sel_vectors.next = self.p_users.val();
        if self.mean_take.val() {
            self.down.rows.next = self.rows.val();
            self.sel_vectors.next = self.mean_tokens.val();
        }
        self.down.vectors.next = self.sel_vectors.val();
        for v in 0..self.first.len() {
            self.sel_slot[v].next = self.slots.rd[v].val();
            self.down.op_a[v].next = self.operands.rd[v].val();
            if self.mean_take.val() {
                self.sel_slot[v].next = self.user_slot[v].val();
                self.down.op_a[v].next = self.a_one.val();
            }
            self.down.op_slot[v].next = self.sel_slot[v].val();
            // A token's rows start from +0 in its first pass of the job.
            self.first[v].next = true;
            for t in 0..self.touched.len() {
                if (self.sel_slot[v].val() == self.t_index[t].val()) && self.touched[t].q.val() {
                    self.first[v].next = false;
                }
            }
            self.down.op_first[v].next = self.first[v].val();
        }
        // The mean-row operand (slot max_tokens) is not used by this pipeline's passes yet.
        for m in self.first.len()..self.down.op_slot.len() {
            self.down.op_slot[m].next = self.zero.val();
            self.down.op_a[m].next = self.operands.rd[0].val();
            self.down.op_first[m].next = false;
        }
        if self.pass.val() || self.mean_take.val() {
            for t in 0..self.touched.len() {
                for v in 0..self.first.len() {
                    if (self.t_index[v].val() < self.sel_vectors.val())
                        && (self.sel_slot[v].val() == self.t_index[t].val())
                    {
                        self.touched[t].d.next = true;
                    }
                }
            }
        }
        self.rec_next.next = self.p_rec.val() + self.pass_unit.q.val();
        self.down_rec_r.d.next = self.down_rec_r.q.val();
        self.mean_r.d.next = self.mean_r.q.val();
        if self.mean_take.val() {
            self.down_rec_r.d.next = self.mean_expert.val();
            self.mean_r.d.next = true;
            self.rows_r.d.next = self.rows.val();
        }
        self.pass_unit.d.next = self.pass_unit.q.val();
        self.pass_bank.d.next = self.pass_bank.q.val();
        if self.pass.val() {
            self.mean_r.d.next = false;
            self.down_rec_r.d.next = self.rec_next.val();
            if self.rec_next.val() >= self.staging.val() {
                self.down_rec_r.d.next = self.rec_next.val() - self.staging.val();
            }
            self.pass_unit.d.next = self.pass_unit.q.val() + self.one.val();
            if self.pass_last.val() {
                self.pass_unit.d.next = self.zero.val();
                self.pass_bank.d.next = self.one.val() - self.pass_bank.q.val();
                for b in 0..2 {
                    if self.pass_bank.q.val() == self.b_index[b].val() {
                        self.busy[b].d.next = false;
                    }
                }
            }
        }
        // A wave's take (after the pass, whose freeing of the same bank it follows).
        if self.take.val() {
            for b in 0..2 {
                if self.wave_bank.q.val() == self.b_index[b].val() {
                    self.n_units[b].d.next = self.units.val();
                    self.n_users[b].d.next = self.users.val();
                    self.rec[b].d.next = self.rec_base.val();
                    self.busy[b].d.next = true;
                    self.done[b].d.next = self.zero.val();
                }
            }
        }
        // `clear` forgets any wave or pass pending (after an overrun, SwiGLU's lost elements would
        // keep a bank busy for ever).
        if self.clear.val() {
            self.wave_bank.d.next = self.zero.val();
            self.dot_bank.d.next = self.zero.val();
            self.sw_bank.d.next = self.zero.val();
            self.pass_bank.d.next = self.zero.val();
            self.pass_unit.d.next = self.zero.val();
            for b in 0..2 {
                self.busy[b].d.next = false;
                self.done[b].d.next = self.zero.val();
            }
        }
        self.down_rec.next = self.down_rec_r.q.val();
        self.down_mean.next = self.mean_r.q.val();
        self.col_block.next = self.down.col_block.val();
        for l in 0..self.col_q.len() {
            self.down.col_q[l].next = self.col_q[l].val();
            if self.mean_r.q.val() {
                self.down.col_q[l].next = self.q_one.val();
            }
            self.down.col_scale[l].next = self.col_scale[l].val();
            self.rd_value[l].next = self.down.rd_value[l].val();
        }
        self.down.rd_slot.next = self.rd_slot.val();
        self.down.rd_block.next = self.rd_block.val();
        self.idle.next = self.dot.idle.val()
            && self.swiglu.idle.val()
            && self.down.drained.val()
            && !self.busy[0].q.val()
            && !self.busy[1].q.val();
        self.invalid.next = self.dot.invalid.val() || self.swiglu.invalid.val() || self.down.invalid.val();
        self.overrun.next = self.swiglu.overrun.val();
    }
}
