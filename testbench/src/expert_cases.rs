//! `expert_cases`: random expert-unit jobs on real-valued (Gaussian, FP32) data, where the order
//! of additions matters, for the golden, the model and (later) the RTL. **Synthetic**: the
//! weights are drawn, not a real model's (the real-weight check is the compiler's test).

use half::f16;
use lacuna_spec::a8w4::{Int4Vector, Int8Vector, GROUP};
use lacuna_spec::expert_job::{ExpertBlock, ExpertCalibration, ExpertJob};
use lacuna_spec::moe::ExpertId;
use lacuna_spec::moe_trace::{Channels, ExpertLoad, Routing};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// A block and its f32 weights (gate rows, up rows, down columns per expert and channel).
pub struct RandomBlock {
    /// The block in A8W4, with calibration statistics and unrouted means when asked for.
    pub block: ExpertBlock,
    /// Gate rows `[expert][channel]`.
    pub gate: Vec<Vec<Vec<f32>>>,
    /// Up rows.
    pub up: Vec<Vec<Vec<f32>>>,
    /// Down columns.
    pub down: Vec<Vec<Vec<f32>>>,
}

fn gaussian(rng: &mut ChaCha8Rng, n: usize, sigma: f32) -> Vec<f32> {
    (0..n).map(|_| rng.sample::<f32, _>(StandardNormal) * sigma).collect()
}

/// A block of `experts` experts of `ffn` channels over `hidden`, Gaussian weights scaled as a
/// trained FFN's (1/sqrt(fan-in)), a few outliers per row.
pub fn random_block(seed: u64, hidden: usize, experts: usize, ffn: usize, stats: bool, means: bool) -> RandomBlock {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut draw = |n: usize, sigma: f32| {
        let mut v = gaussian(&mut rng, n, sigma);
        let i = rng.random_range(0..n);
        v[i] *= 6.0;
        v
    };
    let (si, so) = (1.0 / (hidden as f32).sqrt(), 1.0 / ((ffn * experts) as f32).sqrt());
    let gate: Vec<Vec<Vec<f32>>> = (0..experts).map(|_| (0..ffn).map(|_| draw(hidden, si)).collect()).collect();
    let up: Vec<Vec<Vec<f32>>> = (0..experts).map(|_| (0..ffn).map(|_| draw(hidden, si)).collect()).collect();
    let down: Vec<Vec<Vec<f32>>> = (0..experts).map(|_| (0..ffn).map(|_| draw(hidden, so)).collect()).collect();
    let mut block = ExpertBlock::quantize(hidden, &gate, &up, &down).expect("finite Gaussian weights");
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    if stats {
        block.calibration = Some(
            (0..experts)
                .map(|_| ExpertCalibration {
                    mean_out: gaussian(&mut rng, hidden, 0.05).into_iter().map(f16::from_f32).collect(),
                    mean: gaussian(&mut rng, ffn, 0.1).into_iter().map(f16::from_f32).collect(),
                    mean_abs: gaussian(&mut rng, ffn, 0.2).into_iter().map(|v| f16::from_f32(v.abs() + 0.01)).collect(),
                })
                .collect(),
        );
    }
    if means {
        block.unrouted_means = Some(
            (0..experts).map(|_| gaussian(&mut rng, hidden, 0.02).into_iter().map(f16::from_f32).collect()).collect(),
        );
    }
    RandomBlock { block, gate, up, down }
}

/// A job of `tokens` tokens on `block`: each token routes to up to `k` distinct experts with
/// softmax-like weights (some tokens to none when `k` is 0), loads a random choice of experts,
/// each whole or a random ascending subset of its channels (possibly none).
pub fn random_job(seed: u64, block: &ExpertBlock, tokens: usize, k: usize, calibrated: bool) -> ExpertJob {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (experts, ffn) = (block.experts.len(), block.expert_ffn());
    let xs = (0..tokens).map(|_| gaussian(&mut rng, block.hidden, 1.0)).collect();
    let routing = (0..tokens)
        .map(|_| {
            let mut chosen: Vec<u32> = Vec::new();
            while chosen.len() < k.min(experts) {
                let e = rng.random_range(0..experts as u32);
                if !chosen.contains(&e) {
                    chosen.push(e);
                }
            }
            let mut w: Vec<f32> = (0..chosen.len()).map(|_| rng.random_range(0.05f32..1.0)).collect();
            w.sort_by(|a, b| b.total_cmp(a));
            Routing { experts: chosen.into_iter().map(ExpertId).collect(), weights: w }
        })
        .collect();
    let picked: Vec<u32> = (0..experts as u32).filter(|_| rng.random_bool(0.7)).collect();
    let loads = picked
        .into_iter()
        .map(|e| {
            let channels = if rng.random_bool(0.3) {
                Channels::All
            } else {
                let keep = rng.random_range(0.0..1.0);
                let c: Vec<u32> = (0..ffn as u32).filter(|_| rng.random_bool(keep)).collect();
                if c.is_empty() {
                    Channels::Only(vec![rng.random_range(0..ffn as u32)])
                } else {
                    Channels::Only(c)
                }
            };
            ExpertLoad { expert: ExpertId(e), channels }
        })
        .collect();
    ExpertJob { tokens: xs, routing, loads, calibrated }
}

/// `tiny` with 8 FP32 lanes (named `tiny_f8`): the quantizer's lanes' maxima then take two feeds
/// of four and a 32-value group four chunks, which `tiny`'s two lanes never exercise; the
/// testbench builds its quantizer and datapath (testbench/build.rs).
pub fn tiny_f8() -> lacuna_spec::Arch {
    let mut a = lacuna_spec::Arch::preset("tiny").expect("a preset");
    a.name = "tiny_f8".into();
    a.expert_unit.fp32_lanes = 8;
    a
}

/// Group `g` of `x` as the dot engine's `x` port takes it (byte k: activation 32 g + k; zero past
/// the row's end, as the activation store holds a short row).
pub fn x_words(x: &Int8Vector, g: usize) -> [u32; 8] {
    std::array::from_fn(|j| {
        (0..4).fold(0u32, |word, b| {
            let v = x.values.get(g * GROUP + 4 * j + b).copied().unwrap_or(0);
            word | ((v as u8 as u32) << (8 * b))
        })
    })
}

/// Group `g` of `w` as a channel record packs it (nibble k: weight 32 g + k); past the row's
/// end, `pad` (the record's next bytes: anything, since the activations there are zero).
pub fn w_words(w: &Int4Vector, g: usize, pad: u32) -> [u32; 4] {
    std::array::from_fn(|j| {
        (0..8).fold(0u32, |word, n| {
            let i = g * GROUP + 8 * j + n;
            let nibble = if i < w.len() { (w.value(i) as u8 & 0xf) as u32 } else { (pad >> (4 * n)) & 0xf };
            word | (nibble << (4 * n))
        })
    })
}
