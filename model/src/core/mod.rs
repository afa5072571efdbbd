//! `core`: the Sparse SIMT core, cycle by cycle: the blocks wired as docs/microarchitecture.md
//! draws them, evaluated downstream first within a cycle, then the memory's issue phase: the
//! blocks that want a burst ask, the arbiter (`memory::arbiter`, the arch's policy) grants one
//! (fixed priority: drain > act_load > colptr_fetch > chunk_fetch, `MemRequester::ALL`).
//!
//! Bulk skipping: a cycle in which nothing changes is followed by identical cycles until the next
//! timed event (a burst arriving, an add completing, a memory slot freeing). The model jumps there
//! and charges the skipped cycles to the same counters, so skipping changes no result and no
//! counter (a test compares against the model run with skipping off).

pub mod accumulator;
pub mod act_load;
pub mod act_scan;
pub mod chunk_fetch;
pub mod colptr_fetch;
pub mod counters;
pub mod drain;
pub mod multiplier;
pub mod rlc_decoder;
pub mod route;
pub mod slice;

use crate::core::accumulator::Accumulator;
use crate::core::act_load::ActLoad;
use crate::core::act_scan::ActScan;
use crate::core::chunk_fetch::ChunkFetch;
use crate::core::colptr_fetch::ColptrFetch;
use crate::core::counters::Counters;
use crate::core::drain::Drain;
use crate::core::multiplier::multiply;
use crate::core::rlc_decoder::RlcDecoder;
use crate::core::route::Route;
use crate::core::slice::{Products, Token};
use crate::memory::arbiter::Arbiter;
use crate::memory::{Memory, Requester};
use crate::{Fault, Job, SimError, SimResult};
use lacuna_spec::job::{JobKind, PanelLayout};
use lacuna_spec::{Arch, MemRequester};

