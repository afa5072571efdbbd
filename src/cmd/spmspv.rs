//! `lacuna spmspv`: the golden and CPU spMspV kernels on the Celty workloads, and with
//! `--engine gpu|all` the GPU kernels beside cuBLAS ([`super::spmspv_gpu`]).
//!
//! For each shape and sparsity level it draws the synthetic workload, encodes it, runs the
//! column-order golden, the CPU kernel and the dense f32 GEMV (faer) side by side on the same
//! threads, checks the kernel against the golden bit for bit and the golden against the dense f64
//! reference within the FP32 summation bound, and reports bytes and speedups. Times are medians
//! of `--reps` runs measured in this process; only their ratios mean anything across machines.

use crate::cmd::Percent;
use crate::table::Table;
use anyhow::{bail, Result};
use lacuna_compiler::workload::{Shape, SyntheticWorkload, PAPER_SHAPES, PROVENANCE};
use lacuna_golden::dense::{DenseF16Gemv, FaerGemv};
use lacuna_golden::{check_against_dense, column_order, CpuKernel};
use lacuna_spec::ActivationFilter;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `lacuna spmspv`.
#[derive(clap::Args)]
pub struct Args {
    /// Weight shapes MxK (default: the six shapes of the Celty paper).
    #[arg(long, value_delimiter = ',')]
    shape: Vec<Shape>,
    /// Dual sparsity levels in percent: x % of weights pruned and x % of activations zeroed.
    #[arg(long, value_delimiter = ',', default_values = ["30", "50", "70"])]
    sparsity: Vec<Percent>,
    /// Seed of the synthetic workloads.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Thread counts to time (default: 1 and all available cores).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Timed repetitions per kernel (interleaved with the other kernel's); the median is reported.
    #[arg(long, default_value_t = 9)]
    reps: usize,
    /// Print JSON instead of a table: an array of rows (one per shape, level and thread count
    /// for cpu, per shape, level and kernel for gpu); with `all`, {"cpu": [...], "gpu": [...]}.
    #[arg(long)]
    json: bool,
    /// Where to run: the CPU kernel against faer (cpu), the GPU kernels against cuBLAS (gpu), or both.
    #[arg(long, value_enum, default_value_t = EngineArg::Cpu)]
    engine: EngineArg,
    /// Timed runs per GPU kernel (interleaved, each after an L2 flush); the median is reported.
    #[arg(long, default_value_t = 30)]
    gpu_reps: usize,
    /// Keep the fast GPU kernel's default launch setting instead of tuning it per workload.
    #[arg(long)]
    no_tune: bool,
}

/// Which engines `spmspv` runs.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EngineArg {
    Cpu,
    Gpu,
    All,
}

/// One measured row.
#[derive(Serialize)]
struct Run {
    engine: &'static str,
    shape: String,
    weight_sparsity: f64,
    act_sparsity: f64,
    threads: usize,
    nnz: u64,
    stored_entries: u64,
    padding_entries: u64,
    rlc_bytes: u64,
    dense_fp16_bytes: u64,
    bytes_loaded: u64,
    byte_ratio: f64,
    dense_f32_ms: f64,
    /// The like-for-like baseline: dense FP16 weights widened in registers, same threads.
    dense_f16_ms: f64,
    sparse_ms: f64,
    speedup_vs_dense_f32: f64,
    speedup_vs_dense_f16: f64,
    bit_exact_with_golden: bool,
    bound_max_fraction: f64,
    bound_violations: usize,
    provenance: &'static str,
}

