//! `chunk_fetch`: cuts columns into slices, fetches their value and run bursts, and holds them in
//! the fetch buffer until the decoder takes them.
//!
//! ```text
//!                 +------------------------------- chunk_fetch -------------------------------+
//!  in_valid, ---->| col: the column being cut; one slice per cycle (entries of chunk j)       |--> in_pop
//!  in_marker,     |   value burst vb = burst(values + 2jC), run burst rb = burst(runs + jC/2)  |
//!  in_panel/k/x,  |   reused when equal to the last one asked for (lastv, lastr), else issued  |--> req_valid,
//!  in_start/end,  | iss: the slice whose bursts are being asked for, one per cycle, vb first   |    req_addr,
//!  in_values, --->|   each burst numbered in its stream (issued_v, issued_r)                   |    req_runs
//!  in_runs        | slices: descriptor FIFOs (fetch_buffer_chunks): flags, panel, k, x, lo, hi,|
//!  req_ready ---->|   value and run burst numbers, offsets in the bursts                      |
//!  resp_valid, -->| value store, run store: bursts by number (ring of S rows); arrived_v/_r   |--> head_valid,
//!  resp_runs,     |   count the bursts written                                                 |    head_*, head_value[e],
//!  resp_data[w]   | head: ready when both its bursts have arrived; its C values and runs read  |    head_run[e]
//!  pop, halt, --->|   from the stores                                                          |--> idle, empty
//!  halt_issue     +----------------------------------------------------------------------------+
//! ```
//!
//! Contract (`model::chunk_fetch`, docs/microarchitecture.md "chunk_fetch"): the decoder's `pop`
//! comes first in the cycle. Then, unless halted, one slice is cut when no slice is being issued
//! and the buffer has room: a column is taken from the column queue when none is held (a marker
//! enters the buffer at once and forgets the last bursts: a new panel's arrays start on fresh
//! bursts). A slice's bursts that equal the last burst of their stream are not asked for again; the
//! others are asked for in the issue phase (`req_valid`, values first, unless `halt_issue`), and
//! the slice enters the buffer when the last of them is granted (or when it is cut, if none is
//! needed). The buffer's head is offered to the decoder (`head_valid`) once both its bursts have
//! arrived; a response is presented the cycle before its data is due and is written to its store
//! at that edge.
//!
//! Why burst stores rather than data in each buffer entry: a slice may share its value burst with
//! the slice before it (two columns in one chunk) and its run burst with the slices of up to
//! `2B / C` chunks, and a shared burst may still be in flight when the later slice is cut. So the
//! data is kept once, by burst number, and a slice records the numbers. At most F + 2 bursts of a
//! stream can be referenced at once (the F buffered slices, the one being issued, and the burst the
//! oldest of them reuses), so a ring of S = next power of two >= F + 2 rows never overwrites one
//! still needed. The RTL requires a chunk's values to lie in one burst (2C <= B, checked by
//! `rtl::blocks`); both presets have 2C = B.

use crate::reg::Reg;
use crate::sram::Sram;
use crate::widen::Widen16;
use crate::wiring::{constant, many};
use rust_hdl::prelude::*;

/// The ports of [`ChunkFetch`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: a new job (empty buffer, no burst kept)"),
    ("in_valid", "the column queue is not empty"),
    ("in_marker", "its head is an end-of-panel marker"),
    ("in_panel", "the head's panel"),
    ("in_k", "the head's column"),
    ("in_x", "the head's activation, FP16"),
    ("in_start", "the head's first entry"),
    ("in_end", "one past its last entry"),
    ("in_values", "address of the head panel's values"),
    ("in_runs", "address of the head panel's run lengths"),
    ("pop", "the decoder takes the buffer's head this cycle"),
    ("halt", "a fault before this block's step: nothing cut, taken or asked for"),
    ("halt_issue", "a fault by the issue phase: nothing asked for"),
    ("req_ready", "the memory port takes chunk_fetch's request this cycle"),
    ("resp_valid", "chunk_fetch's next response (presented the cycle before its data is due)"),
    ("resp_runs", "that response is a run burst (else a value burst)"),
    ("resp_data", "its burst, 32-bit word w"),
    ("in_pop", "the column queue's head is taken this cycle"),
    ("req_valid", "a value or run burst is wanted"),
    ("req_addr", "its address"),
    ("req_runs", "it is a run burst"),
    ("idle", "no column held and no slice being issued (after this cycle)"),
    ("empty", "the fetch buffer is empty (after this cycle)"),
    ("head_valid", "the buffer's head is a marker, or a slice whose bursts have arrived"),
    ("head_marker", "the head is an end-of-panel marker"),
    ("head_panel", "the head's panel"),
    ("head_k", "the head slice's column"),
    ("head_x", "the head slice's activation, FP16"),
    ("head_first", "the head slice is its column's first"),
    ("head_lo", "the head slice's first entry in the chunk (offset)"),
    ("head_hi", "one past its last entry in the chunk (offset)"),
    ("head_value", "chunk entry e of the head slice: its FP16 value"),
    ("head_run", "chunk entry e of the head slice: its run length"),
];

