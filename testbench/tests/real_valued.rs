//! Co-simulation where the order of the additions matters. With small exact values (every sum
//! exact whatever its order) RTL and model could add in different orders and still agree; here
//! the data is real-valued — Gaussian FP16 random jobs, and slices of SmolLM2's real layers with
//! real activations from the committed decode trace — so they agree only if they add in the
//! golden's order. An engine whose y was summed in another order (the RTL's requests and cycles,
//! with y from the same products added with two columns swapped: what an RTL that accumulated in
//! another order would write) is shown to fail the check on real-valued data (and, for contrast,
//! to pass it on exact data): the comparison is sensitive to the order of additions.

use half::f16;
use lacuna_spec::{Activations, Arch, DenseMatrix, RlcMatrix};
use lacuna_testbench::cosim::{check_case, Case, Engine, EngineError, Outcome, RtlEngine};

fn rtl() -> RtlEngine {
    RtlEngine { max_cycles: 1_000_000 }
}

/// The Verilated core's run with its y replaced by the same products summed in another order (the
/// first and last active columns swapped): the y an RTL with a reordered accumulation would
/// write. Requests and cycles are the RTL's own, so only the order of additions differs.
struct SwappedOrder(RtlEngine);

impl Engine for SwappedOrder {
    fn name(&self) -> &'static str {
        "rtl-swapped-order"
    }
    fn run(&self, arch: &Arch, case: &Case) -> Result<Outcome, EngineError> {
        let mut o = self.0.run(arch, case)?;
        if let Some(y) = swapped_order_y(case) {
            o.y = y;
        }
        Ok(o)
    }
}

/// The golden's y with the first and last active columns' products added in each other's turn.
fn swapped_order_y(case: &Case) -> Option<Vec<f32>> {
    let m = case.matrix()?;
    let active: Vec<usize> = (0..case.x.len()).filter(|&k| case.filter.is_active(case.x[k])).collect();
    let (&a, &b) = (active.first()?, active.last()?);
    if active.len() < 3 {
        return None;
    }
    let mut perm: Vec<usize> = (0..case.x.len()).collect();
    perm.swap(a, b);
    let w = m.decode();
    let mut swapped = DenseMatrix::zeros(w.rows(), w.cols());
    for r in 0..w.rows() {
        for (j, &k) in perm.iter().enumerate() {
            swapped.set(r, j, w.get(r, k));
        }
    }
    let x = Activations::new(perm.iter().map(|&k| case.x[k]).collect()).ok()?;
    let m = RlcMatrix::encode(&swapped, Some(m.panel_rows())).ok()?;
    lacuna_golden::spmspv::column_order(&m, &x, case.filter).ok()
}

#[test]
fn real_valued_random_jobs_agree_three_ways_and_differ_from_dense_as_real_sums_do() {
    for (preset, jobs) in [("tiny", 400u64), ("edge", 30)] {
        let arch = Arch::preset(preset).unwrap();
        let mut largest = 0.0f64;
        for seed in (0..2 * jobs).filter(|s| s % 2 == 1) {
            let case = Case::random(&arch, seed);
            let rep = check_case(&arch, &case, &rtl());
            assert!(rep.passed(), "{preset} seed {seed}: {rep:#?}");
            largest = largest.max(rep.dense_bound_fraction);
        }
        // Exact data gives 0 here on every case; real-valued sums round.
        assert!(largest > 0.0, "{preset}: no real-valued case differed from dense");
        eprintln!("{preset}: {jobs} real-valued jobs, largest error {largest:.4} of the FP32 bound");
    }
}