/// Times the kernels in turn (a, b, c, a, b, c, ...) so that drift in the machine's load hits
/// all alike, and returns the median milliseconds of each.
fn median_ms_interleaved(reps: usize, kernels: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    // One untimed run of each first: page faults and cache warm-up are not the kernels' cost.
    kernels.iter_mut().for_each(|k| k());
    let mut times = vec![Vec::new(); kernels.len()];
    for _ in 0..reps.max(1) {
        for (k, t) in kernels.iter_mut().zip(&mut times) {
            let s = Instant::now();
            k();
            t.push(s.elapsed().as_secs_f64() * 1e3);
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

/// The most threads a timing may use (one pool is built per count).
pub const MAX_THREADS: usize = 1024;
/// The most timed runs per kernel.
pub const MAX_REPS: usize = 10_000;

pub fn run(a: Args) -> Result<ExitCode> {
    let shapes = if a.shape.is_empty() { PAPER_SHAPES.to_vec() } else { a.shape.clone() };
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let threads = if a.threads.is_empty() {
        if cores > 1 {
            vec![1, cores]
        } else {
            vec![1]
        }
    } else {
        a.threads.clone()
    };
    if let Some(t) = threads.iter().find(|&&t| t == 0 || t > MAX_THREADS) {
        bail!("--threads must be in 1..={MAX_THREADS}, got {t}");
    }
    for (flag, v) in [("--reps", a.reps), ("--gpu-reps", a.gpu_reps)] {
        if v == 0 || v > MAX_REPS {
            bail!("{flag} must be in 1..={MAX_REPS}, got {v}");
        }
    }
    // The GPU first: without one, one error line before any work.
    let gpu = match a.engine {
        EngineArg::Cpu => None,
        EngineArg::Gpu | EngineArg::All => Some(lacuna_gpu::Gpu::open()?),
    };
    if let Some(g) = &gpu {
        let i = g.info();
        eprintln!(
            "GPU: {} (compute {}.{}, {} SMs, L2 {} MB), kernels compiled for {}",
            i.name,
            i.compute_capability.0,
            i.compute_capability.1,
            i.sms,
            i.l2_bytes >> 20,
            i.arch
        );
    }
    let run_cpu = a.engine != EngineArg::Gpu;
    let mut gpu_runs = Vec::new();
    let pools = threads
        .iter()
        .map(|&t| rayon::ThreadPoolBuilder::new().num_threads(t).build().map(|p| (t, p)))
        .collect::<Result<Vec<_>, _>>()?;

    eprintln!("workloads: {PROVENANCE}; seed {}", a.seed);
    let mut runs = Vec::new();
    for (si, &shape) in shapes.iter().enumerate() {
        eprintln!("[{}/{}] {shape}: drawing Gaussian weights and activations", si + 1, shapes.len());
        let pair = SyntheticWorkload::dense_pair(shape, a.seed);
        for &level in &a.sparsity {
            let frac = level.fraction();
            let w = SyntheticWorkload::at_sparsity(shape, a.seed, &pair, frac, frac);
            let m = lacuna_compiler::encode_parallel(&w.weights, Some(CpuKernel::PANEL_ROWS))?;
            let stats = m.stats();
            let filter = ActivationFilter::NONZERO;
            let x = &w.activations;
            let golden = column_order(&m, x, filter)?;
            let bound = check_against_dense(&w.weights, x.as_slice(), filter, &golden);
            let job = m.job_bytes(x.as_slice(), filter);
            if let Some(g) = &gpu {
                let rows = super::spmspv_gpu::measure(g, &shape.to_string(), &w, &m, &golden, a.gpu_reps, !a.no_tune)?;
                for r in &rows {
                    eprintln!(
                        "  {level:>4}% x {level}%, GPU {}: {:.1} us, {:.2}x cuBLAS{}",
                        r.kernel,
                        r.time_us,
                        r.speedup_vs_cublas,
                        match r.bit_exact_with_golden {
                            Some(true) => ", bit-exact",
                            Some(false) => ", MISMATCH",
                            None => "",
                        }
                    );
                }
                gpu_runs.extend(rows);
            }
            if !run_cpu {
                continue; // the GPU rows carry their own checks
            }
            let faer = FaerGemv::new(&w.weights);
            let dense16 = DenseF16Gemv::new(&w.weights);
            let xf: Vec<f32> = x.as_slice().iter().map(|v| v.to_f32()).collect();
            for (t, pool) in &pools {
                let mut y = Vec::new();
                let ms = pool.install(|| {
                    median_ms_interleaved(
                        a.reps,
                        &mut [
                            &mut || y = CpuKernel::run(&m, x, filter).expect("the shape was checked by the golden run"),
                            &mut || drop(std::hint::black_box(faer.run(&xf, *t))),
                            &mut || drop(std::hint::black_box(dense16.run(&xf, *t))),
                        ],
                    )
                });
                let (sparse_ms, dense_ms, dense16_ms) = (ms[0], ms[1], ms[2]);
                let bit_exact = y.iter().zip(&golden).all(|(p, q)| p.to_bits() == q.to_bits());
                eprintln!(
                    "  {level:>4}% x {level}%, {t} thread(s): sparse {sparse_ms:.2} ms, dense f32 {dense_ms:.2} ms, dense FP16 {dense16_ms:.2} ms, {}",
                    if bit_exact { "bit-exact" } else { "MISMATCH" }
                );
                runs.push(Run {
                    engine: "cpu",
                    shape: shape.to_string(),
                    weight_sparsity: w.weight_pruning.sparsity,
                    act_sparsity: w.act_pruning.sparsity,
                    threads: *t,
                    nnz: stats.nnz,
                    stored_entries: stats.stored_entries,
                    padding_entries: stats.padding_entries,
                    rlc_bytes: stats.bytes,
                    dense_fp16_bytes: stats.dense_fp16_bytes,
                    bytes_loaded: job.total(),
                    byte_ratio: stats.dense_fp16_bytes as f64 / job.total() as f64,
                    dense_f32_ms: dense_ms,
                    dense_f16_ms: dense16_ms,
                    sparse_ms,
                    speedup_vs_dense_f32: dense_ms / sparse_ms,
                    speedup_vs_dense_f16: dense16_ms / sparse_ms,
                    bit_exact_with_golden: bit_exact,
                    bound_max_fraction: bound.max_bound_fraction,
                    bound_violations: bound.violations,
                    provenance: PROVENANCE,
                });
            }
        }
    }

    if a.json {
        match a.engine {
            EngineArg::Cpu => println!("{}", serde_json::to_string_pretty(&runs)?),
            EngineArg::Gpu => println!("{}", serde_json::to_string_pretty(&gpu_runs)?),
            EngineArg::All => {
                println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "cpu": runs, "gpu": gpu_runs }))?)
            }
        }
    } else if run_cpu {
        println!("spMspV on the Celty shapes: {PROVENANCE}; seed {}", a.seed);
        println!("sparse = lacuna CPU kernel over RLC-CSC (panels of {} rows); dense: faer f32 GEMV and lacuna's FP16 GEMV (the same FP16 weights widened in registers); same threads, median of {} interleaved runs", CpuKernel::PANEL_ROWS, a.reps);
        let mut t = Table::new(&[
            "shape",
            "W/A %",
            "nnz",
            "padding",
            "RLC/dense",
            "loaded MB",
            "byte ratio",
            "thr",
            "f32 ms",
            "FP16 ms",
            "sparse ms",
            "vs f32",
            "vs FP16",
            "golden",
            "bound",
        ]);
        for r in &runs {
            t.row(vec![
                r.shape.clone(),
                format!("{:.0}/{:.0}", r.weight_sparsity * 100.0, r.act_sparsity * 100.0),
                r.nnz.to_string(),
                r.padding_entries.to_string(),
                format!("{:.3}", r.rlc_bytes as f64 / r.dense_fp16_bytes as f64),
                format!("{:.2}", r.bytes_loaded as f64 / 1e6),
                format!("{:.2}x", r.byte_ratio),
                r.threads.to_string(),
                format!("{:.2}", r.dense_f32_ms),
                format!("{:.2}", r.dense_f16_ms),
                format!("{:.2}", r.sparse_ms),
                format!("{:.2}x", r.speedup_vs_dense_f32),
                format!("{:.2}x", r.speedup_vs_dense_f16),
                if r.bit_exact_with_golden { "bit-exact".into() } else { "MISMATCH".into() },
                format!("{:.2}", r.bound_max_fraction),
            ]);
        }
        print!("{}", t.render());
        println!("byte ratio = dense FP16 bytes / RLC-CSC bytes the job loads (active columns only); bound = largest |error| / FP32 summation bound against dense f64 (<= 1 passes)");
    }
    if !a.json {
        super::spmspv_gpu::print_table(&gpu_runs);
    }
    let failed =
        runs.iter().any(|r| !r.bit_exact_with_golden || r.bound_violations > 0) || super::spmspv_gpu::failed(&gpu_runs);
    if failed {
        eprintln!("error: a kernel disagreed with the golden reference or exceeded the error bound");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
