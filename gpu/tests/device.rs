//! The kernels on a GPU, against the CPU golden and dense. Without a GPU each test reports that
//! it was skipped (and checks that the error is the one a user sees); with
//! `LACUNA_REQUIRE_GPU=1` a missing GPU fails them (`scripts/gpu-check.sh` sets it).

use half::f16;
use lacuna_compiler::workload::{Shape, SyntheticWorkload};
use lacuna_golden::check_against_dense;
use lacuna_gpu::{gpu_required, FastParams, Gpu, GpuError, Kernel};
use lacuna_spec::{ActivationFilter, Activations, DenseMatrix, RlcMatrix};

fn gpu_or_skip() -> Option<Gpu> {
    match Gpu::open() {
        Ok(g) => {
            eprintln!("GPU: {:?}", g.info());
            Some(g)
        }
        Err(e) => {
            assert!(!gpu_required(), "LACUNA_REQUIRE_GPU=1 but the GPU cannot be used: {e}");
            eprintln!("skipped: {e}");
            None
        }
    }
}

mod common;

fn random_case(seed: u64) -> (DenseMatrix, RlcMatrix, Activations, ActivationFilter) {
    let (d, m, x, filter) = common::random_case(seed, 6000, 300);
    (d, m, Activations::new(x).unwrap(), filter)
}

fn bits(y: &[f32]) -> Vec<u32> {
    y.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn the_golden_kernel_is_bit_identical_with_the_cpu_golden() {
    let Some(gpu) = gpu_or_skip() else { return };
    for seed in 0..80 {
        let (_, m, x, filter) = random_case(seed);
        let cpu = lacuna_golden::column_order(&m, &x, filter).unwrap();
        let y = gpu.spmspv(&m, &x, filter, Kernel::Golden).unwrap();
        assert_eq!(bits(&y), bits(&cpu), "seed {seed}: {}x{}, panels of {}", m.rows(), m.cols(), m.panel_rows());
    }
    // A Celty workload (Gaussian weights, magnitude-pruned, 50/50), panels of 2048 rows.
    let shape = Shape { rows: 4096, cols: 1536 };
    let pair = SyntheticWorkload::dense_pair(shape, 3);
    let w = SyntheticWorkload::at_sparsity(shape, 3, &pair, 0.5, 0.5);
    let m = RlcMatrix::encode(&w.weights, Some(2048)).unwrap();
    let cpu = lacuna_golden::column_order(&m, &w.activations, ActivationFilter::NONZERO).unwrap();
    let y = gpu.spmspv(&m, &w.activations, ActivationFilter::NONZERO, Kernel::Golden).unwrap();
    assert_eq!(bits(&y), bits(&cpu));
}

#[test]
fn the_fast_kernel_and_cublas_lie_within_the_fp32_bound_of_dense_for_every_tuning() {
    let Some(gpu) = gpu_or_skip() else { return };
    for seed in 100..130 {
        let (d, m, x, filter) = random_case(seed);
        let mut job = gpu.job(&m, &x, filter, Some(&d), FastParams::ONE_WARP).unwrap();
        let mut ran = 0;
        for p in [FastParams::ONE_WARP].into_iter().chain(FastParams::candidates()) {
            if job.set_fast_params(p).is_err() {
                continue; // this many warps' accumulators do not fit shared memory
            }
            let y = job.run(Kernel::Fast).unwrap();
            let rep = check_against_dense(&d, x.as_slice(), filter, &y);
            assert!(rep.passed(), "seed {seed}, {p:?}: {rep:?}");
            ran += 1;
        }
        // One warp's accumulators fit any panel of these cases; most candidates do too.
        assert!(ran > FastParams::candidates().len() / 2, "seed {seed}: only {ran} settings ran");
        let y = job.run(Kernel::Cublas).unwrap();
        let rep = check_against_dense(&d, x.as_slice(), filter, &y);
        assert!(rep.passed(), "seed {seed}, cuBLAS: {rep:?}");
    }
}

#[test]
fn timing_gives_one_positive_median_per_kernel() {
    let Some(gpu) = gpu_or_skip() else { return };
    let (d, m, x, filter) = random_case(7);
    // One warp a block: fits the shared memory of any GPU NVRTC 13 targets, whatever the panels.
    let mut job = gpu.job(&m, &x, filter, Some(&d), FastParams::ONE_WARP).unwrap();
    let t = job.time_us(&[Kernel::Golden, Kernel::Fast, Kernel::Cublas], 5).unwrap();
    assert_eq!(t.len(), 3);
    assert!(t.iter().all(|&v| v > 0.0 && v.is_finite()), "{t:?}");
}

#[test]
fn a_job_whose_activations_do_not_fit_or_without_its_dense_matrix_for_cublas_is_refused() {
    let Some(gpu) = gpu_or_skip() else { return };
    let (_, m, _, filter) = random_case(9);
    let short = Activations::new(vec![f16::ONE; m.cols() as usize + 1]).unwrap();
    let e = gpu.job(&m, &short, filter, None, FastParams::DEFAULT).err().unwrap();
    assert!(matches!(e, GpuError::ActivationLength { .. }), "{e}");
    let x = Activations::new(vec![f16::ONE; m.cols() as usize]).unwrap();
    let mut job = gpu.job(&m, &x, filter, None, FastParams::DEFAULT).unwrap();
    assert!(matches!(job.run(Kernel::Cublas), Err(GpuError::NoDense { .. })));
}

#[test]
fn without_a_gpu_the_error_names_what_is_missing_in_one_line() {
    match Gpu::open() {
        Ok(_) => eprintln!("a GPU is present: nothing to check"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg}");
            assert!(
                msg.starts_with("no CUDA driver found (")
                    || msg.contains("could not be loaded")
                    || msg.contains("without the `cuda` feature"),
                "{msg}"
            );
        }
    }
}
