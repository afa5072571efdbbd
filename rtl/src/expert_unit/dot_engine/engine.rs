//! `dot_engine::engine` (`DotEngine`): the gate and up projections of a wave of up to
//! `dot_units` channels of one expert, one channel a [`DotUnit`], all in lock step
//! (`lacuna_model::expert_unit::dot_engine`).
//!
//! ```text
//!                   +------------------------------- dot_engine -------------------------------+
//!  start, units --->| wave: users i = 0..users, groups g = 0..groups, gate then up (i outer)    |--> ready
//!  users, groups -->| element (i, g, row): every active unit u < units takes group g of row     |--> x_slot, group
//!  user_slot[T] --->|   `row` of its own channel (w[u], scale[u]) and of token user_slot[i]    |<-- x, token_scale
//!                   |   (x, token_scale: one read serves all units), read by x_slot, group, up  |--> up
//!                   |   in the same cycle                                                      |<-- w[U], scale[U]
//!                   | unit u: rule 1 (DotUnit), gate in slot 0, up in slot 1                    |--> out_valid[U], value[U]
//!                   |                                                                          |--> out_user, out_up
//!                   |                                                                          |--> idle, invalid
//!                   +--------------------------------------------------------------------------+
//! ```
//!
//! Contract: a wave (1 to `dot_units` channels, 1 to `max_tokens` users, 1 to
//! `ceil(max_hidden / GROUP)` groups) is taken with `start` in a cycle `ready` is high (while no
//! wave is under way, and in a wave's last cycle, its last user's last, so waves follow back to
//! back); its
//! counts and user slots are latched then. From the next cycle it issues one element a cycle:
//! user `i` outer, group `g`, gate then up inner; each user takes `max(2 x groups, units)`
//! cycles, its `2 x groups` elements and then idle cycles (the SwiGLU engine's one lane takes the
//! user's `units` channels in that time), so a wave is `users x max(2 x groups, units)` cycles;
//! `x_slot`, `group` and `up` name the element, and in that cycle `x` must be group `g` of token
//! `x_slot`'s INT8 activations (byte `k` activation `32 g + k`), `token_scale` that token's
//! scale, and for each unit `u` below `units`, `w[u]` and `scale[u]` group `g` of the gate (`up`
//! low) or up row of the unit's channel (nibble `k` weight `32 g + k`, as the channel record
//! packs them) and its FP16 scale. The row's FP32 value (`lacuna_spec::a8w4::row_dot`, rule 1,
//! every step rounded as the golden rounds it) comes out of unit `u` with `out_valid[u]`,
//! `value[u]` `DOT_LATENCY` (9) cycles after the row's last group, `out_user` and `out_up` naming
//! the user and the row; units at or above `units` take nothing in the wave (they may still give
//! the previous wave's last values in its first cycles). `idle`: nothing to issue and no value
//! still to come out (`ready` is high earlier, while the last values drain). `invalid` is sticky
//! until `clear`: a row had an Inf or NaN scale or token scale (`clear` wins over a flag arriving
//! in its cycle: a job clears once the engine is idle). The model's `dot_engine::Waves` computes
//! the same cycles.
//!
//! Why lock step, one channel a unit: rule 1 adds a row's groups in order, so a row is not split
//! across units; splitting tokens across units would give a one-token step `2 x groups` cycles
//! a channel, slower than the channel's DRAM time on `edge`; channels across units in lock step
//! keep pace with memory and read each activation group once for all units (docs/
//! microarchitecture.md). The gate and up rows alternate in the unit's two accumulator slots,
//! so each slot's groups are two cycles apart, its accumulation loop.

use super::dot_unit::{DotUnit, LATENCY};
use crate::delay::Delay;
use crate::reg::Reg;
use crate::wiring::{constant, index_constants, many};
use lacuna_spec::a8w4::GROUP;
use lacuna_spec::Arch;
use rust_hdl::prelude::*;

const _: () = assert!(LATENCY == lacuna_spec::expert_unit::DOT_LATENCY, "the model schedules by the spec's");

