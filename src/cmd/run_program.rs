//! `lacuna simulate DIR`: a compiled program's decode trace through the cycle model.
//!
//! Prints per layer kind (summed over the blocks, plus attention and the vector unit) and per
//! token: cycles, the same with dense FP16 GEMV linear layers on the same hardware, speedup, DRAM
//! bytes and energy, and the latency at the arch's clock; per unit (the core, the vector unit):
//! jobs, cycles, busy cycles, stalls, DRAM bytes and energy; the step's cycles with the units
//! overlapped where the dependences allow beside the serial sum. `--json` prints the per-step
//! figures instead: per layer, per unit (`units`), and the step's `cycles` and `serial_cycles`.

use crate::table::Table;
use anyhow::{Context, Result};
use lacuna_model::energy::EnergyTable;
use lacuna_model::program::{dense_baselines, run_step, StepRun};
use lacuna_spec::program::Program;
use lacuna_spec::trace::read_trace;
use serde::Serialize;
use std::path::Path;
use std::process::ExitCode;

/// `--timeline`: the decode steps one after the other, each unit's jobs on its track.
fn write_timeline(path: &Path, model: &str, arch: &lacuna_spec::Arch, steps: &[StepRun]) -> Result<()> {
    let mut t = crate::timeline::Timeline::new(&format!("lacuna {}: {model}", arch.name), arch.clock_mhz);
    let mut at = 0u64;
    for s in steps {
        let args = serde_json::json!({"token": s.token, "serial_cycles": s.serial_cycles});
        t.span("decode step", &format!("step {}", s.step), at, at + s.cycles, args);
        for task in &s.tasks {
            t.span(task.unit.name(), &task.name, at + task.start, at + task.end, serde_json::json!({"step": s.step}));
        }
        at += s.cycles;
    }
    t.write(path)?;
    eprintln!("timeline: {} spans in {} (open it in https://ui.perfetto.dev)", t.spans(), path.display());
    Ok(())
}

#[derive(Serialize)]
struct Report<'a> {
    program: &'a str,
    model: &'a str,
    arch: &'a str,
    arch_hash: &'a str,
    clock_mhz: u32,
    settings: &'a lacuna_spec::program::Settings,
    trace: String,
    scope: &'static str,
    steps: &'a [StepRun],
}

const SCOPE: &str = "the whole decode step: linear layers on the Sparse SIMT core; attention over the KV cache as dense jobs on the core; norms, RoPE, softmax, SiLU and adds on the vector unit; each unit in graph order, the units overlapped where the dependences allow (serial_cycles: one after the other). Dense: the linear layers as dense FP16 GEMV on the same hardware, the rest the same";

