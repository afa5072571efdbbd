//! The baselines, on the same memory system (`memory`) and the same compute width (C =
//! `lanes * entries_per_lane` multiply-adds per cycle) as the Sparse SIMT core, each modelled as
//! that kernel actually runs. Streaming kernels overlap loading and computing: their time is the
//! later of the last burst's arrival and the compute cycles, plus the output writes.
//!
//! - `dense`: dense FP16 GEMV, the cuBLAS stand-in: all of W and x, M*K/C cycles of MACs.
//! - `weight_only`: the Sparse SIMT core with no activation skipping (every column active; the
//!   model is run on the same matrix with every activation treated as nonzero, timing only).
//! - `activation_only`: dense FP16 columns stored column-major, inactive columns skipped.
//! - `celty_gpu`: the published Celty kernel's algorithm on this hardware: the same RLC-CSC bytes
//!   as the core, but row indices rebuilt in software (per slice: one unpack step plus a
//!   log2(L)-step scan of lane totals, the warp shuffles of the GPU kernel) and products
//!   scatter-added into a 32-bank shared memory (per slice: as many cycles as the busiest bank),
//!   then the partial sums flushed to y.
//! - `flash_llm`: load-as-sparse, compute-as-dense: Tiled-CSL (32 bits per nonzero plus a 4-byte
//!   offset per 64x64 tile), no activation skipping, all M*K MACs at C per cycle.

use crate::energy::{Energy, EnergyTable};
use crate::memory::{MemClient, Memory};
use crate::{simulate, Counters, Job, SimError};
use half::f16;
use lacuna_spec::numerics::is_zero;
use lacuna_spec::rlc::run_at;
use lacuna_spec::Arch;

/// The kernels compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kernel {
    /// The Sparse SIMT core (the cycle model).
    Lacuna,
    /// Dense FP16 GEMV.
    Dense,
    /// Weight sparsity only.
    WeightOnly,
    /// Activation sparsity only.
    ActivationOnly,
    /// The published Celty GPU kernel's algorithm.
    CeltyGpu,
    /// Flash-LLM style load-as-sparse, compute-as-dense.
    FlashLlm,
}

impl Kernel {
    /// Every kernel, ours first.
    pub const ALL: [Kernel; 6] =
        [Kernel::Lacuna, Kernel::Dense, Kernel::WeightOnly, Kernel::ActivationOnly, Kernel::CeltyGpu, Kernel::FlashLlm];

    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Lacuna => "lacuna",
            Kernel::Dense => "dense",
            Kernel::WeightOnly => "weight_only",
            Kernel::ActivationOnly => "activation_only",
            Kernel::CeltyGpu => "celty_gpu",
            Kernel::FlashLlm => "flash_llm",
        }
    }
}

/// One kernel's run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelRun {
    /// Which kernel.
    pub kernel: Kernel,
    /// Cycles.
    pub cycles: u64,
    /// Bytes read from DRAM (whole bursts).
    pub bytes_loaded: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Energy by unit.
    pub energy: Energy,
    /// The core's full counters (for `lacuna` and `weight_only`).
    pub counters: Option<Counters>,
}

/// The byte-roofline time of a job: the cycles its ideal bytes (`RlcMatrix::job_bytes`) take at
/// the memory's peak, `min(bytes_per_cycle, request_bytes)` bytes per cycle (one request is
/// accepted per cycle). A kernel's `roofline_fraction` is this over its cycles: 1.0 means it moves
/// exactly the bytes it must, at full bandwidth, with no latency or overhead.
pub fn roofline_cycles(arch: &Arch, ideal_bytes: u64) -> f64 {
    let peak = arch.memory.bytes_per_cycle.min(arch.memory.request_bytes) as f64;
    ideal_bytes as f64 / peak
}

/// Cycles to stream `read_bursts` bursts through the memory while `compute` cycles of work
/// overlap them, then write `write_bursts` bursts: issue one burst per cycle as the memory accepts.
pub fn stream_cycles(arch: &Arch, read_bursts: u64, compute: u64, write_bursts: u64) -> u64 {
    let mut mem = Memory::new(&arch.memory);
    let mut t = 0u64;
    let issue = |n: u64, kind: MemClient, t: &mut u64, mem: &mut Memory| {
        let mut left = n;
        while left > 0 {
            mem.tick(*t);
            if mem.request(*t, kind).is_some() {
                left -= 1;
                *t += 1;
            } else {
                *t = mem.next_free().unwrap_or(*t + 1).max(*t + 1);
            }
        }
    };
    issue(read_bursts, MemClient::Values, &mut t, &mut mem);
    let loaded = mem.last_completion().max(compute);
    t = t.max(loaded);
    issue(write_bursts, MemClient::Outputs, &mut t, &mut mem);
    mem.last_completion().max(loaded)
}

/// Dense FP16 GEMV of an M x K matrix on the same hardware: all of W and x streamed, M*K/C
/// cycles of MACs overlapping them, then y written.
pub fn dense(arch: &Arch, m: u64, k: u64, energy: &EnergyTable) -> KernelRun {
    let burst = arch.memory.request_bytes as u64;
    let bursts = |bytes: u64| bytes.div_ceil(burst);
    let dense_bytes = 2 * m * k + 2 * k;
    let macs = m * k;
    let out_bursts = bursts(4 * m);
    let cycles = stream_cycles(arch, bursts(dense_bytes), dense_compute_cycles(arch, m, k), out_bursts);
    stream_run(Kernel::Dense, cycles, bursts(dense_bytes) * burst, out_bursts * burst, macs, 0, 0, energy)
}

