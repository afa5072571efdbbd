//! Accuracy of a compiled model on real text: perplexity and top-1 agreement with the dense
//! model, from the golden forward with the pruned weights and the activation thresholds applied
//! (each activation dropped exactly when the hardware would drop it: FP16 magnitude below the
//! layer's threshold). The products themselves are f32: the FP16 rounding of kept weights and
//! activations is not in these figures (it is in the per-layer bit checks of the program).

use crate::checkpoint::Checkpoint;
use crate::forward::{argmax, nll, run_sequences};
use crate::passes::act_thresholds::{Sparsify, Thresholds};
use crate::tokenizer::TokenId;
use serde::Serialize;

/// Accuracy over a set of documents.
#[derive(Clone, Debug, Serialize)]
pub struct Accuracy {
    /// Tokens predicted (every token after the first of each document).
    pub predicted: usize,
    /// Mean negative log-likelihood (nats per token).
    pub mean_nll: f64,
    /// `exp(mean_nll)`.
    pub perplexity: f64,
    /// Share of positions whose argmax is the dense model's (1 for the dense model itself).
    pub top1_agreement: f64,
    /// Share of the thresholded layers' activations dropped on this text.
    pub act_sparsity: f64,
}

/// Runs the documents through `ckpt` with `thresholds`; `dense_top1` (per document, per
/// position) is the dense model's argmax to compare with. Returns the accuracy and this
/// model's own argmaxes.
pub fn accuracy(
    ckpt: &Checkpoint,
    thresholds: &Thresholds,
    docs: &[Vec<TokenId>],
    dense_top1: Option<&[Vec<TokenId>]>,
) -> Result<(Accuracy, Vec<Vec<TokenId>>), crate::forward::ForwardError> {
    let mut exec = Sparsify::new(thresholds);
    let mut top1: Vec<Vec<TokenId>> = docs.iter().map(|d| Vec::with_capacity(d.len())).collect();
    let (mut nll_sum, mut predicted, mut agree) = (0.0f64, 0usize, 0usize);
    let mut each = |d: usize, pos: usize, logits: &[f32]| {
        let best = argmax(logits);
        top1[d].push(best);
        if let Some(&next) = docs[d].get(pos + 1) {
            nll_sum += nll(logits, next);
            predicted += 1;
            if dense_top1.is_none_or(|t| t[d][pos] == best) {
                agree += 1;
            }
        }
    };
    run_sequences(ckpt, docs, 16, &mut exec, Some(&mut each))?;
    let mean_nll = nll_sum / predicted.max(1) as f64;
    let acc = Accuracy {
        predicted,
        mean_nll,
        perplexity: mean_nll.exp(),
        top1_agreement: agree as f64 / predicted.max(1) as f64,
        act_sparsity: exec.sparsity(),
    };
    Ok((acc, top1))
}
