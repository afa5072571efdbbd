//! `colptr_fetch`: reads `colptr[k]` and `colptr[k+1]` of each active column and queues the
//! column's entry range for chunk_fetch.
//!
//! ```text
//!                   +------------------------ colptr_fetch ------------------------+
//!  in_valid, ------>| cur: the column whose pointers are awaited (one at a time)   |--> in_pop
//!  in_marker,       |   bursts b0 = burst(colptr + 4k), b1 = burst(colptr + 4k+4)  |
//!  in_panel/k/x,    |   each reused from `last` or issued, one per cycle           |--> req_valid, req_addr
//!  in_colptr, ----->| last: the last pointer burst issued, its address and data    |
//!  in_entries       |                                                              |--> error, error_start,
//!  req_ready ------>| check colptr[k] <= colptr[k+1] <= entries, then push         |    error_end
//!  resp_valid, ---->| column queue (column_queue_depth): (panel, k, x, start, end) |--> head_* , idle, empty
//!  resp_data[w]     |   and end-of-panel markers; its consumer pops first          |
//!  out_pop, halt -->|                                                              |
//!                   +--------------------------------------------------------------+
//! ```
//!
//! Contract (`model::colptr_fetch`, docs/microarchitecture.md "colptr_fetch"): when it holds no
//! column it takes the activation queue's head (`in_pop`): a marker passes into the column queue
//! when there is room; a column becomes `cur`, its one or two pointer bursts marked present when
//! they equal the last burst fetched. The missing bursts are asked for one per cycle
//! (`req_valid`, first b0); a response (presented the cycle before its data is due, the memory
//! port's convention) fills the first missing one from the next cycle. When both pointers are
//! present and the column queue has room (after this cycle's pop), the pair is checked: a bad pair
//! raises `error` for this cycle (with the pointers); an empty column is dropped; otherwise the
//! column is queued. A column taken this cycle may complete in the same cycle (both bursts
//! reused). `halt` (a fault elsewhere, this cycle or earlier) stops the block: nothing taken,
//! queued or asked for. `in_colptr` and `in_entries` are the pointer array's address and the
//! entry count of the head's panel (the core's panel table), read when a column is taken.

use crate::reg::Reg;
use crate::ring::Ring;
use crate::wiring::{constant, index_constants, many};
use rust_hdl::prelude::*;

/// The ports of [`ColptrFetch`] as a top (block-level co-simulation).
pub const PORTS: &[crate::emit::PortDoc] = &[
    ("clock", "clock"),
    ("reset", "synchronous reset: a new job (no burst kept)"),
    ("in_valid", "the activation queue is not empty"),
    ("in_marker", "its head is an end-of-panel marker"),
    ("in_panel", "the head's panel"),
    ("in_k", "the head's column"),
    ("in_x", "the head's activation, FP16"),
    ("in_colptr", "address of the head panel's column pointers"),
    ("in_entries", "entries (padded) of the head's panel"),
    ("out_pop", "chunk_fetch takes the column queue's head this cycle"),
    ("halt", "a fault: nothing is taken, queued or asked for"),
    ("req_ready", "the memory port takes colptr_fetch's request this cycle"),
    ("resp_valid", "colptr_fetch's next response (presented the cycle before its data is due)"),
    ("resp_data", "its burst, 32-bit word w"),
    ("in_pop", "the activation queue's head is taken this cycle"),
    ("req_valid", "a pointer burst is wanted"),
    ("req_addr", "its address"),
    ("error", "a column's pointers are malformed (start > end or end > entries), this cycle"),
    ("error_start", "that column's colptr[k]"),
    ("error_end", "that column's colptr[k+1]"),
    ("error_panel", "that column's panel"),
    ("error_k", "that column"),
    ("idle", "no column held (after this cycle)"),
    ("empty", "the column queue is empty (after this cycle)"),
    ("head_valid", "the column queue is not empty"),
    ("head_marker", "its head is an end-of-panel marker"),
    ("head_panel", "the head's panel"),
    ("head_k", "the head's column"),
    ("head_x", "the head's activation, FP16"),
    ("head_start", "the head's first entry (colptr[k])"),
    ("head_end", "one past its last entry (colptr[k+1])"),
];