/// Fields of a slice descriptor (`s_meta`, `iss_meta`): 0 flags (bit 0 marker, bit 1 first),
/// 1 panel, 2 k, 3 x, 4 lo, 5 hi, 6 value burst number, 7 run burst number, 8 offset of the
/// chunk's values in their burst (FP16 cells), 9 offset of its runs in theirs (4-bit cells).
/// The buffer keeps them in three SRAMs by width (`desc8`: flags, lo, hi; `desc16`: panel, x;
/// `desc32`: k, the burst numbers and offsets), so that every stored bit is read.
const META: usize = 10;

/// The chunk fetch and the fetch buffer.
#[derive(LogicBlock)]
pub struct ChunkFetch {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Column queue not empty.
    pub in_valid: Signal<In, Bit>,
    /// Its head is a marker.
    pub in_marker: Signal<In, Bit>,
    /// Head's panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Head's column.
    pub in_k: Signal<In, Bits<32>>,
    /// Head's activation.
    pub in_x: Signal<In, Bits<16>>,
    /// Head's first entry.
    pub in_start: Signal<In, Bits<32>>,
    /// Head's end.
    pub in_end: Signal<In, Bits<32>>,
    /// Head panel's values address.
    pub in_values: Signal<In, Bits<32>>,
    /// Head panel's runs address.
    pub in_runs: Signal<In, Bits<32>>,
    /// Decoder takes the head.
    pub pop: Signal<In, Bit>,
    /// Fault before the step.
    pub halt: Signal<In, Bit>,
    /// Fault by the issue phase.
    pub halt_issue: Signal<In, Bit>,
    /// Request granted.
    pub req_ready: Signal<In, Bit>,
    /// Response.
    pub resp_valid: Signal<In, Bit>,
    /// Response is a run burst.
    pub resp_runs: Signal<In, Bit>,
    /// Response data.
    pub resp_data: Vec<Signal<In, Bits<32>>>,
    /// Column queue head taken.
    pub in_pop: Signal<Out, Bit>,
    /// Request.
    pub req_valid: Signal<Out, Bit>,
    /// Request address.
    pub req_addr: Signal<Out, Bits<32>>,
    /// Request is a run burst.
    pub req_runs: Signal<Out, Bit>,
    /// Nothing held.
    pub idle: Signal<Out, Bit>,
    /// Buffer empty.
    pub empty: Signal<Out, Bit>,
    /// Head offered.
    pub head_valid: Signal<Out, Bit>,
    /// Head is a marker.
    pub head_marker: Signal<Out, Bit>,
    /// Head's panel.
    pub head_panel: Signal<Out, Bits<16>>,
    /// Head's column.
    pub head_k: Signal<Out, Bits<32>>,
    /// Head's activation.
    pub head_x: Signal<Out, Bits<16>>,
    /// Head is its column's first slice.
    pub head_first: Signal<Out, Bit>,
    /// Head's first entry in the chunk.
    pub head_lo: Signal<Out, Bits<8>>,
    /// Head's end in the chunk.
    pub head_hi: Signal<Out, Bits<8>>,
    /// Head's chunk values.
    pub head_value: Vec<Signal<Out, Bits<16>>>,
    /// Head's chunk runs.
    pub head_run: Vec<Signal<Out, Bits<16>>>,
    // The column being cut.
    col_valid: Reg<Bit>,
    col_panel: Reg<Bits<32>>,
    col_k: Reg<Bits<32>>,
    col_x: Reg<Bits<32>>,
    col_start: Reg<Bits<32>>,
    col_end: Reg<Bits<32>>,
    col_values: Reg<Bits<32>>,
    col_runs: Reg<Bits<32>>,
    next_chunk: Reg<Bits<32>>,
    // The slice whose bursts are being asked for.
    iss_valid: Reg<Bit>,
    iss_need_v: Reg<Bit>,
    iss_need_r: Reg<Bit>,
    iss_vb: Reg<Bits<32>>,
    iss_rb: Reg<Bits<32>>,
    iss_meta: Vec<Reg<Bits<32>>>,
    // The last burst of each stream asked for, and its number.
    lastv_valid: Reg<Bit>,
    lastv_addr: Reg<Bits<32>>,
    lastv_seq: Reg<Bits<32>>,
    lastr_valid: Reg<Bit>,
    lastr_addr: Reg<Bits<32>>,
    lastr_seq: Reg<Bits<32>>,
    issued_v: Reg<Bits<32>>,
    issued_r: Reg<Bits<32>>,
    arrived_v: Reg<Bits<32>>,
    arrived_r: Reg<Bits<32>>,
    // The buffer.
    head: Reg<Bits<32>>,
    count: Reg<Bits<32>>,
    desc8: Sram<8>,
    desc16: Sram<16>,
    desc32: Sram<32>,
    values: Sram<16>,
    runs: Sram<16>,
    widen_panel: Widen16,
    widen_x: Widen16,
    // This cycle.
    dv: Signal<Local, Bits<32>>,
    dr: Signal<Local, Bits<32>>,
    after_pop: Signal<Local, Bits<32>>,
    new_head: Signal<Local, Bits<32>>,
    tail: Signal<Local, Bits<32>>,
    n_col_valid: Signal<Local, Bit>,
    n_next: Signal<Local, Bits<32>>,
    n_lastv_valid: Signal<Local, Bit>,
    n_lastr_valid: Signal<Local, Bit>,
    n_iss_valid: Signal<Local, Bit>,
    jc: Signal<Local, Bits<32>>,
    lo_abs: Signal<Local, Bits<32>>,
    hi_abs: Signal<Local, Bits<32>>,
    vaddr: Signal<Local, Bits<32>>,
    raddr: Signal<Local, Bits<32>>,
    s_meta: Vec<Signal<Local, Bits<32>>>,
    s_vb: Signal<Local, Bits<32>>,
    s_rb: Signal<Local, Bits<32>>,
    s_need_v: Signal<Local, Bit>,
    s_need_r: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    // The slice after the issue phase: its own locals, so that nothing the request was computed
    // from is rewritten after the handshake (Verilator then orders request and grant without a
    // false combinational loop through the memory port).
    meta_after: Vec<Signal<Local, Bits<32>>>,
    need_v_after: Signal<Local, Bit>,
    need_r_after: Signal<Local, Bit>,
    iss_valid_after: Signal<Local, Bit>,
    push_after: Signal<Local, Bit>,
    log_chunk: Constant<Bits<32>>,
    chunk_size: Constant<Bits<32>>,
    capacity: Constant<Bits<32>>,
    slot_mask: Constant<Bits<32>>,
    burst_low: Constant<Bits<32>>,
    burst_high: Constant<Bits<32>>,
    one32: Constant<Bits<32>>,
    two32: Constant<Bits<32>>,
    zero32: Constant<Bits<32>>,
    eight32: Constant<Bits<32>>,
    sixteen32: Constant<Bits<32>>,
    one8: Constant<Bits<8>>,
    two8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    sign32: Constant<Bits<32>>,
}

