//! `chunk_fetch`: cuts columns into slices and fetches their value and run-length bursts.
//!
//! Contract: a slice is the part of one column inside one aligned chunk of C entries (chunk j
//! holds entries `j*C .. (j+1)*C`). For each slice, in order, the fetch needs the value bytes
//! `[2jC, 2(j+1)C)` and the run bytes `[jC/2, (j+1)C/2)` of the panel's arrays, in bursts; it
//! keeps the last burst of each stream, so a chunk shared by two columns or a run burst shared by
//! several chunks is fetched once. One slice is cut per cycle, when the buffer (`fetch_buffer_chunks`
//! slices, fetched or in flight) has room; its missing bursts are issued one per cycle (values
//! first); it enters the buffer when all are issued, and is ready when all have arrived. Markers
//! enter the buffer ready. In a `gemv` job (dense panels) there are no run bursts: a slice needs
//! its value bursts only.

use crate::core::slice::{Column, Slice, Token};
use crate::memory::{MemClient, Memory, Requester};
use lacuna_spec::job::PanelLayout;
use std::collections::VecDeque;

/// A slice whose bursts are being issued (they wait in `ChunkFetch::to_issue`).
struct Issuing {
    slice: Slice,
    ready: u64,
}

/// The chunk fetch.
pub struct ChunkFetch {
    chunk: u64,
    capacity: usize,
    column: Option<Column>,
    next_chunk: u64,
    issuing: Option<Issuing>,
    /// The issuing slice's missing bursts, in order (a buffer kept across slices).
    to_issue: VecDeque<(MemClient, u64)>,
    last_values: Option<(u64, u64)>,
    last_runs: Option<(u64, u64)>,
    /// A `gemv` job: no run bursts.
    dense: bool,
    /// Slices fetched or in flight, with the cycle they are ready.
    pub buffer: VecDeque<(Token<Slice>, u64)>,
}

impl ChunkFetch {
    /// A fetch of chunks of `chunk` entries, buffering `capacity` slices; `dense`: a `gemv`
    /// job's (values only).
    pub fn new(chunk: u32, capacity: u32, dense: bool) -> ChunkFetch {
        ChunkFetch {
            chunk: chunk as u64,
            capacity: capacity as usize,
            column: None,
            next_chunk: 0,
            issuing: None,
            to_issue: VecDeque::new(),
            last_values: None,
            last_runs: None,
            dense,
            buffer: VecDeque::new(),
        }
    }

    /// Holds no column and issues nothing.
    pub fn idle(&self) -> bool {
        self.column.is_none() && self.issuing.is_none()
    }

    /// Has bursts it could not yet issue.
    pub fn issuing(&self) -> bool {
        self.issuing.is_some()
    }

    /// The cycle the buffer's head becomes ready, when it is not yet.
    pub fn next_event(&self, now: u64) -> Option<u64> {
        self.buffer.front().map(|&(_, r)| r).filter(|&r| r > now)
    }

    /// One cycle: cut the next slice (or pass a marker). Returns true on progress.
    pub fn step(
        &mut self,
        now: u64,
        input: &mut VecDeque<Token<Column>>,
        layout: &[PanelLayout],
        mem: &Memory,
    ) -> bool {
        if self.issuing.is_some() || self.buffer.len() >= self.capacity {
            return false;
        }
        if self.column.is_none() {
            match input.pop_front() {
                None => return false,
                Some(Token::EndPanel(p)) => {
                    self.buffer.push_back((Token::EndPanel(p), now));
                    // The next panel's arrays start on fresh bursts.
                    self.last_values = None;
                    self.last_runs = None;
                    return true;
                }
                Some(Token::Work(c)) => {
                    self.next_chunk = c.start / self.chunk;
                    self.column = Some(c);
                }
            }
        }
        let c = self.column.expect("set above");
        let j = self.next_chunk;
        let (lo, hi) = (c.start.max(j * self.chunk), c.end.min((j + 1) * self.chunk));
        let slice = Slice { column: c, chunk: j, lo, hi, first: lo == c.start };
        self.next_chunk += 1;
        if self.next_chunk * self.chunk >= c.end {
            self.column = None;
        }
        let pl = layout[c.panel as usize];
        let mut iss = Issuing { slice, ready: now };
        let streams = [
            (MemClient::Values, pl.values + 2 * j * self.chunk, 2 * self.chunk, self.last_values),
            (MemClient::Runs, pl.runs + j * self.chunk / 2, self.chunk / 2, self.last_runs),
        ];
        for (kind, start, len, last) in streams.into_iter().take(if self.dense { 1 } else { 2 }) {
            let mut b = mem.burst_of(start);
            while b < start + len {
                match last {
                    Some((addr, ready)) if addr == b => iss.ready = iss.ready.max(ready),
                    _ => self.to_issue.push_back((kind, b)),
                }
                b += mem.burst();
            }
        }
        if self.to_issue.is_empty() {
            self.buffer.push_back((Token::Work(iss.slice), iss.ready));
        } else {
            self.issuing = Some(iss);
        }
        true
    }
}

/// Issue phase: the issuing slice's next missing burst.
impl Requester for ChunkFetch {
    fn wanted(&self) -> Option<(MemClient, u64)> {
        self.issuing.as_ref().and(self.to_issue.front().copied())
    }

    fn granted(&mut self, done: u64, _burst: u64) {
        let iss = self.issuing.as_mut().expect("granted only what it wanted");
        let (kind, addr) = *self.to_issue.front().expect("an issuing slice has bursts to issue");
        iss.ready = iss.ready.max(done);
        match kind {
            MemClient::Values => self.last_values = Some((addr, done)),
            _ => self.last_runs = Some((addr, done)),
        }
        self.to_issue.pop_front();
        if self.to_issue.is_empty() {
            let iss = self.issuing.take().expect("checked");
            self.buffer.push_back((Token::Work(iss.slice), iss.ready));
        }
    }
}
