//! The golden spMspV, the CPU kernel and the dense references agree: bit for bit where the
//! order of additions is the same, within the stated FP32 bound against dense f64 otherwise.

use half::f16;
use lacuna_compiler::workload::{Shape, SyntheticWorkload};
use lacuna_golden::dense::{gemv_f32_sequential, FaerGemv};
use lacuna_golden::{check_against_dense, column_order, CpuKernel, Decode};
use lacuna_spec::{ActivationFilter, Activations, DenseMatrix, RlcMatrix};
use proptest::prelude::*;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A random sparse matrix and activation vector, with magnitudes over the whole FP16 range.
fn job() -> impl Strategy<Value = (DenseMatrix, Vec<f16>)> {
    let value = prop_oneof![
        3 => Just(0.0f32),
        2 => -2.0f32..2.0,
        1 => -65504.0f32..65504.0,
        1 => -1e-4f32..1e-4,
    ];
    (1usize..90, 1usize..40).prop_flat_map(move |(rows, cols)| {
        (proptest::collection::vec(value.clone(), rows * cols), proptest::collection::vec(value.clone(), cols))
            .prop_map(move |(w, x)| {
                let w = DenseMatrix::new(rows, cols, w.into_iter().map(f16::from_f32).collect()).unwrap();
                (w, x.into_iter().map(f16::from_f32).collect())
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_cpu_kernel_is_bit_identical_to_the_column_order_golden(
        (w, x) in job(), panel_rows in 1u32..100, threads in 1usize..4, threshold in 0.0f32..1.0,
    ) {
        let filter = ActivationFilter { threshold: f16::from_f32(threshold) };
        let x = Activations::new(x).unwrap();
        let golden = column_order(&RlcMatrix::encode(&w, None).unwrap(), &x, filter).unwrap();
        let m = RlcMatrix::encode(&w, Some(panel_rows)).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        // Both decoders (AVX-512 where this CPU has it, and the scalar one) give the golden's bits.
        for decode in [Decode::Auto, Decode::Scalar] {
            let fast = pool.install(|| CpuKernel::run_with(&m, &x, filter, decode).unwrap());
            prop_assert_eq!(bits(&fast), bits(&golden), "{:?}", decode);
        }
    }

    #[test]
    fn the_golden_spmspv_is_within_the_fp32_bound_of_dense_f64((w, x) in job()) {
        let filter = ActivationFilter::NONZERO;
        let y = column_order(&RlcMatrix::encode(&w, None).unwrap(), &Activations::new(x.clone()).unwrap(), filter).unwrap();
        let report = check_against_dense(&w, &x, filter, &y);
        prop_assert!(report.passed(), "{:?}", report);
    }

    #[test]
    fn the_golden_equals_a_dense_f32_gemv_that_adds_in_the_same_order((w, x) in job()) {
        // Dense f32 adds every k (zeros included); adding +-0 never changes an accumulator
        // that started at +0, so the bits agree.
        let filter = ActivationFilter::NONZERO;
        let y = column_order(&RlcMatrix::encode(&w, None).unwrap(), &Activations::new(x.clone()).unwrap(), filter).unwrap();
        prop_assert_eq!(bits(&y), bits(&gemv_f32_sequential(&w, &x, filter)));
    }
}

#[test]
fn a_skipped_column_contributes_nothing_even_when_its_weights_are_nonzero() {
    let mut w = DenseMatrix::zeros(3, 2);
    w.set(0, 0, f16::from_f32(2.0));
    w.set(0, 1, f16::from_f32(5.0));
    let x = Activations::new(vec![f16::from_f32(0.25), f16::from_f32(3.0)]).unwrap();
    let m = RlcMatrix::encode(&w, None).unwrap();
    let only_large = ActivationFilter { threshold: f16::from_f32(1.0) };
    assert_eq!(column_order(&m, &x, only_large).unwrap(), vec![15.0, 0.0, 0.0]);
    assert_eq!(column_order(&m, &x, ActivationFilter::NONZERO).unwrap(), vec![15.5, 0.0, 0.0]);
}

#[test]
fn a_wrong_activation_length_is_an_error_not_a_panic() {
    let m = RlcMatrix::encode(&DenseMatrix::zeros(4, 3), None).unwrap();
    let x = Activations::new(vec![f16::ONE; 2]).unwrap();
    assert!(column_order(&m, &x, ActivationFilter::NONZERO).is_err());
    assert!(CpuKernel::run(&m, &x, ActivationFilter::NONZERO).is_err());
}

#[test]
fn the_paper_workload_agrees_across_golden_kernel_and_faer() {
    let shape = Shape { rows: 700, cols: 1300 };
    for level in [0.3, 0.5, 0.7] {
        let wl = SyntheticWorkload::new(shape, 3, level, level);
        let filter = ActivationFilter::NONZERO;
        let m = RlcMatrix::encode(&wl.weights, Some(CpuKernel::PANEL_ROWS)).unwrap();
        let golden = column_order(&m, &wl.activations, filter).unwrap();
        for decode in [Decode::Auto, Decode::Scalar] {
            let fast = CpuKernel::run_with(&m, &wl.activations, filter, decode).unwrap();
            assert_eq!(bits(&fast), bits(&golden), "{decode:?}");
        }
        assert!(check_against_dense(&wl.weights, wl.activations.as_slice(), filter, &golden).passed());
        // faer adds in its own (blocked, vectorised) order; any order of n exact terms obeys
        // the same gamma(n - 1) bound, so it is checked against dense f64 the same way.
        let xf: Vec<f32> = wl.activations.as_slice().iter().map(|v| v.to_f32()).collect();
        let dense = FaerGemv::new(&wl.weights).run(&xf, 2);
        assert!(check_against_dense(&wl.weights, wl.activations.as_slice(), filter, &dense).passed());
    }
}
