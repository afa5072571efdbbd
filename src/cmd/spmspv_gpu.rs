//! The GPU rows of `lacuna spmspv --engine gpu`: the golden GPU kernel, the fast kernel and
//! cuBLAS on the same workload and the same `.rlc` data as the CPU rows.
//!
//! Per workload: the golden kernel's y against the CPU golden's bits; the fast kernel and cuBLAS
//! against dense f64 within the FP32 bound; the fast kernel's launch geometry tuned on its own
//! timed runs (every [`FastParams::candidates`] setting, a few runs each), then the chosen
//! setting and cuBLAS timed side by side, interleaved, each run after an L2 flush, with CUDA
//! events (`GpuJob::time_us`); the golden kernel timed on its own (it is a reference, not a
//! contender). Times are medians.

use crate::table::Table;
use anyhow::Result;
use lacuna_compiler::workload::SyntheticWorkload;
use lacuna_golden::check_against_dense;
use lacuna_gpu::{FastParams, Gpu, Kernel};
use lacuna_spec::{ActivationFilter, RlcMatrix};
use serde::Serialize;

/// One measured GPU row.
#[derive(Serialize)]
pub struct GpuRun {
    pub shape: String,
    pub weight_sparsity: f64,
    pub act_sparsity: f64,
    pub engine: &'static str,
    pub kernel: &'static str,
    pub gpu: String,
    pub time_us: f64,
    pub speedup_vs_cublas: f64,
    /// The golden kernel against the CPU golden, bit for bit; null for kernels not meant to be
    /// bit-identical (they are checked against dense).
    pub bit_exact_with_golden: Option<bool>,
    pub max_bound_fraction: f64,
    pub bound_violations: usize,
    /// Bytes the kernel must read: the RLC-CSC of the active columns and their column pointers
    /// (sparse kernels) or the dense FP16 matrix (cuBLAS), plus x.
    pub bytes_loaded: u64,
    pub achieved_gb_per_s: f64,
    /// The fast kernel's launch setting chosen by tuning, and every candidate's median time.
    pub fast_params: Option<FastParams>,
    pub tuning_us: Vec<(FastParams, f64)>,
    pub reps: usize,
    pub provenance: &'static str,
}

/// Measures one workload on the GPU. `golden` is the CPU golden's y for `m`.
pub fn measure(
    gpu: &Gpu,
    shape: &str,
    w: &SyntheticWorkload,
    m: &RlcMatrix,
    golden: &[f32],
    reps: usize,
    tune: bool,
) -> Result<Vec<GpuRun>> {
    let filter = ActivationFilter::NONZERO;
    let x = &w.activations;
    let mut job = gpu.job(m, x, filter, Some(&w.weights), FastParams::DEFAULT)?;
    let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();

    let y_golden = job.run(Kernel::Golden)?;
    let golden_exact = bits(&y_golden) == bits(golden);
    let golden_bound = check_against_dense(&w.weights, x.as_slice(), filter, &y_golden);

    let mut tuning = Vec::new();
    let mut best = FastParams::DEFAULT;
    if tune {
        let mut best_us = f64::INFINITY;
        for p in FastParams::candidates() {
            if job.set_fast_params(p).is_err() {
                continue; // this many warps' accumulators do not fit this GPU's shared memory
            }
            let us = job.time_us(&[Kernel::Fast], 5)?[0];
            tuning.push((p, us));
            if us < best_us {
                (best, best_us) = (p, us);
            }
        }
    }
    job.set_fast_params(best)?;
    let y_fast = job.run(Kernel::Fast)?;
    let fast_bound = check_against_dense(&w.weights, x.as_slice(), filter, &y_fast);
    let y_blas = job.run(Kernel::Cublas)?;
    let blas_bound = check_against_dense(&w.weights, x.as_slice(), filter, &y_blas);

    let t = job.time_us(&[Kernel::Fast, Kernel::Cublas], reps)?;
    let (fast_us, blas_us) = (t[0], t[1]);
    let golden_us = job.time_us(&[Kernel::Golden], reps.clamp(1, 5))?[0];

    let stats = m.stats();
    let sparse_bytes = m.job_bytes(x.as_slice(), filter).total();
    // Like the sparse count (`job_bytes`: entries, pointers, x), without y.
    let dense_bytes = stats.dense_fp16_bytes + 2 * m.cols() as u64;
    let row = |kernel: Kernel, us: f64, exact: Option<bool>, bound: &lacuna_golden::BoundReport, bytes: u64| GpuRun {
        shape: shape.to_string(),
        weight_sparsity: w.weight_pruning.sparsity,
        act_sparsity: w.act_pruning.sparsity,
        engine: "gpu",
        kernel: kernel.name(),
        gpu: gpu.info().name.clone(),
        time_us: us,
        speedup_vs_cublas: blas_us / us,
        bit_exact_with_golden: exact,
        max_bound_fraction: bound.max_bound_fraction,
        bound_violations: bound.violations,
        bytes_loaded: bytes,
        achieved_gb_per_s: bytes as f64 / us / 1e3,
        fast_params: None,
        tuning_us: vec![],
        reps,
        provenance: lacuna_compiler::workload::PROVENANCE,
    };
    let mut fast = row(Kernel::Fast, fast_us, None, &fast_bound, sparse_bytes);
    fast.fast_params = Some(best);
    fast.tuning_us = tuning;
    let mut golden_row = row(Kernel::Golden, golden_us, Some(golden_exact), &golden_bound, sparse_bytes);
    golden_row.reps = reps.clamp(1, 5);
    Ok(vec![golden_row, fast, row(Kernel::Cublas, blas_us, None, &blas_bound, dense_bytes)])
}

/// The GPU rows as a table.
pub fn print_table(runs: &[GpuRun]) {
    let Some(first) = runs.first() else { return };
    println!(
        "spMspV on {} (CUDA events, median of interleaved runs, each after an L2 flush): {}",
        first.gpu, first.provenance
    );
    let mut t = Table::new(&["shape", "W/A %", "kernel", "us", "vs cuBLAS", "GB/s", "golden", "bound", "setting"]);
    for r in runs {
        t.row(vec![
            r.shape.clone(),
            format!("{:.0}/{:.0}", r.weight_sparsity * 100.0, r.act_sparsity * 100.0),
            r.kernel.to_string(),
            format!("{:.1}", r.time_us),
            format!("{:.2}x", r.speedup_vs_cublas),
            format!("{:.0}", r.achieved_gb_per_s),
            match r.bit_exact_with_golden {
                Some(true) => "bit-exact".into(),
                Some(false) => "MISMATCH".into(),
                None => "-".into(),
            },
            format!("{:.2}", r.max_bound_fraction),
            r.fast_params.map_or(String::new(), |p| format!("{}t x {}/SM, {:?}", p.threads, p.blocks_per_sm, p.merge)),
        ]);
    }
    print!("{}", t.render());
    println!("golden = deterministic GPU kernel (bit-exact with the CPU golden required); fast = Celty-style kernel, setting tuned on separate runs; cuBLAS = cublasGemmEx FP16 x FP16 -> FP32 on the dense matrix; bound = largest |error| / FP32 summation bound against dense f64 (<= 1 passes); GB/s = bytes the kernel must read / time");
}

/// Whether any GPU row failed its check (golden bits; the bound for every kernel).
pub fn failed(runs: &[GpuRun]) -> bool {
    runs.iter().any(|r| r.bit_exact_with_golden == Some(false) || r.bound_violations > 0)
}
