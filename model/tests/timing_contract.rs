//! The timing contract of docs/microarchitecture.md, checked on jobs small enough to work out by
//! hand, and the counters on jobs where their values are known.

use half::f16;
use lacuna_model::{simulate, simulate_with, Fault, Job, PanelData};
use lacuna_spec::{ActivationFilter, Activations, Arch, DenseMatrix, RlcMatrix};

/// `tiny` with 16-byte bursts on a 16-byte bus (one beat), latency 4, two requests in flight.
fn tiny() -> Arch {
    Arch::preset("tiny").unwrap()
}

/// A wide-tile variant for longer columns: 4 lanes x 256 registers = 1024 rows.
fn tall(ports: u32) -> Arch {
    let mut a = tiny();
    a.name = "tiny-tall".into();
    a.core.acc_regs_per_lane = 256;
    a.core.acc_write_ports = ports;
    a.core.lane_queue_depth = 8;
    a.core.fetch_buffer_chunks = 16;
    a.memory.max_outstanding = 16;
    a.validate().unwrap();
    a
}

/// A one-panel job over raw (possibly malformed) arrays, all nonzero activations active.
fn one_panel_job<'a>(rows: u32, values: &'a [f16], runs: &'a [u8], colptr: &'a [u32], x: &'a [f16]) -> Job<'a> {
    Job {
        kind: lacuna_spec::job::JobKind::Spmspv,
        rows,
        panel_rows: rows,
        panels: vec![PanelData { rows, values, runs, colptr }],
        x,
        filter: ActivationFilter::NONZERO,
    }
}

fn job_of(w: &DenseMatrix, x: &[f32], arch: &Arch) -> (RlcMatrix, Activations) {
    let m = RlcMatrix::encode(w, Some(arch.tile_rows())).unwrap();
    let x = Activations::new(x.iter().map(|&v| f16::from_f32(v)).collect()).unwrap();
    (m, x)
}

#[test]
fn a_one_by_one_job_takes_the_cycles_worked_out_by_hand() {
    // Addresses: x at 0, values at 16, runs at 32, colptr at 48, y at 64 (16-byte bursts).
    // t=0   act_load issues x's burst; it completes at 0 + 4 + 1 = 5.
    // t=5   the scan sees x_0 and queues column 0;   t=6 it queues the end-of-panel marker.
    // t=6   colptr_fetch takes column 0 and issues the pointer burst: complete at 11.
    // t=11  pointers known: column (0, 1) queued.    t=12 the marker follows.
    // t=12  chunk_fetch cuts the slice, issues the value burst (done 17); t=13 the run burst (18).
    // t=18  the slice enters D1; 19 D2; 20 D3; 21 multiplier; 22 route; 23 delivered to lane 0.
    // t=24  the add issues (done 27: `acc_add_latency` 3); the marker waits in route until then.
    // t=27  drain starts; t=28 it reads register row 0 and issues the y burst: complete at 33.
    let arch = tiny();
    let mut w = DenseMatrix::zeros(1, 1);
    w.set(0, 0, f16::from_f32(3.0));
    let (m, x) = job_of(&w, &[0.5], &arch);
    let r = simulate(&arch, &Job::new(&m, &x, ActivationFilter::NONZERO)).unwrap();
    assert_eq!(r.y, vec![1.5]);
    let k = r.counters;
    assert_eq!(k.cycles, 33);
    assert_eq!(k.busy, 2, "the slice and the marker each take a decoder cycle");
    assert_eq!(
        (k.bytes.activations, k.bytes.colptr, k.bytes.values, k.bytes.runs, k.bytes.outputs),
        (16, 16, 16, 16, 16)
    );
    assert_eq!(k.bytes.requests, 5);
    assert_eq!((k.slices, k.useful_entries, k.padding_entries, k.masked_slots), (1, 1, 0, 7));
}

#[test]
fn a_column_whose_activation_is_skipped_is_never_loaded() {
    let arch = tiny();
    let mut w = DenseMatrix::zeros(8, 3);
    for r in 0..8 {
        for c in 0..3 {
            w.set(r, c, f16::from_f32(1.0 + r as f32));
        }
    }
    let (m, x) = job_of(&w, &[0.0, 2.0, 0.0], &arch);
    let k = simulate(&arch, &Job::new(&m, &x, ActivationFilter::NONZERO)).unwrap().counters;
    assert_eq!(k.active_columns, 1);
    assert_eq!(k.useful_entries, 8);
    // Column 1 is entries 8..16: exactly one 16-byte value burst and one run burst.
    assert_eq!(k.bytes.values, 16);
    assert_eq!(k.bytes.runs, 16);
}

