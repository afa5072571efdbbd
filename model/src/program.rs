//! Runs a compiled program (`lacuna_spec::program`) on the cycle model: each step of its
//! decode trace, every linear layer as one core job with the step's real activations.
//!
//! Contract: [`run_step`] builds, for each layer of the program in execution order, the job the
//! compiler lowered (spmspv over its RLC-CSC matrix or gemv over the same weights in dense
//! panels, as the layer records; its threshold) with the trace's FP16 activation vector
//! of the layer's input, simulates it, and reports per layer the core's cycles, DRAM bytes and
//! energy beside dense FP16 GEMV of the same layer on the same hardware
//! ([`crate::baselines::dense`]). The rest of the step follows the program's placement
//! (`lacuna_spec::placement`): attention's matrix-vector jobs over the KV cache as dense
//! FP16 GEMV on the same core and memory, and every element-wise node (with attention's softmax)
//! a job of the vector unit ([`crate::vector`]). The units run the step as [`crate::system`]
//! schedules it: in graph order on each unit, overlapped where the dependences allow; the step
//! reports its overlapped cycles beside the serial sum, and one [`UnitRecord`] per unit.

use crate::baselines::{dense, dense_compute_cycles};
use crate::energy::EnergyTable;
use crate::system::{schedule, Task, UnitRecord};
use crate::vector::{VectorJob, VectorUnit};
use crate::{simulate, Job, SimError};
use half::f16;
use lacuna_spec::graph::Graph;
use lacuna_spec::placement::{Unit, Work};
use lacuna_spec::program::{LoadedProgram, ProgramLayer};
use lacuna_spec::trace::Trace;
use lacuna_spec::{ActivationFilter, Activations};
use serde::Serialize;

/// One layer of one step.
#[derive(Clone, Debug, Serialize)]
pub struct LayerRun {
    /// Layer name.
    pub name: String,
    /// The job that ran it (spmspv over RLC-CSC, or gemv over dense panels).
    pub job: lacuna_spec::job::JobKind,
    /// Cycles on the Sparse SIMT core.
    pub cycles: u64,
    /// Dense FP16 GEMV cycles on the same hardware.
    pub dense_cycles: u64,
    /// DRAM bytes read and written by the core.
    pub dram_bytes: u64,
    /// Dense: DRAM bytes.
    pub dense_dram_bytes: u64,
    /// Core energy, pJ.
    pub energy_pj: f64,
    /// Dense energy, pJ.
    pub dense_energy_pj: f64,
    /// Active activations of K.
    pub active_columns: u64,
    /// Nonzero weights multiplied.
    pub useful_entries: u64,
    /// The job's y (for checks against the golden).
    #[serde(skip)]
    pub y: Vec<f32>,
    /// The core's counters of the job.
    #[serde(skip)]
    pub counters: crate::Counters,
}

/// The work of one unit beside the linear layers in a step.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct UnitRun {
    /// Cycles.
    pub cycles: u64,
    /// DRAM bytes read and written.
    pub dram_bytes: u64,
    /// Energy, pJ.
    pub energy_pj: f64,
}

/// One decode step.
#[derive(Clone, Debug, Serialize)]
pub struct StepRun {
    /// The step's index in the trace (its position: the trace starts at the first token).
    pub step: usize,
    /// The token fed at this step.
    pub token: u32,
    /// Every linear layer.
    pub layers: Vec<LayerRun>,
    /// Attention's matrix-vector jobs on the core (dense, over the KV cache).
    pub attention: UnitRun,
    /// The vector unit (norms, RoPE, softmax, SiLU, adds, embedding lookup).
    pub vector: UnitRun,
    /// Per unit: jobs, cycles, busy cycles, stalls, DRAM bytes, energy.
    pub units: Vec<UnitRecord>,
    /// Cycles of the whole step, the units overlapped where the dependences allow
    /// ([`crate::system::schedule`]).
    pub cycles: u64,
    /// Cycles with every job one after the other.
    pub serial_cycles: u64,
    /// The same step with every linear layer run as dense FP16 GEMV (attention and the vector
    /// unit unchanged), overlapped by the same rule.
    pub dense_cycles: u64,
    /// Dense, serial.
    pub dense_serial_cycles: u64,
    /// Every job of the step as the system ran it (for timelines).
    #[serde(skip)]
    pub tasks: Vec<StepTask>,
}

/// One job of a step: its node, unit and cycles in the overlapped step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepTask {
    /// The graph node (attention's three jobs: `scores`, `softmax`, `output` after its name).
    pub name: String,
    /// Its unit.
    pub unit: Unit,
    /// First cycle.
    pub start: u64,
    /// End cycle (exclusive).
    pub end: u64,
}

impl StepRun {
    /// Sum of a per-layer figure.
    pub fn total<T: std::iter::Sum<T>>(&self, f: impl Fn(&LayerRun) -> T) -> T {
        self.layers.iter().map(f).sum()
    }

    /// Energy of the whole step, pJ.
    pub fn energy_pj(&self) -> f64 {
        self.total(|l| l.energy_pj) + self.attention.energy_pj + self.vector.energy_pj
    }