/// The ports of [`DotEngine`] when it is a top module.
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: no wave under way"),
    ("clear", "clears invalid (a job's start)"),
    ("start", "take a wave (when ready): its counts and user slots below are latched"),
    ("units", "the wave's channels, one a unit: 1..=dot_units"),
    ("users", "the tokens the wave's expert serves, 1..=max_tokens"),
    ("groups", "groups a row: ceil(hidden / 32), 1..=ceil(max_hidden / 32)"),
    ("user_slot", "user i's token slot in the activation store, 0..max_tokens"),
    ("ready", "a start would be taken this cycle (no wave under way, or the wave's last cycle)"),
    ("x_slot", "the token slot of the element issuing this cycle"),
    ("group", "its group"),
    ("up", "its row: 0 gate, 1 up"),
    ("x", "group `group` of token x_slot's INT8 activations, byte k activation 32 group + k, this cycle"),
    ("token_scale", "token x_slot's activation scale, IEEE binary32 bits, this cycle"),
    ("w", "unit u's channel: group `group` of its gate or up row, nibble k weight 32 group + k, this cycle"),
    ("scale", "unit u's channel: that group's scale, IEEE binary16 bits, this cycle"),
    ("out_valid", "unit u's row value comes out (units below the wave's count)"),
    ("value", "unit u's row value: rule 1's row_dot, IEEE binary32 bits"),
    ("out_user", "the user of the rows coming out"),
    ("out_up", "their row: 0 gate, 1 up"),
    ("idle", "nothing to issue and no value still to come out"),
    ("invalid", "sticky until clear: a row had an Inf or NaN scale or token scale"),
];

/// Groups of a row of `max_hidden` values.
pub fn max_groups(arch: &Arch) -> u32 {
    arch.expert_unit.max_hidden.div_ceil(GROUP as u32)
}

/// A [`DotUnit`] taking a group packed as the stores hold it: rust-hdl cannot address a `Vec`
/// port of a block that is itself in a `Vec` (the engine's units), so the words are split here.
#[derive(LogicBlock, Default)]
pub struct PackedDotUnit {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A group is presented.
    pub in_valid: Signal<In, Bit>,
    /// The row's accumulator slot.
    pub slot: Signal<In, Bit>,
    /// The row's first group.
    pub first: Signal<In, Bit>,
    /// The row's last group.
    pub last: Signal<In, Bit>,
    /// The group's 32 activations, activation k in bits 8k + 7..8k.
    pub x: Signal<In, Bits<256>>,
    /// The group's 32 weights, weight k in bits 4k + 3..4k.
    pub w: Signal<In, Bits<128>>,
    /// The group's scale.
    pub scale: Signal<In, Bits<16>>,
    /// The token's scale.
    pub token_scale: Signal<In, Bits<32>>,
    /// A row's value comes out.
    pub out_valid: Signal<Out, Bit>,
    /// The row's value.
    pub value: Signal<Out, Bits<32>>,
    /// The row was invalid.
    pub invalid: Signal<Out, Bit>,
    unit: DotUnit,
}

impl Logic for PackedDotUnit {
    #[hdl_gen]
    fn update(&mut self) {
        self.unit.clock.next = self.clock.val();
        self.unit.reset.next = self.reset.val();
        self.unit.in_valid.next = self.in_valid.val();
        self.unit.slot.next = self.slot.val();
        self.unit.first.next = self.first.val();
        self.unit.last.next = self.last.val();
        for k in 0..8 {
            self.unit.x[k].next = self.x.val().get_bits::<32>(32 * k);
            self.unit.w[k].next = self.w.val().get_bits::<16>(16 * k);
        }
        self.unit.scale.next = self.scale.val();
        self.unit.token_scale.next = self.token_scale.val();
        self.out_valid.next = self.unit.out_valid.val();
        self.value.next = self.unit.value.val();
        self.invalid.next = self.unit.invalid.val();
    }
}

