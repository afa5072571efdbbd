//! Sparsity allocation: where a target mean of weight and activation sparsity is placed.
//!
//! - [`Allocation::Uniform`] (the baseline): every block linear pruned to the weight target,
//!   every block linear's input thresholded for the activation target.
//! - [`Allocation::Sensitivity`]: the targets as means, placed by what was measured on the
//!   calibration text:
//!   - **weights per block** by OWL (Yin et al. 2024, "Outlier Weighed Layerwise Sparsity",
//!     their setting for LLaMA: `M = 5`, `lambda = 0.08`): block `l`'s outlier ratio `D_l` is the
//!     share of its Wanda scores `|W_ij| ||X_j||` (over every linear of the block) above `M`
//!     times the block's mean score; keep ratios are `D` scaled to `[0, 2 lambda]` and shifted
//!     to mean `1 - x`, so blocks with more outliers are pruned less ([`owl`]). With magnitude
//!     pruning the score is `|W_ij|`. The mean over blocks is the target exactly when the
//!     blocks have equal sizes (every supported family's do).
//!   - **activations per input kind** (attention's input, the output projection's, the FFN's,
//!     the down projection's, and the LM head's), in the spirit of TEAL's greedy allocation (Liu et al. 2024,
//!     section 3.3), with the model's own output as the measure: each kind alone is
//!     thresholded at 10 %, 20 %, ..., 90 % in every block and the divergence of the model's
//!     next-token distribution from the unthresholded model's is measured on 4 calibration
//!     documents ([`measure_kinds`]); then, in 1 % steps, the kind whose next step adds the
//!     least divergence per weight it lets the core skip is raised until the
//!     parameter-weighted mean reaches the target ([`kind_levels`]); each input's threshold is
//!     calibrated for its kind's level ([`kind_thresholds`]). TEAL allocates per layer within a
//!     block by the block's output error; per kind with the model's divergence costs 46
//!     forward passes, per layer would cost blocks times more. The LM head is one of the kinds:
//!     its input is thresholded exactly as far as its measured cost per weight skipped earns
//!     against the blocks' (its weights count in the mean, so the blocks' inputs get less where
//!     the head takes some).
//!
//! The LM head's weights are never pruned (in tied models they are the embedding table too);
//! under the uniform allocation its input is not thresholded either (TEAL's and Wanda's
//! setting).

use crate::calibrate::Capture;
use crate::checkpoint::Checkpoint;
use crate::passes::act_thresholds::{threshold_for, LayerThreshold, ThresholdError, Thresholds};
use crate::passes::prune_weights::PruneMethod;
use lacuna_spec::graph::{LayerId, LinearKind, NodeId, Op};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a target mean sparsity is placed over the layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Allocation {
    /// The same sparsity everywhere.
    #[default]
    Uniform,
    /// OWL for the weights, TEAL's greedy allocation for the activations (module docs).
    Sensitivity,
}

impl Allocation {
    /// Why an activation target cannot be placed by this allocation: the sensitivity
    /// allocation measures levels up to the largest of [`SENSITIVITY_LEVELS`] and places no
    /// more.
    pub fn check_act_target(self, target: f64) -> Result<(), String> {
        let max = SENSITIVITY_LEVELS[SENSITIVITY_LEVELS.len() - 1];
        if self == Allocation::Sensitivity && target > max + 1e-12 {
            return Err(format!(
                "the sensitivity allocation measures activation levels up to {:.0} %, not {:.1} % (uniform places any level)",
                100.0 * max,
                100.0 * target
            ));
        }
        Ok(())
    }

    /// Its name in programs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Allocation::Uniform => "uniform",
            Allocation::Sensitivity => "sensitivity",
        }
    }
}

impl std::str::FromStr for Allocation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(Allocation::Uniform),
            "sensitivity" => Ok(Allocation::Sensitivity),
            _ => Err(format!("unknown allocation {s:?} (uniform or sensitivity)")),
        }
    }
}

/// OWL's outlier multiple: a score above `M` x the block's mean is an outlier.
pub const OWL_M: f64 = 5.0;
/// OWL's spread: block sparsities spread over `2 lambda` around the target.
pub const OWL_LAMBDA: f64 = 0.08;
/// The step of the greedy activation allocation (a share of an input kind's values).
pub const GREEDY_STEP: f64 = 0.01;

