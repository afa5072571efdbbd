//! # lacuna-gpu: the golden GPU reference
//!
//! spMspV `y = W x` over the same RLC-CSC data (`RlcMatrix`, `.rlc` files) on an NVIDIA GPU,
//! beside cuBLAS's dense FP16 GEMV, as the Celty paper's first result does it:
//! - [`Kernel::Golden`]: a deterministic kernel bit-identical to `lacuna_golden::column_order`
//!   (one warp owns a panel's rows and visits its columns in increasing k, FP32 additions in the
//!   same order), the GPU's golden reference;
//! - [`Kernel::Fast`]: a kernel in the spirit of Celty's (activation skipping, 16-byte loads of
//!   RLC-CSC words, warp-wide run-length decoding, shared-memory accumulation, `atomicAdd`
//!   flush), whose order of additions varies, checked against dense within the FP32 bound;
//! - [`Kernel::Cublas`]: `cublasGemmEx` on the dense FP16 matrix, FP32 accumulation and output,
//!   the baseline a user would pick, checked the same way.
//!
//! CUDA is loaded at run time (`cudarc` with `dynamic-loading`): the crate builds and its host
//! side is tested on a machine without CUDA, and the same binary runs where a GPU appears.
//! The kernels (`kernels.cu`) are compiled by NVRTC for the GPU at hand ([`nvrtc`]); [`layout`]
//! computes everything up to the launch (buffers, activation key, launch geometry) and needs no
//! GPU. Without the default `cuda` feature the crate has no device code at all and
//! [`Gpu::open`] says so.
//!
//! Why `cudarc`: it is the maintained Rust binding of the CUDA driver, NVRTC and cuBLAS, and the
//! only one that loads all three at run time, so no CUDA toolkit is needed to build or test.
#![warn(missing_docs)]

pub mod layout;
#[cfg(feature = "cuda")]
pub mod nvrtc;

#[cfg(feature = "cuda")]
mod device;
#[cfg(feature = "cuda")]
pub use device::{Gpu, GpuJob};

#[cfg(not(feature = "cuda"))]
mod no_device;
#[cfg(not(feature = "cuda"))]
pub use no_device::{Gpu, GpuJob};

/// What the device is.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GpuInfo {
    /// Device name (`NVIDIA H200`).
    pub name: String,
    /// Compute capability.
    pub compute_capability: (i32, i32),
    /// The PTX target the kernels were compiled for.
    pub arch: &'static str,
    /// Multiprocessors.
    pub sms: u32,
    /// Shared memory a block may opt in to, bytes.
    pub smem_per_block: u32,
    /// L2 cache, bytes.
    pub l2_bytes: u32,
    /// Device memory, bytes.
    pub memory_bytes: u64,
}

pub use layout::{FastParams, FlatMatrix, Merge};

/// The three GPU kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// Deterministic, bit-identical with the column-order golden.
    Golden,
    /// Celty-style, fast, checked against dense.
    Fast,
    /// cuBLAS dense FP16 GEMV (GemmEx, FP32 accumulation), the baseline.
    Cublas,
}

impl Kernel {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Golden => "golden",
            Kernel::Fast => "fast",
            Kernel::Cublas => "cublas",
        }
    }
}

/// Why the GPU could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// This build has no device code.
    #[error("this build of lacuna has no GPU engine: it was built without the `cuda` feature")]
    NotBuilt,
    /// libcuda could not be loaded.
    #[error("no CUDA driver found (libcuda.so.1 could not be loaded: no NVIDIA driver on this machine, or not on the library path)")]
    NoDriver,
    /// The driver predates CUDA 13.
    #[error("no CUDA driver found (the driver loaded is CUDA {}.{}; lacuna's GPU engine needs CUDA 13 or newer)", version / 1000, version % 1000 / 10)]
    OldDriver {
        /// cuDriverGetVersion's answer (0 if it failed).
        version: i32,
    },
    /// The driver is there but offers no usable device.
    #[error("no CUDA driver found (the driver loaded but {0})")]
    NoDevice(String),
    /// A CUDA library other than the driver is missing.
    #[error("{library} could not be loaded: {hint}")]
    NoLibrary {
        /// Which.
        library: &'static str,
        /// Where to get it.
        hint: &'static str,
    },
    /// A compute capability NVRTC 13 does not target.
    #[error("GPU of compute capability {major}.{minor} is not supported (NVRTC 13 targets 7.5 and newer)")]
    UnsupportedGpu {
        /// Major.
        major: i32,
        /// Minor.
        minor: i32,
    },
    /// NVRTC refused the kernels.
    #[error("NVRTC could not compile the kernels: {0}")]
    Compile(String),
    /// A CUDA call failed.
    #[error("CUDA: {0}")]
    Cuda(String),
    /// The fast kernel cannot run this matrix.
    #[error(transparent)]
    Geometry(#[from] layout::GeometryError),
    /// x does not fit the matrix.
    #[error("the activation vector has {got} entries but the matrix has {cols} columns")]
    ActivationLength {
        /// K.
        cols: usize,
        /// x.len().
        got: usize,
    },
    /// The dense matrix the cuBLAS baseline needs was not given or does not fit.
    #[error("the cuBLAS baseline needs the dense {rows}x{cols} matrix of the job")]
    NoDense {
        /// M.
        rows: u32,
        /// K.
        cols: u32,
    },
}

/// Whether the tests must find a GPU (`LACUNA_REQUIRE_GPU=1`): then a missing GPU fails them
/// instead of skipping them.
pub fn gpu_required() -> bool {
    std::env::var("LACUNA_REQUIRE_GPU").is_ok_and(|v| v == "1")
}
