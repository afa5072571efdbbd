//! The device side: one GPU, its kernels compiled, jobs uploaded, run and timed.
//!
//! [`Gpu::open`] loads the CUDA driver, NVRTC and cuBLAS at run time and fails with a
//! [`GpuError`] (never a panic) when one is missing: `cudarc` would panic on a missing library,
//! so each is probed first. A [`GpuJob`] holds one matrix, its dense form (for cuBLAS), x and y
//! on the device; [`GpuJob::time_us`] times kernels side by side with CUDA events.

use crate::layout::{
    activation_key, golden_launch, reduce_launch, FastGeometry, FastParams, FlatMatrix, GeometryError, Launch, Merge,
};
use crate::nvrtc::{self, FAST_KERNEL, FLUSH_KERNEL, GOLDEN_KERNEL, REDUCE_KERNEL};
use crate::{GpuError, GpuInfo, Kernel};
use cudarc::cublas::{sys as blas_sys, CudaBlas};
use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use lacuna_spec::{ActivationFilter, Activations, DenseMatrix, RlcMatrix};
use std::sync::Arc;

fn cuda<E: std::fmt::Debug>(e: E) -> GpuError {
    GpuError::Cuda(format!("{e:?}"))
}

/// One GPU with the kernels loaded.
pub struct Gpu {
    stream: Arc<CudaStream>,
    golden: CudaFunction,
    fast: CudaFunction,
    reduce: CudaFunction,
    flush: CudaFunction,
    blas: CudaBlas,
    info: GpuInfo,
}

fn probe(present: unsafe fn() -> bool, library: &'static str, hint: &'static str) -> Result<(), GpuError> {
    // SAFETY: only opens the library by name and closes it again.
    if unsafe { present() } {
        Ok(())
    } else {
        Err(GpuError::NoLibrary { library, hint })
    }
}