/// Each block's weight sparsity under OWL for a mean of `target`; `norms` (the dense model's
/// capture) gives Wanda's input norms, none scores by magnitude.
pub fn owl(ckpt: &Checkpoint, capture: Option<&Capture>, method: PruneMethod, target: f64) -> BTreeMap<LayerId, f64> {
    let mut ratio: BTreeMap<LayerId, f64> = BTreeMap::new();
    let mut scores: BTreeMap<LayerId, Vec<f32>> = BTreeMap::new();
    for (node, weight, kind, layer) in ckpt.graph.linears() {
        let Some(layer) = layer else { continue };
        if matches!(kind, LinearKind::LmHead | LinearKind::Router) {
            continue;
        }
        let Op::Linear { input, .. } = ckpt.graph.node_at(node).op else { continue };
        let w = ckpt.weight(weight);
        let norms = match method {
            PruneMethod::Wanda => capture.and_then(|c| c.inputs.get(&input)).map(|r| r.norms()),
            PruneMethod::Magnitude => None,
        };
        let s = scores.entry(layer).or_default();
        for row in w.data.chunks(w.cols) {
            match &norms {
                Some(n) => s.extend(row.iter().zip(n).map(|(v, n)| v.abs() * n)),
                None => s.extend(row.iter().map(|v| v.abs())),
            }
        }
    }
    for (layer, s) in &scores {
        let mean = s.iter().map(|&v| v as f64).sum::<f64>() / s.len().max(1) as f64;
        let outliers = s.iter().filter(|&&v| v as f64 > OWL_M * mean).count();
        ratio.insert(*layer, outliers as f64 / s.len().max(1) as f64);
    }
    owl_sparsities(&ratio, target)
}

/// OWL's rule from the blocks' outlier ratios: keep ratios spread over `2 lambda` by outlier
/// ratio, shifted to mean `1 - target`. A sparsity lies in `[target + m - 2 lambda, target + m]`
/// (`m` the keep ratios' mean before the shift, within `[0, 2 lambda]`), so lambda shrinks to
/// `target / 2` and `(0.99 - target) / 2` near the ends: every sparsity in `[0, 0.99]` with no
/// clamping, and the mean exactly the target.
pub fn owl_sparsities(ratio: &BTreeMap<LayerId, f64>, target: f64) -> BTreeMap<LayerId, f64> {
    let (lo, hi) = ratio.values().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &r| (a.min(r), b.max(r)));
    let lambda = OWL_LAMBDA.min(target / 2.0).min(((0.99 - target) / 2.0).max(0.0));
    if ratio.is_empty() || hi <= lo || lambda <= 0.0 {
        return ratio.keys().map(|&l| (l, target)).collect();
    }
    let keep: Vec<f64> = ratio.values().map(|r| (r - lo) / (hi - lo) * 2.0 * lambda).collect();
    let mean = keep.iter().sum::<f64>() / keep.len() as f64;
    ratio.keys().zip(keep).map(|(&l, k)| (l, target + mean - k)).collect()
}

/// A thresholded input, by the layers that read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// The block's normalised input, read by q, k and v.
    Attention,
    /// Attention's output, read by the output projection.
    AttentionOut,
    /// The FFN's normalised input, read by gate and up.
    Ffn,
    /// The FFN's inner activation, read by down.
    FfnDown,
    /// The final norm's output, read by the LM head (thresholded under the sensitivity
    /// allocation only, and only as far as its measured cost earns).
    Head,
}

impl InputKind {
    /// The kind of input a linear layer reads (none for a router).
    pub fn of(kind: LinearKind) -> Option<InputKind> {
        match kind {
            LinearKind::Q | LinearKind::K | LinearKind::V => Some(InputKind::Attention),
            LinearKind::O => Some(InputKind::AttentionOut),
            LinearKind::Gate | LinearKind::Up => Some(InputKind::Ffn),
            LinearKind::Down => Some(InputKind::FfnDown),
            LinearKind::LmHead => Some(InputKind::Head),
            LinearKind::Router => None,
        }
    }
}

