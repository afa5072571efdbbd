//! `system`: the units of lacuna together: the Sparse SIMT core ([`crate::core`]) and the vector
//! unit ([`crate::vector`]) running one decode step, each with its record.
//!
//! Contract. A step is a list of [`Task`]s in graph order, each on one unit and waiting for the
//! tasks that produce its operands. [`schedule`] runs every unit's tasks in that order (each unit
//! is in order) and starts a task in the first cycle in which its unit is free and every task it
//! waits for has ended: units overlap wherever the dependences allow (RoPE of the query on the
//! vector unit beside the key projection on the core, for instance), and nowhere else. The step's
//! cycles are the last task's end; the serial sum (every task one after the other) is reported
//! beside it. Overlap cannot change a task's own cycles: the vector unit is modelled working from
//! on-chip buffers with no DRAM traffic (the embedding row it reads, ~1 KiB a step, is not
//! counted), so the core has the memory to itself (`memory` serves the
//! core's requesters; a unit with DRAM traffic, the expert unit, will share it through the arbiter).
//!
//! Per unit, a [`UnitRecord`]: jobs, cycles occupied, busy cycles, the stall classes (the core's
//! `Counters` partition), DRAM bytes and energy.

use crate::baselines::KernelRun;
use crate::energy::EnergyTable;
use crate::vector::VectorUnit;
use crate::Counters;
use lacuna_spec::placement::Unit;
use serde::Serialize;

/// One job of a unit in a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// The unit that runs it.
    pub unit: Unit,
    /// Its cycles on that unit.
    pub cycles: u64,
    /// The earlier tasks (indices) whose results it reads.
    pub after: Vec<usize>,
}

/// When every task ran, and the step's length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Start and end cycle of each task.
    pub spans: Vec<(u64, u64)>,
    /// Cycles of the step with the units overlapped: the last end.
    pub cycles: u64,
    /// Cycles with every task one after the other: their sum.
    pub serial_cycles: u64,
}

/// Schedules `tasks` as the contract says. A task may wait only for earlier ones.
pub fn schedule(tasks: &[Task]) -> Timing {
    let mut free: Vec<(Unit, u64)> = Vec::new();
    let mut spans: Vec<(u64, u64)> = Vec::with_capacity(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        debug_assert!(t.after.iter().all(|&a| a < i), "task {i} waits for a later task");
        let ready = t.after.iter().filter_map(|&a| spans.get(a)).map(|s| s.1).max().unwrap_or(0);
        let unit_free = match free.iter_mut().find(|f| f.0 == t.unit) {
            Some(f) => f,
            None => {
                free.push((t.unit, 0));
                free.last_mut().expect("just pushed")
            }
        };
        let start = ready.max(unit_free.1);
        unit_free.1 = start + t.cycles;
        spans.push((start, start + t.cycles));
    }
    Timing {
        cycles: spans.iter().map(|s| s.1).max().unwrap_or(0),
        serial_cycles: tasks.iter().map(|t| t.cycles).sum(),
        spans,
    }
}

/// Where a unit's cycles went: the core's stall classes (`Counters`), zero for a unit that does
/// not stall.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stalls {
    /// Waiting on memory.
    pub memory: u64,
    /// The core's front end could not supply columns.
    pub columns: u64,
    /// The core's decoder was blocked downstream.
    pub backpressure: u64,
    /// The core's decoder waited for a drain.
    pub drain: u64,
    /// Emptying the pipeline at the end of a job.
    pub tail: u64,
}

/// One unit's share of a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnitRecord {
    /// The unit.
    pub unit: Unit,
    /// Jobs it ran.
    pub jobs: u64,
    /// Cycles it was running a job (busy + stalls).
    pub cycles: u64,
    /// Cycles it did work: the core, a slice entering its decoder (dense jobs: their MAC
    /// cycles); the vector unit, every cycle of a job.
    pub busy_cycles: u64,
    /// The other cycles of its jobs, by cause.
    pub stalls: Stalls,
    /// DRAM bytes read and written.
    pub dram_bytes: u64,
    /// Energy, pJ.
    pub energy_pj: f64,
}