/// The dot engine.
#[derive(LogicBlock)]
pub struct DotEngine {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Clears `invalid`.
    pub clear: Signal<In, Bit>,
    /// Take a wave.
    pub start: Signal<In, Bit>,
    /// The wave's channels.
    pub units: Signal<In, Bits<32>>,
    /// Its users.
    pub users: Signal<In, Bits<32>>,
    /// Groups a row.
    pub groups: Signal<In, Bits<32>>,
    /// Each user's token slot.
    pub user_slot: Vec<Signal<In, Bits<32>>>,
    /// A start is taken.
    pub ready: Signal<Out, Bit>,
    /// The issuing element's token slot.
    pub x_slot: Signal<Out, Bits<32>>,
    /// Its group.
    pub group: Signal<Out, Bits<32>>,
    /// Its row (up).
    pub up: Signal<Out, Bit>,
    /// The token's activations of that group.
    pub x: Signal<In, Bits<256>>,
    /// The token's scale.
    pub token_scale: Signal<In, Bits<32>>,
    /// Each unit's weights of that group and row.
    pub w: Vec<Signal<In, Bits<128>>>,
    /// Their scales.
    pub scale: Vec<Signal<In, Bits<16>>>,
    /// A unit's row value comes out.
    pub out_valid: Vec<Signal<Out, Bit>>,
    /// The values.
    pub value: Vec<Signal<Out, Bits<32>>>,
    /// Their user.
    pub out_user: Signal<Out, Bits<32>>,
    /// Their row.
    pub out_up: Signal<Out, Bit>,
    /// Nothing to issue or to come out.
    pub idle: Signal<Out, Bit>,
    /// A row was invalid (sticky).
    pub invalid: Signal<Out, Bit>,
    lanes: Vec<PackedDotUnit>,
    active: Reg<Bit>,
    cur_i: Reg<Bits<32>>,
    cur_g: Reg<Bits<32>>,
    cur_up: Reg<Bit>,
    /// The wave's units, its users - 1 and its groups - 1 (compared with the counters).
    n_units: Reg<Bits<32>>,
    last_i: Reg<Bits<32>>,
    last_g: Reg<Bits<32>>,
    slot_r: Vec<Reg<Bits<32>>>,
    /// Cycles a user takes (`max(2 x groups, units)`), the cycle within the current user, and
    /// whether its elements are issued and it waits out the rest.
    pace: Reg<Bits<32>>,
    ucount: Reg<Bits<32>>,
    waiting: Reg<Bit>,
    /// The current user's slot, registered so that `x_slot` comes from a register.
    head_slot: Reg<Bits<32>>,
    /// Cycles until the last issued row's value is out.
    tail: Reg<Bits<32>>,
    bad: Reg<Bit>,
    user_at: Delay<Bits<32>>,
    up_at: Delay<Bit>,
    ni: Signal<Local, Bits<32>>,
    next_slot: Signal<Local, Bits<32>>,
    last_group: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    user_done: Signal<Local, Bit>,
    two_g: Signal<Local, Bits<32>>,
    wave_end: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    flagged: Signal<Local, Bit>,
    u_index: Vec<Constant<Bits<32>>>,
    t_index: Vec<Constant<Bits<32>>>,
    latency: Constant<Bits<32>>,
    one: Constant<Bits<32>>,
    zero: Constant<Bits<32>>,
}

