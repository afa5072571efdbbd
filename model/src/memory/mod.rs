//! `memory`: the one memory port every loading or storing block shares, and its [`arbiter`].
//!
//! Contract (docs/microarchitecture.md, "memory"): requests are aligned bursts of
//! `request_bytes`; at most one request is accepted per cycle, and only while fewer than
//! `max_outstanding` are in flight; when several requesters have one ready, the [`arbiter`]
//! chooses under the arch's `memory.arbitration`. A request accepted in cycle t occupies the data bus for
//! `beats = ceil(request_bytes / bytes_per_cycle)` cycles from `s = max(t + latency, bus_free)`
//! and completes in cycle `c = s + beats`. Completion times are therefore strictly increasing, so
//! the requests in flight form a FIFO. Clients keep the completion cycle they are given.

pub mod arbiter;

use lacuna_spec::arch::MemoryParams;
use std::collections::VecDeque;

/// Who asked, for the byte counters and the request log: the spec's memory clients.
pub use lacuna_spec::MemClient;

/// Bytes moved, by kind (whole bursts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ByteCounters {
    /// Activation bytes read.
    pub activations: u64,
    /// Column-pointer bytes read.
    pub colptr: u64,
    /// Value bytes read.
    pub values: u64,
    /// Run-length bytes read.
    pub runs: u64,
    /// Output bytes written.
    pub outputs: u64,
    /// Expert channel bytes read (the expert unit).
    pub expert_channels: u64,
    /// Calibration statistics and unrouted means read (the expert unit).
    pub expert_stats: u64,
    /// Requests (bursts) served.
    pub requests: u64,
}

impl ByteCounters {
    /// Bytes read.
    pub fn loaded(&self) -> u64 {
        self.activations + self.colptr + self.values + self.runs + self.expert_channels + self.expert_stats
    }
}

/// One accepted request, as the memory log records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MemRequest {
    /// The cycle it was accepted.
    pub cycle: u64,
    /// Who asked.
    pub kind: MemClient,
    /// The burst's address.
    pub addr: u64,
    /// The cycle it completes.
    pub done: u64,
}

/// The memory port.
pub struct Memory {
    burst: u64,
    beats: u64,
    latency: u64,
    max_outstanding: usize,
    bus_free: u64,
    in_flight: VecDeque<u64>,
    accepted_at: Option<u64>,
    /// Bytes moved so far.
    pub bytes: ByteCounters,
    /// Every accepted request, when logging (`log_requests`).
    pub log: Option<Vec<MemRequest>>,
}

impl Memory {
    /// A memory with the arch's parameters.
    pub fn new(p: &MemoryParams) -> Memory {
        Memory {
            burst: p.request_bytes as u64,
            beats: (p.request_bytes as u64).div_ceil(p.bytes_per_cycle as u64),
            latency: p.latency_cycles as u64,
            max_outstanding: p.max_outstanding as usize,
            bus_free: 0,
            in_flight: VecDeque::new(),
            accepted_at: None,
            bytes: ByteCounters::default(),
            log: None,
        }
    }

    /// Burst size in bytes.
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// The aligned burst address holding byte `addr`.
    pub fn burst_of(&self, addr: u64) -> u64 {
        addr / self.burst * self.burst
    }

    /// Retires requests that completed by cycle `now`.
    pub fn tick(&mut self, now: u64) {
        while self.in_flight.front().is_some_and(|&c| c <= now) {
            self.in_flight.pop_front();
        }
    }

    /// Whether a request would be accepted in cycle `now` (none yet this cycle, a slot free).
    pub fn can_accept(&self, now: u64) -> bool {
        self.accepted_at != Some(now) && self.in_flight.len() < self.max_outstanding
    }