/// The column-pointer fetch and its column queue.
#[derive(LogicBlock)]
pub struct ColptrFetch {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Activation queue not empty.
    pub in_valid: Signal<In, Bit>,
    /// Its head is a marker.
    pub in_marker: Signal<In, Bit>,
    /// Head's panel.
    pub in_panel: Signal<In, Bits<16>>,
    /// Head's column.
    pub in_k: Signal<In, Bits<32>>,
    /// Head's activation.
    pub in_x: Signal<In, Bits<16>>,
    /// Head panel's pointer array address.
    pub in_colptr: Signal<In, Bits<32>>,
    /// Head panel's entries.
    pub in_entries: Signal<In, Bits<32>>,
    /// Column queue head taken.
    pub out_pop: Signal<In, Bit>,
    /// Fault.
    pub halt: Signal<In, Bit>,
    /// Request granted.
    pub req_ready: Signal<In, Bit>,
    /// Response.
    pub resp_valid: Signal<In, Bit>,
    /// Response data.
    pub resp_data: Vec<Signal<In, Bits<32>>>,
    /// Activation queue head taken.
    pub in_pop: Signal<Out, Bit>,
    /// Request.
    pub req_valid: Signal<Out, Bit>,
    /// Request address.
    pub req_addr: Signal<Out, Bits<32>>,
    /// Malformed pointers.
    pub error: Signal<Out, Bit>,
    /// Their colptr\[k\].
    pub error_start: Signal<Out, Bits<32>>,
    /// Their colptr\[k+1\].
    pub error_end: Signal<Out, Bits<32>>,
    /// Their panel.
    pub error_panel: Signal<Out, Bits<16>>,
    /// Their column.
    pub error_k: Signal<Out, Bits<32>>,
    /// No column held.
    pub idle: Signal<Out, Bit>,
    /// Column queue empty.
    pub empty: Signal<Out, Bit>,
    /// Column queue not empty.
    pub head_valid: Signal<Out, Bit>,
    /// Head is a marker.
    pub head_marker: Signal<Out, Bit>,
    /// Head's panel.
    pub head_panel: Signal<Out, Bits<16>>,
    /// Head's column.
    pub head_k: Signal<Out, Bits<32>>,
    /// Head's activation.
    pub head_x: Signal<Out, Bits<16>>,
    /// Head's first entry.
    pub head_start: Signal<Out, Bits<32>>,
    /// Head's end.
    pub head_end: Signal<Out, Bits<32>>,
    // The column in flight.
    cur_valid: Reg<Bit>,
    cur_panel: Reg<Bits<16>>,
    cur_k: Reg<Bits<32>>,
    cur_x: Reg<Bits<16>>,
    cur_entries: Reg<Bits<32>>,
    cur_b0: Reg<Bits<32>>,
    cur_b1: Reg<Bits<32>>,
    cur_two: Reg<Bit>,
    cur_off0: Reg<Bits<32>>,
    cur_off1: Reg<Bits<32>>,
    cur_iss0: Reg<Bit>,
    cur_iss1: Reg<Bit>,
    cur_arr0: Reg<Bit>,
    cur_arr1: Reg<Bit>,
    cur_start: Reg<Bits<32>>,
    cur_end: Reg<Bits<32>>,
    // The last pointer burst asked for, and its data once it arrived.
    last_valid: Reg<Bit>,
    last_addr: Reg<Bits<32>>,
    last_data: Vec<Reg<Bits<32>>>,
    // The column queue.
    q_marker: Vec<Reg<Bit>>,
    q_panel: Vec<Reg<Bits<16>>>,
    q_k: Vec<Reg<Bits<32>>>,
    q_x: Vec<Reg<Bits<16>>>,
    q_start: Vec<Reg<Bits<32>>>,
    q_end: Vec<Reg<Bits<32>>>,
    ring: Ring<8>,
    // This cycle.
    after_pop: Signal<Local, Bits<8>>,
    room: Signal<Local, Bit>,
    addr: Signal<Local, Bits<32>>,
    n_valid: Signal<Local, Bit>,
    n_two: Signal<Local, Bit>,
    n_off0: Signal<Local, Bits<32>>,
    n_off1: Signal<Local, Bits<32>>,
    n_b0: Signal<Local, Bits<32>>,
    n_b1: Signal<Local, Bits<32>>,
    n_iss0: Signal<Local, Bit>,
    n_iss1: Signal<Local, Bit>,
    n_arr0: Signal<Local, Bit>,
    n_arr1: Signal<Local, Bit>,
    n_start: Signal<Local, Bits<32>>,
    n_end: Signal<Local, Bits<32>>,
    // The same state after this cycle's completion, issue and response: each phase writes its
    // own locals, so that no value is rewritten after a later phase read it (Verilator can then
    // order the phases without a false combinational loop).
    held: Signal<Local, Bit>,
    iss0_after: Signal<Local, Bit>,
    iss1_after: Signal<Local, Bit>,
    arr0_after: Signal<Local, Bit>,
    arr1_after: Signal<Local, Bit>,
    start_after: Signal<Local, Bits<32>>,
    end_after: Signal<Local, Bits<32>>,
    n_entries: Signal<Local, Bits<32>>,
    n_panel: Signal<Local, Bits<16>>,
    n_k: Signal<Local, Bits<32>>,
    n_x: Signal<Local, Bits<16>>,
    last_start: Signal<Local, Bits<32>>,
    last_end: Signal<Local, Bits<32>>,
    resp_start: Signal<Local, Bits<32>>,
    resp_end: Signal<Local, Bits<32>>,
    push_marker: Signal<Local, Bit>,
    complete: Signal<Local, Bit>,
    push_column: Signal<Local, Bit>,
    pushed: Signal<Local, Bit>,
    word: Vec<Constant<Bits<32>>>,
    idx8: Vec<Constant<Bits<8>>>,
    depth: Constant<Bits<8>>,
    burst_low: Constant<Bits<32>>,
    burst_high: Constant<Bits<32>>,
    two32: Constant<Bits<32>>,
    four32: Constant<Bits<32>>,
    one8: Constant<Bits<8>>,
    zero8: Constant<Bits<8>>,
    zero16: Constant<Bits<16>>,
    zero32: Constant<Bits<32>>,
}