/// The MAC cycles of dense FP16 GEMV of an M x K matrix: M*K / C (the rest of its cycles wait on
/// memory).
pub fn dense_compute_cycles(arch: &Arch, m: u64, k: u64) -> u64 {
    (m * k).div_ceil(arch.chunk_entries() as u64)
}

/// Every baseline and the core itself on one job.
pub fn run_all(arch: &Arch, job: &Job, energy: &EnergyTable) -> Result<Vec<KernelRun>, SimError> {
    let burst = arch.memory.request_bytes as u64;
    let bursts = |bytes: u64| bytes.div_ceil(burst);
    let c = arch.chunk_entries() as u64;
    let (m, k) = (job.rows as u64, job.x.len() as u64);
    let active: Vec<bool> = job.x.iter().map(|&v| job.filter.is_active(v)).collect();
    let n_active = active.iter().filter(|&&a| a).count() as u64;
    let out_bursts = bursts(4 * m);
    let mut runs = Vec::new();

    // The core, and the core without activation skipping.
    let core = simulate(arch, job)?;
    let scanned = k * job.panels.len() as u64;
    runs.push(core_run(Kernel::Lacuna, &core.counters, energy, scanned));
    let ones = vec![f16::MAX; job.x.len()]; // passes any threshold: timing only
    let mut all = job.clone();
    all.x = &ones;
    let wo = simulate(arch, &all)?;
    runs.push(core_run(Kernel::WeightOnly, &wo.counters, energy, scanned));

    runs.push(dense(arch, m, k, energy));

    // Activation sparsity only.
    let ao_bytes = 2 * m * n_active + 2 * k;
    let macs = m * n_active;
    let cycles = stream_cycles(arch, bursts(ao_bytes), macs.div_ceil(c), out_bursts);
    runs.push(stream_run(
        Kernel::ActivationOnly,
        cycles,
        bursts(ao_bytes) * burst,
        out_bursts * burst,
        macs,
        k,
        0,
        energy,
    ));

    // The Celty GPU kernel's algorithm: the core's bytes, software decode and banked scatter.
    let lanes = arch.core.lanes as u64;
    let scan_steps = 1 + lanes.trailing_zeros() as u64;
    let mut compute = 0u64;
    let mut entries = 0u64;
    let dense = job.kind == lacuna_spec::job::JobKind::Gemv;
    for pd in &job.panels {
        for (kk, _) in active.iter().enumerate().filter(|(_, &a)| a) {
            let (s, e) = (pd.colptr[kk] as u64, pd.colptr[kk + 1] as u64);
            let mut row = -1i64;
            let mut j = s / c;
            while j * c < e {
                let mut banks = [0u64; 32];
                for i in s.max(j * c)..e.min((j + 1) * c) {
                    // A gemv job's panels have no runs: every run is 0.
                    let run = if dense { 0 } else { run_at(pd.runs, i as usize) };
                    row += run as i64 + 1;
                    banks[(row as u64 % 32) as usize] += 1;
                    entries += 1;
                }
                compute += scan_steps + banks.iter().copied().max().unwrap_or(0);
                j += 1;
            }
        }
    }
    let read = core.counters.bytes.loaded();
    let cycles = stream_cycles(arch, bursts(read), compute, out_bursts);
    runs.push(stream_run(Kernel::CeltyGpu, cycles, read, out_bursts * burst, entries, k, entries, energy));

    // Flash-LLM: Tiled-CSL, no activation skipping, dense compute.
    let nnz: u64 = job
        .panels
        .iter()
        .map(|p| p.values[..p.colptr[p.colptr.len() - 1] as usize].iter().filter(|v| !is_zero(**v)).count() as u64)
        .sum();
    let tiles = m.div_ceil(64) * k.div_ceil(64);
    let fl_bytes = 4 * nnz + 4 * tiles + 2 * k;
    let macs = m * k;
    let cycles = stream_cycles(arch, bursts(fl_bytes), macs.div_ceil(c), out_bursts);
    runs.push(stream_run(Kernel::FlashLlm, cycles, bursts(fl_bytes) * burst, out_bursts * burst, macs, 0, nnz, energy));
    Ok(runs)
}

fn core_run(kernel: Kernel, k: &Counters, energy: &EnergyTable, scanned: u64) -> KernelRun {
    KernelRun {
        kernel,
        cycles: k.cycles,
        bytes_loaded: k.bytes.loaded(),
        bytes_written: k.bytes.outputs,
        energy: energy.of_core(k, scanned),
        counters: Some(*k),
    }
}

#[allow(clippy::too_many_arguments)]
fn stream_run(
    kernel: Kernel,
    cycles: u64,
    read: u64,
    written: u64,
    macs: u64,
    compares: u64,
    decodes: u64,
    energy: &EnergyTable,
) -> KernelRun {
    // Every byte read passes once through an on-chip buffer (a 32-bit write and a read per 4 bytes).
    let e = energy.of_events(read + written, 2 * read.div_ceil(4), compares, decodes, macs, macs);
    KernelRun { kernel, cycles, bytes_loaded: read, bytes_written: written, energy: e, counters: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_bound_stream_takes_one_cycle_per_burst_after_the_latency() {
        // edge: 64-byte bursts at 64 bytes per cycle, 100 cycles latency, 128 outstanding.
        let arch = Arch::preset("edge").unwrap();
        let cycles = stream_cycles(&arch, 10_000, 0, 0);
        assert_eq!(cycles, 10_000 + 100);
    }

    #[test]
    fn a_compute_bound_stream_takes_its_compute_cycles() {
        let arch = Arch::preset("edge").unwrap();
        assert_eq!(stream_cycles(&arch, 10, 50_000, 0), 50_000);
    }
}