impl ChunkFetch {
    /// Chunks of `chunk` entries (a power of two, 8..=127 is checked by `rtl::blocks`), bursts of
    /// `burst` bytes with 2 * chunk <= burst, a buffer of `capacity` slices.
    pub fn new(chunk: usize, burst: usize, capacity: usize) -> ChunkFetch {
        assert!(chunk.is_power_of_two() && burst.is_power_of_two() && 2 * chunk <= burst);
        assert!((1..=1024).contains(&capacity));
        let slots = (capacity + 2).next_power_of_two();
        ChunkFetch {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_k: Default::default(),
            in_x: Default::default(),
            in_start: Default::default(),
            in_end: Default::default(),
            in_values: Default::default(),
            in_runs: Default::default(),
            pop: Default::default(),
            halt: Default::default(),
            halt_issue: Default::default(),
            req_ready: Default::default(),
            resp_valid: Default::default(),
            resp_runs: Default::default(),
            resp_data: many(burst / 4),
            in_pop: Default::default(),
            req_valid: Default::default(),
            req_addr: Default::default(),
            req_runs: Default::default(),
            idle: Default::default(),
            empty: Default::default(),
            head_valid: Default::default(),
            head_marker: Default::default(),
            head_panel: Default::default(),
            head_k: Default::default(),
            head_x: Default::default(),
            head_first: Default::default(),
            head_lo: Default::default(),
            head_hi: Default::default(),
            head_value: many(chunk),
            head_run: many(chunk),
            col_valid: Default::default(),
            col_panel: Default::default(),
            col_k: Default::default(),
            col_x: Default::default(),
            col_start: Default::default(),
            col_end: Default::default(),
            col_values: Default::default(),
            col_runs: Default::default(),
            next_chunk: Default::default(),
            iss_valid: Default::default(),
            iss_need_v: Default::default(),
            iss_need_r: Default::default(),
            iss_vb: Default::default(),
            iss_rb: Default::default(),
            iss_meta: many(META),
            lastv_valid: Default::default(),
            lastv_addr: Default::default(),
            lastv_seq: Default::default(),
            lastr_valid: Default::default(),
            lastr_addr: Default::default(),
            lastr_seq: Default::default(),
            issued_v: Default::default(),
            issued_r: Default::default(),
            arrived_v: Default::default(),
            arrived_r: Default::default(),
            head: Default::default(),
            count: Default::default(),
            desc8: Sram::new(capacity, 4, 8, 3),
            desc16: Sram::new(capacity, 2, 16, 2),
            desc32: Sram::new(capacity, 5, 32, 5),
            values: Sram::new(slots, burst / 2, 16, chunk),
            runs: Sram::new(slots, 2 * burst, 4, chunk),
            widen_panel: Default::default(),
            widen_x: Default::default(),
            dv: Default::default(),
            dr: Default::default(),
            after_pop: Default::default(),
            new_head: Default::default(),
            tail: Default::default(),
            n_col_valid: Default::default(),
            n_next: Default::default(),
            n_lastv_valid: Default::default(),
            n_lastr_valid: Default::default(),
            n_iss_valid: Default::default(),
            jc: Default::default(),
            lo_abs: Default::default(),
            hi_abs: Default::default(),
            vaddr: Default::default(),
            raddr: Default::default(),
            s_meta: many(META),
            s_vb: Default::default(),
            s_rb: Default::default(),
            s_need_v: Default::default(),
            s_need_r: Default::default(),
            push: Default::default(),
            meta_after: many(META),
            need_v_after: Default::default(),
            need_r_after: Default::default(),
            iss_valid_after: Default::default(),
            push_after: Default::default(),
            log_chunk: constant(chunk.trailing_zeros() as u64),
            chunk_size: constant(chunk as u64),
            capacity: constant(capacity as u64),
            slot_mask: constant(slots as u64 - 1),
            burst_low: constant(burst as u64 - 1),
            burst_high: constant(!(burst as u64 - 1) & 0xffff_ffff),
            one32: constant(1),
            two32: constant(2),
            zero32: constant(0),
            eight32: constant(8),
            sixteen32: constant(16),
            one8: constant(1),
            two8: constant(2),
            zero8: constant(0),
            sign32: constant(0x8000_0000),
        }
    }
}