impl Gpu {
    /// Opens device 0: loads the driver, compiles the kernels with NVRTC for it, creates a cuBLAS
    /// handle.
    pub fn open() -> Result<Gpu, GpuError> {
        // SAFETY: as in `probe`.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        probe(cudarc::nvrtc::sys::is_culib_present, "NVRTC (libnvrtc.so.13)", nvrtc::NVRTC_HINT)?;
        probe(
            cudarc::cublas::sys::is_culib_present,
            "cuBLAS (libcublas.so.13)",
            "install the CUDA toolkit or PyPI's nvidia-cublas and put the directory of libcublas.so.13 on LD_LIBRARY_PATH",
        )?;
        // cudarc also accepts CUDA 12 libraries by name, but calls entry points that older drivers
        // lack (it would panic on a missing symbol): refuse a driver older than CUDA 13 here.
        let mut version = 0i32;
        // SAFETY: writes one int; the library is present (probed above).
        let r = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
        if r != cudarc::driver::sys::CUresult::CUDA_SUCCESS || version < 13000 {
            return Err(GpuError::OldDriver { version });
        }
        let count =
            CudaContext::device_count().map_err(|e| GpuError::NoDevice(format!("could not count devices: {e:?}")))?;
        if count < 1 {
            return Err(GpuError::NoDevice("reports no CUDA device".into()));
        }
        let ctx = CudaContext::new(0).map_err(|e| GpuError::NoDevice(format!("could not open device 0: {e:?}")))?;
        // One stream does all the work, in order: no event needs recording around each use of a
        // buffer (none would be with one stream, but the timed region must hold nothing else).
        // SAFETY: no buffer exists yet, and no other stream is ever made.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a: Attr| ctx.attribute(a).map_err(cuda);
        let compute_capability = ctx.compute_capability().map_err(cuda)?;
        let arch = nvrtc::arch_name(compute_capability.0, compute_capability.1)?;
        let info = GpuInfo {
            name: ctx.name().map_err(cuda)?,
            compute_capability,
            arch,
            sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            smem_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32,
            l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u32,
            memory_bytes: ctx.total_mem().map_err(cuda)? as u64,
        };
        let ptx = nvrtc::compile(arch)?;
        let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(ptx)).map_err(cuda)?;
        let golden = module.load_function(GOLDEN_KERNEL).map_err(cuda)?;
        let fast = module.load_function(FAST_KERNEL).map_err(cuda)?;
        let flush = module.load_function(FLUSH_KERNEL).map_err(cuda)?;
        let reduce = module.load_function(REDUCE_KERNEL).map_err(cuda)?;
        // Let the fast kernel use all the shared memory a block may have (its accumulators; it
        // has no static shared memory).
        fast.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            info.smem_per_block as i32,
        )
        .map_err(cuda)?;
        let stream = ctx.default_stream();
        let blas = CudaBlas::new(stream.clone()).map_err(cuda)?;
        Ok(Gpu { stream, golden, fast, reduce, flush, blas, info })
    }

    /// The device.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// Uploads one job: the matrix, its dense form when given (needed by [`Kernel::Cublas`]),
    /// x, and a y buffer. `params` sets the fast kernel's geometry.
    pub fn job(
        &self,
        m: &RlcMatrix,
        x: &Activations,
        filter: ActivationFilter,
        dense: Option<&DenseMatrix>,
        params: FastParams,
    ) -> Result<GpuJob<'_>, GpuError> {
        if x.len() != m.cols() as usize {
            return Err(GpuError::ActivationLength { cols: m.cols() as usize, got: x.len() });
        }
        if let Some(d) = dense {
            if d.rows() != m.rows() as usize || d.cols() != m.cols() as usize {
                return Err(GpuError::NoDense { rows: m.rows(), cols: m.cols() });
            }
        }
        let flat = FlatMatrix::new(m);
        flat.check_panel_sizes()?;
        // The fast kernel's geometry may not fit (shared memory); the other kernels run anyway.
        let fast = FastGeometry::new(&flat, params, self.info.sms, self.info.smem_per_block);
        let s = &self.stream;
        let xb: Vec<u16> = x.as_slice().iter().map(|v| v.to_bits()).collect();
        // The dense baseline multiplies the same effective activations: the filtered ones zeroed.
        let x_eff: Vec<u16> = x.as_slice().iter().map(|&v| if filter.is_active(v) { v.to_bits() } else { 0 }).collect();
        let dense = match dense {
            Some(d) => Some(s.clone_htod(&d.data().iter().map(|v| v.to_bits()).collect::<Vec<u16>>()).map_err(cuda)?),
            None => None,
        };
        let job = GpuJob {
            gpu: self,
            rows: m.rows(),
            cols: m.cols(),
            golden: golden_launch(&flat),
            fast,
            max_panel_rows: flat.max_panel_rows(),
            params,
            partial: None,
            key: activation_key(filter),
            panels: s.clone_htod(&flat.panel_bytes()).map_err(cuda)?,
            values: s.clone_htod(&flat.values).map_err(cuda)?,
            runs: s.clone_htod(&flat.runs).map_err(cuda)?,
            colptr: s.clone_htod(&flat.colptr).map_err(cuda)?,
            n_panels: flat.panels.len() as u32,
            x: s.clone_htod(&xb).map_err(cuda)?,
            x_eff: s.clone_htod(&x_eff).map_err(cuda)?,
            dense,
            y: s.alloc_zeros::<f32>(m.rows() as usize).map_err(cuda)?,
            flush: None,
        };
        Ok(job)
    }

    /// One spMspV on `kernel` (the golden or the fast one), start to finish; the fast kernel with
    /// its default setting, or one warp a block where that many warps' accumulators do not fit.
    pub fn spmspv(
        &self,
        m: &RlcMatrix,
        x: &Activations,
        filter: ActivationFilter,
        kernel: Kernel,
    ) -> Result<Vec<f32>, GpuError> {
        let mut job = self.job(m, x, filter, None, FastParams::DEFAULT)?;
        if kernel == Kernel::Fast && matches!(job.fast, Err(GeometryError::PanelTooTall { .. })) {
            job.set_fast_params(FastParams::ONE_WARP)?;
        }
        job.run(kernel)
    }
}

