//! `lacuna simulate`: the cycle model of the Sparse SIMT core and the baselines, side by side.
//!
//! With no file: the embedded default, the Celty paper's six shapes at 30/50/70 % dual sparsity
//! (synthetic, labelled so). With `FILE.rlc --x X.npy`: one job from files. Prints, per job, the
//! core's cycles, speedup over dense on the same hardware, fraction of the byte-roofline limit,
//! energy and stall breakdown, then every kernel's speedup; `--json` prints JSON instead, and
//! `--out DIR` also writes `simulate.json`, `simulate.csv` and `speedup.svg`. For an .rlc job,
//! `--mem-trace FILE` writes its memory requests for Ramulator 2 (`crate::mem_trace`) and
//! `--timeline FILE` a Perfetto trace of the core's cycles and the memory (`crate::timeline`); for
//! a program directory, `--timeline` traces every unit's jobs of every decode step.

use crate::cmd::Percent;
use crate::report::Row;
use crate::table::Table;
use anyhow::{bail, Context, Result};
use lacuna_compiler::workload::{Shape, SyntheticWorkload, PAPER_SHAPES, PROVENANCE};
use lacuna_model::baselines::{run_all, Kernel, KernelRun};
use lacuna_model::energy::EnergyTable;
use lacuna_model::Job;
use lacuna_spec::{ActivationFilter, Activations, Arch, RlcMatrix};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `lacuna simulate`.
#[derive(clap::Args)]
pub struct Args {
    /// A program directory (from `lacuna compile`), or an .rlc weight file (needs --x);
    /// without it, the embedded default workloads.
    rlc: Option<PathBuf>,
    /// With a program directory: the decode trace to replay (default: the program's own trace.lctr).
    #[arg(long, requires = "rlc")]
    trace: Option<PathBuf>,
    /// The activation vector for the .rlc file: a .npy of K floats.
    #[arg(long, requires = "rlc")]
    x: Option<PathBuf>,
    /// Activation threshold for the .rlc job: |x| below it is skipped (default 0: every nonzero is active).
    #[arg(long, requires = "rlc")]
    threshold: Option<f32>,
    /// Architecture: a preset (edge, tiny) or a TOML file (default edge; a program directory
    /// records its own).
    #[arg(long)]
    arch: Option<String>,
    /// Weight shapes MxK for the synthetic workloads (default: the paper's six).
    #[arg(long, value_delimiter = ',', conflicts_with = "rlc")]
    shape: Vec<Shape>,
    /// Dual sparsity levels in percent for the synthetic workloads.
    #[arg(long, value_delimiter = ',', default_values = ["30", "50", "70"], conflicts_with = "rlc")]
    sparsity: Vec<Percent>,
    /// Seed of the synthetic workloads (default 1).
    #[arg(long, conflicts_with = "rlc")]
    seed: Option<u64>,
    /// Print JSON (one object per job and kernel) instead of tables.
    #[arg(long)]
    json: bool,
    /// Also write simulate.json, simulate.csv and speedup.svg into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// With an .rlc job: write its memory requests in Ramulator 2's LoadStoreTrace format
    /// (`LD 0xADDR` / `ST 0xADDR`, one burst a line, in the order the port accepted them).
    #[arg(long, requires = "rlc")]
    mem_trace: Option<PathBuf>,
    /// Write a Perfetto / Chrome trace-event JSON: for an .rlc job, the core's cycles by class
    /// (busy, stalls) and every memory request by client; for a program directory, every unit's
    /// jobs of every decode step, overlapped as the system runs them.
    #[arg(long, requires = "rlc")]
    timeline: Option<PathBuf>,
}

struct JobSpec {
    shape: String,
    weight_sparsity: f64,
    act_sparsity: f64,
    provenance: String,
}

