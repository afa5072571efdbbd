//! `lacuna eval MODEL --front`: the accuracy-speed front of dual sparsity.
//!
//! A grid of mean weight x activation sparsity, each point under each allocation (uniform, or
//! by measured sensitivity: `lacuna_compiler::passes::allocate`): the model compiled for the
//! point, its perplexity and top-1 agreement with the dense model on held-out literature (f32
//! products with the pruned weights and exactly the activations the hardware drops), and its
//! whole decode step simulated on the cycle model (speedup and energy against dense FP16 GEMV on
//! the same hardware). The Pareto front per allocation (speedup against perplexity increase)
//! and the best speedup within 5 % and 10 % of dense perplexity.
//!
//! The work is shared where the grid allows: the dense model's calibration capture once (Wanda's
//! norms, OWL's outlier ratios), each weight level pruned and captured once per allocation, each
//! point then only thresholded, lowered, traced, evaluated and simulated. Points that do not
//! depend on the allocation (no sparsity of either kind) are computed once.

use crate::cmd::eval::{decode_speed, DecodeSpeed};
use anyhow::{Context, Result};
use lacuna_compiler::calibrate::{capture, Capture};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::compile::{
    calibrate_pruned, finish, needs_dense_capture, prune, refuse_mixture, texts, Calibration, CompileOptions,
};
use lacuna_compiler::corpus::{Split, SOURCE};
use lacuna_compiler::eval::{accuracy, Numerics};
use lacuna_compiler::passes::act_thresholds::Thresholds;
use lacuna_compiler::passes::allocate::{Allocation, InputKind};
use lacuna_compiler::passes::lower::Layout;
use lacuna_compiler::passes::prune_weights::PruneMethod;
use lacuna_compiler::tokenizer::TokenId;
use lacuna_model::energy::EnergyTable;
use lacuna_spec::job::JobKind;
use lacuna_spec::Arch;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `lacuna eval --front` runs.
pub struct FrontArgs {
    pub model_path: PathBuf,
    pub weight_levels: Vec<f64>,
    pub act_levels: Vec<f64>,
    pub allocations: Vec<Allocation>,
    pub layout: Layout,
    pub method: PruneMethod,
    pub arch: Arch,
    /// Evaluation tokens at most (documents of 4 `literature` entries, each up to `max_tokens`).
    pub tokens: usize,
    pub calibration_docs: usize,
    pub max_tokens: usize,
    pub json: bool,
    pub out: Option<PathBuf>,
}

/// One point of the grid.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub allocation: Allocation,
    pub weight_sparsity: f64,
    pub act_sparsity_target: f64,
    /// The share of the thresholded inputs' activations dropped on the evaluation text (the LM
    /// head's input among them where the allocation thresholds it).
    pub act_sparsity_eval_text: f64,
    pub perplexity: f64,
    /// `perplexity / dense perplexity - 1`.
    pub perplexity_increase: f64,
    pub top1_agreement_with_dense: f64,
    pub cycles_per_token: f64,
    pub speedup_vs_dense: f64,
    pub dram_mb_per_token: f64,
    pub energy_uj_per_token: f64,
    pub dense_energy_uj_per_token: f64,
    /// Layers run as gemv jobs over dense panels (the rest spmspv over RLC-CSC).
    pub gemv_layers: usize,
    /// On the Pareto front of its allocation (no point of it is both faster and more accurate).
    pub on_front: bool,
    /// Each block's weight sparsity (sensitivity allocation with weights pruned).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weight_sparsity_by_block: Vec<f64>,
    /// Each input kind's activation sparsity (sensitivity allocation with activations dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub act_sparsity_by_kind: Option<BTreeMap<InputKind, f64>>,
}

/// The best operating point of an allocation under a perplexity bound.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub allocation: Allocation,
    /// The bound on the perplexity increase (0.05, 0.10).
    pub max_perplexity_increase: f64,
    /// The fastest point within it (index into `points`), if any.
    pub point: Option<usize>,
    pub speedup_vs_dense: Option<f64>,
}

#[derive(Serialize)]
struct Report<'a> {
    model: String,
    arch: String,
    arch_hash: String,
    method: String,
    layout: &'static str,
    eval_text: String,
    calibration_text: String,
    numerics: &'static str,
    scope: &'static str,
    dense_perplexity: f64,
    predicted_tokens: usize,
    points: &'a [Point],
    targets: &'a [Target],
}

