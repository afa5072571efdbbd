//! The arithmetic of the golden forward: products, norms, activations, RoPE, routing, and the
//! scores of a step's logits. Pure functions on f32 slices; [`crate::forward`] strings them
//! together (and re-exports them, where callers have always found them).
//!
//! Numerics: products are summed in f32 in blocks of 8 lanes (the order is fixed, so results
//! are reproducible run to run and across thread counts).

use crate::checkpoint::Matrix;
use crate::tokenizer::TokenId;
use lacuna_spec::graph::Gating;
use rayon::prelude::*;

/// `w x` in f32, rows in parallel, each a dot product in 8 lanes then a fixed-order sum.
pub fn matvec(w: &Matrix, x: &[f32]) -> Vec<f32> {
    matvec_batch(w, &[x]).pop().unwrap_or_default()
}

/// `w x` for several vectors, each row of `w` read once for all of them (the golden forward is
/// bound by reading weights: a batch of B sequences reads them once, not B times). Each result
/// is bit-identical to [`matvec`] of its vector alone.
pub fn matvec_batch(w: &Matrix, xs: &[&[f32]]) -> Vec<Vec<f32>> {
    for x in xs {
        assert_eq!(w.cols, x.len(), "matvec: {} columns, vector of {}", w.cols, x.len());
    }
    const ROWS: usize = 64;
    let mut flat = vec![0f32; w.rows * xs.len()];
    // flat is row-major (row, vector): each task owns a run of rows.
    flat.par_chunks_mut(ROWS * xs.len().max(1)).enumerate().for_each(|(c, ys)| {
        for (i, ys) in ys.chunks_mut(xs.len().max(1)).enumerate() {
            let row = w.row(c * ROWS + i);
            for (y, x) in ys.iter_mut().zip(xs) {
                *y = dot(row, x);
            }
        }
    });
    (0..xs.len()).map(|b| (0..w.rows).map(|r| flat[r * xs.len() + b]).collect()).collect()
}

/// A dot product in 8 lanes, lanes summed pairwise, then the tail. The lanes are the same
/// whatever the vector width, so the AVX2 build of the loop (chosen at run time where the CPU
/// has it; no FMA, which would round differently) gives the same bits as the portable one.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { dot_avx2(a, b) };
        }
    }
    dot_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    dot_lanes(a, b)
}

#[inline(always)]
fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// A mixture's routing ([`Op::Route`]): one weight per expert, zero for all but the top k
/// (by probability, or by logit for unit gating; ties to the lower index, as a stable sort).
pub fn route(logits: &[f32], top_k: usize, gating: Gating) -> Vec<f32> {
    let mut p = logits.to_vec();
    if gating != Gating::UnitTopK {
        softmax(&mut p);
    }
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p[b].total_cmp(&p[a]));
    let chosen = &order[..top_k.min(order.len())];
    let mut w = vec![0.0f32; p.len()];
    let sum: f32 = chosen.iter().map(|&e| p[e]).sum();
    for &e in chosen {
        w[e] = match gating {
            Gating::SoftmaxTopKNormalized => p[e] / sum,
            Gating::SoftmaxTopK => p[e],
            Gating::UnitTopK => 1.0,
        };
    }
    w
}

/// Interleaved RoPE at `position`: pairs (2i, 2i+1) of each head rotate by
/// `position * base^(-2i/head_dim)`.
pub fn rope(x: &mut [f32], head_dim: usize, inv_freq: &[f32], position: usize) {
    for head in x.chunks_exact_mut(head_dim) {
        for (i, &f) in inv_freq.iter().enumerate() {
            let (sin, cos) = (position as f32 * f).sin_cos();
            let (a, b) = (head[2 * i], head[2 * i + 1]);
            head[2 * i] = a * cos - b * sin;
            head[2 * i + 1] = a * sin + b * cos;
        }
    }
}

/// RoPE on pairs (i, i + head_dim/2) of each head (Gemma; llama.cpp's NEOX style).
pub fn rope_halves(x: &mut [f32], head_dim: usize, inv_freq: &[f32], position: usize) {
    let half = head_dim / 2;
    for head in x.chunks_exact_mut(head_dim) {
        for (i, &f) in inv_freq.iter().enumerate() {
            let (sin, cos) = (position as f32 * f).sin_cos();
            let (a, b) = (head[i], head[i + half]);
            head[i] = a * cos - b * sin;
            head[i + half] = a * sin + b * cos;
        }
    }
}

/// GELU, tanh approximation: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
pub fn gelu_tanh(x: f32) -> f32 {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * x * (1.0 + 0.044_715 * x * x)).tanh())
}

/// `x * w / sqrt(mean(x^2) + eps)`.
pub fn rms_norm(x: &[f32], w: &[f32], eps: f32) -> Vec<f32> {
    let mean = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    let scale = 1.0 / (mean + eps).sqrt();
    x.iter().zip(w).map(|(v, g)| v * scale * g).collect()
}

/// `x * sigmoid(x)`.
pub fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// In-place softmax, max-subtracted.
pub fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    x.iter_mut().for_each(|v| *v /= sum);
}

/// The index of the largest logit (the first one on a tie).
pub fn argmax(logits: &[f32]) -> TokenId {
    let mut best = 0;
    for (i, &v) in logits.iter().enumerate() {
        if v > logits[best] {
            best = i;
        }
    }
    TokenId(best as u32)
}

/// `-log softmax(logits)[target]`, in f64.
pub fn nll(logits: &[f32], target: TokenId) -> f64 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let sum: f64 = logits.iter().map(|&v| (v as f64 - max).exp()).sum();
    -(logits[target.0 as usize] as f64 - max - sum.ln())
}
