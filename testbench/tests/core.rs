//! The whole core RTL, Verilated, against the cycle model on random jobs: the same cycle count,
//! bit-identical y, and the same fault (kind, panel, column, row or pointers, cycle). Jobs: random
//! sparse matrices of 1-4 panels, random activations and thresholds; a quarter of them malformed
//! (a corrupted run-length byte or column pointer).

use half::f16;
use lacuna_model::{simulate, Fault, Job, PanelData};
use lacuna_spec::dense::DenseMatrix;
use lacuna_spec::{ActivationFilter, Arch, RlcMatrix};
use lacuna_testbench::core_engine::{run_core, CoreFault};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Owned arrays of one panel (possibly corrupted).
struct Panel {
    rows: u32,
    values: Vec<f16>,
    runs: Vec<u8>,
    colptr: Vec<u32>,
}

/// Runs one random job on both; returns whether it faulted.
fn core_matches_the_model(preset: &str, seed: u64) -> bool {
    let arch = Arch::preset(preset).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let tile = arch.tile_rows() as usize;
    let rows = rng.random_range(1..=4 * tile);
    let cols = rng.random_range(1..=(arch.max_cols() as usize).min(96));
    let density = rng.random_range(0.0..0.5);
    let mut dense = DenseMatrix::zeros(rows, cols);
    for r in 0..rows {
        for k in 0..cols {
            if rng.random_bool(density) {
                dense.set(r, k, f16::from_f32(rng.random_range(-8i32..=8) as f32 * 0.25));
            }
        }
    }
    let m = RlcMatrix::encode(&dense, Some(tile as u32)).unwrap();
    let mut panels: Vec<Panel> = m
        .panels()
        .iter()
        .map(|p| Panel {
            rows: p.rows(),
            values: p.values().to_vec(),
            runs: p.runs().to_vec(),
            colptr: p.colptr().to_vec(),
        })
        .collect();
    let malformed = rng.random_bool(0.25);
    if malformed {
        let p = rng.random_range(0..panels.len());
        let panel = &mut panels[p];
        if rng.random_bool(0.5) && !panel.runs.is_empty() {
            let i = rng.random_range(0..panel.runs.len());
            panel.runs[i] = rng.random();
        } else {
            let i = rng.random_range(0..panel.colptr.len());
            panel.colptr[i] = rng.random_range(0..=panel.values.len() as u32 + 4);
        }
    }
    let x: Vec<f16> = (0..cols)
        .map(|_| if rng.random_bool(0.3) { f16::ZERO } else { f16::from_f32(rng.random_range(-4i32..=4) as f32 * 0.5) })
        .collect();
    let filter = ActivationFilter { threshold: f16::from_f32(rng.random_range(0i32..=2) as f32 * 0.5) };
    let job = Job {
        rows: rows as u32,
        panel_rows: tile as u32,
        panels: panels
            .iter()
            .map(|p| PanelData { rows: p.rows, values: &p.values, runs: &p.runs, colptr: &p.colptr })
            .collect(),
        x: &x,
        filter,
    };

    let at = |what: &str| format!("{preset} seed {seed}: {what}");
    let want = simulate(&arch, &job).unwrap();
    let got =
        run_core(&arch, &job, 10 * want.counters.cycles + 1_000).unwrap_or_else(|e| panic!("{}", at(&e.to_string())));
    let expected_fault = want.fault.map(|f| match f {
        Fault::RunOverrunsColumn { panel, col, row, cycle } => {
            CoreFault { code: 1, panel: panel as u64, col: col as u64, a: row, b: 0, cycle }
        }
        Fault::BadColumnPointer { panel, col, start, end, cycle } => {
            CoreFault { code: 2, panel: panel as u64, col: col as u64, a: start, b: end, cycle }
        }
    });
    assert_eq!(got.fault, expected_fault, "{}", at("fault"));
    assert_eq!(got.cycles, want.counters.cycles, "{}", at("cycles"));
    if want.fault.is_none() {
        let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got.y), bits(&want.y), "{}", at("y"));
    } else {
        assert!(malformed, "{}", at("a well-formed job faulted"));
    }
    want.fault.is_some()
}

#[test]
fn the_tiny_core_runs_random_jobs_cycle_for_cycle_with_the_model() {
    let faulted = (0..300).filter(|&seed| core_matches_the_model("tiny", seed)).count();
    assert!(faulted >= 15, "only {faulted} of 300 jobs faulted");
}

#[test]
fn the_edge_core_runs_random_jobs_cycle_for_cycle_with_the_model() {
    let faulted = (0..20).filter(|&seed| core_matches_the_model("edge", seed)).count();
    assert!(faulted >= 1, "no edge job faulted");
}
