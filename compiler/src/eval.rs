//! Accuracy of a compiled model on real text: perplexity and top-1 agreement with the dense
//! model, from the golden forward with the pruned weights and the activation thresholds applied
//! (each activation dropped exactly when the hardware would drop it: FP16 magnitude below the
//! layer's threshold), with one of two [`Numerics`] for the linear layers:
//! - [`Numerics::F32`]: the kept weights and activations in f32 (the model's own precision);
//! - [`Numerics::Core`]: every linear layer as the core computes it: the compiled program's FP16
//!   weights, the input rounded to FP16, products exact, FP32 sums in column order
//!   (`lacuna_golden`'s CPU kernel, bit-identical to the golden column-order spMspV and so to
//!   the cycle model and the RTL). Attention, norms, RoPE and SiLU stay f32 (the vector unit's
//!   precision; attention's FP16 rounding on the core is not modelled here).

use crate::checkpoint::{Checkpoint, Matrix};
use crate::forward::{argmax, nll, run_sequences, LinearExec, LinearSite};
use crate::passes::act_thresholds::{Sparsify, Thresholds};
use crate::tokenizer::TokenId;
use half::f16;
use lacuna_golden::cpu_kernel::CpuKernel;
use lacuna_spec::graph::NodeId;
use lacuna_spec::program::LoadedProgram;
use lacuna_spec::{ActivationFilter, Activations, RlcMatrix};
use serde::Serialize;
use std::collections::HashMap;

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

/// How the linear layers compute during an accuracy run.
#[derive(Clone, Copy, Debug)]
pub enum Numerics<'a> {
    /// f32 products of the (pruned) weights and the kept activations.
    F32(&'a Thresholds),
    /// The core's FP16 x FP16 -> FP32 column-order arithmetic on the compiled program's matrices.
    Core(&'a LoadedProgram),
}

/// Why an accuracy run failed.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The forward pass refused its input.
    #[error(transparent)]
    Forward(#[from] crate::forward::ForwardError),
    /// The program does not fit the checkpoint, or the core refused a job.
    #[error("core numerics: {0}")]
    Core(String),
}

/// The core's arithmetic for every linear layer of a program (see the module docs).
pub struct CoreNumerics<'p> {
    /// Per linear node: its matrix and activation filter.
    layers: HashMap<NodeId, (&'p RlcMatrix, ActivationFilter)>,
    /// Activations dropped and seen, over the layers with a threshold.
    counts: (u64, u64),
    /// The first job the core refused (an activation that overflows FP16), if any.
    error: Option<String>,
}

impl<'p> CoreNumerics<'p> {
    /// The executor of `program`, checked against the checkpoint's graph (every linear layer
    /// present with its shape).
    pub fn new(program: &'p LoadedProgram, ckpt: &Checkpoint) -> Result<Self, EvalError> {
        let mut layers = HashMap::new();
        for (l, m) in program.program.layers.iter().zip(&program.matrices) {
            let filter = ActivationFilter { threshold: f16::from_bits(l.threshold_bits) };
            layers.insert(l.node, (m, filter));
        }
        for (node, weight, _, _) in ckpt.graph.linears() {
            let w = ckpt.weight(weight);
            match layers.get(&node) {
                Some((m, _)) if (m.rows() as usize, m.cols() as usize) == (w.rows, w.cols) => {}
                _ => {
                    let name = &ckpt.graph.node_at(node).name;
                    return Err(EvalError::Core(format!("the program has no {}x{} layer {name}", w.rows, w.cols)));
                }
            }
        }
        Ok(CoreNumerics { layers, counts: (0, 0), error: None })
    }

    /// The share of activations dropped over every layer with a threshold.
    pub fn sparsity(&self) -> f64 {
        self.counts.0 as f64 / self.counts.1.max(1) as f64
    }
}

impl LinearExec for CoreNumerics<'_> {
    fn linear(&mut self, site: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32> {
        let Some(&(m, filter)) = self.layers.get(&site.node) else {
            // `new` checked every linear node of the graph: a checkpoint other than that one.
            self.error.get_or_insert(format!("node {:?} is not a layer of the program", site.node));
            return vec![f32::NAN; w.rows];
        };
        let xs: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
        if filter.threshold != f16::ZERO {
            self.counts.0 += xs.iter().filter(|&&v| !filter.is_active(v)).count() as u64;
            self.counts.1 += xs.len() as u64;
        }
        let y = Activations::new(xs)
            .map_err(|e| format!("position {}: activation {} at {} overflows FP16", site.position, e.value, e.index))
            .and_then(|a| CpuKernel::run(m, &a, filter).map_err(|e| e.to_string()));
        match y {
            Ok(y) => y,
            Err(why) => {
                self.error.get_or_insert(why);
                vec![f32::NAN; w.rows]
            }
        }
    }
}

/// Runs the documents through `ckpt` with `numerics`; `dense_top1` (per document, per
/// position) is the dense model's argmax to compare with. Returns the accuracy and this
/// model's own argmaxes.
pub fn accuracy(
    ckpt: &Checkpoint,
    numerics: Numerics<'_>,
    docs: &[Vec<TokenId>],
    dense_top1: Option<&[Vec<TokenId>]>,
) -> Result<(Accuracy, Vec<Vec<TokenId>>), EvalError> {
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
    let act_sparsity = match numerics {
        Numerics::F32(thresholds) => {
            let mut exec = Sparsify::new(thresholds);
            run_sequences(ckpt, docs, 16, &mut exec, Some(&mut each))?;
            exec.sparsity()
        }
        Numerics::Core(program) => {
            let mut exec = CoreNumerics::new(program, ckpt)?;
            run_sequences(ckpt, docs, 16, &mut exec, Some(&mut each))?;
            if let Some(why) = exec.error {
                return Err(EvalError::Core(why));
            }
            exec.sparsity()
        }
    };
    let mean_nll = nll_sum / predicted.max(1) as f64;
    let acc = Accuracy {
        predicted,
        mean_nll,
        perplexity: mean_nll.exp(),
        top1_agreement: agree as f64 / predicted.max(1) as f64,
        act_sparsity,
    };
    Ok((acc, top1))
}
