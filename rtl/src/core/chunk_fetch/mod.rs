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
//! at that edge. In a gemv job (`dense`, held for the job) no run burst is needed or awaited and
//! the head's runs read as 0: the same decoder then yields entry j of a column as its row j.
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
use crate::ring::Ring;
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
    ("dense", "a gemv job: no run bursts, every run 0 (held for the job)"),
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
    /// A gemv job.
    pub dense: Signal<In, Bit>,
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
    ring: Ring<32>,
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
    zero16: Constant<Bits<16>>,
    sign32: Constant<Bits<32>>,
}

impl ChunkFetch {
    /// The slice fetch of `arch`.
    pub fn from_arch(arch: &lacuna_spec::Arch) -> ChunkFetch {
        ChunkFetch::new(
            arch.chunk_entries() as usize,
            arch.memory.request_bytes as usize,
            arch.core.fetch_buffer_chunks as usize,
        )
    }

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
            dense: Default::default(),
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
            ring: Ring::new(capacity),
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
            zero16: constant(0),
            sign32: constant(0x8000_0000),
        }
    }
}

mod update;
