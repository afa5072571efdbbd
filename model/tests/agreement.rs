//! The model's output equals the column-order golden bit for bit, on random jobs and on both
//! presets; bulk skipping changes neither the output nor any counter.

use half::f16;
use lacuna_golden::column_order;
use lacuna_model::{simulate, simulate_with, Job};
use lacuna_spec::dense_panels::DensePanels;
use lacuna_spec::{ActivationFilter, Activations, Arbitration, Arch, DenseMatrix, RlcMatrix};
use proptest::prelude::*;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn job() -> impl Strategy<Value = (DenseMatrix, Vec<f16>)> {
    let value = prop_oneof![6 => Just(0.0f32), 2 => -2.0f32..2.0, 1 => -60000.0f32..60000.0];
    (1usize..100, 1usize..60).prop_flat_map(move |(rows, cols)| {
        (proptest::collection::vec(value.clone(), rows * cols), proptest::collection::vec(value.clone(), cols))
            .prop_map(move |(w, x)| {
                let w = DenseMatrix::new(rows, cols, w.into_iter().map(f16::from_f32).collect()).unwrap();
                (w, x.into_iter().map(f16::from_f32).collect())
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_gemv_job_over_dense_panels_is_bit_identical_to_the_golden_and_reads_no_run_lengths(
        (w, x) in job(), threshold in 0.0f32..1.5
    ) {
        let arch = Arch::preset("tiny").unwrap();
        let m = RlcMatrix::encode(&w, Some(arch.tile_rows())).unwrap();
        let d = DensePanels::from_rlc(&m).unwrap();
        let x = Activations::new(x).unwrap();
        let filter = ActivationFilter { threshold: f16::from_f32(threshold) };
        let job = Job::gemv(&d, &x, filter);
        let r = simulate(&arch, &job).unwrap();
        prop_assert!(r.fault.is_none());
        // The zero weights a dense panel stores add +-0.0: the golden over the RLC-CSC weights
        // is the gemv job's result bit for bit.
        prop_assert_eq!(bits(&r.y), bits(&column_order(&m, &x, filter).unwrap()));
        prop_assert_eq!(simulate_with(&arch, &job, false).unwrap().counters, r.counters);
        let k = r.counters;
        prop_assert_eq!(k.bytes.runs, 0);
        let active = x.as_slice().iter().filter(|&&v| filter.is_active(v)).count() as u64;
        prop_assert_eq!(k.useful_entries + k.padding_entries, active * w.rows() as u64, "every row of every active column");
    }

    #[test]
    fn the_model_is_bit_identical_to_the_golden_on_the_tiny_arch((w, x) in job(), threshold in 0.0f32..1.5) {
        let arch = Arch::preset("tiny").unwrap();
        let m = RlcMatrix::encode(&w, Some(arch.tile_rows())).unwrap();
        let x = Activations::new(x).unwrap();
        let filter = ActivationFilter { threshold: f16::from_f32(threshold) };
        let job = Job::new(&m, &x, filter);
        let r = simulate(&arch, &job).unwrap();
        prop_assert!(r.fault.is_none());
        prop_assert_eq!(bits(&r.y), bits(&column_order(&m, &x, filter).unwrap()));
        let slow = simulate_with(&arch, &job, false).unwrap();
        prop_assert_eq!(slow.counters, r.counters);
        let k = r.counters;
        prop_assert_eq!(k.busy + k.stall_memory + k.stall_columns + k.stall_backpressure + k.stall_drain + k.tail, k.cycles);
        prop_assert_eq!(k.useful_entries as usize, m.decode().data().iter().enumerate()
            .filter(|(i, v)| v.to_bits() & 0x7fff != 0 && filter.is_active(x.as_slice()[i % w.cols()])).count());
    }
}

/// A `rows` x `cols` matrix and a vector with a `zeros` share of zeros, the rest uniform in
/// (-1, 1) rounded to FP16 (never zero), from `seed`.
fn random_job(rows: usize, cols: usize, zeros: f64, seed: u64) -> (DenseMatrix, Activations) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut draw = |_| {
        if rng.random_bool(zeros) {
            f16::ZERO
        } else {
            let v: f32 = rng.random_range(-1.0..1.0);
            f16::from_f32(if v.abs() < 1e-3 { 0.5 } else { v })
        }
    };
    let w = DenseMatrix::new(rows, cols, (0..rows * cols).map(&mut draw).collect()).unwrap();
    let x = Activations::new((0..cols).map(&mut draw).collect()).unwrap();
    (w, x)
}

#[test]
fn on_a_layer_without_zero_weights_a_gemv_job_moves_a_fifth_fewer_bytes_and_is_that_much_faster() {
    let arch = Arch::preset("edge").unwrap();
    // Synthetic: 5000 x 700, no zero weights, 30 % zero activations (both layouts skip them).
    let (w, x) = random_job(5000, 700, 0.0, 9);
    let x = Activations::new(
        x.as_slice().iter().enumerate().map(|(i, &v)| if i % 10 < 3 { f16::ZERO } else { v }).collect(),
    )
    .unwrap();
    let m = RlcMatrix::encode(&w, Some(arch.tile_rows())).unwrap();
    let d = DensePanels::from_rlc(&m).unwrap();
    let f = ActivationFilter::NONZERO;
    let sparse = simulate(&arch, &Job::new(&m, &x, f)).unwrap();
    let dense = simulate(&arch, &Job::gemv(&d, &x, f)).unwrap();
    assert_eq!(bits(&dense.y), bits(&sparse.y));
    let (s, g) = (sparse.counters, dense.counters);
    assert_eq!(g.bytes.runs, 0);
    assert_eq!(g.bytes.values, s.bytes.values, "the same value bursts");
    let ratio = g.cycles as f64 / s.cycles as f64;
    // Values are 2 of RLC-CSC's 2.5 bytes an entry: the memory-bound job takes ~80 % of the cycles.
    assert!((0.78..0.86).contains(&ratio), "gemv {} vs spmspv {} cycles ({ratio:.3})", g.cycles, s.cycles);
    let roofline = g.bytes.loaded() + g.bytes.outputs;
    let floor = roofline.div_ceil(arch.memory.bytes_per_cycle as u64);
    assert!(g.cycles as f64 <= 1.1 * floor as f64, "gemv {} cycles vs a byte floor of {floor}", g.cycles);
}

#[test]
fn the_model_is_bit_identical_to_the_golden_on_the_edge_arch() {
    let arch = Arch::preset("edge").unwrap();
    for level in [0.3, 0.7] {
        // Synthetic, as the paper's workloads (5000 x 700 spans two panels of the edge tile):
        // a `level` share of weights and activations zero, the rest real-valued FP16.
        let (w, x) = random_job(5000, 700, level, 5);
        let m = RlcMatrix::encode(&w, Some(arch.tile_rows())).unwrap();
        let job = Job::new(&m, &x, ActivationFilter::NONZERO);
        let r = simulate(&arch, &job).unwrap();
        assert_eq!(bits(&r.y), bits(&column_order(&m, &x, ActivationFilter::NONZERO).unwrap()));
        assert_eq!(r.counters, simulate_with(&arch, &job, false).unwrap().counters);
        eprintln!("{level}: {:?}", r.counters);
    }
}

/// Any arch that validates, over the whole range `Arch::validate` allows for the sizes that shape
/// the pipeline (lanes to 256, registers to 4096, queues, request sizes to 4096 bytes, latencies to
/// 100,000 cycles, any clock), powers of two where the spec asks for them; built so that nearly
/// every draw is valid (the rest are skipped, and counted by proptest).
fn any_arch() -> impl Strategy<Value = Arch> {
    let core =
        (0u32..=8, 0u32..=3, 0u32..=12, 1u32..=16, 2u32..=64, 2u32..=1024, 0u32..=6, 1u32..=64, 1u32..=64, 1u32..=16);
    let memory =
        (1u32..=4096, prop_oneof![0u32..=20, 0u32..=100_000], 1u32..=1024, 4u32..=12, 60u32..=1024, 2u32..=1024);
    (core, memory, 1u32..=10_000, any::<bool>()).prop_map(
        |((l, e, r, ports, lq, aq, s, cq, fb, lat), (bpc, mlat, out, req, act_words, cp_words), clock, rr)| {
            let mut arch = Arch::preset("tiny").unwrap();
            arch.name = "random".into();
            arch.clock_mhz = clock;
            let c = &mut arch.core;
            c.lanes = 1 << l;
            // A chunk is whole 8-entry value words: lanes * entries >= 8.
            c.entries_per_lane = (1u32 << e).max(8 >> l.min(3));
            // A tile holds at most 2^20 rows.
            c.acc_regs_per_lane = 1 << r.min(20 - l);
            c.acc_write_ports = ports.min(c.lanes * c.entries_per_lane);
            c.lane_queue_depth = lq;
            c.activation_queue_depth = aq;
            c.scan_width = (1u32 << s).min(1 << aq.ilog2());
            c.column_queue_depth = cq;
            c.fetch_buffer_chunks = fb;
            c.acc_add_latency = lat;
            let m = &mut arch.memory;
            m.bytes_per_cycle = bpc;
            m.latency_cycles = mlat;
            m.max_outstanding = out;
            m.request_bytes = 1 << req;
            m.arbitration = if rr { Arbitration::RoundRobin } else { Arbitration::FixedPriority };
            arch.sram.activation_bytes = 2 * act_words;
            arch.sram.colptr_bytes = 4 * cp_words;
            arch
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every arch `Arch::validate` accepts runs every job to completion with the golden's bits
    /// (`edge` with a scan group wider than its activation queue once validated and then waited
    /// for ever).
    #[test]
    fn every_valid_arch_runs_every_small_job_to_the_golden_bits(
        arch in any_arch(),
        (w, x) in job(),
        threshold in 0.0f32..1.5,
    ) {
        prop_assume!(arch.validate().is_ok());
        prop_assume!(w.cols() as u32 <= arch.max_cols());
        let m = RlcMatrix::encode(&w, Some(arch.tile_rows())).unwrap();
        let x = Activations::new(x).unwrap();
        let filter = ActivationFilter { threshold: f16::from_f32(threshold) };
        let job = Job::new(&m, &x, filter);
        let r = simulate(&arch, &job).map_err(|e| TestCaseError::fail(format!("{arch:?}: {e}")))?;
        prop_assert!(r.fault.is_none(), "{:?}", r.fault);
        prop_assert_eq!(bits(&r.y), bits(&column_order(&m, &x, filter).unwrap()));
    }
}