/// One job on the device.
pub struct GpuJob<'g> {
    gpu: &'g Gpu,
    rows: u32,
    cols: u32,
    golden: Launch,
    /// The fast kernel's geometry, or why it cannot run this matrix.
    fast: Result<FastGeometry, GeometryError>,
    max_panel_rows: u32,
    params: FastParams,
    /// The partial sums of `Merge::Reduce` (splits x M), made when first needed.
    partial: Option<CudaSlice<f32>>,
    key: u32,
    n_panels: u32,
    panels: CudaSlice<u8>,
    values: CudaSlice<u16>,
    runs: CudaSlice<u8>,
    colptr: CudaSlice<u32>,
    x: CudaSlice<u16>,
    x_eff: CudaSlice<u16>,
    dense: Option<CudaSlice<u16>>,
    y: CudaSlice<f32>,
    /// The L2 flush's buffer and sink, made by the first timed run.
    flush: Option<(CudaSlice<u8>, CudaSlice<u32>)>,
}

fn config(l: Launch) -> LaunchConfig {
    LaunchConfig { grid_dim: (l.grid.0, l.grid.1, 1), block_dim: (l.threads, 1, 1), shared_mem_bytes: l.shared_bytes }
}

impl GpuJob<'_> {
    /// Changes the fast kernel's geometry.
    pub fn set_fast_params(&mut self, p: FastParams) -> Result<(), GpuError> {
        let info = &self.gpu.info;
        self.fast =
            FastGeometry::for_shape(self.n_panels, self.cols, self.max_panel_rows, p, info.sms, info.smem_per_block);
        self.params = p;
        let g = self.fast.clone()?;
        if p.merge == Merge::Reduce {
            let need = g.launch.grid.1 as usize * self.rows as usize;
            if self.partial.as_ref().is_none_or(|b| b.len() < need) {
                self.partial = None; // free the old one first
                self.partial = Some(self.gpu.stream.alloc_zeros::<f32>(need).map_err(cuda)?);
            }
        }
        Ok(())
    }

    /// The fast kernel's geometry, or why it cannot run this matrix.
    pub fn fast_geometry(&self) -> Result<FastGeometry, GeometryError> {
        self.fast.clone()
    }

    /// Queues `kernel` on the stream (y written whole); nothing waits.
    fn enqueue(&mut self, kernel: Kernel) -> Result<(), GpuError> {
        let s = &self.gpu.stream;
        match kernel {
            Kernel::Golden => {
                let mut b = s.launch_builder(&self.gpu.golden);
                b.arg(&self.panels).arg(&self.n_panels).arg(&self.values).arg(&self.runs).arg(&self.colptr);
                b.arg(&self.cols).arg(&self.x).arg(&self.key).arg(&mut self.y);
                // SAFETY: the arguments are the kernel's, in its order and types; the buffers
                // hold what layout.rs says and the kernel reads within them.
                unsafe { b.launch(config(self.golden)) }.map_err(cuda)?;
            }
            Kernel::Fast => {
                let g = self.fast.clone()?;
                let reduce = self.params.merge == Merge::Reduce;
                if reduce && self.partial.is_none() {
                    self.set_fast_params(self.params)?; // makes the partial-sum buffer
                }
                if !reduce {
                    s.memset_zeros(&mut self.y).map_err(cuda)?;
                }
                let splits = g.launch.grid.1;
                {
                    let mut b = s.launch_builder(&self.gpu.fast);
                    b.arg(&self.panels).arg(&self.values).arg(&self.runs).arg(&self.colptr).arg(&self.cols);
                    b.arg(&g.cols_per_split).arg(&g.acc_words).arg(&self.x).arg(&self.key).arg(&mut self.y);
                    let null: u64 = 0;
                    match (reduce, self.partial.as_mut()) {
                        (true, Some(p)) => b.arg(p),
                        _ => b.arg(&null),
                    };
                    b.arg(&self.rows);
                    // SAFETY: as above; the dynamic shared memory is the geometry's; `partial` is
                    // null or holds splits x M floats.
                    unsafe { b.launch(config(g.launch)) }.map_err(cuda)?;
                }
                if reduce {
                    let p = self.partial.as_ref().expect("made above");
                    let mut b = s.launch_builder(&self.gpu.reduce);
                    b.arg(p).arg(&splits).arg(&self.rows).arg(&mut self.y);
                    // SAFETY: partial holds splits x M floats, y holds M.
                    unsafe { b.launch(config(reduce_launch(self.rows))) }.map_err(cuda)?;
                }
            }
            Kernel::Cublas => {
                let w = self.dense.as_ref().ok_or(GpuError::NoDense { rows: self.rows, cols: self.cols })?;
                let (alpha, beta) = (1.0f32, 0.0f32);
                let (wp, _w) = w.device_ptr(s);
                let (xp, _x) = self.x_eff.device_ptr(s);
                let (yp, _y) = self.y.device_ptr_mut(s);
                // W is M x K row-major, i.e. K x M column-major: y = op(A) x with op = transpose.
                // SAFETY: A is K x M (lda K), B is K x 1, C is M x 1, all allocated at those sizes.
                unsafe {
                    cudarc::cublas::result::gemm_ex(
                        *self.gpu.blas.handle(),
                        blas_sys::cublasOperation_t::CUBLAS_OP_T,
                        blas_sys::cublasOperation_t::CUBLAS_OP_N,
                        self.rows as i32,
                        1,
                        self.cols as i32,
                        (&alpha) as *const f32 as *const _,
                        wp as *const _,
                        blas_sys::cudaDataType_t::CUDA_R_16F,
                        self.cols as i32,
                        xp as *const _,
                        blas_sys::cudaDataType_t::CUDA_R_16F,
                        self.cols as i32,
                        (&beta) as *const f32 as *const _,
                        yp as *mut _,
                        blas_sys::cudaDataType_t::CUDA_R_32F,
                        self.rows as i32,
                        blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                        blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                    )
                }
                .map_err(cuda)?;
            }
        }
        Ok(())
    }

    /// Runs `kernel` once and returns y.
    pub fn run(&mut self, kernel: Kernel) -> Result<Vec<f32>, GpuError> {
        self.enqueue(kernel)?;
        let y = self.gpu.stream.clone_dtoh(&self.y).map_err(cuda)?;
        self.gpu.stream.synchronize().map_err(cuda)?;
        Ok(y)
    }

    fn flush_l2(&mut self) -> Result<(), GpuError> {
        let s = &self.gpu.stream;
        if self.flush.is_none() {
            // Enough reading to evict the whole L2 twice over.
            let words = (2 * self.gpu.info.l2_bytes as usize).div_ceil(16).max(1);
            self.flush = Some((s.alloc_zeros::<u8>(words * 16).map_err(cuda)?, s.alloc_zeros::<u32>(1).map_err(cuda)?));
        }
        let (buf, sink) = self.flush.as_mut().expect("made above");
        let words = (buf.len() / 16) as u64;
        let mut b = s.launch_builder(&self.gpu.flush);
        b.arg(&*buf).arg(&words).arg(sink);
        let cfg = LaunchConfig { grid_dim: (4 * self.gpu.info.sms, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the buffer holds `words` 16-byte words; sink holds one word.
        unsafe { b.launch(cfg) }.map_err(cuda)?;
        Ok(())
    }

    /// The median time in microseconds of each kernel, measured with CUDA events around each
    /// run (the fast kernel's zeroing of y included), each run after an L2 flush, the kernels
    /// interleaved (a, b, c, a, b, c, ...) so that clock and thermal drift hit all alike, after
    /// three untimed warm-up runs of each.
    pub fn time_us(&mut self, kernels: &[Kernel], reps: usize) -> Result<Vec<f64>, GpuError> {
        for &k in kernels {
            for _ in 0..3 {
                self.enqueue(k)?;
            }
        }
        let mut times = vec![Vec::with_capacity(reps); kernels.len()];
        let ctx = self.gpu.stream.context().clone();
        for _ in 0..reps.max(1) {
            for (i, &k) in kernels.iter().enumerate() {
                self.flush_l2()?;
                let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(cuda)?;
                let end = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(cuda)?;
                start.record(&self.gpu.stream).map_err(cuda)?;
                self.enqueue(k)?;
                end.record(&self.gpu.stream).map_err(cuda)?;
                times[i].push(start.elapsed_ms(&end).map_err(cuda)? as f64 * 1e3);
            }
        }
        Ok(times
            .into_iter()
            .map(|mut t| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            })
            .collect())
    }
}
