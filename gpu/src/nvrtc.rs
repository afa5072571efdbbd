//! The kernels' source and their compilation by NVRTC, loaded at run time.
//!
//! `kernels.cu` is compiled to PTX for the GPU at hand (its compute capability), so one binary
//! runs on any NVIDIA GPU whose driver knows CUDA 13. NVRTC needs no GPU: the tests compile the
//! kernels for every architecture in [`TEST_ARCHS`] with the NVRTC of PyPI's `nvidia-cuda-nvrtc`
//! wheel (`scripts/fetch-nvrtc.sh`), so a kernel that does not compile fails the suite on any
//! machine.

use crate::GpuError;

/// The CUDA C++ source of every kernel.
pub const SOURCE: &str = include_str!("kernels.cu");

/// The golden kernel's entry point.
pub const GOLDEN_KERNEL: &str = "lacuna_spmspv_golden";
/// The fast kernel's entry point.
pub const FAST_KERNEL: &str = "lacuna_spmspv_fast";
/// The sum of the fast kernel's partial sums (`Merge::Reduce`).
pub const REDUCE_KERNEL: &str = "lacuna_reduce_splits";
/// The L2 flush before a timed run.
pub const FLUSH_KERNEL: &str = "lacuna_flush_l2";

/// The architectures the tests compile for: Ampere (A100), Ada, Hopper (H100, H200).
pub const TEST_ARCHS: &[&str] = &["compute_80", "compute_89", "compute_90"];

/// `compute_XY` for a compute capability, from the list NVRTC 13 knows.
pub fn arch_name(major: i32, minor: i32) -> Result<&'static str, GpuError> {
    const KNOWN: &[(i32, i32, &str)] = &[
        (7, 5, "compute_75"),
        (8, 0, "compute_80"),
        (8, 6, "compute_86"),
        (8, 7, "compute_87"),
        (8, 9, "compute_89"),
        (9, 0, "compute_90"),
        (10, 0, "compute_100"),
        (10, 3, "compute_103"),
        (11, 0, "compute_110"),
        (12, 0, "compute_120"),
        (12, 1, "compute_121"),
    ];
    KNOWN.iter().find(|k| (k.0, k.1) == (major, minor)).map(|k| k.2).ok_or(GpuError::UnsupportedGpu { major, minor })
}

/// Whether NVRTC's library can be loaded (without loading it for good).
pub fn nvrtc_present() -> bool {
    // SAFETY: only tries to open the library by its candidate names and closes it again.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compiles [`SOURCE`] to PTX for `arch` (`compute_90`, ...).
///
/// `--fmad=false`: no addition is contracted into a fused multiply-add (`kernels.cu` says why it
/// would not matter, and why it is stated anyway). `-default-device`: every function is device
/// code unless marked otherwise.
pub fn compile(arch: &'static str) -> Result<String, GpuError> {
    if !nvrtc_present() {
        return Err(GpuError::NoLibrary { library: "NVRTC (libnvrtc.so.13)", hint: NVRTC_HINT });
    }
    let opts = cudarc::nvrtc::CompileOptions {
        fmad: Some(false),
        arch: Some(arch),
        options: vec!["-default-device".into(), "--std=c++17".into()],
        name: Some("kernels.cu".into()),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(SOURCE, opts).map_err(|e| GpuError::Compile(format!("{e:?}")))?;
    Ok(ptx.to_src())
}

/// Where to get NVRTC.
pub const NVRTC_HINT: &str = "install the CUDA toolkit or PyPI's nvidia-cuda-nvrtc (scripts/fetch-nvrtc.sh) \
     and put the directory of libnvrtc.so.13 on LD_LIBRARY_PATH";
