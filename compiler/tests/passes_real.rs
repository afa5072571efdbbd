//! The pruning and activation-sparsity passes on the real checkpoint (SmolLM2-135M-Instruct)
//! with real calibration text (Debian fortunes-min: `fortunes` to calibrate, `riddles` held out).

mod common;

use lacuna_compiler::calibrate::capture;
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::corpus::{fortunes, join, Split};
use lacuna_compiler::forward::run_sequences;
use lacuna_compiler::models::SMOLLM2_135M;
use lacuna_compiler::passes::act_thresholds::{calibrate, Sparsify};
use lacuna_compiler::passes::prune_weights::{prune_model, PruneMethod};
use lacuna_compiler::tokenizer::TokenId;

/// The checkpoint and the texts, or None (skipped) where they are not in the cache and the
/// suite does not require them.
fn real() -> Option<(Checkpoint, Vec<String>, Vec<String>)> {
    let texts = |_: &Checkpoint| Ok((join(&fortunes(Split::Calibration)?, 4), join(&fortunes(Split::HeldOut)?, 4)));
    common::smollm2(texts).map(|(ckpt, (calib, held))| (ckpt, calib, held))
}

/// Calibration: 16 texts of 4 fortunes each, up to 64 tokens; held out: 16 of 4 riddles.
const TEXTS: usize = 16;
const MAX_TOKENS: usize = 64;
/// Thresholds must reach their target on held-out text within this share of the target (the
/// held-out riddles are not the calibration fortunes: measured 0.287 / 0.497 / 0.751 for
/// targets 0.3 / 0.5 / 0.7).
const HELD_OUT_RELATIVE_BOUND: f64 = 0.1;

#[test]
fn wanda_and_magnitude_pruning_reach_their_target_exactly_on_every_layer() {
    let Some((ckpt, calib, _)) = real() else { return };
    let (cap, tokens) = capture(&ckpt, &calib[..TEXTS], MAX_TOKENS, false).unwrap();
    assert!(tokens > 600, "only {tokens} calibration tokens");
    for method in [PruneMethod::Magnitude, PruneMethod::Wanda] {
        let mut pruned = Checkpoint::open(&SMOLLM2_135M.locate().unwrap()).unwrap();
        let report = prune_model(&mut pruned, method, 0.5, Some(&cap)).unwrap();
        assert_eq!(report.len(), 30 * 7);
        for l in &report {
            assert_eq!(l.zeros, (l.weights as f64 * 0.5).round() as u64, "{method:?} {}", l.name);
        }
    }
}

#[test]
fn activation_thresholds_reach_their_target_on_held_out_text() {
    let Some((ckpt, calib, held)) = real() else { return };
    let (cap, _) = capture(&ckpt, &calib[..TEXTS], MAX_TOKENS, false).unwrap();
    for target in [0.3, 0.5, 0.7] {
        let th = calibrate(&ckpt, &cap, target).unwrap();
        assert_eq!(th.layers.len(), 30 * 7);
        let mut sp = Sparsify::new(&th);
        let lists: Vec<Vec<TokenId>> =
            held[..TEXTS].iter().map(|t| ckpt.tokenizer.encode(t).into_iter().take(MAX_TOKENS).collect()).collect();
        run_sequences(&ckpt, &lists, 16, &mut sp, None).unwrap();
        let reached = sp.sparsity();
        eprintln!("target {target}: held-out activation sparsity {reached:.4}");
        assert!((reached - target).abs() <= HELD_OUT_RELATIVE_BOUND * target, "target {target}, reached {reached}");
    }
}
