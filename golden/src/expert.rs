//! `expert`: the golden expert-unit job, composed from the rules of `lacuna_spec::a8w4` in the
//! order they state, and an f64 reference of the same quantized computation with its bound.
//!
//! Per token `t`, for each expert `e` the job touches (ascending) that `t` routes to with weight
//! `w`: for each loaded channel `j` (ascending) `g = row_dot(x, gate_j)`, `u = row_dot(x, up_j)`,
//! `h = silu(g) * u`, `a = fp16(w h)`, and `y[r] += (a s_{j,r}) q_{j,r}` for every row; then,
//! when the job is calibrated, `y[r] += (w kappa) (c[r] - m[r])` with `m[r]` the same down
//! products of the channels' FP16 means (from 0, channel order), `kappa = sum|h| / sum nu_j`
//! (1 when the loaded channels' `sum nu_j` is 0, as when none loads). Last, when the block has unrouted means, `y[r] += mean_e[r]` for
//! every expert `t` does not route to, ascending.

use half::f16;
use lacuna_spec::a8w4::{down_operand, down_product, groups, row_dot, silu, Int8Vector, GROUP};
use lacuna_spec::expert_job::{ExpertBlock, ExpertJob};

/// Each token's output, bit for bit as the expert unit computes it (`job` checked).
pub fn expert_job(job: &ExpertJob, block: &ExpertBlock) -> Vec<Vec<f32>> {
    let ffn = block.expert_ffn();
    let experts = job.experts();
    let mut out = Vec::with_capacity(job.tokens.len());
    for (x, routing) in job.tokens.iter().zip(&job.routing) {
        let xq = Int8Vector::quantize(x).expect("a checked job's tokens are finite");
        let mut y = vec![0f32; block.hidden];
        for &e in &experts {
            let Some(k) = routing.experts.iter().position(|&r| r == e) else { continue };
            let w = routing.weights[k];
            let (mut a_l1, mut nu_l1) = (0f32, 0f32);
            let channels = job.channels_of(e, ffn);
            for &j in &channels {
                let ch = &block.experts[e.0 as usize][j];
                let h = silu(row_dot(&xq, &ch.gate)) * row_dot(&xq, &ch.up);
                let a = down_operand(w, h);
                for (r, y) in y.iter_mut().enumerate() {
                    *y += down_product(a, ch.down.scale(r / GROUP), ch.down.value(r));
                }
                if job.calibrated {
                    a_l1 += h.abs();
                    nu_l1 += calibration(block)[e.0 as usize].mean_abs[j].to_f32();
                }
            }
            if job.calibrated {
                let cal = &calibration(block)[e.0 as usize];
                let m = mean_down(block, e.0 as usize, &channels);
                let kappa = if nu_l1 > 0.0 { a_l1 / nu_l1 } else { 1.0 };
                let wk = w * kappa;
                for ((y, c), m) in y.iter_mut().zip(&cal.mean_out).zip(&m) {
                    *y += wk * (c.to_f32() - m);
                }
            }
        }
        if let Some(means) = &block.unrouted_means {
            for (e, mean) in means.iter().enumerate() {
                if !routing.experts.iter().any(|r| r.0 as usize == e) {
                    y.iter_mut().zip(mean).for_each(|(y, m)| *y += m.to_f32());
                }
            }
        }
        out.push(y);
    }
    out
}

fn calibration(block: &ExpertBlock) -> &[lacuna_spec::expert_job::ExpertCalibration] {
    block.calibration.as_deref().expect("a checked calibrated job's block has statistics")
}

/// `m = W_down[:, L] mu_L` of expert `e`, in channel order, from 0: the down products of the
/// channels' FP16 means.
pub fn mean_down(block: &ExpertBlock, e: usize, channels: &[usize]) -> Vec<f32> {
    let cal = &calibration(block)[e];
    let mut m = vec![0f32; block.hidden];
    for &j in channels {
        let d = &block.experts[e][j].down;
        for (r, m) in m.iter_mut().enumerate() {
            *m += down_product(cal.mean[j], d.scale(r / GROUP), d.value(r));
        }
    }
    m
}

/// The same computation on the same quantized operands in f64 (the sigmoid the same piecewise
/// linear one, `a` not rounded to FP16), with a bound on each output's distance from
/// [`expert_job`]'s: `reference[t][r]` and `bound[t][r]`.
///
/// The bound adds, per down term `a s q` of the output: FP16's rounding of `a` (2^-11 of
/// `|w h|`), `h`'s own f32 error (the gate and up sums' `gamma_{G+2}` of their absolute terms,
/// through SiLU's slope, at most 1.1), and the f32 accumulation, `gamma_{n}` of the absolute
/// terms with `n` the output's additions; calibration and the means add theirs the same way.
pub struct Reference {
    /// The f64 outputs.
    pub reference: Vec<Vec<f64>>,
    /// Their bounds.
    pub bound: Vec<Vec<f64>>,
}

