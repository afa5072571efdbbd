//! Three-way agreement: the golden reference, the cycle model and the RTL run the same spMspV
//! cases behind one [`Engine`] trait, and [`check_case`] compares them.
//!
//! - RTL against model: the same memory requests (cycle, client, address), the same `done` cycle
//!   and cycle count, the same fault report, bit-identical y. The first difference is reported as
//!   a [`Divergence`] (cycle, block, signal, both values).
//! - Model against the column-order golden: bit-identical y (well-formed cases).
//! - Golden against dense f64: every row within the FP32 summation bound of `lacuna_golden::bound`.
//!
//! The cases are [`crate::case`]'s.

pub use crate::case::{named_cases, Case, CaseError, PanelArrays, NAMED_CASES};
pub use crate::core_engine::Request;
use crate::core_engine::{run_core, CoreError, CoreFault, CoreRun};
use lacuna_model::{simulate_logged, Fault};
use lacuna_spec::{Activations, Arch, MemClient};
use serde::Serialize;

/// The block behind a client id ([`MemClient::id`]).
pub fn client_name(id: u64) -> &'static str {
    MemClient::from_id(id).map_or("unknown", MemClient::block)
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
    let code = f.code();
    match *f {
        Fault::RunOverrunsColumn { panel, col, row, cycle } => {
            CoreFault { code, panel: panel as u64, col: col as u64, a: row, b: 0, cycle }
        }
        Fault::BadColumnPointer { panel, col, start, end, cycle } => {
            CoreFault { code, panel: panel as u64, col: col as u64, a: start, b: end, cycle }
        }
    }
}

impl Engine for ModelEngine {
    fn name(&self) -> &'static str {
        "model"
    }
    fn run(&self, arch: &Arch, case: &Case) -> Result<Outcome, EngineError> {
        let r = simulate_logged(arch, &case.job()).map_err(|e| match e {
            // The job interface's limit, as the RTL refuses it.
            lacuna_model::SimError::TooManyPanels { .. } => {
                EngineError::NotApplicable("the job has more panels than the core's panel table holds")
            }
            e => EngineError::Failed(e.to_string()),
        })?;
        let requests =
            r.requests.iter().map(|q| Request { cycle: q.cycle, client: q.kind.id(), addr: q.addr }).collect();
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
}
