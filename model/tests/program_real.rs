//! A real model compiled and run on the cycle model: SmolLM2-135M-Instruct pruned to 50 %
//! (Wanda) with 50 % activation thresholds, its decode trace replayed layer by layer.
//!
//! Every linear layer of the step, run by the cycle model with the trace's activations, gives
//! the same bits as the golden column-order spMspV of the program's matrix; that matrix is the
//! pruned checkpoint's weights rounded to FP16; and the result lies within the golden's stated
//! bound of the exact dense product. The program survives its file round trip, and a tampered
//! one is refused.

use half::f16;
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::compile::{compile, CompileOptions, Compiled};
use lacuna_compiler::models::SMOLLM2_135M;
use lacuna_compiler::passes::lower::to_fp16;
use lacuna_compiler::passes::prune_weights::PruneMethod;
use lacuna_compiler::program::Program;
use lacuna_compiler::trace::{read_trace, write_trace};
use lacuna_model::energy::EnergyTable;
use lacuna_model::program::{activations, dense_baselines, run_step};
use lacuna_spec::{ActivationFilter, Activations, Arch};
use std::sync::OnceLock;

fn compiled() -> Option<&'static (Compiled, tempfile::TempDir)> {
    static C: OnceLock<Option<(Compiled, tempfile::TempDir)>> = OnceLock::new();
    C.get_or_init(|| {
        let path = match SMOLLM2_135M.locate() {
            Ok(p) => p,
            Err(e) if std::env::var("LACUNA_REQUIRE_MODELS").as_deref() == Ok("1") => panic!("{e}"),
            Err(e) => {
                eprintln!("skipped: {e}");
                return None;
            }
        };
        let mut opts = CompileOptions::new(Arch::preset("edge").unwrap(), 0.5, PruneMethod::Wanda, 0.5);
        // Small calibration: this test checks the lowering, not the calibration's quality.
        opts.calibration_docs = 4;
        opts.held_out_docs = 2;
        opts.max_tokens = 32;
        opts.generate = 1;
        let c = compile(Checkpoint::open(&path).unwrap(), &opts, |_| {}).unwrap();
        let dir = tempfile::tempdir().unwrap();
        c.program.write(dir.path(), &c.image).unwrap();
        std::fs::write(dir.path().join("trace.lctr"), write_trace(&c.trace)).unwrap();
        Some((c, dir))
    })
    .as_ref()
}

#[test]
fn every_layer_of_a_real_decode_step_gives_the_golden_bits_on_the_cycle_model() {
    let Some((c, dir)) = compiled() else { return };
    let p = Program::read(dir.path()).unwrap();
    let trace = read_trace(&std::fs::read(dir.path().join("trace.lctr")).unwrap()).unwrap();
    // Activations below every reader's threshold read back as zero: compare what matters.
    assert!(trace.header == c.trace.header && trace.steps.len() == c.trace.steps.len(), "the trace changed");
    let energy = EnergyTable::default();
    let dense = dense_baselines(&p, &energy);
    let last = trace.steps.len() - 1;
    for step in [0, last] {
        let run = run_step(&p, &trace, step, &energy, &dense).unwrap();
        assert_eq!(run.layers.len(), 211);
        for ((l, m), r) in p.program.layers.iter().zip(&p.matrices).zip(&run.layers) {
            let x = Activations::new(activations(&trace, step, l).unwrap().to_vec()).unwrap();
            let filter = ActivationFilter { threshold: f16::from_bits(l.threshold_bits) };
            let golden = lacuna_golden::spmspv::column_order(m, &x, filter).unwrap();
            let same = golden.iter().zip(&r.y).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "step {step}, {}: the cycle model's y differs from the golden column order", l.name);
            // The program's matrix is the pruned checkpoint's weights in FP16.
            let n = c.checkpoint.graph.node_at(l.node);
            let lacuna_compiler::graph::Op::Linear { weight, .. } = n.op else { panic!("{} is not linear", l.name) };
            let w = c.checkpoint.weight(weight);
            let want = to_fp16(&l.name, w.rows, w.cols, &w.data).unwrap();
            if step == 0 {
                assert_eq!(m.decode(), want, "{}: the encoded matrix is not the pruned weights", l.name);
            }
            let bound = lacuna_golden::bound::check_against_dense(&want, x.as_slice(), filter, &r.y);
            assert!(bound.passed(), "step {step}, {}: {bound:?}", l.name);
        }
    }
}

#[test]
fn pruned_layers_hold_exactly_half_zeros_and_thresholds_are_recorded() {
    let Some((c, _)) = compiled() else { return };
    for l in &c.program.layers {
        let n = l.rows as u64 * l.cols as u64;
        if l.kind == lacuna_compiler::graph::LinearKind::LmHead {
            assert_eq!(l.threshold_bits, 0, "the LM head's input is not sparsified");
        } else {
            // Exactly half pruned; rounding to FP16 may zero a few more (values below 2^-25).
            assert!(l.weight_zeros >= n / 2 && l.weight_zeros < n / 2 + n / 1000, "{}: {} zeros of {n}", l.name, l.weight_zeros);
            assert!(l.threshold_bits > 0, "{} has no threshold", l.name);
        }
    }
}

#[test]
fn a_tampered_program_is_refused_with_the_reason() {
    let Some((c, _)) = compiled() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut image = c.image.clone();
    image[1000] ^= 0x40;
    c.program.write(dir.path(), &image).unwrap();
    let e = Program::read(dir.path()).unwrap_err().to_string();
    assert!(e.contains("CRC"), "{e}");
    let mut p = c.program.clone();
    p.arch_hash = "0000000000000000".into();
    p.write(dir.path(), &c.image).unwrap();
    let e = Program::read(dir.path()).unwrap_err().to_string();
    assert!(e.contains("hashes to"), "{e}");
    let mut p = c.program.clone();
    p.version = 99;
    p.write(dir.path(), &c.image).unwrap();
    let e = Program::read(dir.path()).unwrap_err().to_string();
    assert!(e.contains("version"), "{e}");
}