fn gamma(n: usize) -> f64 {
    let u = f32::EPSILON as f64 / 2.0;
    n as f64 * u / (1.0 - n as f64 * u)
}

/// The f64 reference and bound of [`expert_job`] (`job` checked).
pub fn reference(job: &ExpertJob, block: &ExpertBlock) -> Reference {
    let ffn = block.expert_ffn();
    let experts = job.experts();
    let g_count = groups(block.hidden);
    let (mut reference, mut bound) = (Vec::new(), Vec::new());
    for (x, routing) in job.tokens.iter().zip(&job.routing) {
        let xq = Int8Vector::quantize(x).expect("finite");
        let sx = xq.scale as f64;
        let dot = |w: &lacuna_spec::a8w4::Int4Vector| -> (f64, f64) {
            let (mut v, mut abs) = (0f64, 0f64);
            for i in 0..w.len() {
                let t = xq.values[i] as f64 * w.value(i) as f64 * w.scale(i / GROUP).to_f64() * sx;
                v += t;
                abs += t.abs();
            }
            (v, abs)
        };
        let silu64 = |g: f64| silu(g as f32) as f64; // the same table; its own error is stated apart
        let mut y = vec![0f64; block.hidden];
        let mut abs = vec![0f64; block.hidden];
        let mut err = vec![0f64; block.hidden];
        let mut adds = 0usize;
        for &e in &experts {
            let Some(k) = routing.experts.iter().position(|&r| r == e) else { continue };
            let w = routing.weights[k] as f64;
            let channels = job.channels_of(e, ffn);
            let (mut a_l1, mut nu_l1) = (0f64, 0f64);
            for &j in &channels {
                let ch = &block.experts[e.0 as usize][j];
                let ((g, g_abs), (u, u_abs)) = (dot(&ch.gate), dot(&ch.up));
                let h = silu64(g) * u;
                let gam = gamma(g_count + 2);
                let h_err = 1.1 * gam * g_abs * u.abs() + silu64(g).abs() * gam * u_abs + (h.abs() + 1e-30) * 1e-6;
                // FP16's rounding of `w h`: relative 2^-11 when normal, 2^-25 absolute below.
                let a_err = w * (h.abs() * f64::powi(2.0, -11) + h_err) + f64::powi(2.0, -25);
                for r in 0..block.hidden {
                    let sq = ch.down.scale(r / GROUP).to_f64() * ch.down.value(r) as f64;
                    // The operand saturates at FP16's largest value, as the rule says.
                    let a = (w * h).clamp(-65504.0, 65504.0);
                    y[r] += a * sq;
                    abs[r] += (a * sq).abs();
                    err[r] += a_err * sq.abs();
                }
                adds += 1;
                if job.calibrated {
                    a_l1 += h.abs();
                    nu_l1 += block.calibration.as_ref().expect("checked")[e.0 as usize].mean_abs[j].to_f64();
                }
            }
            if job.calibrated {
                let cal = &block.calibration.as_ref().expect("checked")[e.0 as usize];
                let kappa = if nu_l1 > 0.0 { a_l1 / nu_l1 } else { 1.0 };
                for r in 0..block.hidden {
                    let mut m = 0f64;
                    let mut m_abs = 0f64;
                    for &j in &channels {
                        let d = &block.experts[e.0 as usize][j].down;
                        let t = cal.mean[j].to_f64() * d.scale(r / GROUP).to_f64() * d.value(r) as f64;
                        m += t;
                        m_abs += t.abs();
                    }
                    let term = w * kappa * (cal.mean_out[r].to_f64() - m);
                    y[r] += term;
                    abs[r] += term.abs();
                    // kappa's own error (its sums, relative gamma_{2C+1}, and h's) and m's sum.
                    let k_rel = gamma(2 * channels.len() + 5) + 1e-5;
                    err[r] += term.abs() * k_rel
                        + w * kappa * gamma(channels.len() + 2) * (m_abs + cal.mean_out[r].to_f64().abs());
                }
                adds += 1;
            }
        }
        if let Some(means) = &block.unrouted_means {
            for (e, mean) in means.iter().enumerate() {
                if !routing.experts.iter().any(|r| r.0 as usize == e) {
                    for r in 0..block.hidden {
                        y[r] += mean[r].to_f64();
                        abs[r] += mean[r].to_f64().abs();
                    }
                    adds += 1;
                }
            }
        }
        let acc = gamma(adds + 2);
        bound.push((0..block.hidden).map(|r| err[r] + acc * abs[r] + f64::from(f32::MIN_POSITIVE)).collect());
        reference.push(y);
    }
    Reference { reference, bound }
}

/// FP16 statistics from f32 ones (rounded to nearest).
pub fn to_f16(v: &[f32]) -> Vec<f16> {
    v.iter().map(|&x| f16::from_f32(x)).collect()
}
