//! Every counter the model reports, with what it counts.
//!
//! The decoder-intake counters partition the cycles: each cycle is exactly one of `busy`,
//! `stall_memory`, `stall_columns`, `stall_backpressure`, `stall_drain` or `tail`, so they add up
//! to `cycles` and say where the time went.

use crate::core::accumulator::AccStalls;
use crate::memory::ByteCounters;

/// The counters of one simulated job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counters {
    /// Cycles from start to the completion of the last output write.
    pub cycles: u64,
    /// Row panels processed.
    pub panels: u64,
    /// Active columns seen, summed over panels (each panel rescans x).
    pub active_columns: u64,
    /// Slices decoded (one decoder cycle each).
    pub slices: u64,
    /// Stored entries with a nonzero value that were decoded and multiplied.
    pub useful_entries: u64,
    /// Padding entries (value 0, run 15) decoded; they cost a slot and an add but change nothing.
    pub padding_entries: u64,
    /// Decoder slots that held no entry of the slice's column (chunk alignment and short columns).
    pub masked_slots: u64,
    /// Accumulate operations issued (useful + padding entries).
    pub adds: u64,
    /// Cycles a slice (or marker) entered the decoder.
    pub busy: u64,
    /// Cycles the decoder had nothing to take because data was still on its way from memory
    /// (value/run bursts in flight or not yet accepted, pointer bursts, activation loading).
    pub stall_memory: u64,
    /// Cycles the decoder had nothing to take and nothing was waiting on memory: the activation
    /// scan or the column-pointer fetch could not supply columns fast enough.
    pub stall_columns: u64,
    /// Cycles the decoder's first stage was full and could not move: route could not deliver
    /// because lane FIFOs were full (accumulate ports, hazards or lane imbalance downstream).
    pub stall_backpressure: u64,
    /// Cycles the decoder's first stage was full while drain held the accumulators.
    pub stall_drain: u64,
    /// Cycles after the last slice entered the decoder: emptying the pipeline, the last drain,
    /// the last output writes.
    pub tail: u64,
    /// Accumulator stalls in lane-cycles.
    pub acc: AccStalls,
    /// Route cycles in which a lane with undelivered entries was blocked while another lane's FIFO
    /// was empty.
    pub lane_imbalance_cycles: u64,
    /// Bytes moved by the memory, by kind (whole bursts).
    pub bytes: ByteCounters,
}
