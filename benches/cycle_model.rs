//! Speed of the cycle model: one 4096x11008 spMspV at 70/70 dual sparsity on the `edge` arch
//! (synthetic Gaussian workload). Simulated cycles per second and stored entries per second follow
//! from criterion's time and the counts printed once before the measurement.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lacuna_compiler::workload::{Shape, SyntheticWorkload};
use lacuna_model::{simulate, Job};
use lacuna_spec::{ActivationFilter, Arch};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let arch = Arch::preset("edge").unwrap();
    let shape = Shape { rows: 4096, cols: 11008 };
    let w = SyntheticWorkload::new(shape, 1, 0.7, 0.7);
    let m = lacuna_compiler::encode_parallel(&w.weights, Some(arch.tile_rows())).unwrap();
    let job = Job::new(&m, &w.activations, ActivationFilter::NONZERO);
    let k = simulate(&arch, &job).unwrap().counters;
    let entries = k.useful_entries + k.padding_entries;
    eprintln!("one job: {} simulated cycles, {} stored entries decoded", k.cycles, entries);
    let mut g = c.benchmark_group("cycle_model");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(entries));
    g.bench_function("4096x11008_70x70_edge_entries", |b| b.iter(|| simulate(&arch, &job).unwrap()));
    g.throughput(Throughput::Elements(k.cycles));
    g.bench_function("4096x11008_70x70_edge_cycles", |b| b.iter(|| simulate(&arch, &job).unwrap()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