/// The levels each kind is measured at (each alone, every block's input of that kind at it).
pub const SENSITIVITY_LEVELS: [f64; 9] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
/// Calibration documents the sensitivity is measured on (the first of the calibration text).
pub const SENSITIVITY_DOCS: usize = 4;

/// The measured cost of thresholding each kind of input alone.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KindSensitivity {
    /// Per kind: the mean KL divergence (nats a position) of the model's next-token
    /// distribution from the unthresholded model's, with that kind's inputs thresholded for each
    /// of [`SENSITIVITY_LEVELS`] (the others kept). KL to the model's own output, not NLL of the
    /// text: on a few hundred tokens the NLL's noise hides small costs (a level can even
    /// "improve" it), the divergence does not.
    pub kl: BTreeMap<InputKind, Vec<f64>>,
    /// Per kind: the weights that read it (what its sparsity lets the core skip).
    pub params: BTreeMap<InputKind, f64>,
}

/// Measures [`KindSensitivity`] of `ckpt` (as pruned) on `docs`, thresholds from `capture`
/// (its calibration capture): 1 + 5 x 9 forward passes.
pub fn measure_kinds(
    ckpt: &Checkpoint,
    capture: &Capture,
    docs: &[Vec<crate::tokenizer::TokenId>],
) -> Result<KindSensitivity, String> {
    fn log_softmax(logits: &[f32]) -> Vec<f32> {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let lse = max + logits.iter().map(|&v| (v as f64 - max).exp()).sum::<f64>().ln();
        logits.iter().map(|&v| (v as f64 - lse) as f32).collect()
    }
    let run = |t: &Thresholds, each: &mut crate::forward::StepLogits| -> Result<(), String> {
        let mut exec = crate::passes::act_thresholds::Sparsify::new(t);
        crate::forward::run_sequences(ckpt, docs, 16, &mut exec, Some(each)).map_err(|e| e.to_string())
    };
    let mut reference: BTreeMap<(usize, usize), Vec<f32>> = BTreeMap::new();
    run(&Thresholds::default(), &mut |d, pos, logits| {
        reference.insert((d, pos), log_softmax(logits));
    })?;
    let mean_kl = |t: &Thresholds| -> Result<f64, String> {
        let (mut sum, mut n) = (0.0f64, 0usize);
        run(t, &mut |d, pos, logits| {
            let (p, q) = (&reference[&(d, pos)], log_softmax(logits));
            sum += p.iter().zip(&q).map(|(&lp, &lq)| (lp as f64).exp() * (lp - lq) as f64).sum::<f64>();
            n += 1;
        })?;
        Ok(sum / n.max(1) as f64)
    };
    let mut kinds: BTreeMap<NodeId, InputKind> = BTreeMap::new();
    let mut params: BTreeMap<InputKind, f64> = BTreeMap::new();
    for (node, weight, kind, _) in ckpt.graph.linears() {
        if let Some(k) = InputKind::of(kind) {
            kinds.insert(node, k);
            let w = ckpt.weight(weight);
            *params.entry(k).or_default() += (w.rows * w.cols) as f64;
        }
    }
    let mut kl: BTreeMap<InputKind, Vec<f64>> = BTreeMap::new();
    for &kind in params.keys() {
        for level in SENSITIVITY_LEVELS {
            let mut t = kind_thresholds(ckpt, capture, &[(kind, level)].into(), level).map_err(|e| e.to_string())?;
            t.layers.retain(|n, _| kinds.get(n) == Some(&kind));
            kl.entry(kind).or_default().push(mean_kl(&t)?);
        }
    }
    Ok(KindSensitivity { kl, params })
}