const NUMERICS: &str = "accuracy: golden forward in f32 with the pruned weights and exactly the activations the hardware drops (the core's FP16 numerics, +0.5 to +9 % perplexity at 30-70 % on SmolLM2, are `lacuna eval --numerics core`); speed and energy: the cycle model running the compiled program on its decode trace";
const SCOPE: &str = "the whole decode step (linear layers on the core, attention as dense core jobs over the KV cache, the vector unit), averaged over the steps of the trace of \"The capital of France is\" and 2 generated tokens; dense: the linear layers as dense FP16 GEMV on the same hardware. The LM head's weights are never pruned; under uniform its input is not thresholded and the activation level is the block linears' mean, under sensitivity the head's input is one of the kinds and the level is the parameter-weighted mean over the block linears and the head (act. sparsity on the eval text: the share of the thresholded inputs' values dropped, not weighted)";

/// The evaluation documents: 4 `literature` entries each, up to `max_tokens` each, until
/// `tokens` are taken (the last one cut).
fn eval_docs(ckpt: &Checkpoint, tokens: usize, max_tokens: usize) -> Result<Vec<Vec<TokenId>>> {
    let mut out = Vec::new();
    let mut left = tokens;
    for text in texts(Split::Evaluation, usize::MAX).map_err(anyhow::Error::msg)? {
        if left < 2 {
            break;
        }
        let doc: Vec<TokenId> = ckpt.tokenizer.encode(&text).into_iter().take(max_tokens.min(left)).collect();
        left -= doc.len();
        out.push(doc);
    }
    Ok(out)
}

pub fn run(a: FrontArgs) -> Result<ExitCode> {
    let start = std::time::Instant::now();
    let dense = Checkpoint::open(&a.model_path)?;
    refuse_mixture(&dense).map_err(anyhow::Error::msg)?;
    let docs = eval_docs(&dense, a.tokens, a.max_tokens)?;
    let (dense_acc, dense_top1) = accuracy(&dense, Numerics::F32(&Thresholds::default()), &docs, None)?;
    let calib = texts(Split::Calibration, a.calibration_docs).map_err(anyhow::Error::msg)?;
    let opts_at = |alloc: Allocation, w: f64, x: f64| CompileOptions {
        calibration_docs: a.calibration_docs,
        held_out_docs: 0,
        max_tokens: a.max_tokens,
        allocation: alloc,
        layout: a.layout,
        ..CompileOptions::new(a.arch.clone(), w, a.method, x)
    };
    // The dense capture, once, when some weight level reads it.
    let needs_dense =
        a.weight_levels.iter().any(|&w| a.allocations.iter().any(|&al| needs_dense_capture(&opts_at(al, w, 0.0))));
    let dense_capture: Option<(Capture, usize)> = match needs_dense {
        true => Some(capture(&dense, &calib, a.max_tokens, false).map_err(|e| anyhow::anyhow!("calibration: {e}"))?),
        false => None,
    };

    let total = (a.allocations.len() * a.weight_levels.len() * a.act_levels.len()) as u64;
    let bar = match a.json {
        true => indicatif::ProgressBar::hidden(),
        false => indicatif::ProgressBar::new(total),
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} points {elapsed} (eta {eta}) {msg}")
            .expect("a valid template"),
    );
    let energy = EnergyTable::default();
    let mut points: Vec<Point> = Vec::new();
    // A point with no sparsity of a kind is the same under every allocation for that kind.
    let mut done: BTreeMap<(Allocation, u64, Allocation, u64), usize> = BTreeMap::new();
    let key = |al: Allocation, w: f64, x: f64| {
        let wa = if w > 0.0 { al } else { Allocation::Uniform };
        let xa = if x > 0.0 { al } else { Allocation::Uniform };
        (wa, w.to_bits(), xa, x.to_bits())
    };
    for &alloc in &a.allocations {
        for &w in &a.weight_levels {
            let mut pruned: Option<(Checkpoint, Option<Calibration>)> = None;
            let mut by_block = Vec::new();
            for &x in &a.act_levels {
                bar.set_message(format!("{} w {:.0} % a {:.0} %", alloc.name(), 100.0 * w, 100.0 * x));
                if let Some(&i) = done.get(&key(alloc, w, x)) {
                    let p = Point { allocation: alloc, ..points[i].clone() };
                    points.push(p);
                    bar.inc(1);
                    continue;
                }
                let opts = opts_at(alloc, w, x);
                if pruned.is_none() {
                    let mut ckpt = dense.clone();
                    if w > 0.0 {
                        by_block = prune(&mut ckpt, &opts, dense_capture.as_ref().map(|c| &c.0))
                            .map_err(anyhow::Error::msg)?
                            .into_values()
                            .collect();
                    }
                    // The thresholds are calibrated on the pruned model, once per weight level.
                    let cap = match a.act_levels.iter().any(|&x| x > 0.0) {
                        true => Some(calibrate_pruned(&ckpt, &opts, |_| {}).map_err(anyhow::Error::msg)?),
                        false => None,
                    };
                    pruned = Some((ckpt, cap));
                }
                let (ckpt, cap) = pruned.as_ref().expect("set above");
                let n = cap.as_ref().map_or(0, |c| c.tokens);
                let parts = finish(ckpt, cap.as_ref(), &opts, n, |_| {}).map_err(anyhow::Error::msg)?;
                let p = parts
                    .program
                    .clone()
                    .load(parts.image, Path::new("program.json"), Path::new("image.bin"))
                    .context("the compiled program")?;
                let (acc, _) = accuracy(ckpt, Numerics::F32(&parts.thresholds), &docs, Some(&dense_top1))?;
                let sp: DecodeSpeed = decode_speed(&p, &parts.trace, &energy)?;
                done.insert(key(alloc, w, x), points.len());
                points.push(Point {
                    allocation: alloc,
                    weight_sparsity: w,
                    act_sparsity_target: x,
                    act_sparsity_eval_text: acc.act_sparsity,
                    perplexity: acc.perplexity,
                    perplexity_increase: acc.perplexity / dense_acc.perplexity - 1.0,
                    top1_agreement_with_dense: acc.top1_agreement,
                    cycles_per_token: sp.cycles,
                    speedup_vs_dense: sp.speedup(),
                    dram_mb_per_token: sp.dram_bytes / 1e6,
                    energy_uj_per_token: sp.energy_pj / 1e6,
                    dense_energy_uj_per_token: sp.dense_energy_pj / 1e6,
                    gemv_layers: p.program.layers.iter().filter(|l| l.job == JobKind::Gemv).count(),
                    on_front: false,
                    weight_sparsity_by_block: by_block.clone(),
                    act_sparsity_by_kind: parts.act_levels,
                });
                bar.inc(1);
            }
        }
    }
    bar.finish_and_clear();
    mark_fronts(&mut points);
    let targets = targets(&points, &a.allocations);
    let report = Report {
        model: format!("{} ({})", dense.name, dense.file_name()),
        arch: a.arch.name.clone(),
        arch_hash: a.arch.hash().to_string(),
        method: format!("{:?}", a.method).to_lowercase(),
        layout: a.layout.name(),
        eval_text: format!(
            "{SOURCE}: literature, {} documents of 4 entries, up to {} tokens each, {} predicted tokens",
            docs.len(),
            a.max_tokens,
            dense_acc.predicted
        ),
        calibration_text: format!("{SOURCE}: fortunes, {} documents of 4 entries", calib.len()),
        numerics: NUMERICS,
        scope: SCOPE,
        dense_perplexity: dense_acc.perplexity,
        predicted_tokens: dense_acc.predicted,
        points: &points,
        targets: &targets,
    };
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
        std::fs::write(dir.join("front.json"), serde_json::to_string_pretty(&report)?)?;
        std::fs::write(dir.join("front.csv"), csv(&points))?;
        crate::front_plot::plot(&dir.join("front.svg"), &report.model, &points)?;
    }
    eprintln!("[{:>6.1} s] {} points", start.elapsed().as_secs_f64(), points.len());
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    print_table(&report);
    Ok(ExitCode::SUCCESS)
}