    /// Energy of the step with dense linear layers, pJ.
    pub fn dense_energy_pj(&self) -> f64 {
        self.total(|l| l.dense_energy_pj) + self.attention.energy_pj + self.vector.energy_pj
    }

    /// DRAM bytes of the whole step.
    pub fn dram_bytes(&self) -> u64 {
        self.total(|l| l.dram_bytes) + self.attention.dram_bytes + self.vector.dram_bytes
    }
}

/// What a graph node costs its units in a step.
enum NodeWork {
    /// A linear layer: the program's layer of this index.
    Linear(usize),
    /// Attention: scores on the core, softmax on the vector unit, output on the core (cycles).
    Attention { scores: u64, softmax: u64, output: u64 },
    /// A vector-unit job (cycles).
    Vector(u64),
}

/// Runs the work beside the linear layers at `positions` cached positions: attention's dense
/// jobs into `core` (and `attention`), every vector job on `vector`. One entry per graph node.
fn beside_linears(
    p: &LoadedProgram,
    positions: u64,
    energy: &EnergyTable,
    core: &mut UnitRecord,
    attention: &mut UnitRun,
    vector: &mut VectorUnit,
) -> Vec<NodeWork> {
    let mut linear = 0;
    let mut dense_jobs = |j: lacuna_spec::placement::DenseJobs| {
        let d = dense(&p.arch, j.m, j.k, energy);
        core.add_dense_jobs(&d, dense_compute_cycles(&p.arch, j.m, j.k), j.count);
        attention.cycles += j.count * d.cycles;
        attention.dram_bytes += j.count * (d.bytes_loaded + d.bytes_written);
        attention.energy_pj += j.count as f64 * d.energy.total_pj();
        j.count * d.cycles
    };
    p.program
        .placement
        .iter()
        .map(|placed| match placed.work {
            Work::Linear => {
                linear += 1;
                NodeWork::Linear(linear - 1)
            }
            Work::Attention { .. } => {
                let (ops, specials) = placed.work.vector(positions);
                // Attention is two core jobs around the softmax (`Work::core_jobs`), every one counted.
                let jobs = placed.work.core_jobs(positions);
                assert_eq!(jobs.len(), 2, "attention is the scores and the output (Work::core_jobs)");
                let scores = dense_jobs(jobs[0]);
                let output = dense_jobs(jobs[1]);
                NodeWork::Attention { scores, softmax: vector.run(VectorJob { ops, specials }), output }
            }
            Work::Elementwise { ops, specials } => NodeWork::Vector(vector.run(VectorJob { ops, specials })),
        })
        .collect()
}

/// The step's tasks in graph order, with `linear[i]` the cycles of the program's layer i; each
/// node's tasks wait for the last task of each of its operands. With each, its name.
fn step_tasks(graph: &Graph, work: &[NodeWork], linear: &[u64]) -> (Vec<Task>, Vec<String>) {
    let mut tasks: Vec<Task> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut last: Vec<usize> = Vec::with_capacity(work.len());
    for (node, w) in graph.nodes.iter().zip(work) {
        let after: Vec<usize> = node.op.operands().iter().filter_map(|o| last.get(o.0 as usize).copied()).collect();
        let mut push = |unit: Unit, cycles: u64, after: Vec<usize>, name: String| {
            tasks.push(Task { unit, cycles, after });
            names.push(name);
            tasks.len() - 1
        };
        let n = &node.name;
        let end = match *w {
            NodeWork::Linear(i) => push(Unit::Core, linear.get(i).copied().unwrap_or(0), after, n.clone()),
            NodeWork::Attention { scores, softmax, output } => {
                let s = push(Unit::Core, scores, after, format!("{n} scores"));
                let m = push(Unit::VectorUnit, softmax, vec![s], format!("{n} softmax"));
                push(Unit::Core, output, vec![m], format!("{n} output"))
            }
            NodeWork::Vector(c) => push(Unit::VectorUnit, c, after, n.clone()),
        };
        last.push(end);
    }
    (tasks, names)
}

/// Why a step could not run.
#[derive(Debug, thiserror::Error)]
pub enum ProgramRunError {
    /// The trace does not fit the program.
    #[error("the trace does not fit the program: {0}")]
    Mismatch(String),
    /// The model refused a job.
    #[error("layer {layer}: {source}")]
    Sim {
        /// The layer.
        layer: String,
        /// Why.
        source: SimError,
    },
}

/// The dense baseline of each layer (it does not depend on the activations).
pub fn dense_baselines(p: &LoadedProgram, energy: &EnergyTable) -> Vec<crate::baselines::KernelRun> {
    p.program.layers.iter().map(|l| dense(&p.arch, l.rows as u64, l.cols as u64, energy)).collect()
}

