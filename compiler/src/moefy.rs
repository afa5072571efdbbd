//! MoEfication: a dense model's SwiGLU FFNs split into experts, with a router fitted to them.
//!
//! No mixture-of-experts checkpoint can be fetched here, so the mixtures of issue 15 are made from
//! real dense models and labelled so ("MoE derived from <model> (MoEfication)"). After Zhang et
//! al., "MoEfication: Transformer Feed-forward Layers are Mixtures of Experts" (Findings of ACL
//! 2022), with our own choices where a gated FFN differs:
//!
//! 1. **Record** on calibration text, per block, every token's FFN input `x` (the `ffn_norm`
//!    output, the input of `ffn_gate`) and inner activation `h = silu(gate x) * up x` (the input of
//!    `ffn_down`).
//! 2. **Cluster** the F inner neurons into E experts of F / E each by co-activation: neuron j's
//!    feature is `|h_j|` over the tokens, scaled to unit length; balanced k-means (cosine
//!    similarity to the E centroids; each round assigns the (neuron, expert) pairs from the most
//!    similar down, an expert taking no more than F / E), seeded from E spread neurons.
//! 3. **Route** by a linear router fitted to what each expert contributes: target
//!    `s_e = sum_{j in e} |h_j|`, router `R` (E x d) by ridge regression of `s` on `x`
//!    (`R = S^T X (X^T X + lambda I)^-1`, lambda a 1e-3 of the mean diagonal).
//! 4. **Assemble** a checkpoint whose blocks are mixtures: expert e's gate and up rows and down
//!    columns are the dense FFN's for its neurons, the router is `R`, and routing is
//!    [`Gating::UnitTopK`]: the top k experts by router logit, each weighted 1, so that with k = E
//!    the mixture computes the dense FFN exactly (the same terms, summed per expert).
//! 5. **Compensate** the experts a token skips: each expert's mean output over the calibration
//!    tokens the router does not choose it for (`blk.N.ffn_exp_mean`, [`MoeConfig::unrouted_mean`])
//!    is added for it (FLAP-style mean compensation; SwiGLU neurons are not zero-mean, so
//!    dropping them shifts the output). Measured gain in docs/edgexpert.md.

use crate::checkpoint::{Checkpoint, Matrix};
use crate::forward::{matvec_batch, run_sequences, ForwardError, LinearExec, LinearSite};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{Gating, Graph, LinearKind, LlamaConfig, MoeConfig};
use std::collections::BTreeMap;

/// Why a model could not be split.
#[derive(Debug, thiserror::Error)]
pub enum MoefyError {
    /// The experts do not divide the FFN, or k is out of range, or the model is a mixture already.
    #[error("cannot split the model into {experts} experts, top {top_k}: {why}")]
    Shape {
        /// Experts asked for.
        experts: usize,
        /// Chosen per token.
        top_k: usize,
        /// What is wrong.
        why: String,
    },
    /// The calibration run failed.
    #[error("calibration: {0}")]
    Forward(#[from] ForwardError),
    /// Too few calibration tokens to fit a router of the hidden size.
    #[error("{tokens} calibration tokens cannot fit a router over {hidden} inputs (at least {hidden} needed)")]
    TooFewTokens {
        /// Tokens recorded.
        tokens: usize,
        /// Hidden size.
        hidden: usize,
    },
}

/// What MoEfication made of one block.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitBlock {
    /// The neurons of each expert (ascending).
    pub experts: Vec<Vec<usize>>,
    /// Share of the variance of the target `s` (about its mean, per expert) the fitted router
    /// explains on the calibration tokens. The router has no bias: a per-expert baseline is left
    /// to the input's own constant directions.
    pub router_r2: f64,
    /// Over the calibration tokens, the mean share of the router's top k among the k experts
    /// that contribute most (`sum |h_j|`): 1 is routing as an oracle would.
    pub router_recall: f64,
    /// The mean share of `sum_j |h_j|` that lies in the router's top k experts.
    pub router_mass: f64,
    /// The same share for the oracle's top k: what this split of the neurons allows at best.
    pub oracle_mass: f64,
}