/// Marks each allocation's Pareto front: a point is on it when no other point of its allocation
/// has at least its speedup and at most its perplexity, one of them strictly.
pub fn mark_fronts(points: &mut [Point]) {
    let flags: Vec<bool> = points
        .iter()
        .map(|p| {
            !points.iter().any(|q| {
                q.allocation == p.allocation
                    && q.speedup_vs_dense >= p.speedup_vs_dense
                    && q.perplexity <= p.perplexity
                    && (q.speedup_vs_dense > p.speedup_vs_dense || q.perplexity < p.perplexity)
            })
        })
        .collect();
    for (p, f) in points.iter_mut().zip(flags) {
        p.on_front = f;
    }
}

/// Per allocation, the fastest point within 5 % and within 10 % of dense perplexity.
fn targets(points: &[Point], allocations: &[Allocation]) -> Vec<Target> {
    let mut out = Vec::new();
    for &allocation in allocations {
        for bound in [0.05, 0.10] {
            let best = points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.allocation == allocation && p.perplexity_increase <= bound)
                // The fastest; of equally fast ones the more accurate, then the first.
                .max_by(|a, b| {
                    let (p, q) = (a.1, b.1);
                    p.speedup_vs_dense
                        .total_cmp(&q.speedup_vs_dense)
                        .then(q.perplexity.total_cmp(&p.perplexity))
                        .then(b.0.cmp(&a.0))
                });
            out.push(Target {
                allocation,
                max_perplexity_increase: bound,
                point: best.map(|b| b.0),
                speedup_vs_dense: best.map(|b| b.1.speedup_vs_dense),
            });
        }
    }
    out
}