#[test]
fn all_zero_activations_load_no_weights_and_write_zeros() {
    let arch = tiny();
    let mut w = DenseMatrix::zeros(40, 5);
    w.set(3, 2, f16::ONE);
    let (m, x) = job_of(&w, &[0.0; 5], &arch);
    let r = simulate(&arch, &Job::new(&m, &x, ActivationFilter::NONZERO)).unwrap();
    assert!(r.y.iter().all(|v| v.to_bits() == 0));
    let k = r.counters;
    assert_eq!((k.slices, k.bytes.values, k.bytes.runs, k.bytes.colptr), (0, 0, 0, 0));
    // Two panels of 32 and 8 rows: 160 bytes of output in 16-byte bursts.
    assert_eq!(k.bytes.outputs, 160);
    assert_eq!(k.panels, 2);
}

/// A dense column of 1024 rows: 128 slices of 8 entries, 2 entries per lane per slice.
fn dense_column(arch: &Arch) -> lacuna_model::Counters {
    let mut w = DenseMatrix::zeros(1024, 1);
    for r in 0..1024 {
        w.set(r, 0, f16::from_f32(1.0 + (r % 7) as f32));
    }
    let (m, x) = job_of(&w, &[1.0], arch);
    let job = Job::new(&m, &x, ActivationFilter::NONZERO);
    let r = simulate(arch, &job).unwrap();
    assert_eq!(r.counters, simulate_with(arch, &job, false).unwrap().counters);
    r.counters
}

#[test]
fn a_memory_bound_column_streams_at_one_burst_per_cycle() {
    // 128 value bursts + 32 run bursts on a one-burst-per-cycle bus: about 160 cycles of transfer
    // before the tail (the drain reads 256 register rows and writes 4 KiB of y after that).
    let k = dense_column(&tall(2));
    assert_eq!((k.slices, k.useful_entries, k.masked_slots), (128, 1024, 0));
    assert_eq!((k.bytes.values, k.bytes.runs, k.bytes.outputs), (128 * 16, 32 * 16, 4096));
    let work = k.cycles - k.tail;
    assert!((160..=160 + 30).contains(&work), "{work}: {k:?}");
    assert!(k.tail >= 256, "drain reads one register row per cycle: {k:?}");
    assert!(k.stall_memory >= 30, "a slice needs 1.25 bursts: the decoder waits on memory: {k:?}");
}

#[test]
fn one_write_port_makes_the_same_column_accumulate_bound() {
    // 2 entries per lane per slice and 1 port: at least 2 cycles per slice, 256 in all.
    let k = dense_column(&tall(1));
    let work = k.cycles - k.tail;
    assert!((256..=256 + 30).contains(&work), "{work}: {k:?}");
    assert!(k.stall_backpressure >= 100, "{k:?}");
    assert!(k.acc.port_limited >= 128 * 4 / 2, "{k:?}");
}

#[test]
fn the_cycle_classes_add_up_to_the_cycles() {
    for arch in [tall(1), tall(2)] {
        let k = dense_column(&arch);
        assert_eq!(k.busy + k.stall_memory + k.stall_columns + k.stall_backpressure + k.stall_drain + k.tail, k.cycles);
    }
}

#[test]
fn a_run_past_the_end_of_its_column_raises_a_fault_and_ends() {
    let arch = tiny();
    // 4 rows; one entry whose run (15) puts it at row 15.
    let values = [f16::ONE, f16::ZERO, f16::ZERO, f16::ZERO, f16::ZERO, f16::ZERO, f16::ZERO, f16::ZERO];
    let runs = [0x0f, 0, 0, 0];
    let colptr = [0u32, 1];
    let x = [f16::ONE];
    let job = one_panel_job(4, &values, &runs, &colptr, &x);
    let r = simulate(&arch, &job).unwrap();
    assert!(matches!(r.fault, Some(Fault::RunOverrunsColumn { panel: 0, col: 0, row: 15, .. })), "{:?}", r.fault);
    assert!(r.counters.cycles < 100);
}