impl DotEngine {
    /// The engine of `arch`'s expert unit.
    pub fn from_arch(arch: &Arch) -> DotEngine {
        let u = &arch.expert_unit;
        let (units, tokens) = (u.dot_units as usize, u.max_tokens as usize);
        DotEngine {
            clock: Default::default(),
            reset: Default::default(),
            clear: Default::default(),
            start: Default::default(),
            units: Default::default(),
            users: Default::default(),
            groups: Default::default(),
            user_slot: many(tokens),
            ready: Default::default(),
            x_slot: Default::default(),
            group: Default::default(),
            up: Default::default(),
            x: Default::default(),
            token_scale: Default::default(),
            w: many(units),
            scale: many(units),
            out_valid: many(units),
            value: many(units),
            out_user: Default::default(),
            out_up: Default::default(),
            idle: Default::default(),
            invalid: Default::default(),
            lanes: many(units),
            active: Default::default(),
            cur_i: Default::default(),
            cur_g: Default::default(),
            cur_up: Default::default(),
            n_units: Default::default(),
            last_i: Default::default(),
            last_g: Default::default(),
            slot_r: many(tokens),
            pace: Default::default(),
            ucount: Default::default(),
            waiting: Default::default(),
            head_slot: Default::default(),
            tail: Default::default(),
            bad: Default::default(),
            user_at: Delay::new(LATENCY as usize),
            up_at: Delay::new(LATENCY as usize),
            ni: Default::default(),
            next_slot: Default::default(),
            last_group: Default::default(),
            issue: Default::default(),
            user_done: Default::default(),
            two_g: Default::default(),
            wave_end: Default::default(),
            take: Default::default(),
            flagged: Default::default(),
            u_index: index_constants(units),
            t_index: index_constants(tokens),
            latency: constant(LATENCY),
            one: constant(1),
            zero: constant(0),
        }
    }
}