impl ColptrFetch {
    /// The pointer fetch of `arch`.
    pub fn from_arch(arch: &lacuna_spec::Arch) -> ColptrFetch {
        ColptrFetch::new(arch.memory.request_bytes as usize, arch.core.column_queue_depth as usize)
    }

    /// A fetch of `burst`-byte pointer bursts (a power of two, 8..=512) with a column queue of
    /// `depth` (1..=127).
    pub fn new(burst: usize, depth: usize) -> ColptrFetch {
        assert!(burst.is_power_of_two() && (8..=512).contains(&burst) && (1..128).contains(&depth));
        let words = burst / 4;
        ColptrFetch {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_marker: Default::default(),
            in_panel: Default::default(),
            in_k: Default::default(),
            in_x: Default::default(),
            in_colptr: Default::default(),
            in_entries: Default::default(),
            out_pop: Default::default(),
            halt: Default::default(),
            req_ready: Default::default(),
            resp_valid: Default::default(),
            resp_data: many(words),
            in_pop: Default::default(),
            req_valid: Default::default(),
            req_addr: Default::default(),
            error: Default::default(),
            error_start: Default::default(),
            error_end: Default::default(),
            error_panel: Default::default(),
            error_k: Default::default(),
            idle: Default::default(),
            empty: Default::default(),
            head_valid: Default::default(),
            head_marker: Default::default(),
            head_panel: Default::default(),
            head_k: Default::default(),
            head_x: Default::default(),
            head_start: Default::default(),
            head_end: Default::default(),
            cur_valid: Default::default(),
            cur_panel: Default::default(),
            cur_k: Default::default(),
            cur_x: Default::default(),
            cur_entries: Default::default(),
            cur_b0: Default::default(),
            cur_b1: Default::default(),
            cur_two: Default::default(),
            cur_off0: Default::default(),
            cur_off1: Default::default(),
            cur_iss0: Default::default(),
            cur_iss1: Default::default(),
            cur_arr0: Default::default(),
            cur_arr1: Default::default(),
            cur_start: Default::default(),
            cur_end: Default::default(),
            last_valid: Default::default(),
            last_addr: Default::default(),
            last_data: many(words),
            q_marker: many(depth),
            q_panel: many(depth),
            q_k: many(depth),
            q_x: many(depth),
            q_start: many(depth),
            q_end: many(depth),
            ring: Ring::new(depth),
            after_pop: Default::default(),
            room: Default::default(),
            addr: Default::default(),
            n_valid: Default::default(),
            n_two: Default::default(),
            n_off0: Default::default(),
            n_off1: Default::default(),
            n_b0: Default::default(),
            n_b1: Default::default(),
            n_iss0: Default::default(),
            n_iss1: Default::default(),
            n_arr0: Default::default(),
            n_arr1: Default::default(),
            n_start: Default::default(),
            n_end: Default::default(),
            held: Default::default(),
            iss0_after: Default::default(),
            iss1_after: Default::default(),
            arr0_after: Default::default(),
            arr1_after: Default::default(),
            start_after: Default::default(),
            end_after: Default::default(),
            n_entries: Default::default(),
            n_panel: Default::default(),
            n_k: Default::default(),
            n_x: Default::default(),
            last_start: Default::default(),
            last_end: Default::default(),
            resp_start: Default::default(),
            resp_end: Default::default(),
            push_marker: Default::default(),
            complete: Default::default(),
            push_column: Default::default(),
            pushed: Default::default(),
            word: index_constants(words),
            idx8: index_constants(depth),
            depth: constant(depth as u64),
            burst_low: constant(burst as u64 - 1),
            burst_high: constant(!(burst as u64 - 1) & 0xffff_ffff),
            two32: constant(2),
            four32: constant(4),
            one8: constant(1),
            zero8: constant(0),
            zero16: constant(0),
            zero32: constant(0),
        }
    }
}

mod update;
