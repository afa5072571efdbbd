//! The GPU as the fourth engine: every named case of `testbench/cases/` and random cases, on the
//! `tiny` and `edge` archs, run on the golden GPU kernel (bit-identical with the column-order
//! golden required) and the fast one (within the dense FP32 bound). Malformed cases are not
//! applicable to either, as to the golden. Without a GPU the test reports that it was skipped;
//! with `LACUNA_REQUIRE_GPU=1` a missing GPU fails it.

use lacuna_golden::bound::check_against_dense;
use lacuna_gpu::{gpu_required, Kernel};
use lacuna_spec::Arch;
use lacuna_testbench::cosim::{named_cases, Case, Engine, EngineError, GoldenEngine};
use lacuna_testbench::gpu_engine::GpuEngine;

fn engines_or_skip() -> Option<(GpuEngine, GpuEngine)> {
    match (GpuEngine::new(Kernel::Golden), GpuEngine::new(Kernel::Fast)) {
        (Ok(g), Ok(f)) => Some((g, f)),
        (Err(e), _) | (_, Err(e)) => {
            assert!(!gpu_required(), "LACUNA_REQUIRE_GPU=1 but the GPU cannot be used: {e}");
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn check(arch: &Arch, case: &Case, golden_gpu: &GpuEngine, fast_gpu: &GpuEngine) -> bool {
    let Some(m) = case.matrix() else {
        assert!(matches!(golden_gpu.run(arch, case), Err(EngineError::NotApplicable(_))), "{}", case.name);
        return false;
    };
    let golden = GoldenEngine.run(arch, case).unwrap();
    let g = golden_gpu.run(arch, case).unwrap();
    let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&g.y), bits(&golden.y), "{} on {}: the golden GPU kernel differs", case.name, arch.name);
    let f = fast_gpu.run(arch, case).unwrap();
    let rep = check_against_dense(&m.decode(), &case.x, case.filter, &f.y);
    assert!(rep.passed(), "{} on {}: the fast GPU kernel is outside the bound: {rep:?}", case.name, arch.name);
    true
}

#[test]
fn the_gpu_kernels_agree_with_the_golden_on_every_named_and_random_case() {
    let Some((golden_gpu, fast_gpu)) = engines_or_skip() else { return };
    let mut ran = 0;
    for preset in ["tiny", "edge"] {
        let arch = Arch::preset(preset).unwrap();
        for case in named_cases(&arch).unwrap() {
            ran += check(&arch, &case, &golden_gpu, &fast_gpu) as usize;
        }
        for seed in 0..300 {
            ran += check(&arch, &Case::random(&arch, seed), &golden_gpu, &fast_gpu) as usize;
        }
    }
    assert!(ran > 400, "only {ran} well-formed cases ran");
    eprintln!("{ran} well-formed cases: golden GPU bit-exact, fast GPU within the bound");
}
