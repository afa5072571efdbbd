//! `lacuna simulate DIR` where DIR holds a MoE trace (`lacuna compile MODEL --moe ExK --tree DxW
//! -o DIR`): every policy's passes through the expert unit's cycle model on the arch (`--arch`,
//! default `edge`), block by block on one memory port, and per policy the latency, energy and
//! expert bytes per generated token.
//!
//! Scope, stated in every report: the mixture blocks on the expert unit only. The rest of each
//! pass (attention, norms, the router's logits, the draft's own passes) runs on the core and the
//! vector unit and is not in these numbers yet; the trace carries no activations, so the unit's
//! timing is computed from each job's shape (its timing does not depend on the values). A pass
//! with more tokens than the unit's `max_tokens` (a prompt) runs in chunks, each loading the
//! pass's channels (the channel buffer may hold some).

use crate::table::Table;
use anyhow::{Context, Result};
use lacuna_model::energy::EnergyTable;
use lacuna_model::expert_unit::{ExpertCounters, ExpertUnit, JobShape};
use lacuna_model::memory::Memory;
use lacuna_spec::moe_trace::{MoeTrace, PassKind, PolicyTrace};
use lacuna_spec::Arch;
use std::path::Path;
use std::process::ExitCode;

/// What the numbers cover.
pub const SCOPE: &str = "the mixture blocks on the expert unit only (attention, norms, the router's logits and the draft's passes are not included yet); MoE derived from a dense model where the trace says so";

/// One policy's result.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PolicyRow {
    /// The policy.
    pub policy: String,
    /// Tokens committed per verification step.
    pub tokens_per_step: f64,
    /// Tokens the steps committed.
    pub generated: usize,
    /// Verification steps.
    pub steps: usize,
    /// Expert-unit cycles of the steps.
    pub step_cycles: u64,
    /// Expert-unit cycles of the prefill.
    pub prefill_cycles: u64,
    /// Step latency per generated token, microseconds.
    pub latency_per_token_us: f64,
    /// Step energy per generated token, microjoules.
    pub energy_per_token_uj: f64,
    /// Expert bytes (channels and statistics, whole bursts) the steps read per generated token.
    pub expert_bytes_per_token: f64,
    /// Fraction of the step cycles the down engine was busy.
    pub down_utilization: f64,
    /// Fraction of the dot units' step cycles that summed a group (a wave's idle units and the
    /// engine's idle cycles both count against it).
    pub dot_utilization: f64,
    /// Fraction of the steps' listed channels found in the channel buffer.
    pub buffer_hit_rate: f64,
    /// The steps' counters.
    pub counters: ExpertCounters,
}

fn simulate_policy(trace: &MoeTrace, policy: &PolicyTrace, arch: &Arch, energy: &EnergyTable) -> Result<PolicyRow> {
    let mut unit = ExpertUnit::new(&arch.expert_unit);
    let mut mem = Memory::new(&arch.memory);
    let chunk = arch.expert_unit.max_tokens as usize;
    let (mut now, mut step_cycles, mut prefill_cycles) = (0u64, 0u64, 0u64);
    let mut steps = ExpertCounters::default();
    let (mut generated, mut n_steps) = (0, 0);
    for (p, pass) in policy.passes.iter().enumerate() {
        let start = now;
        let mut counters = ExpertCounters::default();
        for first in (0..pass.tokens.len()).step_by(chunk) {
            let last = (first + chunk).min(pass.tokens.len());
            for (layer, block) in pass.blocks.iter().enumerate() {
                let shape = JobShape {
                    hidden: trace.hidden,
                    experts: trace.moe.experts,
                    expert_ffn: trace.moe.expert_ffn,
                    tokens: last - first,
                    routing: &block.routing[first..last],
                    loads: &block.loads,
                    calibrated: block.calibrated,
                    unrouted_means: trace.moe.unrouted_mean,
                };
                let (end, c) = unit
                    .time(&shape, layer as u32, &mut mem, now)
                    .map_err(|e| anyhow::anyhow!("{}: pass {p}, block {layer}: {e}", policy.policy))?;
                counters.add(&c);
                now = end;
            }
        }
        match pass.kind {
            PassKind::Prefill => prefill_cycles += now - start,
            PassKind::Verify => {
                step_cycles += now - start;
                steps.add(&counters);
                generated += pass.accepted.len();
                n_steps += 1;
            }
        }
    }
    let per = |v: f64| if generated > 0 { v / generated as f64 } else { 0.0 };
    let e = energy.of_expert(&steps);
    Ok(PolicyRow {
        policy: policy.policy.to_string(),
        tokens_per_step: if n_steps > 0 { generated as f64 / n_steps as f64 } else { 0.0 },
        generated,
        steps: n_steps,
        step_cycles,
        prefill_cycles,
        latency_per_token_us: per(step_cycles as f64 / arch.clock_mhz as f64),
        energy_per_token_uj: per(e.total_pj() / 1e6),
        expert_bytes_per_token: per((steps.channel_bytes + steps.stats_bytes) as f64),
        down_utilization: if step_cycles > 0 { steps.down_busy as f64 / step_cycles as f64 } else { 0.0 },
        dot_utilization: match step_cycles * arch.expert_unit.dot_units as u64 {
            0 => 0.0,
            unit_cycles => steps.dot_group_ops as f64 / unit_cycles as f64,
        },
        buffer_hit_rate: if steps.channels > 0 { steps.buffer_hits as f64 / steps.channels as f64 } else { 0.0 },
        counters: steps,
    })
}

