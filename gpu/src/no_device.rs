//! The GPU API of a build without the `cuda` feature: every call says so.

use crate::{FastParams, GpuError, GpuInfo, Kernel};
use lacuna_spec::{ActivationFilter, Activations, DenseMatrix, RlcMatrix};

/// No GPU in this build.
pub struct Gpu(());

/// Never constructed in this build.
pub struct GpuJob<'g>(std::marker::PhantomData<&'g Gpu>);

impl Gpu {
    /// Always [`GpuError::NotBuilt`].
    pub fn open() -> Result<Gpu, GpuError> {
        Err(GpuError::NotBuilt)
    }

    /// Unreachable: no `Gpu` exists in this build.
    pub fn info(&self) -> &GpuInfo {
        unreachable!("no Gpu exists without the cuda feature")
    }

    /// Always [`GpuError::NotBuilt`].
    pub fn job(
        &self,
        _m: &RlcMatrix,
        _x: &Activations,
        _filter: ActivationFilter,
        _dense: Option<&DenseMatrix>,
        _params: FastParams,
    ) -> Result<GpuJob<'_>, GpuError> {
        Err(GpuError::NotBuilt)
    }

    /// Always [`GpuError::NotBuilt`].
    pub fn spmspv(
        &self,
        _m: &RlcMatrix,
        _x: &Activations,
        _f: ActivationFilter,
        _k: Kernel,
    ) -> Result<Vec<f32>, GpuError> {
        Err(GpuError::NotBuilt)
    }
}

impl GpuJob<'_> {
    /// Always [`GpuError::NotBuilt`].
    pub fn run(&mut self, _k: Kernel) -> Result<Vec<f32>, GpuError> {
        Err(GpuError::NotBuilt)
    }

    /// Always [`GpuError::NotBuilt`].
    pub fn set_fast_params(&mut self, _p: FastParams) -> Result<(), GpuError> {
        Err(GpuError::NotBuilt)
    }

    /// Always [`GpuError::NotBuilt`].
    pub fn time_us(&mut self, _kernels: &[Kernel], _reps: usize) -> Result<Vec<f64>, GpuError> {
        Err(GpuError::NotBuilt)
    }
}
