//! Three-way agreement: the golden reference, the cycle model and the RTL run the same spMspV
//! cases behind one [`Engine`] trait, and [`check_case`] compares them.
//!
//! - RTL against model: the same memory requests (cycle, client, address), the same `done` cycle
//!   and cycle count, the same fault report, bit-identical y. The first difference is reported as
//!   a [`Divergence`] (cycle, block, signal, both values).
//! - Model against the column-order golden: bit-identical y (well-formed cases).
//! - Golden against dense f64: every row within the FP32 summation bound of `lacuna_golden::bound`.
//!
//! Cases are random (seeded, synthetic matrices: [`Case::random`]) or named edge cases read from
//! TOML data files ([`Case::from_toml`], `testbench/cases/`).

use crate::core_engine::{run_core, CoreError, CoreFault, CoreRun};
use half::f16;
use lacuna_model::memory::Traffic;
use lacuna_model::{simulate_logged, Fault, Job, PanelData};
use lacuna_spec::{ActivationFilter, Activations, Arch, DenseMatrix, RlcCsc, RlcMatrix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// One panel's arrays as the core reads them (possibly malformed).
#[derive(Clone, Debug)]
pub struct PanelArrays {
    /// Rows of the panel.
    pub rows: u32,
    /// FP16 values (padded to a multiple of 8).
    pub values: Vec<f16>,
    /// Packed run lengths (two per byte, low nibble first).
    pub runs: Vec<u8>,
    /// Column pointers (K + 1).
    pub colptr: Vec<u32>,
}

/// One spMspV case.
#[derive(Clone, Debug)]
pub struct Case {
    /// Its name (`random-<seed>` or the data file's).
    pub name: String,
    /// M.
    pub rows: u32,
    /// Rows per panel.
    pub panel_rows: u32,
    /// The panels.
    pub panels: Vec<PanelArrays>,
    /// x.
    pub x: Vec<f16>,
    /// The activation threshold.
    pub filter: ActivationFilter,
    /// The streams were corrupted on purpose (the golden does not apply).
    pub malformed: bool,
    /// The archs the case is meant for (all when `None`).
    pub archs: Option<Vec<String>>,
}

impl Case {
    /// Whether the case is meant for `arch`.
    pub fn applies_to(&self, arch: &Arch) -> bool {
        self.archs.as_ref().is_none_or(|a| a.contains(&arch.name))
    }

    /// The job the model and the RTL run.
    pub fn job(&self) -> Job<'_> {
        Job {
            rows: self.rows,
            panel_rows: self.panel_rows,
            panels: self
                .panels
                .iter()
                .map(|p| PanelData { rows: p.rows, values: &p.values, runs: &p.runs, colptr: &p.colptr })
                .collect(),
            x: &self.x,
            filter: self.filter,
        }
    }

    /// The matrix, when the streams are canonical RLC-CSC (the golden's input).
    pub fn matrix(&self) -> Option<RlcMatrix> {
        if self.malformed {
            return None;
        }
        let cols = self.x.len() as u32;
        let panels = self
            .panels
            .iter()
            .map(|p| RlcCsc::from_parts(p.rows, cols, p.values.clone(), p.runs.clone(), p.colptr.clone()))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        RlcMatrix::from_panels(self.rows, self.panel_rows, panels).ok()
    }

    fn from_matrix(name: String, m: &RlcMatrix, x: Vec<f16>, filter: ActivationFilter) -> Case {
        Case {
            name,
            rows: m.rows(),
            panel_rows: m.panel_rows(),
            panels: m
                .panels()
                .iter()
                .map(|p| PanelArrays {
                    rows: p.rows(),
                    values: p.values().to_vec(),
                    runs: p.runs().to_vec(),
                    colptr: p.colptr().to_vec(),
                })
                .collect(),
            x,
            filter,
            malformed: false,
            archs: None,
        }
    }

    /// A seeded random case for `arch` (synthetic data): 1-4 panels of the arch's tile, K up to 96,
    /// density up to 50 %, small exact values, 30 % zero activations, a threshold of 0, 0.5 or 1;
    /// a quarter of the cases get one corrupted run-length byte or column pointer.
    pub fn random(arch: &Arch, seed: u64) -> Case {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let tile = arch.tile_rows() as usize;
        let rows = rng.random_range(1..=4 * tile);
        let cols = rng.random_range(1..=(arch.max_cols() as usize).min(96));
        let density = rng.random_range(0.0..0.5);
        let mut dense = DenseMatrix::zeros(rows, cols);
        for r in 0..rows {
            for k in 0..cols {
                if rng.random_bool(density) {
                    dense.set(r, k, f16::from_f32(rng.random_range(-8i32..=8) as f32 * 0.25));
                }
            }
        }
        let m = RlcMatrix::encode(&dense, Some(tile as u32)).expect("a small random matrix encodes");
        let x: Vec<f16> =
            (0..cols)
                .map(|_| {
                    if rng.random_bool(0.3) {
                        f16::ZERO
                    } else {
                        f16::from_f32(rng.random_range(-4i32..=4) as f32 * 0.5)
                    }
                })
                .collect();
        let filter = ActivationFilter { threshold: f16::from_f32(rng.random_range(0i32..=2) as f32 * 0.5) };
        let mut case = Case::from_matrix(format!("random-{seed}"), &m, x, filter);
        if rng.random_bool(0.25) {
            case.malformed = true;
            let p = rng.random_range(0..case.panels.len());
            let panel = &mut case.panels[p];
            if rng.random_bool(0.5) && !panel.runs.is_empty() {
                let i = rng.random_range(0..panel.runs.len());
                panel.runs[i] = rng.random();
            } else {
                let i = rng.random_range(0..panel.colptr.len());
                panel.colptr[i] = rng.random_range(0..=panel.values.len() as u32 + 4);
            }
        }
        case
    }

    /// A named case from its TOML data file (see `testbench/cases/README.md`), panels of the
    /// file's `panel_rows` or else of `arch`'s tile.
    pub fn from_toml(arch: &Arch, text: &str) -> Result<Case, CaseError> {
        let f: CaseFile = toml::from_str(text).map_err(|e| CaseError::Parse(e.to_string()))?;
        let cols = f.x.len();
        if cols == 0 {
            return Err(CaseError::Invalid(f.name, "x must not be empty".into()));
        }
        let x: Vec<f16> = f.x.iter().map(|&v| f16::from_f32(v)).collect();
        let filter = ActivationFilter { threshold: f16::from_f32(f.threshold) };
        let panel_rows = f.panel_rows.unwrap_or(arch.tile_rows());
        let bad = |why: String| CaseError::Invalid(f.name.clone(), why);
        let mut entries = f.entries.clone().unwrap_or_default();
        for &(k, first, stride, count, v) in f.stripes.iter().flatten() {
            entries.extend((0..count).map(|i| (first + i * stride, k, v)));
        }
        let archs = f.archs.clone();
        match (f.entries.is_some() || f.stripes.is_some(), &f.panels) {
            (true, None) => {
                let mut dense = DenseMatrix::zeros(f.rows as usize, cols);
                for &(r, k, v) in &entries {
                    if r as u32 >= f.rows || k as usize >= cols {
                        return Err(bad(format!("entry ({r}, {k}) outside the {} x {cols} matrix", f.rows)));
                    }
                    dense.set(r as usize, k as usize, f16::from_f32(v));
                }
                let m = RlcMatrix::encode(&dense, Some(panel_rows)).map_err(|e| bad(e.to_string()))?;
                let mut case = Case::from_matrix(f.name, &m, x, filter);
                case.archs = archs;
                Ok(case)
            }
            (false, Some(panels)) => {
                let mut out = Vec::new();
                for p in panels {
                    let mut values: Vec<f16> = p.values.iter().map(|&v| f16::from_f32(v)).collect();
                    let mut nibbles = p.runs.clone();
                    if nibbles.len() != values.len() || nibbles.iter().any(|&n| n > 15) {
                        return Err(bad("a raw panel needs one run (0..=15) per value".into()));
                    }
                    let padded = values.len().div_ceil(8).max(1) * 8;
                    values.resize(padded, f16::ZERO);
                    nibbles.resize(padded, 0);
                    let runs = nibbles.chunks(2).map(|c| c[0] | (c[1] << 4)).collect();
                    if p.colptr.len() != cols + 1 {
                        return Err(bad(format!("a raw panel needs K + 1 = {} column pointers", cols + 1)));
                    }
                    out.push(PanelArrays { rows: p.rows, values, runs, colptr: p.colptr.clone() });
                }
                let case = Case {
                    name: f.name,
                    rows: f.rows,
                    panel_rows,
                    panels: out,
                    x,
                    filter,
                    malformed: f.malformed,
                    archs,
                };
                if f.canonical && !case.malformed && case.matrix().is_none() {
                    return Err(CaseError::Invalid(case.name, "the raw panels are not canonical RLC-CSC".into()));
                }
                Ok(case)
            }
            _ => Err(bad("give either `entries`/`stripes` or `panels`".into())),
        }
    }
}