#[test]
fn a_run_far_past_the_tile_raises_a_fault_without_touching_a_missing_register() {
    let arch = tiny(); // 32-row tile
                       // Ten padding-like runs of 15 from row 0: rows 0, 16, 32, ... far past the 4-row panel.
    let values = [f16::ONE; 16];
    let runs = [0xff; 8];
    let colptr = [0u32, 10];
    let x = [f16::ONE];
    let job = one_panel_job(4, &values, &runs, &colptr, &x);
    let r = simulate(&arch, &job).unwrap();
    assert!(matches!(r.fault, Some(Fault::RunOverrunsColumn { row: 15, .. })), "{:?}", r.fault);
}

#[test]
fn column_pointers_that_go_backwards_or_past_the_arrays_raise_a_fault() {
    let arch = tiny();
    let values = [f16::ONE; 8];
    let runs = [0u8; 4];
    let x = [f16::ONE, f16::ONE];
    for colptr in [[0u32, 5, 3], [0, 2, 40]] {
        let job = one_panel_job(8, &values, &runs, &colptr, &x);
        let r = simulate(&arch, &job).unwrap();
        assert!(matches!(r.fault, Some(Fault::BadColumnPointer { col: 1, .. })), "{colptr:?}: {:?}", r.fault);
    }
}

#[test]
fn a_panel_taller_than_the_tile_or_an_x_larger_than_the_sram_is_refused() {
    let arch = tiny();
    let w = DenseMatrix::zeros(64, 2);
    let m = RlcMatrix::encode(&w, None).unwrap();
    let x = Activations::new(vec![f16::ONE; 2]).unwrap();
    let err = simulate(&arch, &Job::new(&m, &x, ActivationFilter::NONZERO)).unwrap_err();
    assert!(err.to_string().contains("tile of 32 rows"), "{err}");
    let w = DenseMatrix::zeros(4, 300);
    let m = RlcMatrix::encode(&w, None).unwrap();
    let x = Activations::new(vec![f16::ONE; 300]).unwrap();
    let err = simulate(&arch, &Job::new(&m, &x, ActivationFilter::NONZERO)).unwrap_err();
    assert!(err.to_string().contains("activation SRAM"), "{err}");
}

mod malformed {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Arbitrary arrays: the model ends every job, with or without a fault, and never panics or
        /// reaches its cycle limit.
        #[test]
        fn any_stream_ends_the_job_without_a_hang_or_a_panic(
            rows in 1u32..40,
            runs in proptest::collection::vec(any::<u8>(), 0..24),
            colptr_raw in proptest::collection::vec(0u32..60, 1..8),
            xs in proptest::collection::vec(prop_oneof![Just(0.0f32), -2.0f32..2.0], 1..8),
        ) {
            let arch = tiny();
            let rows = rows.min(arch.tile_rows());
            let k = xs.len().min(colptr_raw.len());
            let values = vec![f16::ONE; runs.len() * 2];
            let mut colptr = colptr_raw[..k].to_vec();
            colptr.insert(0, 0);
            let x: Vec<f16> = xs[..k].iter().map(|&v| f16::from_f32(v)).collect();
            let job = one_panel_job(rows, &values, &runs, &colptr, &x);
            let r = simulate(&arch, &job);
            prop_assert!(r.is_ok(), "{:?}", r.err());
        }
    }
}

#[test]
fn a_small_file_of_many_empty_panels_is_refused_before_its_output_is_allocated() {
    // Once: a valid .rlc of 200,000 empty panels took 653 MB at `simulate`, a larger one aborted.
    let arch = Arch::preset("edge").unwrap();
    let panel_rows = arch.tile_rows();
    let empty = || lacuna_spec::RlcCsc::from_parts(panel_rows, 1, vec![], vec![], vec![0, 0]).unwrap();
    let panels = 5000;
    let m = RlcMatrix::from_panels(panels * panel_rows, panel_rows, (0..panels).map(|_| empty()).collect()).unwrap();
    assert!(lacuna_spec::write_rlc(&m).len() < 200_000, "the file is small");
    let x = Activations::new(vec![f16::ONE]).unwrap();
    let e = simulate(&arch, &Job::new(&m, &x, ActivationFilter::NONZERO)).unwrap_err();
    assert!(matches!(e, lacuna_model::SimError::TooManyRows { .. }), "{e}");
    assert!(e.to_string().contains("at most 16777216"), "{e}");
}
