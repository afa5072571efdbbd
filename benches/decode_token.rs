//! One SmolLM2-135M decode token, end to end on the cycle model, on one thread: all 211 linear
//! layers of a real decode step (50 % Wanda weights, 50 % calibrated activation thresholds, the
//! edge arch), each simulated with the step's real activations. Target: under 1 s per token.
//!
//! Needs the model in the cache (scripts/fetch-models.sh); without it the bench says so and
//! measures nothing.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::compile::{compile, CompileOptions};
use lacuna_compiler::models::SMOLLM2_135M;
use lacuna_compiler::passes::prune_weights::PruneMethod;
use lacuna_model::energy::EnergyTable;
use lacuna_model::program::{dense_baselines, run_step};
use lacuna_spec::program::Program;
use lacuna_spec::trace::{read_trace, write_trace};
use lacuna_spec::Arch;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let path = match SMOLLM2_135M.locate() {
        Ok(p) => p,
        Err(e) => return eprintln!("decode_token: skipped: {e}"),
    };
    let mut opts = CompileOptions::new(Arch::preset("edge").unwrap(), 0.5, PruneMethod::Wanda, 0.5);
    opts.calibration_docs = 8;
    opts.held_out_docs = 2;
    opts.generate = 1;
    let compiled = compile(Checkpoint::open(&path).unwrap(), &opts, |s| eprintln!("decode_token: {s}")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    compiled.program.write(dir.path(), &compiled.image).unwrap();
    let p = Program::read(dir.path()).unwrap();
    let trace = read_trace(&write_trace(&compiled.trace)).unwrap();
    drop(compiled);
    let energy = EnergyTable::default();
    let dense = dense_baselines(&p, &energy);
    let step = trace.steps.len() - 1;
    let cycles: u64 = run_step(&p, &trace, step, &energy, &dense).unwrap().total(|l| l.cycles);
    eprintln!("decode_token: one token = {cycles} simulated cycles over {} layers", p.program.layers.len());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut g = c.benchmark_group("decode_token");
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(cycles));
    g.bench_function("smollm2_135m_w50_a50_edge_one_thread", |b| {
        b.iter(|| pool.install(|| run_step(&p, &trace, step, &energy, &dense).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