/// The named edge cases of `testbench/cases/`, embedded (file name, text).
pub const NAMED_CASES: &[(&str, &str)] = &[
    ("all-zero-activations.toml", include_str!("../cases/all-zero-activations.toml")),
    ("bad-column-pointer.toml", include_str!("../cases/bad-column-pointer.toml")),
    ("empty-columns.toml", include_str!("../cases/empty-columns.toml")),
    ("k-equals-1.toml", include_str!("../cases/k-equals-1.toml")),
    ("largest-tile-edge.toml", include_str!("../cases/largest-tile-edge.toml")),
    ("largest-tile-tiny.toml", include_str!("../cases/largest-tile-tiny.toml")),
    ("m-not-multiple-of-lanes.toml", include_str!("../cases/m-not-multiple-of-lanes.toml")),
    ("padding-only-column.toml", include_str!("../cases/padding-only-column.toml")),
    ("run-past-panel.toml", include_str!("../cases/run-past-panel.toml")),
    ("runs-14-15-16-31.toml", include_str!("../cases/runs-14-15-16-31.toml")),
    ("runs-32.toml", include_str!("../cases/runs-32.toml")),
    ("single-lane.toml", include_str!("../cases/single-lane.toml")),
];

/// The named cases meant for `arch`.
pub fn named_cases(arch: &Arch) -> Result<Vec<Case>, CaseError> {
    let mut out = Vec::new();
    for (file, text) in NAMED_CASES {
        let case = Case::from_toml(arch, text).map_err(|e| CaseError::Invalid(file.to_string(), e.to_string()))?;
        if case.applies_to(arch) {
            out.push(case);
        }
    }
    Ok(out)
}