#[derive(serde::Serialize)]
struct Report<'a> {
    trace: String,
    model: &'a str,
    arch: &'a str,
    arch_hash: String,
    clock_mhz: u32,
    scope: &'static str,
    policies: Vec<PolicyRow>,
}

/// Simulates every policy of `dir`'s MoE trace on `arch`; with `out`, also writes
/// `simulate_moe.json`, `simulate_moe.csv` and `policies.svg` there.
pub fn run(dir: &Path, arch: &Arch, json: bool, out: Option<&Path>) -> Result<ExitCode> {
    let path = dir.join(lacuna_spec::moe_trace::FILE);
    let bytes = std::fs::read(&path).with_context(|| path.display().to_string())?;
    let trace = MoeTrace::read(&bytes).map_err(anyhow::Error::msg).with_context(|| path.display().to_string())?;
    let energy = EnergyTable::default();
    let rows = trace
        .policies
        .iter()
        .map(|p| simulate_policy(&trace, p, arch, &energy))
        .collect::<Result<Vec<_>>>()
        .with_context(|| path.display().to_string())?;
    let report = Report {
        trace: path.display().to_string(),
        model: &trace.model,
        arch: &arch.name,
        arch_hash: arch.hash().to_string(),
        clock_mhz: arch.clock_mhz,
        scope: SCOPE,
        policies: rows,
    };
    if let Some(out) = out {
        write_files(out, &report).with_context(|| out.display().to_string())?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows = &report.policies;
    println!("trace    {} ({})", path.display(), trace.model);
    println!(
        "arch     {} ({}), {} MHz; tree {}, draft {}",
        arch.name,
        arch.hash(),
        arch.clock_mhz,
        trace.tree,
        trace.draft
    );
    println!("scope    {SCOPE}");
    let naive = rows.iter().find(|r| r.policy == "naive");
    let mut t = Table::new(&[
        "policy",
        "tok/step",
        "us/token",
        "vs naive",
        "uJ/token",
        "vs naive",
        "expert KB/token",
        "dot busy",
        "down busy",
        "buffer hits",
    ]);
    let vs = |v: f64, base: Option<f64>| {
        base.filter(|b| *b > 0.0).map_or("-".into(), |b| format!("{:+.1} %", 100.0 * (v / b - 1.0)))
    };
    for r in rows {
        t.row(vec![
            r.policy.clone(),
            format!("{:.2}", r.tokens_per_step),
            format!("{:.1}", r.latency_per_token_us),
            vs(r.latency_per_token_us, naive.map(|n| n.latency_per_token_us)),
            format!("{:.1}", r.energy_per_token_uj),
            vs(r.energy_per_token_uj, naive.map(|n| n.energy_per_token_uj)),
            format!("{:.1}", r.expert_bytes_per_token / 1e3),
            format!("{:.0} %", 100.0 * r.dot_utilization),
            format!("{:.0} %", 100.0 * r.down_utilization),
            format!("{:.1} %", 100.0 * r.buffer_hit_rate),
        ]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}

fn write_files(out: &Path, r: &Report) -> Result<()> {
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("simulate_moe.json"), serde_json::to_string_pretty(r)? + "\n")?;
    let mut csv = String::from(
        "policy,tokens_per_step,generated,steps,step_cycles,prefill_cycles,latency_per_token_us,energy_per_token_uj,expert_bytes_per_token,dot_utilization,down_utilization,buffer_hit_rate,arch,arch_hash\n",
    );
    for p in &r.policies {
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            p.policy,
            p.tokens_per_step,
            p.generated,
            p.steps,
            p.step_cycles,
            p.prefill_cycles,
            p.latency_per_token_us,
            p.energy_per_token_uj,
            p.expert_bytes_per_token,
            p.dot_utilization,
            p.down_utilization,
            p.buffer_hit_rate,
            r.arch,
            r.arch_hash
        ));
    }
    std::fs::write(out.join("simulate_moe.csv"), csv)?;
    plot_policies(&out.join("policies.svg"), r)
}

/// Latency and energy per generated token by policy, as bars relative to `naive` (or to the
/// first policy when `naive` is not in the trace).
fn plot_policies(path: &Path, r: &Report) -> Result<()> {
    use plotters::prelude::*;
    let rows = &r.policies;
    let base = rows.iter().find(|p| p.policy == "naive").or(rows.first()).context("the trace has no policy")?;
    let rel = |v: f64, b: f64| if b > 0.0 { v / b } else { 0.0 };
    let bars: Vec<(f64, f64)> = rows
        .iter()
        .map(|p| {
            (
                rel(p.latency_per_token_us, base.latency_per_token_us),
                rel(p.energy_per_token_uj, base.energy_per_token_uj),
            )
        })
        .collect();
    let ymax = bars.iter().map(|b| b.0.max(b.1)).fold(1.0, f64::max) * 1.15;
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let names: Vec<String> = rows.iter().map(|p| p.policy.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("expert unit, {} ({}): per generated token, relative to {}", r.arch, r.model, base.policy),
            ("sans-serif", 15),
        )
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(-0.5..(rows.len() as f64 - 0.5), 0.0..ymax)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(rows.len())
        .x_label_formatter(&|x| names.get(x.round() as usize).cloned().unwrap_or_default())
        .y_desc("relative to the base policy (mixture blocks only)")
        .draw()?;
    let series = [("latency / token", 0usize), ("energy / token", 1)];
    for (name, k) in series {
        let color = Palette99::pick(k).to_rgba();
        let x = |i: usize| i as f64 - 0.35 + 0.35 * k as f64;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let v = if k == 0 { b.0 } else { b.1 };
                Rectangle::new([(x(i), 0.0), (x(i) + 0.33, v)], color.filled())
            }))?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}