/// Each kind's activation sparsity for a parameter-weighted mean of `target`: greedily, in steps
/// of [`GREEDY_STEP`], the kind whose next step adds the least measured divergence per weight
/// skipped
/// (the divergence between measured levels interpolated linearly, made non-decreasing), up to
/// the largest measured level.
pub fn kind_levels(s: &KindSensitivity, target: f64) -> BTreeMap<InputKind, f64> {
    let max = SENSITIVITY_LEVELS[SENSITIVITY_LEVELS.len() - 1];
    let steps = (max / GREEDY_STEP).round() as usize;
    // Per kind: the added divergence at each step (0 at no sparsity).
    let cost: BTreeMap<InputKind, Vec<f64>> =
        s.kl.iter()
            .map(|(&k, v)| {
                let mut pts = vec![(0.0, 0.0)];
                let mut top = 0.0f64;
                for (&l, &n) in SENSITIVITY_LEVELS.iter().zip(v) {
                    top = top.max(n);
                    pts.push((l, top));
                }
                let at = |x: f64| {
                    let i = pts.windows(2).position(|w| x <= w[1].0 + 1e-12).unwrap_or(pts.len() - 2);
                    let ((x0, y0), (x1, y1)) = (pts[i], pts[i + 1]);
                    y0 + (y1 - y0) * (x - x0) / (x1 - x0)
                };
                (k, (0..=steps).map(|i| at(i as f64 * GREEDY_STEP)).collect())
            })
            .collect();
    let total: f64 = s.params.values().sum();
    let mut at: BTreeMap<InputKind, usize> = s.params.keys().map(|&k| (k, 0)).collect();
    let mut have = 0.0;
    while have + 1e-9 < target * total {
        let best = at
            .iter()
            .filter(|(_, &i)| i < steps)
            .map(|(&k, &i)| (k, (cost[&k][i + 1] - cost[&k][i]) / s.params[&k]))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let Some((k, _)) = best else { break };
        *at.get_mut(&k).expect("listed") += 1;
        have += GREEDY_STEP * s.params[&k];
    }
    at.into_iter().map(|(k, i)| (k, i as f64 * GREEDY_STEP)).collect()
}