impl Logic for ChunkFetch {
    #[hdl_gen]
    fn update(&mut self) {
        // Every register holds unless assigned below.
        self.col_valid.clock.next = self.clock.val();
        self.col_valid.reset.next = self.reset.val();
        self.col_panel.clock.next = self.clock.val();
        self.col_panel.reset.next = self.reset.val();
        self.col_panel.d.next = self.col_panel.q.val();
        self.col_k.clock.next = self.clock.val();
        self.col_k.reset.next = self.reset.val();
        self.col_k.d.next = self.col_k.q.val();
        self.col_x.clock.next = self.clock.val();
        self.col_x.reset.next = self.reset.val();
        self.col_x.d.next = self.col_x.q.val();
        self.col_start.clock.next = self.clock.val();
        self.col_start.reset.next = self.reset.val();
        self.col_start.d.next = self.col_start.q.val();
        self.col_end.clock.next = self.clock.val();
        self.col_end.reset.next = self.reset.val();
        self.col_end.d.next = self.col_end.q.val();
        self.col_values.clock.next = self.clock.val();
        self.col_values.reset.next = self.reset.val();
        self.col_values.d.next = self.col_values.q.val();
        self.col_runs.clock.next = self.clock.val();
        self.col_runs.reset.next = self.reset.val();
        self.col_runs.d.next = self.col_runs.q.val();
        self.next_chunk.clock.next = self.clock.val();
        self.next_chunk.reset.next = self.reset.val();
        self.iss_valid.clock.next = self.clock.val();
        self.iss_valid.reset.next = self.reset.val();
        self.iss_need_v.clock.next = self.clock.val();
        self.iss_need_v.reset.next = self.reset.val();
        self.iss_need_r.clock.next = self.clock.val();
        self.iss_need_r.reset.next = self.reset.val();
        self.iss_vb.clock.next = self.clock.val();
        self.iss_vb.reset.next = self.reset.val();
        self.iss_rb.clock.next = self.clock.val();
        self.iss_rb.reset.next = self.reset.val();
        for i in 0..self.iss_meta.len() {
            self.iss_meta[i].clock.next = self.clock.val();
            self.iss_meta[i].reset.next = self.reset.val();
        }
        self.lastv_valid.clock.next = self.clock.val();
        self.lastv_valid.reset.next = self.reset.val();
        self.lastv_addr.clock.next = self.clock.val();
        self.lastv_addr.reset.next = self.reset.val();
        self.lastv_addr.d.next = self.lastv_addr.q.val();
        self.lastv_seq.clock.next = self.clock.val();
        self.lastv_seq.reset.next = self.reset.val();
        self.lastv_seq.d.next = self.lastv_seq.q.val();
        self.lastr_valid.clock.next = self.clock.val();
        self.lastr_valid.reset.next = self.reset.val();
        self.lastr_addr.clock.next = self.clock.val();
        self.lastr_addr.reset.next = self.reset.val();
        self.lastr_addr.d.next = self.lastr_addr.q.val();
        self.lastr_seq.clock.next = self.clock.val();
        self.lastr_seq.reset.next = self.reset.val();
        self.lastr_seq.d.next = self.lastr_seq.q.val();
        self.issued_v.clock.next = self.clock.val();
        self.issued_v.reset.next = self.reset.val();
        self.issued_v.d.next = self.issued_v.q.val();
        self.issued_r.clock.next = self.clock.val();
        self.issued_r.reset.next = self.reset.val();
        self.issued_r.d.next = self.issued_r.q.val();
        self.arrived_v.clock.next = self.clock.val();
        self.arrived_v.reset.next = self.reset.val();
        self.arrived_v.d.next = self.arrived_v.q.val();
        self.arrived_r.clock.next = self.clock.val();
        self.arrived_r.reset.next = self.reset.val();
        self.arrived_r.d.next = self.arrived_r.q.val();
        self.head.clock.next = self.clock.val();
        self.head.reset.next = self.reset.val();
        self.count.clock.next = self.clock.val();
        self.count.reset.next = self.reset.val();
        self.desc8.clock.next = self.clock.val();
        self.desc16.clock.next = self.clock.val();
        self.desc32.clock.next = self.clock.val();
        self.values.clock.next = self.clock.val();
        self.runs.clock.next = self.clock.val();

        // The buffer's head: its descriptor, and its data from the stores by burst number.
        self.desc8.rd_row.next = self.head.q.val();
        self.desc8.rd_offset.next = self.zero32.val();
        self.desc16.rd_row.next = self.head.q.val();
        self.desc16.rd_offset.next = self.zero32.val();
        self.desc32.rd_row.next = self.head.q.val();
        self.desc32.rd_offset.next = self.zero32.val();
        self.values.rd_row.next = self.desc32.rd[1].val() & self.slot_mask.val();
        self.values.rd_offset.next = self.desc32.rd[3].val();
        self.runs.rd_row.next = self.desc32.rd[2].val() & self.slot_mask.val();
        self.runs.rd_offset.next = self.desc32.rd[4].val();
        self.dv.next = self.arrived_v.q.val() - self.desc32.rd[1].val();
        self.dr.next = self.arrived_r.q.val() - self.desc32.rd[2].val();
        self.head_marker.next = (self.desc8.rd[0].val() & self.one8.val()) != self.zero8.val();
        self.head_first.next = (self.desc8.rd[0].val() & self.two8.val()) != self.zero8.val();
        self.head_valid.next = (self.count.q.val() != self.zero32.val())
            && (self.head_marker.val()
                || ((self.dv.val() != self.zero32.val())
                    && (self.dv.val() < self.sign32.val())
                    && (self.dr.val() != self.zero32.val())
                    && (self.dr.val() < self.sign32.val())));
        self.head_panel.next = self.desc16.rd[0].val();
        self.head_x.next = self.desc16.rd[1].val();
        self.head_k.next = self.desc32.rd[0].val();
        self.head_lo.next = self.desc8.rd[1].val();
        self.head_hi.next = self.desc8.rd[2].val();
        for e in 0..self.head_value.len() {
            self.head_value[e].next = self.values.rd[e].val();
            self.head_run[e].next = self.runs.rd[e].val();
        }

        // The decoder's pop comes first in the cycle.
        self.after_pop.next = self.count.q.val();
        self.new_head.next = self.head.q.val();
        if self.pop.val() && self.head_valid.val() {
            self.after_pop.next = self.count.q.val() - self.one32.val();
            self.new_head.next = self.head.q.val() + self.one32.val();
            if self.new_head.val() == self.capacity.val() {
                self.new_head.next = self.zero32.val();
            }
        }
        self.head.d.next = self.new_head.val();
        self.tail.next = self.head.q.val() + self.count.q.val();
        if self.tail.val() >= self.capacity.val() {
            self.tail.next = self.tail.val() - self.capacity.val();
        }

        // The step: take a column or pass a marker, then cut one slice.
        self.widen_panel.narrow.next = self.in_panel.val();
        self.widen_x.narrow.next = self.in_x.val();
        self.n_col_valid.next = self.col_valid.q.val();
        self.n_next.next = self.next_chunk.q.val();
        self.n_lastv_valid.next = self.lastv_valid.q.val();
        self.n_lastr_valid.next = self.lastr_valid.q.val();
        self.n_iss_valid.next = self.iss_valid.q.val();
        for i in 0..self.s_meta.len() {
            self.s_meta[i].next = self.iss_meta[i].q.val();
        }
        self.s_vb.next = self.iss_vb.q.val();
        self.s_rb.next = self.iss_rb.q.val();
        self.s_need_v.next = self.iss_need_v.q.val();
        self.s_need_r.next = self.iss_need_r.q.val();
        self.in_pop.next = false;
        self.push.next = false;
        self.jc.next = self.n_next.val() << self.log_chunk.val();
        self.lo_abs.next = self.zero32.val();
        self.hi_abs.next = self.zero32.val();
        self.vaddr.next = self.zero32.val();
        self.raddr.next = self.zero32.val();
        if !self.halt.val() && !self.iss_valid.q.val() && (self.after_pop.val() < self.capacity.val()) {
            if !self.col_valid.q.val() && self.in_valid.val() {
                self.in_pop.next = true;
                if self.in_marker.val() {
                    self.push.next = true;
                    self.s_meta[0].next = self.one32.val();
                    self.s_meta[1].next = self.widen_panel.wide.val();
                    self.n_lastv_valid.next = false;
                    self.n_lastr_valid.next = false;
                } else {
                    self.n_col_valid.next = true;
                    self.col_panel.d.next = self.widen_panel.wide.val();
                    self.col_k.d.next = self.in_k.val();
                    self.col_x.d.next = self.widen_x.wide.val();
                    self.col_start.d.next = self.in_start.val();
                    self.col_end.d.next = self.in_end.val();
                    self.col_values.d.next = self.in_values.val();
                    self.col_runs.d.next = self.in_runs.val();
                    self.n_next.next = self.in_start.val() >> self.log_chunk.val();
                    // The slice below reads the column from the input this cycle.
                    self.s_meta[1].next = self.widen_panel.wide.val();
                    self.s_meta[2].next = self.in_k.val();
                    self.s_meta[3].next = self.widen_x.wide.val();
                    self.lo_abs.next = self.in_start.val();
                    self.hi_abs.next = self.in_end.val();
                    self.vaddr.next = self.in_values.val();
                    self.raddr.next = self.in_runs.val();
                }
            }
            if self.col_valid.q.val() {
                self.s_meta[1].next = self.col_panel.q.val();
                self.s_meta[2].next = self.col_k.q.val();
                self.s_meta[3].next = self.col_x.q.val();
                self.lo_abs.next = self.col_start.q.val();
                self.hi_abs.next = self.col_end.q.val();
                self.vaddr.next = self.col_values.q.val();
                self.raddr.next = self.col_runs.q.val();
            }
            if self.n_col_valid.val() {
                // Chunk j = n_next: entries jc .. jc + C of the column's lo_abs .. hi_abs.
                self.jc.next = self.n_next.val() << self.log_chunk.val();
                self.s_meta[0].next = self.zero32.val();
                if self.lo_abs.val() <= self.jc.val() {
                    if self.lo_abs.val() == self.jc.val() {
                        self.s_meta[0].next = self.two32.val();
                    }
                    self.lo_abs.next = self.jc.val();
                } else {
                    self.s_meta[0].next = self.two32.val();
                }
                if (self.jc.val() + self.chunk_size.val()) >= self.hi_abs.val() {
                    self.n_col_valid.next = false;
                } else {
                    self.hi_abs.next = self.jc.val() + self.chunk_size.val();
                }
                self.s_meta[4].next = self.lo_abs.val() - self.jc.val();
                self.s_meta[5].next = self.hi_abs.val() - self.jc.val();
                self.n_next.next = self.n_next.val() + self.one32.val();
                self.vaddr.next = self.vaddr.val() + (self.jc.val() << self.one32.val());
                self.raddr.next = self.raddr.val() + (self.jc.val() >> self.one32.val());
                self.s_vb.next = self.vaddr.val() & self.burst_high.val();
                self.s_rb.next = self.raddr.val() & self.burst_high.val();
                self.s_meta[8].next = (self.vaddr.val() & self.burst_low.val()) >> self.one32.val();
                self.s_meta[9].next = (self.raddr.val() & self.burst_low.val()) << self.one32.val();
                self.s_meta[6].next = self.lastv_seq.q.val();
                self.s_meta[7].next = self.lastr_seq.q.val();
                self.s_need_v.next = !(self.lastv_valid.q.val() && (self.lastv_addr.q.val() == self.s_vb.val()));
                self.s_need_r.next = !(self.lastr_valid.q.val() && (self.lastr_addr.q.val() == self.s_rb.val()));
                if self.s_need_v.val() || self.s_need_r.val() {
                    self.n_iss_valid.next = true;
                } else {
                    self.push.next = true;
                }
            }
        }

        // Issue phase: the cut slice's missing bursts, values first.
        self.req_valid.next = !self.halt_issue.val() && self.n_iss_valid.val();
        self.req_runs.next = !self.s_need_v.val();
        self.req_addr.next = self.s_rb.val();
        if self.s_need_v.val() {
            self.req_addr.next = self.s_vb.val();
        }
        self.lastv_valid.d.next = self.n_lastv_valid.val();
        self.lastr_valid.d.next = self.n_lastr_valid.val();
        for i in 0..self.s_meta.len() {
            self.meta_after[i].next = self.s_meta[i].val();
        }
        self.need_v_after.next = self.s_need_v.val();
        self.need_r_after.next = self.s_need_r.val();
        self.iss_valid_after.next = self.n_iss_valid.val();
        self.push_after.next = self.push.val();
        if self.req_valid.val() && self.req_ready.val() {
            if self.s_need_v.val() {
                self.meta_after[6].next = self.issued_v.q.val();
                self.issued_v.d.next = self.issued_v.q.val() + self.one32.val();
                self.lastv_valid.d.next = true;
                self.lastv_addr.d.next = self.s_vb.val();
                self.lastv_seq.d.next = self.issued_v.q.val();
                self.need_v_after.next = false;
            } else {
                self.meta_after[7].next = self.issued_r.q.val();
                self.issued_r.d.next = self.issued_r.q.val() + self.one32.val();
                self.lastr_valid.d.next = true;
                self.lastr_addr.d.next = self.s_rb.val();
                self.lastr_seq.d.next = self.issued_r.q.val();
                self.need_r_after.next = false;
            }
            if !self.need_v_after.val() && !self.need_r_after.val() {
                self.push_after.next = true;
                self.iss_valid_after.next = false;
            }
        }

        // The slice (or marker) enters the buffer at its tail.
        self.desc8.wr_enable.next = self.push_after.val();
        self.desc8.wr_row.next = self.tail.val();
        self.desc8.wr_offset.next = self.zero32.val();
        self.desc8.wr_data[0].next = self.meta_after[0].val()
            + (self.meta_after[4].val() << self.eight32.val())
            + (self.meta_after[5].val() << self.sixteen32.val());
        self.desc16.wr_enable.next = self.push_after.val();
        self.desc16.wr_row.next = self.tail.val();
        self.desc16.wr_offset.next = self.zero32.val();
        self.desc16.wr_data[0].next = self.meta_after[1].val() + (self.meta_after[3].val() << self.sixteen32.val());
        self.desc32.wr_enable.next = self.push_after.val();
        self.desc32.wr_row.next = self.tail.val();
        self.desc32.wr_offset.next = self.zero32.val();
        self.desc32.wr_data[0].next = self.meta_after[2].val();
        self.desc32.wr_data[1].next = self.meta_after[6].val();
        self.desc32.wr_data[2].next = self.meta_after[7].val();
        self.desc32.wr_data[3].next = self.meta_after[8].val();
        self.desc32.wr_data[4].next = self.meta_after[9].val();
        for i in 0..self.s_meta.len() {
            self.iss_meta[i].d.next = self.meta_after[i].val();
        }
        self.count.d.next = self.after_pop.val();
        if self.push_after.val() {
            self.count.d.next = self.after_pop.val() + self.one32.val();
        }
        self.col_valid.d.next = self.n_col_valid.val();
        self.next_chunk.d.next = self.n_next.val();
        self.iss_valid.d.next = self.iss_valid_after.val();
        self.iss_need_v.d.next = self.need_v_after.val();
        self.iss_need_r.d.next = self.need_r_after.val();
        self.iss_vb.d.next = self.s_vb.val();
        self.iss_rb.d.next = self.s_rb.val();
        self.idle.next = !self.n_col_valid.val() && !self.iss_valid_after.val();
        self.empty.next = !self.push_after.val() && (self.after_pop.val() == self.zero32.val());

        // Responses are written to their store by burst number.
        self.values.wr_enable.next = self.resp_valid.val() && !self.resp_runs.val();
        self.values.wr_row.next = self.arrived_v.q.val() & self.slot_mask.val();
        self.values.wr_offset.next = self.zero32.val();
        self.runs.wr_enable.next = self.resp_valid.val() && self.resp_runs.val();
        self.runs.wr_row.next = self.arrived_r.q.val() & self.slot_mask.val();
        self.runs.wr_offset.next = self.zero32.val();
        for w in 0..self.resp_data.len() {
            self.values.wr_data[w].next = self.resp_data[w].val();
        }
        for w in 0..self.resp_data.len() {
            self.runs.wr_data[w].next = self.resp_data[w].val();
        }
        if self.resp_valid.val() {
            if self.resp_runs.val() {
                self.arrived_r.d.next = self.arrived_r.q.val() + self.one32.val();
            } else {
                self.arrived_v.d.next = self.arrived_v.q.val() + self.one32.val();
            }
        }
    }
}
