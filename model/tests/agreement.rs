//! The model's output equals the column-order golden bit for bit, on random jobs and on both
//! presets; bulk skipping changes neither the output nor any counter.

use half::f16;
use lacuna_golden::column_order;
use lacuna_model::{simulate, simulate_with, Job};
use lacuna_spec::{ActivationFilter, Activations, Arch, DenseMatrix, RlcMatrix};
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

#[test]
fn the_model_is_bit_identical_to_the_golden_on_the_edge_arch() {
    let arch = Arch::preset("edge").unwrap();
    let shape = lacuna_compiler::workload::Shape { rows: 5000, cols: 700 };
    for level in [0.3, 0.7] {
        let wl = lacuna_compiler::workload::SyntheticWorkload::new(shape, 5, level, level);
        let m = RlcMatrix::encode(&wl.weights, Some(arch.tile_rows())).unwrap();
        let job = Job::new(&m, &wl.activations, ActivationFilter::NONZERO);
        let r = simulate(&arch, &job).unwrap();
        assert_eq!(bits(&r.y), bits(&column_order(&m, &wl.activations, ActivationFilter::NONZERO).unwrap()));
        assert_eq!(r.counters, simulate_with(&arch, &job, false).unwrap().counters);
        eprintln!("{level}: {:?}", r.counters);
    }
}