pub fn run(dir: &Path, trace: Option<&Path>, json: bool, timeline: Option<&Path>) -> Result<ExitCode> {
    let p = Program::read(dir)?;
    let trace_path = trace.map(Path::to_path_buf).unwrap_or_else(|| dir.join("trace.lctr"));
    let bytes = std::fs::read(&trace_path).with_context(|| trace_path.display().to_string())?;
    let t = read_trace(&bytes).with_context(|| trace_path.display().to_string())?;
    let energy = EnergyTable::default();
    let dense = dense_baselines(&p, &energy);
    let mut steps = Vec::new();
    for s in 0..t.steps.len() {
        steps.push(run_step(&p, &t, s, &energy, &dense).with_context(|| trace_path.display().to_string())?);
    }
    let clock = p.arch.clock_mhz as f64;
    if let Some(path) = timeline {
        write_timeline(path, &p.program.model, &p.arch, &steps)?;
    }
    if json {
        let r = Report {
            program: &dir.display().to_string(),
            model: &p.program.model,
            arch: &p.arch.name,
            arch_hash: &p.program.arch_hash,
            clock_mhz: p.arch.clock_mhz,
            settings: &p.program.settings,
            trace: trace_path.display().to_string(),
            scope: SCOPE,
            steps: &steps,
        };
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("program  {} ({})", dir.display(), p.program.model);
    println!(
        "arch     {} ({}), {} MHz; weights {:.0} % ({}), activations {:.0} % target",
        p.arch.name,
        p.program.arch_hash,
        p.arch.clock_mhz,
        100.0 * p.program.settings.weight_sparsity,
        p.program.settings.prune_method,
        100.0 * p.program.settings.act_sparsity
    );
    println!("trace    {} ({:?}, {} steps)", trace_path.display(), t.header.prompt, t.steps.len());
    println!("scope    {SCOPE}\n");
    // Per layer kind over the blocks, averaged over the steps.
    let mut kinds: Vec<(String, u64, u64, u64, f64, [u32; 2])> = Vec::new();
    for (i, l) in p.program.layers.iter().enumerate() {
        let kind = l.kind.name().to_string();
        let jobs = if l.job == lacuna_spec::job::JobKind::Gemv { [1, 0] } else { [0, 1] };
        let (c, d, b, e) = steps.iter().fold((0, 0, 0, 0.0), |(c, d, b, e), s| {
            let r = &s.layers[i];
            (c + r.cycles, d + r.dense_cycles, b + r.dram_bytes, e + r.energy_pj)
        });
        match kinds.iter_mut().find(|k| k.0 == kind) {
            Some(k) => {
                k.1 += c;
                k.2 += d;
                k.3 += b;
                k.4 += e;
                k.5 = [k.5[0] + jobs[0], k.5[1] + jobs[1]];
            }
            None => kinds.push((kind, c, d, b, e, jobs)),
        }
    }
    let n = steps.len().max(1) as u64;
    let mut tk = Table::new(&[
        "layer kind (all blocks)",
        "jobs",
        "cycles/token",
        "dense cycles",
        "speedup",
        "DRAM MB",
        "energy uJ",
    ]);
    for (kind, c, d, b, e, [gemv, spmspv]) in &kinds {
        let jobs = match (gemv, spmspv) {
            (0, s) => format!("spmspv {s}"),
            (g, 0) => format!("gemv {g}"),
            (g, s) => format!("gemv {g}, spmspv {s}"),
        };
        tk.row(vec![
            kind.clone(),
            jobs,
            (c / n).to_string(),
            (d / n).to_string(),
            format!("{:.2}", *d as f64 / (*c).max(1) as f64),
            format!("{:.2}", *b as f64 / n as f64 / 1e6),
            format!("{:.1}", e / n as f64 / 1e6),
        ]);
    }
    let (mut ac, mut ab, mut ae, mut vc, mut ve) = (0u64, 0u64, 0f64, 0u64, 0f64);
    for s in &steps {
        ac += s.attention.cycles;
        ab += s.attention.dram_bytes;
        ae += s.attention.energy_pj;
        vc += s.vector.cycles;
        ve += s.vector.energy_pj;
    }
    tk.row(vec![
        "attention (core, dense)".into(),
        "dense".into(),
        (ac / n).to_string(),
        (ac / n).to_string(),
        "1.00".into(),
        format!("{:.2}", ab as f64 / n as f64 / 1e6),
        format!("{:.1}", ae / n as f64 / 1e6),
    ]);
    tk.row(vec![
        "vector unit".into(),
        "".into(),
        (vc / n).to_string(),
        (vc / n).to_string(),
        "1.00".into(),
        "0.00".into(),
        format!("{:.1}", ve / n as f64 / 1e6),
    ]);
    print!("{}", tk.render());
    println!();
    // Per unit, averaged over the steps.
    let mut tu = Table::new(&[
        "unit",
        "jobs/token",
        "cycles/token",
        "busy %",
        "stall memory %",
        "stall other %",
        "DRAM MB",
        "energy uJ",
    ]);
    for (i, u) in steps.first().map(|s| s.units.as_slice()).unwrap_or_default().iter().enumerate() {
        let sum = |f: &dyn Fn(&lacuna_model::system::UnitRecord) -> u64| -> u64 {
            steps.iter().map(|s| f(&s.units[i])).sum()
        };
        let cycles = sum(&|u| u.cycles).max(1) as f64;
        let pct = |v: u64| format!("{:.1}", 100.0 * v as f64 / cycles);
        let other = sum(&|u| u.stalls.columns + u.stalls.backpressure + u.stalls.drain + u.stalls.tail);
        tu.row(vec![
            u.unit.name().to_string(),
            (sum(&|u| u.jobs) / n).to_string(),
            (sum(&|u| u.cycles) / n).to_string(),
            pct(sum(&|u| u.busy_cycles)),
            pct(sum(&|u| u.stalls.memory)),
            pct(other),
            format!("{:.2}", sum(&|u| u.dram_bytes) as f64 / n as f64 / 1e6),
            format!("{:.1}", steps.iter().map(|s| s.units[i].energy_pj).sum::<f64>() / n as f64 / 1e6),
        ]);
    }
    print!("{}", tu.render());
    println!();
    let mut tt = Table::new(&[
        "step",
        "token",
        "cycles",
        "serial",
        "latency ms",
        "dense ms",
        "speedup",
        "DRAM MB",
        "energy uJ",
        "dense uJ",
    ]);
    for s in &steps {
        let (c, d) = (s.cycles, s.dense_cycles);
        tt.row(vec![
            s.step.to_string(),
            s.token.to_string(),
            c.to_string(),
            s.serial_cycles.to_string(),
            format!("{:.3}", c as f64 / clock / 1e3),
            format!("{:.3}", d as f64 / clock / 1e3),
            format!("{:.2}", d as f64 / c.max(1) as f64),
            format!("{:.2}", s.dram_bytes() as f64 / 1e6),
            format!("{:.1}", s.energy_pj() / 1e6),
            format!("{:.1}", s.dense_energy_pj() / 1e6),
        ]);
    }
    print!("{}", tt.render());
    Ok(ExitCode::SUCCESS)
}
