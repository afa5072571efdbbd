//! The kernels compile: NVRTC (loaded at run time, no GPU needed) turns `kernels.cu` into PTX for
//! every target architecture, with every entry point. `scripts/test.sh` puts PyPI's NVRTC on the
//! library path and sets `LACUNA_REQUIRE_NVRTC=1`, so in the test command a missing NVRTC fails
//! this test instead of skipping it.
#![cfg(feature = "cuda")]

use lacuna_gpu::nvrtc::{self, FAST_KERNEL, FLUSH_KERNEL, GOLDEN_KERNEL, REDUCE_KERNEL, TEST_ARCHS};

fn nvrtc_or_skip() -> bool {
    if nvrtc::nvrtc_present() {
        return true;
    }
    let required = std::env::var("LACUNA_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
    assert!(!required, "LACUNA_REQUIRE_NVRTC=1 but NVRTC cannot be loaded: {}", nvrtc::NVRTC_HINT);
    eprintln!("skipped: NVRTC cannot be loaded ({})", nvrtc::NVRTC_HINT);
    false
}

#[test]
fn the_kernels_compile_to_ptx_for_every_target_architecture() {
    if !nvrtc_or_skip() {
        return;
    }
    for arch in TEST_ARCHS {
        let ptx = nvrtc::compile(arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        let target = format!(".target sm_{}", arch.trim_start_matches("compute_"));
        assert!(ptx.contains(&target), "{arch}: no `{target}` in the PTX");
        for entry in [GOLDEN_KERNEL, FAST_KERNEL, REDUCE_KERNEL, FLUSH_KERNEL] {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{arch}: no entry {entry}");
        }
        // The per-lane arrays of decode_column are indexed by unrolled constants only: in
        // registers, never in (slow) local memory.
        assert!(!ptx.contains(".local"), "{arch}: local memory in the PTX");
    }
}

#[test]
fn every_gpu_generation_nvrtc_13_targets_has_an_arch_name_and_older_ones_are_refused() {
    assert_eq!(nvrtc::arch_name(9, 0).unwrap(), "compute_90");
    assert_eq!(nvrtc::arch_name(8, 0).unwrap(), "compute_80");
    let e = nvrtc::arch_name(6, 1).unwrap_err().to_string();
    assert!(e.contains("6.1") && e.contains("not supported"), "{e}");
}
