//! The GPU as an engine: the same cases as golden, model and RTL, on `lacuna_gpu`'s kernels.
//!
//! [`GpuEngine`] runs a case's canonical streams (a malformed case is not applicable, as for the
//! golden) on the golden GPU kernel (which must give the column-order golden's bits) or the fast
//! one (which must lie within the dense bound). The GPU is opened once per process and shared:
//! opening it compiles the kernels.

use crate::cosim::{Case, Engine, EngineError, Outcome};
use lacuna_gpu::{Gpu, GpuError, Kernel};
use lacuna_spec::{Activations, Arch};
use std::sync::{Mutex, OnceLock};

/// One GPU kernel as an engine.
pub struct GpuEngine {
    gpu: &'static Mutex<Gpu>,
    kernel: Kernel,
}

static GPU: OnceLock<Result<Mutex<Gpu>, String>> = OnceLock::new();

impl GpuEngine {
    /// The engine of `kernel` (golden or fast) on this process's GPU, or why there is none.
    /// cuBLAS is no engine: it multiplies the dense matrix, not the case's streams.
    pub fn new(kernel: Kernel) -> Result<GpuEngine, String> {
        if kernel == Kernel::Cublas {
            return Err("cuBLAS is a baseline on the dense matrix, not an engine of RLC-CSC cases".into());
        }
        let gpu = GPU.get_or_init(|| Gpu::open().map(Mutex::new).map_err(|e: GpuError| e.to_string()));
        match gpu {
            Ok(g) => Ok(GpuEngine { gpu: g, kernel }),
            Err(e) => Err(e.clone()),
        }
    }
}

impl Engine for GpuEngine {
    fn name(&self) -> &'static str {
        match self.kernel {
            Kernel::Golden => "gpu-golden",
            Kernel::Fast => "gpu-fast",
            Kernel::Cublas => unreachable!("GpuEngine::new refuses cuBLAS"),
        }
    }

    fn run(&self, _arch: &Arch, case: &Case) -> Result<Outcome, EngineError> {
        let m = case.matrix().ok_or(EngineError::NotApplicable("malformed streams"))?;
        let x = Activations::new(case.x.clone()).map_err(|e| EngineError::Failed(e.to_string()))?;
        let gpu = self.gpu.lock().map_err(|_| EngineError::Failed("the GPU lock was poisoned".into()))?;
        let y = gpu.spmspv(&m, &x, case.filter, self.kernel).map_err(|e| EngineError::Failed(e.to_string()))?;
        Ok(Outcome { y, cycles: None, fault: None, requests: vec![] })
    }
}
