//! A mixture's calibration statistics, measured once on calibration text and used by the
//! coalescing policies ([`crate::coalesce`]): per block, the top principal directions of the FFN
//! inputs (the gate predictor's basis) and `W_gate P` per expert; per expert and channel, the
//! mean inner activation, its mean magnitude and the mean `|up x|`; per expert, its mean output.

use crate::checkpoint::{Checkpoint, Matrix};
use crate::coalesce::{expert_weights, Expert};
use crate::forward::{dot, route, silu, Mixing, MixtureExec};
use crate::speculate::{Pass, StepPolicy};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{LayerId, MoeConfig};
use rayon::prelude::*;

/// One block's calibration statistics, per expert.
#[derive(Clone, Debug)]
pub struct BlockStats {
    /// `P^T`: the top principal directions of the block's FFN inputs (rank x hidden).
    pub basis: Matrix,
    /// `W_gate P` per expert (expert_ffn x rank).
    pub gate_lr: Vec<Matrix>,
    /// Mean inner activation per channel over the tokens routed to the expert.
    pub mean: Vec<Vec<f32>>,
    /// Mean magnitude of the inner activation per channel over the same tokens.
    pub mean_abs: Vec<Vec<f32>>,
    /// Mean `|up x|` per channel over the same tokens.
    pub mean_abs_up: Vec<Vec<f32>>,
    /// `W_down mean`: the expert's mean output.
    pub mean_out: Vec<Vec<f32>>,
}

/// A mixture's calibration statistics, one entry per block.
#[derive(Clone, Debug)]
pub struct MixtureStats {
    /// By block.
    pub blocks: Vec<BlockStats>,
    /// Calibration tokens they were measured on.
    pub tokens: usize,
}

/// Records each block's FFN inputs and routing over calibration text.
#[derive(Default)]
struct Recorder {
    x: Vec<Vec<Vec<f32>>>,
    routes: Vec<Vec<Vec<f32>>>,
    moe: Option<MoeConfig>,
}

impl MixtureExec for Recorder {
    fn mixture(&mut self, layer: LayerId, x: &[&[f32]], logits: &[&[f32]]) -> Mixing {
        let l = layer.0 as usize;
        let moe = self.moe.expect("set before the run");
        if self.x.len() <= l {
            self.x.resize(l + 1, Vec::new());
            self.routes.resize(l + 1, Vec::new());
        }
        self.x[l].extend(x.iter().map(|v| v.to_vec()));
        self.routes[l].extend(logits.iter().map(|v| route(v, moe.top_k, moe.gating)));
        Mixing::Graph
    }
}

impl StepPolicy for Recorder {
    fn begin(&mut self, _: Pass<'_>) {}
}

/// Measures a mixture's calibration statistics on `docs` (each fed as one prefill), with a gate
/// predictor of `rank` directions.
pub fn calibrate_mixture(ckpt: &Checkpoint, docs: &[Vec<TokenId>], rank: usize) -> Result<MixtureStats, String> {
    let c = &ckpt.graph.config;
    let moe = c.moe.ok_or("the model is not a mixture")?;
    if rank == 0 || rank > c.hidden {
        return Err(format!("a gate predictor of rank {rank} does not fit the hidden size {}", c.hidden));
    }
    let mut rec = Recorder { moe: Some(moe), ..Recorder::default() };
    for doc in docs.iter().filter(|d| !d.is_empty()) {
        let draft = crate::speculate::Draft::first(c.layers, c.layers).map_err(|e| e.to_string())?;
        let shape = lacuna_spec::speculation::TreeShape { depth: 0, width: 1 };
        let mut s = crate::speculate::Speculator::new(ckpt, shape, &draft).map_err(|e| e.to_string())?;
        s.prefill(doc, &mut crate::forward::Dense, Some(&mut rec)).map_err(|e| e.to_string())?;
    }
    let tokens = rec.x.first().map_or(0, Vec::len);
    if tokens < rank {
        return Err(format!("{tokens} calibration tokens cannot fit a gate predictor of rank {rank}"));
    }
    let blocks = (0..c.layers)
        .into_par_iter()
        .map(|l| {
            let experts: Vec<Expert> = (0..moe.experts).map(|e| expert_weights(ckpt, l, e)).collect();
            let basis = principal_directions(&rec.x[l], rank, l as u64);
            let f = moe.expert_ffn;
            let zeros = || vec![vec![0f32; f]; moe.experts];
            let (mut mean, mut mean_abs, mut mean_abs_up) = (zeros(), zeros(), zeros());
            let mut seen = vec![0usize; moe.experts];
            for (x, r) in rec.x[l].iter().zip(&rec.routes[l]) {
                for e in (0..moe.experts).filter(|&e| r[e] != 0.0) {
                    seen[e] += 1;
                    for j in 0..f {
                        let u = dot(experts[e].up.row(j), x);
                        let a = silu(dot(experts[e].gate.row(j), x)) * u;
                        mean[e][j] += a;
                        mean_abs[e][j] += a.abs();
                        mean_abs_up[e][j] += u.abs();
                    }
                }
            }
            for e in 0..moe.experts {
                let n = seen[e].max(1) as f32;
                mean[e].iter_mut().chain(&mut mean_abs[e]).chain(&mut mean_abs_up[e]).for_each(|v| *v /= n);
            }
            let mean_out = (0..moe.experts)
                .map(|e| {
                    let mut y = vec![0f32; c.hidden];
                    for j in 0..f {
                        y.iter_mut().zip(experts[e].down_t.row(j)).for_each(|(y, d)| *y += mean[e][j] * d);
                    }
                    y
                })
                .collect();
            let gate_lr = experts
                .iter()
                .map(|w| {
                    let data = (0..f)
                        .flat_map(|j| (0..rank).map(move |r| (j, r)))
                        .map(|(j, r)| dot(w.gate.row(j), basis.row(r)))
                        .collect();
                    Matrix { rows: f, cols: rank, data }
                })
                .collect();
            BlockStats { basis, gate_lr, mean, mean_abs, mean_abs_up, mean_out }
        })
        .collect();
    Ok(MixtureStats { blocks, tokens })
}

/// The `rank` leading eigenvectors of `E[x x^T]` over `xs` (rows of the result), by subspace
/// iteration from a seeded start (12 rounds of multiply and Gram-Schmidt, in f64).
fn principal_directions(xs: &[Vec<f32>], rank: usize, seed: u64) -> Matrix {
    let d = xs[0].len();
    let mut cov = vec![0f64; d * d];
    for x in xs {
        for i in 0..d {
            let xi = x[i] as f64;
            for j in 0..d {
                cov[i * d + j] += xi * x[j] as f64;
            }
        }
    }
    // A fixed pseudo-random start (splitmix64), so the basis is reproducible.
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut q: Vec<Vec<f64>> = (0..rank).map(|_| (0..d).map(|_| next()).collect()).collect();
    for _ in 0..12 {
        q = q.iter().map(|v| (0..d).map(|i| (0..d).map(|j| cov[i * d + j] * v[j]).sum()).collect()).collect();
        for r in 0..rank {
            for s in 0..r {
                let p: f64 = (0..d).map(|i| q[r][i] * q[s][i]).sum();
                for i in 0..d {
                    q[r][i] -= p * q[s][i];
                }
            }
            let norm = q[r].iter().map(|v| v * v).sum::<f64>().sqrt().max(f64::MIN_POSITIVE);
            q[r].iter_mut().for_each(|v| *v /= norm);
        }
    }
    Matrix { rows: rank, cols: d, data: q.iter().flatten().map(|&v| v as f32).collect() }
}