impl UnitRecord {
    /// An empty record of `unit`.
    pub fn new(unit: Unit) -> UnitRecord {
        UnitRecord {
            unit,
            jobs: 0,
            cycles: 0,
            busy_cycles: 0,
            stalls: Stalls::default(),
            dram_bytes: 0,
            energy_pj: 0.0,
        }
    }

    /// Adds a job of the Sparse SIMT core with its counters and energy.
    pub fn add_core_job(&mut self, k: &Counters, energy_pj: f64) {
        self.jobs += 1;
        self.cycles += k.cycles;
        self.busy_cycles += k.busy;
        let s = &mut self.stalls;
        s.memory += k.stall_memory;
        s.columns += k.stall_columns;
        s.backpressure += k.stall_backpressure;
        s.drain += k.stall_drain;
        s.tail += k.tail;
        self.dram_bytes += k.bytes.loaded() + k.bytes.outputs;
        self.energy_pj += energy_pj;
    }

    /// Adds `count` dense jobs of the core (`baselines::dense`), `compute_cycles` of MACs each;
    /// the rest of their cycles wait on memory.
    pub fn add_dense_jobs(&mut self, run: &KernelRun, compute_cycles: u64, count: u64) {
        let busy = compute_cycles.min(run.cycles);
        self.jobs += count;
        self.cycles += count * run.cycles;
        self.busy_cycles += count * busy;
        self.stalls.memory += count * (run.cycles - busy);
        self.dram_bytes += count * (run.bytes_loaded + run.bytes_written);
        self.energy_pj += count as f64 * run.energy.total_pj();
    }

    /// The vector unit's record from its counters.
    pub fn vector(v: &VectorUnit, energy: &EnergyTable) -> UnitRecord {
        UnitRecord {
            jobs: v.counters.jobs,
            cycles: v.counters.cycles,
            busy_cycles: v.counters.cycles,
            energy_pj: v.energy_pj(energy),
            ..UnitRecord::new(Unit::VectorUnit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(unit: Unit, cycles: u64, after: &[usize]) -> Task {
        Task { unit, cycles, after: after.to_vec() }
    }

    #[test]
    fn independent_tasks_on_two_units_overlap_and_dependent_ones_wait() {
        let (c, v) = (Unit::Core, Unit::VectorUnit);
        // A norm (vector), two projections reading it (core), a rope of the first (vector)
        // beside the second projection, then a core job reading both.
        let tasks = [task(v, 5, &[]), task(c, 100, &[0]), task(c, 80, &[0]), task(v, 30, &[1]), task(c, 10, &[2, 3])];
        let t = schedule(&tasks);
        assert_eq!(t.spans, vec![(0, 5), (5, 105), (105, 185), (105, 135), (185, 195)]);
        assert_eq!((t.cycles, t.serial_cycles), (195, 225));
    }

    #[test]
    fn a_chain_of_dependent_tasks_takes_the_serial_sum() {
        let tasks = [task(Unit::VectorUnit, 3, &[]), task(Unit::Core, 7, &[0]), task(Unit::VectorUnit, 2, &[1])];
        let t = schedule(&tasks);
        assert_eq!(t.cycles, t.serial_cycles);
        assert_eq!(t.cycles, 12);
    }

    #[test]
    fn a_unit_runs_its_tasks_in_order_even_when_a_later_one_is_ready_first() {
        let (c, v) = (Unit::Core, Unit::VectorUnit);
        // The second core task waits for a long vector task; the third, ready at once, waits
        // behind it (in-order units).
        let tasks = [task(v, 50, &[]), task(c, 10, &[0]), task(c, 10, &[])];
        assert_eq!(schedule(&tasks).spans, vec![(0, 50), (50, 60), (60, 70)]);
    }
}