/// A stripe of nonzeros in a case file: (column, first row, row stride, count, value).
type Stripe = (u64, u64, u64, u64, f32);

/// A case data file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: String,
    #[allow(dead_code)]
    description: String,
    rows: u32,
    panel_rows: Option<u32>,
    x: Vec<f32>,
    #[serde(default)]
    threshold: f32,
    /// Nonzeros of W: (row, column, value).
    entries: Option<Vec<(u64, u64, f32)>>,
    /// More nonzeros: (column, first row, row stride, count, value).
    stripes: Option<Vec<Stripe>>,
    /// The archs the case is for (all when absent).
    archs: Option<Vec<String>>,
    /// Raw panels, for streams the encoder does not produce.
    panels: Option<Vec<RawPanel>>,
    #[serde(default)]
    malformed: bool,
    /// The raw panels are canonical RLC-CSC (checked); `false` for streams the hardware takes but
    /// the format's canonical form forbids (no golden then).
    #[serde(default = "yes")]
    canonical: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPanel {
    rows: u32,
    values: Vec<f32>,
    runs: Vec<u8>,
    colptr: Vec<u32>,
}

/// A case file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// Not TOML of the case format.
    #[error("case file: {0}")]
    Parse(String),
    /// Well-formed TOML describing an impossible case.
    #[error("case `{0}`: {1}")]
    Invalid(String, String),
}

/// One memory request: the cycle it was accepted, the client (`rtl::mem_port` ids: 0 drain,
/// 1 act_load, 2 colptr_fetch, 3 chunk values, 4 chunk runs) and the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    /// Cycle accepted.
    pub cycle: u64,
    /// Client id.
    pub client: u64,
    /// Address.
    pub addr: u64,
}