/// The trace's activation vector of a layer's input at a step.
pub fn activations<'t>(trace: &'t Trace, step: usize, layer: &ProgramLayer) -> Result<&'t [f16], ProgramRunError> {
    if step >= trace.steps.len() {
        return Err(ProgramRunError::Mismatch(format!("step {step} of a trace of {}", trace.steps.len())));
    }
    let i = trace
        .header
        .inputs
        .iter()
        .position(|i| i.node == layer.input)
        .ok_or_else(|| ProgramRunError::Mismatch(format!("no activations for the input of {}", layer.name)))?;
    // A trace recorded for another program (other thresholds) would run other jobs.
    let input = &trace.header.inputs[i];
    match input.readers.iter().find(|r| r.node == layer.node) {
        Some(r) if r.threshold_bits == layer.threshold_bits => {}
        Some(r) => {
            return Err(ProgramRunError::Mismatch(format!(
                "{}: the trace was recorded with threshold {}, the program has {} (a trace of another program)",
                layer.name,
                f16::from_bits(r.threshold_bits),
                f16::from_bits(layer.threshold_bits)
            )))
        }
        None => {
            return Err(ProgramRunError::Mismatch(format!("{} does not read {} in the trace", layer.name, input.name)))
        }
    }
    let x = &trace.steps[step][i];
    if x.len() != layer.cols as usize {
        return Err(ProgramRunError::Mismatch(format!(
            "{}: {} activations for K = {}",
            layer.name,
            x.len(),
            layer.cols
        )));
    }
    Ok(x)
}

/// Runs step `step` of `trace` through the cycle model.
pub fn run_step(
    p: &LoadedProgram,
    trace: &Trace,
    step: usize,
    energy: &EnergyTable,
    dense: &[crate::baselines::KernelRun],
) -> Result<StepRun, ProgramRunError> {
    if step >= trace.steps.len() {
        return Err(ProgramRunError::Mismatch(format!("step {step} of a trace of {}", trace.steps.len())));
    }
    // The step's position and token must be ones the model has: attention past the context or
    // an embedding row past the vocabulary would be simulated without complaint.
    let c = &p.program.graph.config;
    if step >= c.context {
        return Err(ProgramRunError::Mismatch(format!("step {step} is past the model's context of {}", c.context)));
    }
    let token = trace.header.tokens[step];
    if token as usize >= c.vocab {
        return Err(ProgramRunError::Mismatch(format!(
            "step {step}: token {token} is outside the vocabulary of {}",
            c.vocab
        )));
    }
    let mut layers = Vec::with_capacity(p.program.layers.len());
    for (i, (l, d)) in p.program.layers.iter().zip(dense).enumerate() {
        let x = activations(trace, step, l)?;
        let x = Activations::new(x.to_vec()).map_err(|e| ProgramRunError::Mismatch(format!("{}: {e}", l.name)))?;
        let filter = ActivationFilter { threshold: f16::from_bits(l.threshold_bits) };
        let job = Job::of(p.weights(i), &x, filter);
        let r = simulate(&p.arch, &job).map_err(|source| ProgramRunError::Sim { layer: l.name.clone(), source })?;
        let k = &r.counters;
        layers.push(LayerRun {
            name: l.name.clone(),
            job: l.job,
            cycles: k.cycles,
            dense_cycles: d.cycles,
            dram_bytes: k.bytes.loaded() + k.bytes.outputs,
            dense_dram_bytes: d.bytes_loaded + d.bytes_written,
            energy_pj: energy.of_core(k, l.cols as u64 * l.panels as u64).total_pj(),
            dense_energy_pj: d.energy.total_pj(),
            active_columns: x.active_count(filter) as u64,
            useful_entries: k.useful_entries,
            y: r.y,
            counters: r.counters,
        });
    }
    let mut core = UnitRecord::new(Unit::Core);
    for l in &layers {
        core.add_core_job(&l.counters, l.energy_pj);
    }
    let mut attention = UnitRun::default();
    let mut vector_unit = VectorUnit::new(&p.arch.vector_unit);
    let work = beside_linears(p, step as u64 + 1, energy, &mut core, &mut attention, &mut vector_unit);
    let graph = &p.program.graph;
    let (tasks, names) = step_tasks(graph, &work, &layers.iter().map(|l| l.cycles).collect::<Vec<_>>());
    let sparse = schedule(&tasks);
    let dense = schedule(&step_tasks(graph, &work, &layers.iter().map(|l| l.dense_cycles).collect::<Vec<_>>()).0);
    let spans = tasks.iter().zip(names).zip(&sparse.spans);
    let tasks = spans.map(|((t, name), &(start, end))| StepTask { name, unit: t.unit, start, end }).collect();
    let vector =
        UnitRun { cycles: vector_unit.counters.cycles, dram_bytes: 0, energy_pj: vector_unit.energy_pj(energy) };
    Ok(StepRun {
        step,
        token: trace.header.tokens[step],
        layers,
        attention,
        vector,
        units: vec![core, UnitRecord::vector(&vector_unit, energy)],
        cycles: sparse.cycles,
        serial_cycles: sparse.serial_cycles,
        dense_cycles: dense.cycles,
        dense_serial_cycles: dense.serial_cycles,
        tasks,
    })
}
