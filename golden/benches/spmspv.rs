//! The CPU spMspV kernel against dense f32 GEMV (faer) and dense FP16 GEMV (like for like) on the Celty shapes at 30/50/70 % dual
//! sparsity, on 1 and 2 threads. Synthetic Gaussian workloads (see `lacuna_compiler::workload`).
//!
//! `LACUNA_BENCH_SHAPES=4096x4096,4096x11008` limits the shapes (default: all six);
//! `LACUNA_BENCH_LEVELS=70` limits the levels (default: 30,50,70).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lacuna_compiler::workload::{Shape, SyntheticWorkload, PAPER_SHAPES};
use lacuna_golden::dense::{DenseF16Gemv, FaerGemv};
use lacuna_golden::{CpuKernel, Decode};
use lacuna_spec::ActivationFilter;
use std::time::Duration;

fn env_list<T: std::str::FromStr>(name: &str, default: Vec<T>) -> Vec<T> {
    match std::env::var(name) {
        // A benchmark's settings: a bad value stops it, naming the variable and the item.
        Ok(v) => v
            .split(',')
            .map(|s| s.trim().parse().unwrap_or_else(|_| panic!("{name}: {s:?} is not a valid item of {v:?}")))
            .collect(),
        Err(_) => default,
    }
}

fn bench(c: &mut Criterion) {
    let shapes: Vec<Shape> = env_list("LACUNA_BENCH_SHAPES", PAPER_SHAPES.to_vec());
    let levels: Vec<u32> = env_list("LACUNA_BENCH_LEVELS", vec![30, 50, 70]);
    let threads: Vec<usize> = env_list("LACUNA_BENCH_THREADS", vec![1, 2]);
    for shape in shapes {
        let pair = SyntheticWorkload::dense_pair(shape, 1);
        for &level in &levels {
            let f = level as f64 / 100.0;
            let w = SyntheticWorkload::at_sparsity(shape, 1, &pair, f, f);
            let m = lacuna_compiler::encode_parallel(&w.weights, Some(CpuKernel::PANEL_ROWS)).unwrap();
            let faer = FaerGemv::new(&w.weights);
            let dense16 = DenseF16Gemv::new(&w.weights);
            let xf: Vec<f32> = w.activations.as_slice().iter().map(|v| v.to_f32()).collect();
            let mut g = c.benchmark_group(format!("spmspv/{shape}/{level}x{level}"));
            g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
            for &t in &threads {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap();
                g.bench_function(BenchmarkId::new("sparse_rlc", format!("{t}t")), |b| {
                    pool.install(|| b.iter(|| CpuKernel::run(&m, &w.activations, ActivationFilter::NONZERO).unwrap()))
                });
                // The scalar decoder beside the AVX-512 one (the same where the CPU has none).
                g.bench_function(BenchmarkId::new("sparse_rlc_scalar", format!("{t}t")), |b| {
                    pool.install(|| {
                        b.iter(|| {
                            CpuKernel::run_with(&m, &w.activations, ActivationFilter::NONZERO, Decode::Scalar).unwrap()
                        })
                    })
                });
                g.bench_function(BenchmarkId::new("dense_f32_faer", format!("{t}t")), |b| {
                    pool.install(|| b.iter(|| faer.run(&xf, t)))
                });
                g.bench_function(BenchmarkId::new("dense_f16", format!("{t}t")), |b| {
                    pool.install(|| b.iter(|| dense16.run(&xf, t)))
                });
            }
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