/// A client's name.
pub fn client_name(id: u64) -> &'static str {
    match id {
        0 => "drain",
        1 => "act_load",
        2 => "colptr_fetch",
        3 | 4 => "chunk_fetch",
        _ => "unknown",
    }
}

/// What an engine computed for one case.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// y.
    pub y: Vec<f32>,
    /// Cycles (timed engines).
    pub cycles: Option<u64>,
    /// The fault report (timed engines).
    pub fault: Option<CoreFault>,
    /// Memory requests in order (timed engines).
    pub requests: Vec<Request>,
}

/// Why an engine gave no outcome.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The engine does not apply (the golden on a malformed stream).
    #[error("not applicable: {0}")]
    NotApplicable(&'static str),
    /// The engine failed.
    #[error("{0}")]
    Failed(String),
}

/// A way to compute a case's y.
pub trait Engine {
    /// Its name in reports.
    fn name(&self) -> &'static str;
    /// Runs `case` on `arch`.
    fn run(&self, arch: &Arch, case: &Case) -> Result<Outcome, EngineError>;
}

/// The column-order golden reference (`lacuna_golden::spmspv::column_order`).
pub struct GoldenEngine;

/// The cycle model (`lacuna_model::simulate_logged`).
pub struct ModelEngine;

/// The Verilated core (`core_engine::run_core`), with a cycle budget.
pub struct RtlEngine {
    /// Cycles before the run is declared hung.
    pub max_cycles: u64,
}

impl Engine for GoldenEngine {
    fn name(&self) -> &'static str {
        "golden"
    }
    fn run(&self, _arch: &Arch, case: &Case) -> Result<Outcome, EngineError> {
        let m = case.matrix().ok_or(EngineError::NotApplicable("malformed streams"))?;
        let x = Activations::new(case.x.clone()).map_err(|e| EngineError::Failed(e.to_string()))?;
        let y =
            lacuna_golden::spmspv::column_order(&m, &x, case.filter).map_err(|e| EngineError::Failed(e.to_string()))?;
        Ok(Outcome { y, cycles: None, fault: None, requests: vec![] })
    }
}

/// The model's fault as the core reports it.
pub fn fault_report(f: &Fault) -> CoreFault {
    match *f {
        Fault::RunOverrunsColumn { panel, col, row, cycle } => {
            CoreFault { code: 1, panel: panel as u64, col: col as u64, a: row, b: 0, cycle }
        }
        Fault::BadColumnPointer { panel, col, start, end, cycle } => {
            CoreFault { code: 2, panel: panel as u64, col: col as u64, a: start, b: end, cycle }
        }
    }
}

impl Engine for ModelEngine {
    fn name(&self) -> &'static str {
        "model"
    }
    fn run(&self, arch: &Arch, case: &Case) -> Result<Outcome, EngineError> {
        let r = simulate_logged(arch, &case.job()).map_err(|e| EngineError::Failed(e.to_string()))?;
        let requests = r
            .requests
            .iter()
            .map(|q| Request {
                cycle: q.cycle,
                client: match q.kind {
                    Traffic::Outputs => 0,
                    Traffic::Activations => 1,
                    Traffic::Colptr => 2,
                    Traffic::Values => 3,
                    Traffic::Runs => 4,
                },
                addr: q.addr,
            })
            .collect();
        Ok(Outcome { y: r.y, cycles: Some(r.counters.cycles), fault: r.fault.as_ref().map(fault_report), requests })
    }
}

impl Engine for RtlEngine {
    fn name(&self) -> &'static str {
        "rtl"
    }
    fn run(&self, arch: &Arch, case: &Case) -> Result<Outcome, EngineError> {
        let r: CoreRun = run_core(arch, &case.job(), self.max_cycles, None).map_err(|e| match e {
            CoreError::Refused => EngineError::NotApplicable("the RTL's job interface refuses this job"),
            e => EngineError::Failed(e.to_string()),
        })?;
        Ok(Outcome { y: r.y, cycles: Some(r.cycles), fault: r.fault, requests: r.requests })
    }
}

/// The first place where the RTL and the model differ.
#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    /// The cycle (of the earlier of the two events).
    pub cycle: u64,
    /// The block.
    pub block: String,
    /// The signal.
    pub signal: String,
    /// The RTL's value.
    pub rtl: String,
    /// The model's value.
    pub model: String,
}