/// Thresholds with each input calibrated for its kind's level (a kind at 0 or not listed
/// gets none: the LM head's input may be missing from a capture without it).
pub fn kind_thresholds(
    ckpt: &Checkpoint,
    capture: &Capture,
    levels: &BTreeMap<InputKind, f64>,
    target: f64,
) -> Result<Thresholds, ThresholdError> {
    let mut out = Thresholds { target, layers: BTreeMap::new() };
    for (node, _, kind, _) in ckpt.graph.linears() {
        let Some(k) = InputKind::of(kind) else { continue };
        let level = levels.get(&k).copied().unwrap_or(0.0);
        if level <= 0.0 {
            continue;
        }
        let n = ckpt.graph.node_at(node);
        let Op::Linear { input, .. } = n.op else { continue };
        let rec = capture.inputs.get(&input).ok_or_else(|| ThresholdError::NoCalibration(n.name.clone()))?;
        let (bits, share) = threshold_for(&rec.magnitudes, level);
        out.layers.insert(node, LayerThreshold { threshold_bits: bits, calibrated_sparsity: share });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::capture;
    use crate::checkpoint::test_models::random_checkpoint;
    use lacuna_spec::graph::LlamaConfig;

    #[test]
    fn dropping_more_of_a_kind_diverges_more_and_each_input_gets_its_kinds_threshold() {
        let ckpt = random_checkpoint(&LlamaConfig::tiny(), 3);
        let text = vec!["the quick brown fox jumps over the lazy dog ".repeat(2)];
        let (cap, _) = capture(&ckpt, &text, 24, true).unwrap();
        let docs = vec![ckpt.tokenizer.encode(&text[0]).into_iter().take(24).collect::<Vec<_>>()];
        let s = measure_kinds(&ckpt, &cap, &docs).unwrap();
        assert_eq!(s.kl.len(), 5, "{s:?}");
        for (k, v) in &s.kl {
            assert!(v.iter().all(|&d| d >= -1e-9), "{k:?}: a divergence is never negative: {v:?}");
            assert!(v[SENSITIVITY_LEVELS.len() - 1] > v[0], "{k:?}: {v:?}");
        }
        let levels: BTreeMap<InputKind, f64> = [
            (InputKind::Attention, 0.2),
            (InputKind::AttentionOut, 0.4),
            (InputKind::Ffn, 0.6),
            (InputKind::FfnDown, 0.8),
            (InputKind::Head, 0.1),
        ]
        .into();
        let t = kind_thresholds(&ckpt, &cap, &levels, 0.5).unwrap();
        for (node, _, kind, _) in ckpt.graph.linears() {
            let k = InputKind::of(kind).unwrap();
            let Op::Linear { input, .. } = ckpt.graph.node_at(node).op else { panic!("{node:?} is a linear") };
            let expected = threshold_for(&cap.inputs[&input].magnitudes, levels[&k]);
            assert_eq!((t.layers[&node].threshold_bits, t.layers[&node].calibrated_sparsity), expected, "{kind:?}");
        }
    }

    #[test]
    fn the_kind_allocation_meets_the_weighted_target_and_spares_the_sensitive_kind() {
        // Down's input costs 10x the others' divergence per level; every kind reads as many weights.
        let cheap: Vec<f64> = SENSITIVITY_LEVELS.iter().map(|l| 0.1 * l * l).collect();
        let dear: Vec<f64> = SENSITIVITY_LEVELS.iter().map(|l| 1.0 * l * l).collect();
        let kinds =
            [InputKind::Attention, InputKind::AttentionOut, InputKind::Ffn, InputKind::FfnDown, InputKind::Head];
        let s = KindSensitivity {
            kl: kinds
                .iter()
                .map(|&k| (k, if k == InputKind::FfnDown { dear.clone() } else { cheap.clone() }))
                .collect(),
            params: kinds.iter().map(|&k| (k, 100.0)).collect(),
        };
        for target in [0.0, 0.3, 0.5, 0.7] {
            let l = kind_levels(&s, target);
            let mean = l.values().sum::<f64>() / 5.0;
            assert!((mean - target).abs() < GREEDY_STEP / 5.0 + 1e-9, "{target}: {l:?}");
            if target > 0.0 {
                assert!(l[&InputKind::FfnDown] < l[&InputKind::Ffn], "{target}: {l:?}");
            }
        }
        // Beyond what can be measured, every kind stops at the largest level.
        assert!(kind_levels(&s, 0.99).values().all(|&v| (v - 0.9).abs() < 1e-9));
    }

    #[test]
    fn owl_prunes_blocks_with_more_outliers_less_and_keeps_the_mean() {
        let ratio: BTreeMap<LayerId, f64> = [(LayerId(0), 0.01), (LayerId(1), 0.03), (LayerId(2), 0.02)].into();
        let s = owl_sparsities(&ratio, 0.5);
        assert!(s[&LayerId(1)] < s[&LayerId(2)] && s[&LayerId(2)] < s[&LayerId(0)], "{s:?}");
        let mean = s.values().sum::<f64>() / 3.0;
        assert!((mean - 0.5).abs() < 1e-12, "{mean}");
        assert!((s[&LayerId(0)] - s[&LayerId(1)] - 2.0 * OWL_LAMBDA).abs() < 1e-12, "the spread is 2 lambda");
        assert!(Allocation::Sensitivity.check_act_target(0.95).unwrap_err().contains("up to 90 %"));
        assert!(
            Allocation::Uniform.check_act_target(0.95).is_ok() && Allocation::Sensitivity.check_act_target(0.9).is_ok()
        );
    }

    #[test]
    fn owl_stays_within_zero_and_one_near_the_ends_and_is_uniform_without_spread() {
        // Skewed: one block with every outlier, so the shift is small and the others sit near
        // the top of the spread.
        let skewed: BTreeMap<LayerId, f64> = (0..4).map(|l| (LayerId(l), if l == 3 { 1.0 } else { 0.0 })).collect();
        let two: BTreeMap<LayerId, f64> = [(LayerId(0), 0.0), (LayerId(1), 1.0)].into();
        for ratio in [&skewed, &two] {
            for target in [0.0, 0.03, 0.1, 0.5, 0.97, 0.99] {
                let s = owl_sparsities(ratio, target);
                assert!(s.values().all(|&v| (0.0..=0.99).contains(&v)), "{target}: {s:?}");
                let mean = s.values().sum::<f64>() / s.len() as f64;
                assert!((mean - target).abs() < 1e-9, "{target}: {s:?}");
            }
        }
        let flat: BTreeMap<LayerId, f64> = [(LayerId(0), 0.2), (LayerId(1), 0.2)].into();
        assert!(owl_sparsities(&flat, 0.4).values().all(|&v| v == 0.4));
    }
}