    /// Asks for one burst in cycle `now`; returns its completion cycle, or `None` when the port
    /// already accepted a request this cycle or `max_outstanding` are in flight.
    pub fn request(&mut self, now: u64, kind: MemClient) -> Option<u64> {
        if !self.can_accept(now) {
            return None;
        }
        self.accepted_at = Some(now);
        let start = (now + self.latency).max(self.bus_free);
        let done = start + self.beats;
        self.bus_free = done;
        self.in_flight.push_back(done);
        let b = &mut self.bytes;
        b.requests += 1;
        match kind {
            MemClient::Activations => b.activations += self.burst,
            MemClient::Colptr => b.colptr += self.burst,
            MemClient::Values => b.values += self.burst,
            MemClient::Runs => b.runs += self.burst,
            MemClient::Outputs => b.outputs += self.burst,
            MemClient::ExpertChannels => b.expert_channels += self.burst,
            MemClient::ExpertStats => b.expert_stats += self.burst,
        }
        Some(done)
    }

    /// Records every accepted request from now on (`log`).
    pub fn log_requests(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// `request`, with the burst's address for the log.
    pub fn request_at(&mut self, now: u64, kind: MemClient, addr: u64) -> Option<u64> {
        let done = self.request(now, kind)?;
        if let Some(log) = self.log.as_mut() {
            log.push(MemRequest { cycle: now, kind, addr, done });
        }
        Some(done)
    }

    /// Requests in flight (as of the last `tick`).
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The completion cycle of the last request accepted (0 before any).
    pub fn last_completion(&self) -> u64 {
        self.bus_free
    }

    /// When the port next frees a slot, if it is full: the earliest completion in flight.
    pub fn next_free(&self) -> Option<u64> {
        (self.in_flight.len() >= self.max_outstanding).then(|| self.in_flight[0])
    }
}

/// A block that asks the memory port for bursts: what it wants this cycle, and what it does when
/// granted. The core's arbitration (`memory::arbiter`) chooses among the blocks that want one.
pub trait Requester {
    /// The burst it would ask for in this cycle's issue phase, if any: client and address.
    fn wanted(&self) -> Option<(MemClient, u64)>;

    /// Its request was accepted and completes in cycle `done`; `burst` is the burst size.
    fn granted(&mut self, done: u64, burst: u64);

    /// Asks for [`Requester::wanted`] alone, with no other requester (a block's own tests).
    /// Returns true when the memory accepted it.
    fn issue(&mut self, now: u64, mem: &mut Memory) -> bool {
        let Some((client, addr)) = self.wanted() else { return false };
        let Some(done) = mem.request_at(now, client, addr) else { return false };
        self.granted(done, mem.burst());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(bpc: u32, lat: u32, out: u32, burst: u32) -> Memory {
        Memory::new(&MemoryParams {
            technology: "test".into(),
            bytes_per_cycle: bpc,
            latency_cycles: lat,
            max_outstanding: out,
            request_bytes: burst,
            arbitration: Default::default(),
        })
    }

    #[test]
    fn a_lone_request_completes_after_latency_plus_its_beats() {
        let mut m = mem(16, 10, 4, 64);
        assert_eq!(m.request(5, MemClient::Values), Some(5 + 10 + 4));
    }

    #[test]
    fn one_request_is_accepted_per_cycle() {
        let mut m = mem(64, 10, 4, 64);
        assert!(m.request(0, MemClient::Values).is_some());
        assert_eq!(m.request(0, MemClient::Runs), None);
        assert!(m.request(1, MemClient::Runs).is_some());
    }

    #[test]
    fn back_to_back_requests_stream_at_the_bus_bandwidth() {
        // 64-byte bursts on a 16-byte bus: one completion every 4 cycles once the pipe is full.
        let mut m = mem(16, 10, 64, 64);
        let done: Vec<u64> = (0..5).map(|t| m.request(t, MemClient::Values).unwrap()).collect();
        assert_eq!(done, vec![14, 18, 22, 26, 30]);
    }

    #[test]
    fn the_outstanding_limit_holds_requests_until_one_completes() {
        let mut m = mem(64, 10, 2, 64);
        assert_eq!(m.request(0, MemClient::Values), Some(11));
        assert_eq!(m.request(1, MemClient::Values), Some(12));
        m.tick(2);
        assert_eq!(m.request(2, MemClient::Values), None);
        assert_eq!(m.next_free(), Some(11));
        m.tick(11);
        assert_eq!(m.request(11, MemClient::Values), Some(22));
        assert_eq!(m.bytes.values, 3 * 64);
    }
}