/// Splits every block of the dense `ckpt` into `experts` experts, `top_k` chosen per token,
/// calibrated on `docs`. Returns the mixture and what each block became.
pub fn moefy(
    ckpt: &Checkpoint,
    docs: &[Vec<TokenId>],
    experts: usize,
    top_k: usize,
    seed: u64,
) -> Result<(Checkpoint, Vec<SplitBlock>), MoefyError> {
    let c = &ckpt.graph.config;
    let shape = |why: String| MoefyError::Shape { experts, top_k, why };
    if c.moe.is_some() {
        return Err(shape("it is a mixture already".into()));
    }
    // The split, its routers and the expert policies assume Llama's SwiGLU blocks.
    if !c.family.is_llama() {
        return Err(shape(format!("a {} model cannot be split yet (Llama family only)", c.family.name())));
    }
    if experts == 0 || c.ffn % experts != 0 {
        return Err(shape(format!("the FFN size {} is not a multiple of the experts", c.ffn)));
    }
    if top_k == 0 || top_k > experts {
        return Err(shape("k must lie in 1..=experts".into()));
    }
    let mut rec = Record::default();
    run_sequences(ckpt, docs, 16, &mut rec, None)?;
    let tokens = rec.blocks.values().next().map_or(0, |b| b.x.len());
    if tokens < c.hidden {
        return Err(MoefyError::TooFewTokens { tokens, hidden: c.hidden });
    }
    let moe = MoeConfig { experts, top_k, expert_ffn: c.ffn / experts, gating: Gating::UnitTopK, unrouted_mean: true };
    let config = LlamaConfig { moe: Some(moe), ..c.clone() };
    let graph = Graph::decoder(&config);
    let dense: BTreeMap<&str, &Matrix> =
        ckpt.graph.weights.iter().zip(&ckpt.weights).map(|(w, m)| (w.tensor.as_str(), m)).collect();
    let mut split = Vec::with_capacity(c.layers);
    let mut made: BTreeMap<String, Matrix> = BTreeMap::new();
    for (l, block) in &rec.blocks {
        let groups = cluster(&block.h, experts, seed ^ *l as u64);
        let (router, router_r2) = fit_router(&block.x, &block.h, &groups);
        let (router_recall, router_mass, oracle_mass) = routing_quality(&router, &block.x, &block.h, &groups, top_k);
        let part = |name: &str| dense[format!("blk.{l}.{name}.weight").as_str()];
        let (gate, up, down) = (part("ffn_gate"), part("ffn_up"), part("ffn_down"));
        for (e, neurons) in groups.iter().enumerate() {
            made.insert(format!("blk.{l}.ffn_gate.{e}.weight"), rows_of(gate, neurons));
            made.insert(format!("blk.{l}.ffn_up.{e}.weight"), rows_of(up, neurons));
            made.insert(format!("blk.{l}.ffn_down.{e}.weight"), cols_of(down, neurons));
        }
        made.insert(format!("blk.{l}.ffn_exp_mean.weight"), unrouted_means(&router, block, &groups, down, top_k));
        made.insert(format!("blk.{l}.ffn_gate_inp.weight"), router);
        split.push(SplitBlock { experts: groups, router_r2, router_recall, router_mass, oracle_mass });
    }
    let weights = graph
        .weights
        .iter()
        .map(|w| made.remove(&w.tensor).unwrap_or_else(|| dense[w.tensor.as_str()].clone()))
        .collect();
    let name = format!("MoE derived from {} (MoEfication, {experts}x{top_k})", ckpt.name);
    let mixture = Checkpoint { source: ckpt.source.clone(), name, graph, weights, tokenizer: ckpt.tokenizer.clone() };
    Ok((mixture, split))
}

/// Per block (by layer index): every token's FFN input and inner activation.
#[derive(Default)]
struct Block {
    x: Vec<Vec<f32>>,
    h: Vec<Vec<f32>>,
}

/// A [`LinearExec`] that computes the dense products and keeps the FFN's inputs.
#[derive(Default)]
struct Record {
    blocks: BTreeMap<u32, Block>,
}

impl LinearExec for Record {
    fn linear(&mut self, site: LinearSite, w: &Matrix, x: &[f32]) -> Vec<f32> {
        self.linear_batch(&[site], w, &[x]).pop().unwrap_or_default()
    }

