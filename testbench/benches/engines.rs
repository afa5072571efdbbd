//! Speed of the RTL under Verilator against the cycle model, on the same jobs, side by side in one
//! run: simulated cycles per second of each engine (criterion's throughput, elements = model
//! cycles of the job set) and so their ratio. Jobs: one 2048x2048 spMspV at 70/70 dual sparsity on
//! `edge` (synthetic Gaussian workload, `lacuna_compiler::workload`), and 50 random `tiny` jobs
//! (`cosim::Case::random`, synthetic). The model runs with bulk skipping (as `lacuna simulate`)
//! and without it (every cycle evaluated, as the RTL must). Results: docs/results.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lacuna_compiler::workload::{Shape, SyntheticWorkload};
use lacuna_model::{simulate_with, Job};
use lacuna_spec::{ActivationFilter, Arch};
use lacuna_testbench::core_engine::run_core;
use lacuna_testbench::cosim::Case;
use std::time::Duration;

fn group(c: &mut Criterion, name: &str, arch: &Arch, jobs: &[Job]) {
    let cycles: u64 = jobs.iter().map(|j| simulate_with(arch, j, true).unwrap().counters.cycles).sum();
    eprintln!("{name}: {} jobs, {cycles} simulated cycles", jobs.len());
    let mut g = c.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(cycles));
    g.bench_function("model_skipping", |b| {
        b.iter(|| jobs.iter().map(|j| simulate_with(arch, j, true).unwrap().counters.cycles).sum::<u64>())
    });
    g.bench_function("model_every_cycle", |b| {
        b.iter(|| jobs.iter().map(|j| simulate_with(arch, j, false).unwrap().counters.cycles).sum::<u64>())
    });
    g.bench_function("rtl_verilator", |b| {
        b.iter(|| jobs.iter().map(|j| run_core(arch, j, 50_000_000, None).unwrap().cycles).sum::<u64>())
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let edge = Arch::preset("edge").unwrap();
    let w = SyntheticWorkload::new(Shape { rows: 2048, cols: 2048 }, 1, 0.7, 0.7);
    let m = lacuna_compiler::encode_parallel(&w.weights, Some(edge.tile_rows())).unwrap();
    let job = Job::new(&m, &w.activations, ActivationFilter::NONZERO);
    group(c, "engines_edge_2048x2048_70x70", &edge, &[job]);

    let tiny = Arch::preset("tiny").unwrap();
    let cases: Vec<Case> = (0..50).map(|s| Case::random(&tiny, s)).collect();
    let jobs: Vec<Job> = cases.iter().map(|c| c.job()).collect();
    group(c, "engines_tiny_random50", &tiny, &jobs);
}

criterion_group!(benches, bench);
criterion_main!(benches);