/// The first divergence of `rtl` from `model`, if any: memory requests first (they are the
/// earliest observable effect of any block), then the fault, the cycle count, then y.
pub fn first_divergence(rtl: &Outcome, model: &Outcome) -> Option<Divergence> {
    let show = |q: Option<&Request>| {
        q.map_or("no request".to_string(), |q| format!("{} @ {:#x} ({})", q.cycle, q.addr, client_name(q.client)))
    };
    let n = rtl.requests.len().max(model.requests.len());
    for i in 0..n {
        let (a, b) = (rtl.requests.get(i), model.requests.get(i));
        if a != b {
            let cycle = [a, b].iter().flatten().map(|q| q.cycle).min().unwrap_or(0);
            let block = b.or(a).map_or("mem_port", |q| client_name(q.client));
            return Some(Divergence {
                cycle,
                block: block.into(),
                signal: format!("mem_req_addr (request {i})"),
                rtl: show(a),
                model: show(b),
            });
        }
    }
    if rtl.fault != model.fault {
        let cycle = [rtl.fault, model.fault].iter().flatten().map(|f| f.cycle).min().unwrap_or(0);
        return Some(Divergence {
            cycle,
            block: "core".into(),
            signal: "error".into(),
            rtl: format!("{:?}", rtl.fault),
            model: format!("{:?}", model.fault),
        });
    }
    if rtl.cycles != model.cycles {
        return Some(Divergence {
            cycle: rtl.cycles.min(model.cycles).unwrap_or(0),
            block: "core".into(),
            signal: "done (cycle count)".into(),
            rtl: format!("{:?}", rtl.cycles),
            model: format!("{:?}", model.cycles),
        });
    }
    if model.fault.is_none() {
        if let Some(r) = (0..rtl.y.len().max(model.y.len()))
            .find(|&r| rtl.y.get(r).map(|v| v.to_bits()) != model.y.get(r).map(|v| v.to_bits()))
        {
            let show = |v: Option<&f32>| v.map_or("missing".into(), |v| format!("{v:e} ({:#010x})", v.to_bits()));
            return Some(Divergence {
                cycle: model.cycles.unwrap_or(0),
                block: "drain".into(),
                signal: format!("y[{r}]"),
                rtl: show(rtl.y.get(r)),
                model: show(model.y.get(r)),
            });
        }
    }
    None
}

/// The checks of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseReport {
    /// The case.
    pub name: String,
    /// Well-formed streams.
    pub well_formed: bool,
    /// The model's cycles.
    pub cycles: Option<u64>,
    /// The model faulted.
    pub faulted: bool,
    /// RTL and model y differ (well-formed cases).
    pub y_mismatch: bool,
    /// RTL and model cycle counts differ.
    pub cycle_mismatch: bool,
    /// The first RTL/model divergence.
    pub divergence: Option<Divergence>,
    /// Model and column-order golden y differ (well-formed cases).
    pub golden_mismatch: bool,
    /// Rows where the golden is outside the dense bound.
    pub dense_violations: usize,
    /// Largest error against dense, as a fraction of the bound.
    pub dense_bound_fraction: f64,
    /// Why an engine did not run (it counts as a failure).
    pub error: Option<String>,
}

impl CaseReport {
    /// Every check passed.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self.divergence.is_none()
            && !self.y_mismatch
            && !self.cycle_mismatch
            && !self.golden_mismatch
            && self.dense_violations == 0
    }
}

