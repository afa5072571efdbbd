//! The system top (the core and its memory port), Verilated, against the cycle model and the
//! golden references (`lacuna_testbench::cosim`): on 1,000 random `tiny` jobs, 60 random `edge`
//! jobs and 300 on `tiny_rr` (round-robin arbitration) (synthetic
//! matrices of 1-4 panels, a quarter with corrupted streams, a quarter gemv jobs over dense
//! panels) the RTL makes the same memory
//! requests in the same cycles, ends in the same cycle with the same fault report and writes
//! bit-identical y; the model matches the column-order golden bit for bit and the golden stays
//! within the dense bound. Then the named edge cases of `testbench/cases/`.

use lacuna_spec::Arch;
use lacuna_testbench::cosim::{check_case, Case, Engine, ModelEngine, RtlEngine};

fn random_jobs_agree(preset: &str, jobs: u64) -> usize {
    random_jobs_agree_on(&Arch::preset(preset).unwrap(), jobs)
}

fn random_jobs_agree_on(arch: &Arch, jobs: u64) -> usize {
    let (arch, preset) = (arch, &arch.name);
    let rtl = RtlEngine { max_cycles: 1_000_000 };
    let mut faulted = 0;
    let mut gemv = 0;
    for seed in 0..jobs {
        let case = Case::random(&arch, seed);
        // A well-formed case always has its golden (a gemv case's weights read back as RLC-CSC).
        assert!(case.malformed || case.matrix().is_some(), "{preset} seed {seed}: no golden");
        let rep = check_case(&arch, &case, &rtl);
        assert!(rep.passed(), "{preset} seed {seed}: {rep:#?}");
        assert!(!rep.faulted || case.malformed, "{preset} seed {seed}: a well-formed job faulted");
        faulted += rep.faulted as usize;
        gemv += (case.kind == lacuna_spec::job::JobKind::Gemv && !case.malformed) as u64;
    }
    assert!(gemv * 8 >= jobs, "{preset}: only {gemv} of {jobs} jobs were well-formed gemv jobs");
    faulted
}

#[test]
fn the_tiny_core_agrees_with_the_model_and_the_golden_on_a_thousand_random_jobs() {
    let faulted = random_jobs_agree("tiny", 1000);
    assert!(faulted >= 50, "only {faulted} of 1000 jobs faulted");
}

#[test]
fn the_edge_core_agrees_with_the_model_and_the_golden_on_random_jobs() {
    let faulted = random_jobs_agree("edge", 60);
    assert!(faulted >= 3, "only {faulted} of 60 jobs faulted");
}

#[test]
fn the_round_robin_system_agrees_with_the_model_and_the_golden_on_random_jobs() {
    let rr = Arch::load(concat!(env!("CARGO_MANIFEST_DIR"), "/archs/tiny_rr.toml")).unwrap();
    assert_eq!(rr.memory.arbitration, lacuna_spec::Arbitration::RoundRobin);
    let faulted = random_jobs_agree_on(&rr, 300);
    assert!(faulted >= 15, "only {faulted} of 300 jobs faulted");
    // The policy matters: the same jobs under fixed priority take other cycles on some.
    let mut fixed = rr.clone();
    fixed.memory.arbitration = lacuna_spec::Arbitration::FixedPriority;
    let differ = (0..300)
        .filter(|&seed| {
            let case = Case::random(&rr, seed);
            let cycles = |a: &Arch| Engine::run(&ModelEngine, a, &case).unwrap().cycles;
            cycles(&rr) != cycles(&fixed)
        })
        .count();
    assert!(differ >= 30, "round robin changed the cycles of only {differ} of 300 jobs");
}

/// Every arch the suite builds the RTL of: the presets and every file of `archs/` (as
/// `build.rs` verilates them).
fn suite_archs() -> Vec<Arch> {
    let mut archs: Vec<Arch> = lacuna_spec::arch::PRESET_NAMES.iter().map(|p| Arch::preset(p).unwrap()).collect();
    let mut files: Vec<_> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/archs"))
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    archs.extend(files.iter().map(|f| Arch::load(f.to_str().unwrap()).unwrap()));
    archs
}

#[test]
fn every_case_file_agrees_three_ways_on_every_arch_it_is_for() {
    // Neither the cases nor the archs are listed here: a file added to `cases/` or `archs/` runs.
    let archs = suite_archs();
    let mut ran: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for arch in &archs {
        let rtl = RtlEngine { max_cycles: 1_000_000 };
        for case in lacuna_testbench::cosim::named_cases(arch).unwrap() {
            let gemv = case.kind == lacuna_spec::job::JobKind::Gemv;
            assert!(!gemv || case.matrix().is_some(), "{}: a gemv case has its golden", case.name);
            let rep = check_case(arch, &case, &rtl);
            assert!(rep.passed(), "{} {}: {rep:#?}", arch.name, case.name);
            assert_eq!(
                rep.faulted, case.malformed,
                "{} {}: a malformed case faults, a well-formed one does not",
                arch.name, case.name
            );
            ran.entry(case.name.clone()).or_default().push(arch.name.clone());
        }
    }
    for (file, text) in lacuna_testbench::cosim::NAMED_CASES {
        let case = Case::from_toml(&archs[0], text).unwrap();
        let on = ran.get(&case.name).unwrap_or_else(|| panic!("{file} ran on no arch of the suite"));
        for wanted in case.archs.iter().flatten() {
            assert!(on.contains(wanted), "{file} is for `{wanted}`, which is no arch of the suite");
        }
    }
}

/// An RTL engine that moves one memory request a cycle late: what a timing bug looks like.
struct LateRequest(RtlEngine);

impl Engine for LateRequest {
    fn name(&self) -> &'static str {
        "late-rtl"
    }
    fn run(
        &self,
        arch: &Arch,
        case: &Case,
    ) -> Result<lacuna_testbench::cosim::Outcome, lacuna_testbench::cosim::EngineError> {
        let mut o = self.0.run(arch, case)?;
        o.requests[3].cycle += 1;
        Ok(o)
    }
}

#[test]
fn a_late_request_is_reported_as_the_first_divergence_and_leaves_a_waveform() {
    let arch = Arch::preset("tiny").unwrap();
    let case = Case::random(&arch, 7);
    let rep = check_case(&arch, &case, &LateRequest(RtlEngine { max_cycles: 1_000_000 }));
    assert!(!rep.passed());
    let d = rep.divergence.unwrap();
    assert!(d.signal.contains("request 3"), "{d:?}");
    let dir = tempfile::tempdir().unwrap();
    let path = lacuna_testbench::cosim::write_waveform(&arch, &case, dir.path()).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains("$enddefinitions $end") && text.contains("$var wire 32") && text.contains("\n#1\n"));
}