/// Runs `job` on `arch`; `skip` enables bulk skipping of idle cycles.
pub fn run(
    arch: &Arch,
    job: &Job,
    layout: &lacuna_spec::job::JobLayout,
    skip: bool,
    log: bool,
) -> Result<SimResult, SimError> {
    let c = &arch.core;
    let mut mem = Memory::new(&arch.memory);
    let mut arbiter = Arbiter::new(arch.memory.arbitration, MemRequester::ALL.len());
    if log {
        mem.log_requests();
    }
    let panels = job.panels.len() as u32;
    let mut act_load = ActLoad::new(layout.x, 2 * job.x.len() as u64);
    let mut scan = ActScan::new(c.scan_width, c.activation_queue_depth, panels);
    let dense = job.kind == JobKind::Gemv;
    let mut colptr = ColptrFetch::new(c.column_queue_depth, job.kind);
    let mut chunk = ChunkFetch::new(arch.chunk_entries(), c.fetch_buffer_chunks, dense);
    let mut dec = RlcDecoder::new(dense);
    let mut mul: Option<Token<Products>> = None;
    let mut route = Route::new(c.lanes);
    let mut acc =
        Accumulator::new(c.lanes, c.acc_regs_per_lane, c.acc_write_ports, c.acc_add_latency, c.lane_queue_depth);
    let mut drain = Drain::new(c.lanes, arch.drain_buffer_bursts() as usize);
    let panel_layout: &[PanelLayout] = &layout.panels;
    let mut y = vec![0.0f32; job.rows as usize];
    let mut k = Counters { panels: panels as u64, ..Counters::default() };
    let mut drained = 0u32;
    let mut fault: Option<Fault> = None;
    let limit = cycle_limit(arch, job);
    let burst = mem.burst();
    // With `log`: the first cycle of every run of cycles of one class.
    let mut phases: Vec<(u64, Class)> = Vec::new();

    let mut t: u64 = 0;
    loop {
        if t > limit {
            return Err(SimError::Timeout { cycles: t });
        }
        mem.tick(t);
        let mut progress = false;
        let imbalance_before = route.imbalance_cycles;

        // drain, then the accumulator (blocked while drain reads this cycle). The accumulator
        // schedules each entry's issue when it enters a FIFO (see `accumulator`): nothing to step.
        let draining = !drain.idle();
        if draining {
            let p = drain_panel(&drain);
            let row0 = p as usize * job.panel_rows as usize;
            progress |= drain.step(&mut acc, &mut y, row0, layout.y, burst);
            if drain.idle() {
                drained += 1;
                acc.resume(t + 1);
            }
        }

        // route, then the pipeline moves forward where the next stage is free.
        let (moved, start_drain) = route.step(t, &mut acc, drain.idle());
        progress |= moved;
        if let Some(p) = start_drain {
            drain.start(p, job.panels[p as usize].rows);
            acc.hold();
        }
        if route.is_empty() {
            if let Some(tok) = mul.take() {
                dec.pool.extend(route.accept(tok));
                progress = true;
            }
        }
        if mul.is_none() {
            if let Some(tok) = dec.stages[2].take() {
                mul = Some(multiply(tok));
                progress = true;
            }
        }
        let (moved, overrun) = dec.advance();
        progress |= moved;
        if let (Some((s, row)), None) = (overrun, &fault) {
            fault = Some(Fault::RunOverrunsColumn { panel: s.column.panel, col: s.column.k, row, cycle: t });
        }
        let mut entered = false;
        if dec.stages[0].is_none() && fault.is_none() {
            if let Some(&(_, ready)) = chunk.buffer.front() {
                if ready <= t {
                    let (tok, _) = chunk.buffer.pop_front().expect("front exists");
                    dec.accept(tok, &job.panels);
                    if let Some(Token::Work(d)) = &dec.stages[0] {
                        let n = d.slice.hi - d.slice.lo;
                        let pad = d.padding as u64;
                        k.slices += 1;
                        k.padding_entries += pad;
                        k.useful_entries += n - pad;
                        k.masked_slots += arch.chunk_entries() as u64 - n;
                    }
                    entered = true;
                    progress = true;
                }
            }
        }

        // The front end: slices, column pointers, the activation scan.
        if fault.is_none() {
            progress |= chunk.step(t, &mut colptr.queue, panel_layout, &mem);
            let (moved, bad) = colptr.step(t, &mut scan.queue, &job.panels, |p| panel_layout[p as usize].colptr, &mem);
            progress |= moved;
            if let Some(b) = bad {
                fault =
                    Some(Fault::BadColumnPointer { panel: b.panel, col: b.k, start: b.start, end: b.end, cycle: t });
            }
            let loaded = act_load.loaded(t);
            let queued = scan.queue.len();
            progress |= scan.step(job.x, loaded, job.filter);
            k.active_columns +=
                scan.queue.iter().skip(queued).filter(|tok| matches!(tok, Token::Work(_))).count() as u64;
        }

        // Issue phase: the arbiter grants the port's one request of the cycle among the blocks
        // that want one (after a fault only the drain still asks).
        if mem.can_accept(t) {
            let halted = fault.is_some();
            // In `MemRequester::ALL` order.
            let blocks: [&mut dyn Requester; 4] = [&mut drain, &mut act_load, &mut colptr, &mut chunk];
            let ready = blocks.each_ref().map(|b| b.wanted().is_some());
            let ready = [ready[0], !halted && ready[1], !halted && ready[2], !halted && ready[3]];
            if let Some(i) = arbiter.grant(&ready) {
                let (client, addr) = blocks[i].wanted().expect("a ready block wants a burst");
                let done = mem.request_at(t, client, addr).expect("the port can accept");
                blocks[i].granted(done, burst);
                progress = true;
            }
        }

        // Where did this cycle go?
        let upstream_idle = scan.done()
            && scan.queue.is_empty()
            && colptr.idle()
            && colptr.queue.is_empty()
            && chunk.idle()
            && chunk.buffer.is_empty();
        let class = if entered {
            Class::Busy
        } else if dec.stages[0].is_some() {
            if draining {
                Class::Drain
            } else {
                Class::Backpressure
            }
        } else if upstream_idle || fault.is_some() {
            Class::Tail
        } else if chunk.buffer.front().is_some_and(|&(_, r)| r > t)
            || chunk.issuing()
            || colptr.waiting_on_memory(t)
            || (!act_load.complete() && !scan.done())
        {
            Class::Memory
        } else {
            Class::Columns
        };

        // Finished?
        let pipeline_empty =
            dec.empty() && mul.is_none() && route.is_empty() && drain.idle() && !drain.writes_pending();
        let finished = if fault.is_some() {
            memory_quiet(&mem) && !drain.writes_pending()
        } else {
            upstream_idle && pipeline_empty && drained == panels
        };
        if finished {
            if fault.is_some() {
                acc.settle(t);
            }
            class.charge(&mut k, 1);
            if log && phases.last().is_none_or(|p| p.1 != class) {
                phases.push((t, class));
            }
            k.cycles = (t + 1).max(mem.last_completion());
            k.tail += k.cycles - (t + 1);
            k.acc = acc.stalls;
            k.adds = acc.adds();
            k.lane_imbalance_cycles = route.imbalance_cycles;
            k.bytes = mem.bytes;
            // The tail after the last cycle evaluated (the last writes completing).
            if log && k.cycles > t + 1 && phases.last().is_none_or(|p| p.1 != Class::Tail) {
                phases.push((t + 1, Class::Tail));
            }
            return Ok(SimResult { y, counters: k, fault, requests: mem.log.take().unwrap_or_default(), phases });
        }

        // Next cycle, or the next event when nothing changed.
        let mut next = t + 1;
        if skip && !progress {
            let events = [
                chunk.next_event(t),
                colptr.next_event(t),
                act_load.next_event(),
                acc.next_event(t),
                Some(acc.last_done()).filter(|&d| d > t),
                mem.next_free(),
                // After a fault the job ends when the memory has answered everything.
                fault.is_some().then(|| mem.last_completion()),
            ];
            if let Some(e) = events.into_iter().flatten().filter(|&e| e > t).min() {
                next = e;
            }
        }
        let span = next - t;
        class.charge(&mut k, span);
        if log && phases.last().is_none_or(|p| p.1 != class) {
            phases.push((t, class));
        }
        if span > 1 {
            // The skipped cycles repeat this one's route stall (the accumulator's stalls are
            // charged per entry when it is scheduled).
            route.imbalance_cycles += (route.imbalance_cycles - imbalance_before) * (span - 1);
        }
        t = next;
    }
}