    fn linear_batch(&mut self, sites: &[LinearSite], w: &Matrix, xs: &[&[f32]]) -> Vec<Vec<f32>> {
        if let Some(layer) = sites.first().and_then(|s| s.layer) {
            let block = self.blocks.entry(layer.0).or_default();
            match sites[0].kind {
                LinearKind::Gate => block.x.extend(xs.iter().map(|x| x.to_vec())),
                LinearKind::Down => block.h.extend(xs.iter().map(|x| x.to_vec())),
                _ => {}
            }
        }
        matvec_batch(w, xs)
    }
}

/// Balanced k-means of the neurons (columns of `h`, tokens x F) into `k` groups of F / k.
fn cluster(h: &[Vec<f32>], k: usize, seed: u64) -> Vec<Vec<usize>> {
    let f = h.first().map_or(0, Vec::len);
    let size = f / k;
    // Neuron j's feature: |h_j| over the tokens, unit length.
    let mut feat: Vec<Vec<f32>> = (0..f).map(|j| h.iter().map(|t| t[j].abs()).collect()).collect();
    feat.iter_mut().for_each(|v| normalize(v));
    // Seeds: k neurons spread over the index range, offset by the seed (deterministic).
    let mut centroids: Vec<Vec<f32>> =
        (0..k).map(|e| feat[(e * size + seed as usize % size.max(1)) % f].clone()).collect();
    let mut groups = vec![Vec::new(); k];
    for _round in 0..12 {
        let mut pairs: Vec<(f32, usize, usize)> = Vec::with_capacity(f * k);
        for (j, v) in feat.iter().enumerate() {
            for (e, c) in centroids.iter().enumerate() {
                pairs.push((v.iter().zip(c).map(|(a, b)| a * b).sum(), j, e));
            }
        }
        // Most similar first; ties by neuron then expert, so the split is reproducible.
        pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut taken = vec![false; f];
        let mut next = vec![Vec::with_capacity(size); k];
        for (_, j, e) in pairs {
            if !taken[j] && next[e].len() < size {
                taken[j] = true;
                next[e].push(j);
            }
        }
        next.iter_mut().for_each(|g| g.sort_unstable());
        if next == groups {
            break;
        }
        groups = next;
        for (c, g) in centroids.iter_mut().zip(&groups) {
            c.iter_mut().for_each(|x| *x = 0.0);
            for &j in g {
                c.iter_mut().zip(&feat[j]).for_each(|(x, y)| *x += y);
            }
            normalize(c);
        }
    }
    groups
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// The router: ridge regression of each expert's contribution `sum_{j in e} |h_j|` on the FFN
/// input. Returns it (E x d) and the share of the targets' variance about zero it explains.
fn fit_router(x: &[Vec<f32>], h: &[Vec<f32>], groups: &[Vec<usize>]) -> (Matrix, f64) {
    let d = x[0].len();
    let e = groups.len();
    let targets: Vec<Vec<f64>> =
        h.iter().map(|t| groups.iter().map(|g| g.iter().map(|&j| t[j].abs() as f64).sum()).collect()).collect();
    // A = X^T X + lambda I (d x d), B = X^T S (d x E).
    let mut a = vec![0.0f64; d * d];
    let mut b = vec![0.0f64; d * e];
    for (xt, st) in x.iter().zip(&targets) {
        for i in 0..d {
            let xi = xt[i] as f64;
            for j in 0..d {
                a[i * d + j] += xi * xt[j] as f64;
            }
            for (k, s) in st.iter().enumerate() {
                b[i * e + k] += xi * s;
            }
        }
    }
    let lambda = 1e-3 * (0..d).map(|i| a[i * d + i]).sum::<f64>() / d as f64 + 1e-9;
    (0..d).for_each(|i| a[i * d + i] += lambda);
    let w = solve_spd(&mut a, &b, d, e);
    // W is d x E; the router's row k is column k of W.
    let data: Vec<f32> = (0..e).flat_map(|k| (0..d).map(move |i| (k, i))).map(|(k, i)| w[i * e + k] as f32).collect();
    let router = Matrix { rows: e, cols: d, data };
    let n = targets.len().max(1) as f64;
    let mean: Vec<f64> = (0..e).map(|k| targets.iter().map(|t| t[k]).sum::<f64>() / n).collect();
    let (mut resid, mut total) = (0.0f64, 0.0f64);
    for (xt, st) in x.iter().zip(&targets) {
        for (k, s) in st.iter().enumerate() {
            let p: f64 = (0..d).map(|i| router.data[k * d + i] as f64 * xt[i] as f64).sum();
            resid += (s - p) * (s - p);
            total += (s - mean[k]) * (s - mean[k]);
        }
    }
    (router, 1.0 - resid / total.max(f64::MIN_POSITIVE))
}

/// Each expert's mean output over the calibration tokens its router does not choose it for
/// (`W_down[:, e] h_e`, from the recorded dense activations): what the mixture adds back for an
/// expert a token skips (zero where the router chooses an expert for every token).
fn unrouted_means(router: &Matrix, block: &Block, groups: &[Vec<usize>], down: &Matrix, k: usize) -> Matrix {
    let (n, d) = (groups.len(), down.rows);
    // The output is linear in h: average h over the skipped tokens, then one product.
    let mut h_sum = vec![vec![0f64; down.cols]; n];
    let mut count = vec![0usize; n];
    for (x, h) in block.x.iter().zip(&block.h) {
        let w = crate::forward::route(&crate::forward::matvec(router, x), k, Gating::UnitTopK);
        for (e, neurons) in groups.iter().enumerate().filter(|&(e, _)| w[e] == 0.0) {
            count[e] += 1;
            neurons.iter().for_each(|&j| h_sum[e][j] += h[j] as f64);
        }
    }
    let mut data = Vec::with_capacity(n * d);
    for e in 0..n {
        let c = count[e].max(1) as f64;
        data.extend(
            (0..d).map(|r| (groups[e].iter().map(|&j| down.row(r)[j] as f64 * h_sum[e][j]).sum::<f64>() / c) as f32),
        );
    }
    Matrix { rows: n, cols: d, data }
}

/// How the router's top k compare with the oracle's (the k experts of the largest `sum |h_j|`)
/// on the recorded tokens: (recall, router's share of the mass, oracle's share of the mass).
fn routing_quality(
    router: &Matrix,
    x: &[Vec<f32>],
    h: &[Vec<f32>],
    groups: &[Vec<usize>],
    k: usize,
) -> (f64, f64, f64) {
    let top = |v: &[f64]| -> Vec<usize> {
        let mut order: Vec<usize> = (0..v.len()).collect();
        order.sort_by(|&a, &b| v[b].total_cmp(&v[a]));
        order.truncate(k);
        order
    };
    let (mut recall, mut mass_r, mut mass_o) = (0.0, 0.0, 0.0);
    for (xt, ht) in x.iter().zip(h) {
        let s: Vec<f64> = groups.iter().map(|g| g.iter().map(|&j| ht[j].abs() as f64).sum()).collect();
        let p: Vec<f64> = (0..router.rows).map(|e| crate::forward::dot(router.row(e), xt) as f64).collect();
        let (o, r) = (top(&s), top(&p));
        let total: f64 = s.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        recall += r.iter().filter(|e| o.contains(e)).count() as f64 / k as f64;
        mass_r += r.iter().map(|&e| s[e]).sum::<f64>() / total;
        mass_o += o.iter().map(|&e| s[e]).sum::<f64>() / total;
    }
    let n = x.len().max(1) as f64;
    (recall / n, mass_r / n, mass_o / n)
}

/// Solves `A W = B` for a symmetric positive definite `A` (n x n, overwritten by its Cholesky
/// factor) and `B` (n x m); returns W (n x m).
fn solve_spd(a: &mut [f64], b: &[f64], n: usize, m: usize) -> Vec<f64> {
    for j in 0..n {
        let mut s = a[j * n + j];
        for k in 0..j {
            s -= a[j * n + k] * a[j * n + k];
        }
        let l = s.max(f64::MIN_POSITIVE).sqrt();
        a[j * n + j] = l;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / l;
        }
    }
    let mut w = b.to_vec();
    for c in 0..m {
        // L y = b, then L^T w = y.
        for i in 0..n {
            let mut s = w[i * m + c];
            for k in 0..i {
                s -= a[i * n + k] * w[k * m + c];
            }
            w[i * m + c] = s / a[i * n + i];
        }
        for i in (0..n).rev() {
            let mut s = w[i * m + c];
            for k in i + 1..n {
                s -= a[k * n + i] * w[k * m + c];
            }
            w[i * m + c] = s / a[i * n + i];
        }
    }
    w
}

