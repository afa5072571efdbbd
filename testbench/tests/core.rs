//! The whole core RTL, Verilated, against the cycle model and the golden references
//! (`lacuna_testbench::cosim`): on 1,000 random `tiny` jobs and 60 random `edge` jobs (synthetic
//! matrices of 1-4 panels, a quarter with corrupted streams) the RTL makes the same memory
//! requests in the same cycles, ends in the same cycle with the same fault report and writes
//! bit-identical y; the model matches the column-order golden bit for bit and the golden stays
//! within the dense bound. Then the named edge cases of `testbench/cases/`.

use lacuna_spec::Arch;
use lacuna_testbench::cosim::{check_case, Case, RtlEngine};

fn random_jobs_agree(preset: &str, jobs: u64) -> usize {
    let arch = Arch::preset(preset).unwrap();
    let rtl = RtlEngine { max_cycles: 1_000_000 };
    let mut faulted = 0;
    for seed in 0..jobs {
        let case = Case::random(&arch, seed);
        let rep = check_case(&arch, &case, &rtl);
        assert!(rep.passed(), "{preset} seed {seed}: {rep:#?}");
        assert!(!rep.faulted || case.malformed, "{preset} seed {seed}: a well-formed job faulted");
        faulted += rep.faulted as usize;
    }
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