impl Logic for DotEngine {
    #[hdl_gen]
    fn update(&mut self) {
        self.active.clock.next = self.clock.val();
        self.active.reset.next = self.reset.val();
        self.cur_i.clock.next = self.clock.val();
        self.cur_i.reset.next = self.reset.val();
        self.cur_g.clock.next = self.clock.val();
        self.cur_g.reset.next = self.reset.val();
        self.cur_up.clock.next = self.clock.val();
        self.cur_up.reset.next = self.reset.val();
        self.n_units.clock.next = self.clock.val();
        self.n_units.reset.next = self.reset.val();
        self.last_i.clock.next = self.clock.val();
        self.last_i.reset.next = self.reset.val();
        self.last_g.clock.next = self.clock.val();
        self.last_g.reset.next = self.reset.val();
        self.pace.clock.next = self.clock.val();
        self.pace.reset.next = self.reset.val();
        self.ucount.clock.next = self.clock.val();
        self.ucount.reset.next = self.reset.val();
        self.waiting.clock.next = self.clock.val();
        self.waiting.reset.next = self.reset.val();
        self.head_slot.clock.next = self.clock.val();
        self.head_slot.reset.next = self.reset.val();
        self.tail.clock.next = self.clock.val();
        self.tail.reset.next = self.reset.val();
        self.bad.clock.next = self.clock.val();
        self.bad.reset.next = self.reset.val();
        self.user_at.clock.next = self.clock.val();
        self.user_at.reset.next = self.reset.val();
        self.up_at.clock.next = self.clock.val();
        self.up_at.reset.next = self.reset.val();
        for t in 0..self.slot_r.len() {
            self.slot_r[t].clock.next = self.clock.val();
            self.slot_r[t].reset.next = self.reset.val();
            self.slot_r[t].d.next = self.slot_r[t].q.val();
        }

        // The element issuing this cycle (every cycle of a user's first 2 x groups), and the
        // user's last cycle (its pace).
        self.last_group.next = self.cur_g.q.val() == self.last_g.q.val();
        self.issue.next = self.active.q.val() && !self.waiting.q.val();
        self.user_done.next = self.active.q.val() && (self.ucount.q.val() == (self.pace.q.val() - self.one.val()));
        self.wave_end.next = self.user_done.val() && (self.cur_i.q.val() == self.last_i.q.val());
        self.x_slot.next = self.head_slot.q.val();
        self.group.next = self.cur_g.q.val();
        self.up.next = self.cur_up.q.val();
        self.flagged.next = false;
        for u in 0..self.lanes.len() {
            self.lanes[u].clock.next = self.clock.val();
            self.lanes[u].reset.next = self.reset.val();
            self.lanes[u].in_valid.next = self.issue.val() && (self.u_index[u].val() < self.n_units.q.val());
            self.lanes[u].slot.next = self.cur_up.q.val();
            self.lanes[u].first.next = self.cur_g.q.val() == self.zero.val();
            self.lanes[u].last.next = self.last_group.val();
            self.lanes[u].x.next = self.x.val();
            self.lanes[u].w.next = self.w[u].val();
            self.lanes[u].scale.next = self.scale[u].val();
            self.lanes[u].token_scale.next = self.token_scale.val();
            self.out_valid[u].next = self.lanes[u].out_valid.val();
            self.value[u].next = self.lanes[u].value.val();
            if self.lanes[u].out_valid.val() && self.lanes[u].invalid.val() {
                self.flagged.next = true;
            }
        }
        // The side band: the element's user and row, beside the units' pipelines.
        self.user_at.d.next = self.cur_i.q.val();
        self.up_at.d.next = self.cur_up.q.val();
        self.out_user.next = self.user_at.q.val();
        self.out_up.next = self.up_at.q.val();
        self.bad.d.next = (self.bad.q.val() || self.flagged.val()) && !self.clear.val();
        self.invalid.next = self.bad.q.val();

        // The next user's slot (when this user's last up group issues).
        self.ni.next = self.cur_i.q.val() + self.one.val();
        self.next_slot.next = self.slot_r[0].q.val();
        for t in 0..self.slot_r.len() {
            if self.ni.val() == self.t_index[t].val() {
                self.next_slot.next = self.slot_r[t].q.val();
            }
        }
        // Advance: gate then up, the group, then the user.
        self.cur_i.d.next = self.cur_i.q.val();
        self.cur_g.d.next = self.cur_g.q.val();
        self.cur_up.d.next = self.cur_up.q.val();
        self.head_slot.d.next = self.head_slot.q.val();
        self.waiting.d.next = self.waiting.q.val();
        self.ucount.d.next = self.ucount.q.val();
        if self.active.q.val() {
            self.ucount.d.next = self.ucount.q.val() + self.one.val();
        }
        if self.issue.val() {
            self.cur_up.d.next = !self.cur_up.q.val();
            if self.cur_up.q.val() {
                self.cur_g.d.next = self.cur_g.q.val() + self.one.val();
                if self.last_group.val() {
                    self.cur_g.d.next = self.zero.val();
                    self.waiting.d.next = true;
                }
            }
        }
        // After the user's last element it waits out its pace (SwiGLU's one lane takes the
        // user's `units` channels meanwhile), then the next user.
        if self.user_done.val() {
            self.waiting.d.next = false;
            self.ucount.d.next = self.zero.val();
            self.cur_i.d.next = self.ni.val();
            self.head_slot.d.next = self.next_slot.val();
        }
        self.active.d.next = self.active.q.val() && !self.wave_end.val();
        self.tail.d.next = self.tail.q.val();
        if self.tail.q.val() != self.zero.val() {
            self.tail.d.next = self.tail.q.val() - self.one.val();
        }
        if self.issue.val() {
            self.tail.d.next = self.latency.val();
        }
        self.idle.next = !self.active.q.val() && (self.tail.q.val() == self.zero.val());

        // A new wave (after the advance, which it overrides).
        self.ready.next = !self.active.q.val() || self.wave_end.val();
        self.take.next = self.start.val() && (!self.active.q.val() || self.wave_end.val());
        self.n_units.d.next = self.n_units.q.val();
        self.last_i.d.next = self.last_i.q.val();
        self.last_g.d.next = self.last_g.q.val();
        self.pace.d.next = self.pace.q.val();
        self.two_g.next = self.groups.val() + self.groups.val();
        if self.take.val() {
            self.waiting.d.next = false;
            self.ucount.d.next = self.zero.val();
            self.pace.d.next = self.two_g.val();
            if self.units.val() > self.two_g.val() {
                self.pace.d.next = self.units.val();
            }
            self.active.d.next = true;
            self.cur_i.d.next = self.zero.val();
            self.cur_g.d.next = self.zero.val();
            self.cur_up.d.next = false;
            self.n_units.d.next = self.units.val();
            self.last_i.d.next = self.users.val() - self.one.val();
            self.last_g.d.next = self.groups.val() - self.one.val();
            self.head_slot.d.next = self.user_slot[0].val();
            for t in 0..self.slot_r.len() {
                self.slot_r[t].d.next = self.user_slot[t].val();
            }
        }
    }
}