/// How a cycle is charged (see `Counters`): each cycle is one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A slice (or marker) entered the decoder.
    Busy,
    /// Waiting on memory.
    Memory,
    /// The front end could not supply columns.
    Columns,
    /// The decoder was blocked downstream.
    Backpressure,
    /// The decoder waited for a drain.
    Drain,
    /// Emptying the pipeline at the end.
    Tail,
}

impl Class {
    /// Its name in reports (the `Counters` field without `stall_`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Busy => "busy",
            Class::Memory => "memory",
            Class::Columns => "columns",
            Class::Backpressure => "backpressure",
            Class::Drain => "drain",
            Class::Tail => "tail",
        }
    }

    fn charge(self, k: &mut Counters, n: u64) {
        match self {
            Class::Busy => k.busy += n,
            Class::Memory => k.stall_memory += n,
            Class::Columns => k.stall_columns += n,
            Class::Backpressure => k.stall_backpressure += n,
            Class::Drain => k.stall_drain += n,
            Class::Tail => k.tail += n,
        }
    }
}

fn drain_panel(d: &Drain) -> u32 {
    d.panel().expect("drain is reading")
}

/// After a fault: nothing more is issued; the job ends once the memory has nothing in flight.
fn memory_quiet(mem: &Memory) -> bool {
    mem.in_flight() == 0
}

/// A bound no correct job can reach: every slice, column, activation group and output row may
/// wait a full memory round trip, a few times over.
fn cycle_limit(arch: &Arch, job: &Job) -> u64 {
    let c = arch.chunk_entries() as u64;
    let entries: u64 = job.panels.iter().map(|p| p.entries(job.kind) + p.colptr.len() as u64).sum();
    let work =
        entries / c + 2 * entries + (job.panels.len() as u64 + 1) * (job.x.len() as u64 + job.panel_rows as u64 + 16);
    let round_trip = arch.memory.latency_cycles as u64
        + (arch.memory.request_bytes as u64).div_ceil(arch.memory.bytes_per_cycle as u64)
            * arch.memory.max_outstanding as u64
        + arch.core.acc_add_latency as u64
        + 16;
    4 * work * round_trip + 10_000
}