fn csv(points: &[Point]) -> String {
    let mut s = String::from("allocation,weight_sparsity,act_sparsity_target,act_sparsity_eval_text,perplexity,perplexity_increase,top1_agreement_with_dense,cycles_per_token,speedup_vs_dense,dram_mb_per_token,energy_uj_per_token,dense_energy_uj_per_token,gemv_layers,on_front\n");
    for p in points {
        s.push_str(&format!(
            "{},{},{},{:.4},{:.4},{:.4},{:.4},{:.0},{:.4},{:.3},{:.2},{:.2},{},{}\n",
            p.allocation.name(),
            p.weight_sparsity,
            p.act_sparsity_target,
            p.act_sparsity_eval_text,
            p.perplexity,
            p.perplexity_increase,
            p.top1_agreement_with_dense,
            p.cycles_per_token,
            p.speedup_vs_dense,
            p.dram_mb_per_token,
            p.energy_uj_per_token,
            p.dense_energy_uj_per_token,
            p.gemv_layers,
            p.on_front
        ));
    }
    s
}

fn print_table(r: &Report) {
    println!("model        {}", r.model);
    println!("arch         {} ({}); pruning {}; {} layout", r.arch, r.arch_hash, r.method, r.layout);
    println!("eval text    {}", r.eval_text);
    println!("calibration  {}", r.calibration_text);
    println!("numerics     {}", r.numerics);
    println!("scope        {}", r.scope);
    println!("dense        perplexity {:.2}\n", r.dense_perplexity);
    let mut t = crate::table::Table::new(&[
        "allocation",
        "weights",
        "acts (target)",
        "acts (eval)",
        "perplexity",
        "increase",
        "top-1",
        "speedup",
        "uJ/token",
        "front",
    ]);
    for p in r.points {
        t.row(vec![
            p.allocation.name().into(),
            format!("{:.0} %", 100.0 * p.weight_sparsity),
            format!("{:.0} %", 100.0 * p.act_sparsity_target),
            format!("{:.1} %", 100.0 * p.act_sparsity_eval_text),
            format!("{:.2}", p.perplexity),
            format!("{:+.1} %", 100.0 * p.perplexity_increase),
            format!("{:.1} %", 100.0 * p.top1_agreement_with_dense),
            format!("{:.2}", p.speedup_vs_dense),
            format!("{:.0}", p.energy_uj_per_token),
            if p.on_front { "*".into() } else { String::new() },
        ]);
    }
    print!("{}", t.render());
    for tg in r.targets {
        let at = tg.point.map(|i| &r.points[i]);
        println!(
            "{:<12} within {:>2.0} % of dense perplexity: {}",
            tg.allocation.name(),
            100.0 * tg.max_perplexity_increase,
            match at {
                Some(p) => format!(
                    "{:.2}x (weights {:.0} %, activations {:.0} %)",
                    p.speedup_vs_dense,
                    100.0 * p.weight_sparsity,
                    100.0 * p.act_sparsity_target
                ),
                None => "no point".into(),
            }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(allocation: Allocation, perplexity: f64, speedup: f64) -> Point {
        Point {
            allocation,
            weight_sparsity: 0.0,
            act_sparsity_target: 0.0,
            act_sparsity_eval_text: 0.0,
            perplexity,
            perplexity_increase: perplexity / 10.0 - 1.0,
            top1_agreement_with_dense: 1.0,
            cycles_per_token: 1.0,
            speedup_vs_dense: speedup,
            dram_mb_per_token: 0.0,
            energy_uj_per_token: 0.0,
            dense_energy_uj_per_token: 0.0,
            gemv_layers: 0,
            on_front: false,
            weight_sparsity_by_block: Vec::new(),
            act_sparsity_by_kind: None,
        }
    }

    #[test]
    fn a_point_is_on_its_allocations_front_unless_another_is_faster_and_no_worse() {
        use Allocation::{Sensitivity, Uniform};
        let mut p = vec![
            point(Uniform, 10.0, 0.8),     // dense: the most accurate
            point(Uniform, 10.4, 1.2),     // +4 %, faster: on the front
            point(Uniform, 10.9, 1.1),     // slower and worse than the one above: off
            point(Uniform, 20.0, 1.7),     // the fastest: on
            point(Sensitivity, 10.9, 1.1), // the same as an off point, but alone in its allocation
            point(Sensitivity, 10.9, 1.1), // a tie: neither dominates the other
        ];
        mark_fronts(&mut p);
        let on: Vec<bool> = p.iter().map(|p| p.on_front).collect();
        assert_eq!(on, [true, true, false, true, true, true]);
        let t = targets(&p, &[Uniform, Sensitivity]);
        assert_eq!((t[0].point, t[0].speedup_vs_dense), (Some(1), Some(1.2)), "within 5 %");
        assert_eq!(t[1].point, Some(1), "within 10 %: 10.9 is +9 % but slower");
        assert_eq!(t[2].point, None, "sensitivity has nothing within 5 %");
        assert_eq!(t[3].point, Some(4), "the first of the tie within 10 %");
    }
}