/// Runs `case` on every engine and compares them.
pub fn check_case(arch: &Arch, case: &Case, rtl: &dyn Engine) -> CaseReport {
    let mut rep = CaseReport {
        name: case.name.clone(),
        well_formed: !case.malformed,
        cycles: None,
        faulted: false,
        y_mismatch: false,
        cycle_mismatch: false,
        divergence: None,
        golden_mismatch: false,
        dense_violations: 0,
        dense_bound_fraction: 0.0,
        error: None,
    };
    let model = match ModelEngine.run(arch, case) {
        Ok(m) => m,
        Err(e) => {
            rep.error = Some(format!("model: {e}"));
            return rep;
        }
    };
    rep.cycles = model.cycles;
    rep.faulted = model.fault.is_some();
    match rtl.run(arch, case) {
        Ok(r) => {
            rep.cycle_mismatch = r.cycles != model.cycles;
            rep.y_mismatch = model.fault.is_none() && bits(&r.y) != bits(&model.y);
            rep.divergence = first_divergence(&r, &model);
        }
        Err(e) => rep.error = Some(format!("{}: {e}", rtl.name())),
    }
    if let Some(m) = case.matrix() {
        match GoldenEngine.run(arch, case) {
            Ok(g) => {
                rep.golden_mismatch = model.fault.is_none() && bits(&g.y) != bits(&model.y);
                let bound = lacuna_golden::bound::check_against_dense(&m.decode(), &case.x, case.filter, &g.y);
                rep.dense_violations = bound.violations;
                rep.dense_bound_fraction = bound.max_bound_fraction;
            }
            Err(e) => rep.error = Some(format!("golden: {e}")),
        }
    }
    rep
}

fn bits(y: &[f32]) -> Vec<u32> {
    y.iter().map(|v| v.to_bits()).collect()
}

/// Reruns `case` on the RTL with a waveform of the core's ports and probes
/// (`core_engine::TRACED`) and writes it as `DIR/cosim-<arch>-<case>.vcd`.
pub fn write_waveform(arch: &Arch, case: &Case, dir: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
    let mut vcd = crate::vcd::Vcd::new("core", crate::core_engine::TRACED);
    // A run that fails (a hang) still leaves the cycles it ran in the waveform.
    let _ = run_core(arch, &case.job(), 5_000_000, Some(&mut vcd));
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("cosim-{}-{}.vcd", lacuna_rtl::module_suffix(arch), case.name));
    std::fs::write(&path, vcd.to_text())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(requests: &[(u64, u64, u64)], cycles: u64) -> Outcome {
        Outcome {
            y: vec![1.0, 2.0],
            cycles: Some(cycles),
            fault: None,
            requests: requests.iter().map(|&(cycle, client, addr)| Request { cycle, client, addr }).collect(),
        }
    }

    #[test]
    fn the_first_divergence_is_the_first_request_that_differs() {
        let model = outcome(&[(0, 1, 0), (1, 2, 64), (5, 3, 128)], 40);
        let rtl = outcome(&[(0, 1, 0), (1, 2, 64), (6, 3, 128)], 41);
        let d = first_divergence(&rtl, &model).unwrap();
        assert_eq!((d.cycle, d.block.as_str()), (5, "chunk_fetch"));
        assert_eq!(d.signal, "mem_req_addr (request 2)");
        assert!(d.rtl.starts_with("6 @ 0x80") && d.model.starts_with("5 @ 0x80"), "{d:?}");
    }

    #[test]
    fn with_equal_requests_the_cycle_count_then_y_are_compared() {
        let model = outcome(&[(0, 1, 0)], 40);
        let rtl = outcome(&[(0, 1, 0)], 41);
        assert_eq!(first_divergence(&rtl, &model).unwrap().signal, "done (cycle count)");
        let mut rtl = outcome(&[(0, 1, 0)], 40);
        rtl.y[1] = 2.5;
        let d = first_divergence(&rtl, &model).unwrap();
        assert_eq!((d.block.as_str(), d.signal.as_str()), ("drain", "y[1]"));
        assert!(first_divergence(&model.clone(), &model).is_none());
    }

    #[test]
    fn a_case_file_with_an_unknown_key_or_an_entry_outside_the_matrix_is_refused() {
        let arch = Arch::preset("tiny").unwrap();
        let err =
            Case::from_toml(&arch, "name = \"a\"\ndescription = \"\"\nrows = 4\nx = [1.0]\nentries = [[9, 0, 1.0]]\n");
        assert!(err.unwrap_err().to_string().contains("outside the 4 x 1 matrix"));
        let err =
            Case::from_toml(&arch, "name = \"a\"\ndescription = \"\"\nrows = 4\nx = [1.0]\nentries = []\nspeed = 3\n");
        assert!(err.unwrap_err().to_string().contains("unknown field"));
    }
}