fn rows_of(
    arch: &Arch,
    spec: &JobSpec,
    m: &RlcMatrix,
    x: &Activations,
    filter: ActivationFilter,
    runs: &[KernelRun],
) -> Vec<Row> {
    let dense = runs.iter().find(|r| r.kernel == Kernel::Dense).expect("dense is always run").cycles as f64;
    let ideal = m.job_bytes(x.as_slice(), filter).total();
    let roofline = lacuna_model::baselines::roofline_cycles(arch, ideal);
    runs.iter()
        .map(|r| Row {
            shape: spec.shape.clone(),
            weight_sparsity: spec.weight_sparsity,
            act_sparsity: spec.act_sparsity,
            kernel: r.kernel.name(),
            cycles: r.cycles,
            latency_us: r.cycles as f64 / arch.clock_mhz as f64,
            speedup_vs_dense: dense / r.cycles as f64,
            roofline_fraction: roofline / r.cycles as f64,
            energy_pj: r.energy.total_pj(),
            bytes_loaded: r.bytes_loaded,
            arch: arch.name.clone(),
            arch_hash: arch.hash().to_string(),
            provenance: spec.provenance.clone(),
            counters: r.counters,
            energy_by_unit: (r.kernel == Kernel::Lacuna).then_some(r.energy),
        })
        .collect()
}