#[test]
fn a_swapped_accumulation_order_fails_on_real_valued_data_and_would_pass_on_exact_data() {
    let arch = Arch::preset("tiny").unwrap();
    let mutant = SwappedOrder(rtl());
    let (mut real, mut real_caught, mut exact, mut exact_caught) = (0, 0, 0, 0);
    for seed in 0..300u64 {
        let case = Case::random(&arch, seed);
        if case.malformed || swapped_order_y(&case).is_none() {
            continue;
        }
        let caught = !check_case(&arch, &case, &mutant).passed();
        if seed % 2 == 1 {
            real += 1;
            real_caught += caught as usize;
        } else {
            exact += 1;
            exact_caught += caught as usize;
        }
    }
    eprintln!("swapped order caught on {real_caught} of {real} real-valued and {exact_caught} of {exact} exact jobs");
    assert!(real >= 50 && exact >= 50, "{real} / {exact} jobs with three active columns");
    // One failing case fails the suite; most real-valued jobs catch it on their own (the rest
    // are too small: the swapped columns share no row with a third product, or round alike).
    assert!(real_caught * 2 >= real, "only {real_caught} of {real} real-valued jobs caught the mutation");
    assert_eq!(exact_caught, 0, "exact sums do not depend on the order");
}

/// Slices of SmolLM2-135M's first block (real weights, FP16) with the real activations the
/// committed decode trace recorded for their input, and the trace's thresholds.
#[test]
fn slices_of_real_layers_with_real_activations_agree_three_ways() {
    let path = match lacuna_compiler::models::SMOLLM2_135M.locate() {
        Ok(p) => p,
        Err(e) if std::env::var("LACUNA_REQUIRE_MODELS").as_deref() == Ok("1") => panic!("{e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let ckpt = lacuna_compiler::checkpoint::Checkpoint::open(&path).unwrap();
    let trace_path = concat!(env!("CARGO_MANIFEST_DIR"), "/../traces/smollm2-135m-w50-a50.lctr");
    let trace = lacuna_spec::trace::read_trace(&std::fs::read(trace_path).unwrap()).unwrap();
    // (arch, layer, rows, columns): column ranges the arch's activation buffer holds.
    let slices = [
        ("tiny", "blk.0.attn_q", 0..128, 0..256),
        ("tiny", "blk.0.ffn_down", 64..160, 256..512),
        ("edge", "blk.0.attn_q", 0..512, 0..576),
        ("edge", "blk.0.ffn_down", 0..256, 0..1536),
    ];
    for (preset, layer, rows, cols) in slices {
        let arch = Arch::preset(preset).unwrap();
        let (i, input) = trace
            .header
            .inputs
            .iter()
            .enumerate()
            .find(|(_, inp)| inp.readers.iter().any(|r| r.name == layer))
            .unwrap_or_else(|| panic!("the trace has no input of {layer}"));
        let reader = input.readers.iter().find(|r| r.name == layer).unwrap();
        let filter = lacuna_spec::ActivationFilter { threshold: f16::from_bits(reader.threshold_bits) };
        let w = ckpt.weights[ckpt.graph.weights.iter().position(|t| t.tensor == format!("{layer}.weight")).unwrap()]
            .clone();
        let mut dense = DenseMatrix::zeros(rows.len(), cols.len());
        for (r, row) in rows.clone().enumerate() {
            for (c, col) in cols.clone().enumerate() {
                dense.set(r, c, f16::from_f32(w.data[row * w.cols + col]));
            }
        }
        let m = RlcMatrix::encode(&dense, Some(arch.tile_rows())).unwrap();
        let mut largest = 0.0f64;
        for (s, step) in trace.steps.iter().enumerate() {
            let x = step[i][cols.clone()].to_vec();
            let name = format!("{layer}[{rows:?}, {cols:?}] step {s}");
            let case = Case::from_matrix(name.clone(), &m, x, filter);
            let rep = check_case(&arch, &case, &rtl());
            assert!(rep.passed(), "{preset} {name}: {rep:#?}");
            largest = largest.max(rep.dense_bound_fraction);
        }
        assert!(largest > 0.0, "{preset} {layer}: the real slice summed exactly");
        eprintln!("{preset} {layer} {rows:?} x {cols:?}: agrees; largest error {largest:.4} of the FP32 bound");
    }
}
