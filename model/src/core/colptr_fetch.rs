//! `colptr_fetch`: reads `colptr[k]` and `colptr[k+1]` of each active column.
//!
//! Contract: takes the next active column from the activation queue when idle; needs the one or
//! two pointer bursts that hold the pair, reusing the last burst it fetched; issues a missing
//! burst in the issue phase (one per cycle); once every needed burst has arrived, checks the pair
//! (`colptr[k] <= colptr[k+1] <= entries`) and pushes (k, x_k, start, end) into the column queue
//! unless the column is empty. Markers pass through when the column queue has room.

use crate::core::act_scan::ActiveColumn;
use crate::core::slice::{Column, Token};
use crate::memory::{MemClient, Memory, Requester};
use crate::PanelData;
use lacuna_spec::job::JobKind;
use std::collections::VecDeque;

/// A column whose pointers are being fetched.
struct Pending {
    col: ActiveColumn,
    bursts: [u64; 2],
    n: usize,
    ready: [Option<u64>; 2],
}

/// A malformed pointer pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadPointer {
    /// Panel.
    pub panel: u32,
    /// Column.
    pub k: u32,
    /// colptr\[k\] (u64::MAX when past the array).
    pub start: u64,
    /// colptr\[k+1\] (u64::MAX when past the array).
    pub end: u64,
}

/// The column-pointer fetch.
pub struct ColptrFetch {
    depth: usize,
    kind: JobKind,
    cur: Option<Pending>,
    last: Option<(u64, u64)>,
    /// The column queue.
    pub queue: VecDeque<Token<Column>>,
}

impl ColptrFetch {
    /// A fetch with a column queue of `depth`, for a job of `kind`.
    pub fn new(depth: u32, kind: JobKind) -> ColptrFetch {
        ColptrFetch { depth: depth as usize, kind, cur: None, last: None, queue: VecDeque::new() }
    }

    /// Nothing held.
    pub fn idle(&self) -> bool {
        self.cur.is_none()
    }

    /// The cycle an awaited pointer burst arrives.
    pub fn next_event(&self, now: u64) -> Option<u64> {
        let c = self.cur.as_ref()?;
        c.ready[..c.n].iter().flatten().copied().filter(|&r| r > now).min()
    }

    /// A pointer burst is awaited (in flight or not yet accepted by the memory).
    pub fn waiting_on_memory(&self, now: u64) -> bool {
        self.cur.as_ref().is_some_and(|c| c.ready[..c.n].iter().any(|r| r.is_none_or(|r| r > now)))
    }

    /// One cycle; `colptr_base(p)` is the address of panel p's pointers. Returns (progress, error).
    pub fn step(
        &mut self,
        now: u64,
        input: &mut VecDeque<Token<ActiveColumn>>,
        panels: &[PanelData],
        colptr_base: impl Fn(u32) -> u64,
        mem: &Memory,
    ) -> (bool, Option<BadPointer>) {
        let mut progress = false;
        if self.cur.is_none() {
            match input.front() {
                None => return (false, None),
                Some(&Token::EndPanel(p)) => {
                    if self.queue.len() >= self.depth {
                        return (false, None);
                    }
                    self.queue.push_back(Token::EndPanel(p));
                    input.pop_front();
                    return (true, None);
                }
                Some(&Token::Work(col)) => {
                    input.pop_front();
                    let addr = colptr_base(col.panel) + 4 * col.k as u64;
                    let (b0, b1) = (mem.burst_of(addr), mem.burst_of(addr + 4));
                    let n = if b0 == b1 { 1 } else { 2 };
                    let mut pend = Pending { col, bursts: [b0, b1], n, ready: [None, None] };
                    if let Some((addr, ready)) = self.last {
                        for i in 0..n {
                            if addr == pend.bursts[i] {
                                pend.ready[i] = Some(ready);
                            }
                        }
                    }
                    self.cur = Some(pend);
                    progress = true;
                }
            }
        }
        let c = self.cur.as_ref().expect("set above");
        if !c.ready[..c.n].iter().all(|r| r.is_some_and(|r| r <= now)) || self.queue.len() >= self.depth {
            return (progress, None);
        }
        let col = c.col;
        self.cur = None;
        let pd = &panels[col.panel as usize];
        let k = col.k as usize;
        let start = pd.colptr.get(k).map_or(u64::MAX, |&v| v as u64);
        let end = pd.colptr.get(k + 1).map_or(u64::MAX, |&v| v as u64);
        if start > end || end > pd.entries(self.kind) {
            return (true, Some(BadPointer { panel: col.panel, k: col.k, start, end }));
        }
        if end > start {
            self.queue.push_back(Token::Work(Column { panel: col.panel, k: col.k, x: col.x, start, end }));
        }
        (true, None)
    }

    /// The index of the first missing pointer burst of the current column, if any.
    fn missing(&self) -> Option<usize> {
        let c = self.cur.as_ref()?;
        (0..c.n).find(|&i| c.ready[i].is_none())
    }
}

/// Issue phase: the first missing pointer burst.
impl Requester for ColptrFetch {
    fn wanted(&self) -> Option<(MemClient, u64)> {
        let i = self.missing()?;
        Some((MemClient::Colptr, self.cur.as_ref()?.bursts[i]))
    }

    fn granted(&mut self, done: u64, _burst: u64) {
        let i = self.missing().expect("granted only what it wanted");
        let c = self.cur.as_mut().expect("a missing burst has a column");
        c.ready[i] = Some(done);
        // The same burst may hold both pointers' halves only when n == 1; nothing to share.
        self.last = Some((c.bursts[i], done));
    }
}
