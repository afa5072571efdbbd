//! `vector`: the vector unit, the element-wise half of a decode step (norms, RoPE, softmax,
//! SiLU, residual adds, the embedding lookup), with its own cycle model and counters.
//!
//! Contract: the unit has `vector_unit.lanes` FP32 lanes; an element operation takes one lane
//! cycle, a special function (exp, sin/cos, reciprocal, reciprocal square root)
//! `vector_unit.special_cycles`. [`VectorUnit::run`] executes one job (one graph node's work, as
//! `lacuna_spec::placement` counts it) and returns its cycles,
//! `ceil((ops + specials * special_cycles) / lanes)`: a job fills the lanes, and the next job
//! starts on the next cycle (in a decode step a node's result is the operand of a later one, so
//! lanes are not shared across jobs). Operands and results stay in the on-chip vector buffers:
//! no DRAM traffic is modelled (the KV cache is read by the core's attention jobs; the embedding
//! lookup's one row, `hidden` FP16 values a step, is not counted yet). Energy: each lane cycle is
//! one FP32 multiply and one FP32 add (`EnergyTable::of_vector`).

use crate::energy::EnergyTable;
use lacuna_spec::arch::VectorUnitParams;

/// One job of the vector unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VectorJob {
    /// FP32 element operations.
    pub ops: u64,
    /// Special functions.
    pub specials: u64,
}

/// What the vector unit did, summed over its jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct VectorCounters {
    /// Jobs run.
    pub jobs: u64,
    /// Element operations.
    pub element_ops: u64,
    /// Special functions.
    pub specials: u64,
    /// Lane cycles of work (element ops + specials x their lane cycles).
    pub lane_cycles: u64,
    /// Cycles the unit was running a job.
    pub cycles: u64,
}

/// The vector unit.
#[derive(Clone, Debug)]
pub struct VectorUnit {
    lanes: u64,
    special_cycles: u64,
    /// Its counters so far.
    pub counters: VectorCounters,
}

impl VectorUnit {
    /// A unit with the arch's parameters.
    pub fn new(p: &VectorUnitParams) -> VectorUnit {
        VectorUnit { lanes: p.lanes as u64, special_cycles: p.special_cycles as u64, counters: Default::default() }
    }

    /// Runs one job; returns its cycles.
    pub fn run(&mut self, job: VectorJob) -> u64 {
        let lane_cycles = job.ops + job.specials * self.special_cycles;
        let cycles = lane_cycles.div_ceil(self.lanes);
        let k = &mut self.counters;
        k.jobs += 1;
        k.element_ops += job.ops;
        k.specials += job.specials;
        k.lane_cycles += lane_cycles;
        k.cycles += cycles;
        cycles
    }

    /// Energy of the jobs run so far, pJ.
    pub fn energy_pj(&self, energy: &EnergyTable) -> f64 {
        energy.of_vector(self.counters.lane_cycles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_fills_the_lanes_and_a_special_takes_its_lane_cycles() {
        let mut v = VectorUnit::new(&VectorUnitParams { lanes: 16, special_cycles: 4 });
        // 24 element ops and one rsqrt (an RMSNorm of 8): 28 lane cycles, 2 cycles on 16 lanes.
        assert_eq!(v.run(VectorJob { ops: 24, specials: 1 }), 2);
        assert_eq!(v.run(VectorJob { ops: 16, specials: 0 }), 1);
        assert_eq!(v.run(VectorJob::default()), 0);
        assert_eq!(v.counters, VectorCounters { jobs: 3, element_ops: 40, specials: 1, lane_cycles: 44, cycles: 3 });
    }
}