fn rows_of(w: &Matrix, rows: &[usize]) -> Matrix {
    let data = rows.iter().flat_map(|&r| w.row(r).iter().copied()).collect();
    Matrix { rows: rows.len(), cols: w.cols, data }
}

fn cols_of(w: &Matrix, cols: &[usize]) -> Matrix {
    let data =
        (0..w.rows).flat_map(|r| cols.iter().map(move |&c| (r, c))).map(|(r, c)| w.data[r * w.cols + c]).collect();
    Matrix { rows: w.rows, cols: cols.len(), data }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::test_models::random_checkpoint;
    use crate::forward::{Dense, Forward};

    fn docs(n: usize) -> Vec<Vec<TokenId>> {
        (0..n).map(|d| (0..12).map(|i| TokenId(((d * 7 + i * 3) % 7) as u32)).collect()).collect()
    }

    #[test]
    fn every_expert_gets_an_equal_share_of_distinct_neurons() {
        let ckpt = random_checkpoint(&LlamaConfig::tiny(), 2);
        let (mix, split) = moefy(&ckpt, &docs(4), 4, 2, 1).unwrap();
        assert_eq!(split.len(), 2);
        for b in &split {
            let mut all: Vec<usize> = b.experts.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..16).collect::<Vec<_>>());
            assert!(b.experts.iter().all(|g| g.len() == 4));
            assert!(b.router_r2 <= 1.0, "{}", b.router_r2);
            // Of 2 chosen among 4, the oracle's two hold at least half the mass; the router's
            // share cannot exceed the oracle's.
            assert!(b.oracle_mass >= 0.5 && b.router_mass <= b.oracle_mass + 1e-9, "{b:?}");
            assert!((0.0..=1.0).contains(&b.router_recall));
        }
        assert!(mix.name.starts_with("MoE derived from tiny (MoEfication, 4x2)"), "{}", mix.name);
    }

    #[test]
    fn with_every_expert_chosen_the_mixture_computes_the_dense_model() {
        let ckpt = random_checkpoint(&LlamaConfig::tiny(), 2);
        let (mix, _) = moefy(&ckpt, &docs(4), 4, 4, 1).unwrap();
        let (mut a, mut b) = (Forward::new(&ckpt), Forward::new(&mix));
        for t in [1u32, 4, 2, 6, 0, 3] {
            let (x, y) = (a.step(TokenId(t), &mut Dense).unwrap(), b.step(TokenId(t), &mut Dense).unwrap());
            let largest = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0f32, f32::max);
            // The same terms of each down projection, summed per expert: only the order differs.
            assert!(largest < 1e-4, "largest logit difference {largest}");
        }
        // With 2 of 4 the mixture leaves terms out: it differs.
        let (half, _) = moefy(&ckpt, &docs(4), 4, 2, 1).unwrap();
        let (mut a, mut b) = (Forward::new(&ckpt), Forward::new(&half));
        let (x, y) = (a.step(TokenId(1), &mut Dense).unwrap(), b.step(TokenId(1), &mut Dense).unwrap());
        assert!(x.iter().zip(&y).any(|(p, q)| (p - q).abs() > 1e-3));
    }

    #[test]
    fn shapes_that_cannot_split_are_refused() {
        let ckpt = random_checkpoint(&LlamaConfig::tiny(), 2);
        for (e, k, says) in [(3, 1, "not a multiple"), (4, 5, "1..=experts"), (4, 0, "1..=experts")] {
            let err = moefy(&ckpt, &docs(4), e, k, 1).unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
        }
        let err = moefy(&ckpt, &docs(0), 4, 2, 1).unwrap_err().to_string();
        assert!(err.contains("calibration tokens"), "{err}");
        let mixture = random_checkpoint(&LlamaConfig::tiny_moe(), 2);
        assert!(moefy(&mixture, &docs(4), 4, 2, 1).unwrap_err().to_string().contains("mixture already"));
    }

    #[test]
    fn the_router_solver_solves() {
        // A = [[4, 2], [2, 3]], B = [[2], [1]] -> W = [[0.5], [0]].
        let mut a = vec![4.0, 2.0, 2.0, 3.0];
        let w = solve_spd(&mut a, &[2.0, 1.0], 2, 1);
        assert!((w[0] - 0.5).abs() < 1e-12 && w[1].abs() < 1e-12, "{w:?}");
    }
}