pub fn run(a: Args) -> Result<ExitCode> {
    if let Some(dir) = a.rlc.as_ref().filter(|p| p.is_dir() && p.join(lacuna_spec::moe_trace::FILE).exists()) {
        if dir.join("program.json").exists() {
            bail!(
                "{} holds both a program (program.json) and a MoE trace ({}): compile each into its own directory",
                dir.display(),
                lacuna_spec::moe_trace::FILE
            );
        }
        let ignored = [
            ("--trace", a.trace.is_some()),
            ("--x", a.x.is_some()),
            ("--threshold", a.threshold.is_some()),
            ("--mem-trace", a.mem_trace.is_some()),
            ("--timeline", a.timeline.is_some()),
        ];
        if let Some((flag, _)) = ignored.iter().find(|f| f.1) {
            bail!("{flag} does not apply to a MoE trace directory (it takes --arch, --json and --out)");
        }
        let arch = Arch::load(a.arch.as_deref().unwrap_or("edge"))?;
        return crate::cmd::simulate_moe::run(dir, &arch, a.json, a.out.as_deref());
    }
    if let Some(dir) = a.rlc.as_ref().filter(|p| p.is_dir()) {
        // A program records its arch and thresholds; the .rlc job's flags do not apply to it.
        let ignored = [
            ("--arch", a.arch.is_some(), "the program records the arch it was compiled for"),
            ("--x", a.x.is_some(), "the activations come from the decode trace"),
            ("--threshold", a.threshold.is_some(), "the program records each layer's threshold"),
            ("--out", a.out.is_some(), "use --json and redirect it"),
            (
                "--mem-trace",
                a.mem_trace.is_some(),
                "a step's jobs each have their own memory image; trace one layer's job as an .rlc file",
            ),
        ];
        if let Some((flag, _, why)) = ignored.iter().find(|f| f.1) {
            bail!("{flag} does not apply to a program directory ({why})");
        }
        return crate::cmd::run_program::run(dir, a.trace.as_deref(), a.json, a.timeline.as_deref());
    }
    if a.trace.is_some() {
        bail!("--trace replays a decode trace on a program: give the program directory (lacuna compile -o DIR)");
    }
    let arch_name = a.arch.as_deref().unwrap_or("edge");
    let arch = Arch::load(arch_name)?;
    let seed = a.seed.unwrap_or(1);
    let energy = EnergyTable::default();
    let mut rows = Vec::new();
    if let Some(path) = &a.rlc {
        let Some(xp) = &a.x else { bail!("an .rlc file needs its activation vector: --x X.npy") };
        let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
        let m =
            lacuna_spec::read_rlc(&bytes).with_context(|| format!("{} is not a valid .rlc file", path.display()))?;
        if m.panel_rows() > arch.tile_rows() {
            bail!(
                "{} has panels of {} rows but the `{}` arch's tile holds {}: re-encode with `lacuna encode --arch {}`",
                path.display(),
                m.panel_rows(),
                arch.name,
                arch.tile_rows(),
                arch_name
            );
        }
        let x = Activations::new(lacuna_compiler::load_activations(xp)?).with_context(|| xp.display().to_string())?;
        if x.len() != m.cols() as usize {
            bail!("{} has {} activations but {} has {} columns", xp.display(), x.len(), path.display(), m.cols());
        }
        let filter = crate::cmd::threshold_filter(a.threshold.unwrap_or(0.0))?;
        let s = m.stats();
        let spec = JobSpec {
            shape: format!("{}x{}", s.rows, s.cols),
            weight_sparsity: 1.0 - s.nnz as f64 / (s.rows * s.cols) as f64,
            act_sparsity: 1.0 - x.active_count(filter) as f64 / x.len() as f64,
            provenance: format!("files: {} and {}", path.display(), xp.display()),
        };
        let job = Job::new(&m, &x, filter);
        let runs = run_all(&arch, &job, &energy)?;
        rows.extend(rows_of(&arch, &spec, &m, &x, filter, &runs));
        if a.mem_trace.is_some() || a.timeline.is_some() {
            write_views(&arch, &job, &spec.shape, a.mem_trace.as_deref(), a.timeline.as_deref())?;
        }
    } else {
        let shapes = if a.shape.is_empty() { PAPER_SHAPES.to_vec() } else { a.shape.clone() };
        for shape in &shapes {
            if shape.cols as u64 > arch.max_cols() as u64 {
                bail!(
                    "shape {shape}: K = {} does not fit the `{}` arch's activation SRAM ({} bytes)",
                    shape.cols,
                    arch.name,
                    arch.sram.activation_bytes
                );
            }
        }
        eprintln!("workloads: {PROVENANCE}; seed {seed}; arch {} ({})", arch.name, arch.hash());
        let bar = indicatif::ProgressBar::new((shapes.len() * a.sparsity.len()) as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} jobs {elapsed} {msg}")
                .expect("a valid template"),
        );
        for &shape in &shapes {
            bar.set_message(format!("{shape}: drawing"));
            let pair = SyntheticWorkload::dense_pair(shape, seed);
            for &level in &a.sparsity {
                bar.set_message(format!("{shape} at {level}%"));
                let f = level.fraction();
                let w = SyntheticWorkload::at_sparsity(shape, seed, &pair, f, f);
                let m = w.encode_for(&arch)?;
                let filter = ActivationFilter::NONZERO;
                let spec = JobSpec {
                    shape: shape.to_string(),
                    weight_sparsity: w.weight_pruning.sparsity,
                    act_sparsity: w.act_pruning.sparsity,
                    provenance: PROVENANCE.to_string(),
                };
                let runs = run_all(&arch, &Job::new(&m, &w.activations, filter), &energy)?;
                rows.extend(rows_of(&arch, &spec, &m, &w.activations, filter, &runs));
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
    }

    if let Some(dir) = &a.out {
        crate::report::write_simulate(dir, &rows)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print_tables(&arch, &rows);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--mem-trace` and `--timeline` of one job: the model run again with its request and cycle
/// logs (the same run: logging changes no cycle).
fn write_views(
    arch: &Arch,
    job: &Job,
    name: &str,
    mem_trace: Option<&std::path::Path>,
    timeline: Option<&std::path::Path>,
) -> Result<()> {
    let r = lacuna_model::simulate_logged(arch, job)?;
    if let Some(path) = mem_trace {
        std::fs::write(path, crate::mem_trace::load_store_trace(&r.requests))
            .with_context(|| path.display().to_string())?;
        eprintln!("memory trace: {} requests in {}", r.requests.len(), path.display());
    }
    if let Some(path) = timeline {
        let mut t = crate::timeline::Timeline::new(&format!("lacuna {} spMspV {name}", arch.name), arch.clock_mhz);
        t.span(
            "core job",
            &format!("spMspV {name}"),
            0,
            r.counters.cycles,
            serde_json::json!({"counters": r.counters}),
        );
        let ends = r.phases.iter().skip(1).map(|p| p.0).chain([r.counters.cycles]);
        for (&(start, class), end) in r.phases.iter().zip(ends) {
            t.span("core cycles", class.name(), start, end, serde_json::json!({}));
        }
        // Each burst on the data bus, its last `beats` cycles: completions are strictly
        // increasing (docs/microarchitecture.md, "memory"), so these spans never overlap (a
        // request's whole latency would: Perfetto cannot draw overlapping spans on one track).
        let beats = (arch.memory.request_bytes as u64).div_ceil(arch.memory.bytes_per_cycle as u64);
        for q in &r.requests {
            let what = format!("{} {:?}", q.kind.block(), q.kind).to_lowercase();
            let args = serde_json::json!({"addr": q.addr, "accepted_cycle": q.cycle});
            t.span("memory data bus", &what, q.done - beats, q.done, args);
        }
        t.write(path)?;
        eprintln!("timeline: {} spans in {} (open it in https://ui.perfetto.dev)", t.spans(), path.display());
    }
    Ok(())
}

fn print_tables(arch: &Arch, rows: &[Row]) {
    println!(
        "lacuna Sparse SIMT core, cycle model, arch `{}` ({}), {} MHz, {} ({:.1} GB/s); {}",
        arch.name,
        arch.hash(),
        arch.clock_mhz,
        arch.memory.technology,
        arch.memory_gbps(),
        rows[0].provenance
    );
    let mut t = Table::new(&[
        "shape",
        "W/A %",
        "cycles",
        "latency us",
        "vs dense",
        "roofline",
        "energy uJ",
        "MB loaded",
        "busy",
        "memory",
        "columns",
        "backpr.",
        "drain",
        "tail",
    ]);
    for r in rows.iter().filter(|r| r.kernel == "lacuna") {
        let k = r.counters.expect("the core reports counters");
        let pct = |v: u64| format!("{:.1}%", 100.0 * v as f64 / k.cycles as f64);
        t.row(vec![
            r.shape.clone(),
            format!("{:.0}/{:.0}", 100.0 * r.weight_sparsity, 100.0 * r.act_sparsity),
            r.cycles.to_string(),
            format!("{:.1}", r.latency_us),
            format!("{:.2}x", r.speedup_vs_dense),
            format!("{:.1}%", 100.0 * r.roofline_fraction),
            format!("{:.2}", r.energy_pj / 1e6),
            format!("{:.2}", r.bytes_loaded as f64 / 1e6),
            pct(k.busy),
            pct(k.stall_memory),
            pct(k.stall_columns),
            pct(k.stall_backpressure),
            pct(k.stall_drain),
            pct(k.tail),
        ]);
    }
    print!("{}", t.render());
    println!("vs dense = dense FP16 GEMV cycles on the same memory and compute width / core cycles; roofline = cycles the bytes the sparse job must load take at peak bandwidth / core cycles; busy..tail: where the decoder's cycles went (docs/microarchitecture.md)");
    println!();
    let kernels: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
    let mut header = vec!["shape", "W/A %"];
    header.extend(kernels.iter().copied());
    let mut t = Table::new(&header);
    for r in rows.iter().filter(|r| r.kernel == "lacuna") {
        let mut cells =
            vec![r.shape.clone(), format!("{:.0}/{:.0}", 100.0 * r.weight_sparsity, 100.0 * r.act_sparsity)];
        for k in &kernels {
            let x =
                rows.iter().find(|o| o.shape == r.shape && o.weight_sparsity == r.weight_sparsity && o.kernel == *k);
            cells.push(x.map_or("-".into(), |x| format!("{:.2}x", x.speedup_vs_dense)));
        }
        t.row(cells);
    }
    println!("speedup over dense FP16 GEMV, every kernel on the same memory system and compute width:");
    print!("{}", t.render());
}
