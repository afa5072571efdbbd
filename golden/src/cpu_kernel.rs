//! A fast multi-threaded CPU spMspV over RLC-CSC: the CPU counterpart of the Celty GPU kernel.
//!
//! Like the GPU kernel it never loads a column whose activation fails the filter, and it
//! reconstructs row indices from the 4-bit runs on the fly. Unlike the GPU kernel (which splits
//! columns across thread blocks and merges partial sums with `atomicAdd`, in no fixed order),
//! work is split by *row panels*: each thread owns the FP32 accumulators of whole panels and
//! visits the active columns in increasing k. Every output row therefore sees the same additions
//! in the same order as [`crate::spmspv::column_order`], so the result is bit-identical to it
//! whatever the thread count (a test checks it).
//!
//! Panels small enough that their accumulators stay in the L1 cache make the scatter-add cheap;
//! [`CpuKernel::PANEL_ROWS`] is the panel height the benchmarks encode with.

use crate::spmspv::{check_job, JobError};
use half::f16;
use lacuna_spec::{ActivationFilter, Activations, RlcCsc, RlcMatrix};
use rayon::prelude::*;

/// The CPU spMspV kernel.
pub struct CpuKernel;

impl CpuKernel {
    /// The panel height the kernel is tuned for: 2048 FP32 accumulators are 8 KiB, within L1.
    pub const PANEL_ROWS: u32 = 2048;

    /// `y = W x` on the current rayon pool (use `ThreadPool::install` to choose the threads).
    pub fn run(m: &RlcMatrix, x: &Activations, filter: ActivationFilter) -> Result<Vec<f32>, JobError> {
        check_job(m, x)?;
        let active = active_columns(x.as_slice(), filter);
        let mut y = vec![0.0f32; m.rows() as usize];
        y.par_chunks_mut(m.panel_rows() as usize)
            .zip(m.panels().par_iter())
            .for_each(|(acc, panel)| panel_spmspv(panel, &active, acc));
        Ok(y)
    }
}

/// The activation scan: (k, x_k as f32) for every column that takes part, k increasing.
pub fn active_columns(x: &[f16], filter: ActivationFilter) -> Vec<(u32, f32)> {
    x.iter().enumerate().filter(|(_, &v)| filter.is_active(v)).map(|(k, &v)| (k as u32, v.to_f32())).collect()
}

/// One panel: scatter-add every active column into `acc` (length = panel rows).
fn panel_spmspv(panel: &RlcCsc, active: &[(u32, f32)], acc: &mut [f32]) {
    let values = panel.values();
    let runs = panel.runs();
    let colptr = panel.colptr();
    let lut = lacuna_spec::numerics::fp16_to_f32_table();
    for (a, &(k, xk)) in active.iter().enumerate() {
        let (start, end) = (colptr[k as usize] as usize, colptr[k as usize + 1] as usize);
        if let Some(&(next, _)) = active.get(a + 1) {
            let n = next as usize;
            prefetch_column(values, runs, colptr[n] as usize, colptr[n + 1] as usize);
        }
        scatter_column(acc, &values[start..end], runs, start, xk, lut);
    }
}

/// Row step of the low-nibble entry of a run-length byte: `(b & 15) + 1`.
const LOW_STEP: [u8; 256] = step_table(false);
/// Row step over both entries of a run-length byte: `(b & 15) + (b >> 4) + 2`.
const PAIR_STEP: [u8; 256] = step_table(true);

const fn step_table(pair: bool) -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b & 15) as u8 + 1 + if pair { (b >> 4) as u8 + 1 } else { 0 };
        b += 1;
    }
    t
}

/// One column: `acc[row_j] += w_j * xk` for its entries, rows from the runs,
/// `row_j = j + sum_{l <= j} run_l`. The product is exact and added with one FP32 addition:
/// the same operation as `numerics::{product, accumulate}`.
#[inline(always)]
fn scatter_column(acc: &mut [f32], w: &[half::f16], runs: &[u8], start: usize, xk: f32, lut: &[f32; 65536]) {
    let mut row = usize::MAX; // one before row 0; each entry steps by run + 1
    let mut w = w;
    let mut e = start;
    if e & 1 == 1 && !w.is_empty() {
        row = row.wrapping_add((runs[e >> 1] >> 4) as usize + 1);
        acc[row] += lut[w[0].to_bits() as usize] * xk;
        w = &w[1..];
        e += 1;
    }
    // Two entries per run-length byte, low nibble first. The steps come from tables so that the
    // row chain costs one addition per byte (a computed `row + lo + 1` is two dependent adds).
    let pairs = w.len() / 2;
    for (&b, wp) in runs[e >> 1..(e >> 1) + pairs].iter().zip(w.chunks_exact(2)) {
        let first = row.wrapping_add(LOW_STEP[b as usize] as usize);
        row = row.wrapping_add(PAIR_STEP[b as usize] as usize);
        acc[first] += lut[wp[0].to_bits() as usize] * xk;
        acc[row] += lut[wp[1].to_bits() as usize] * xk;
    }
    if w.len() % 2 == 1 {
        row = row.wrapping_add((runs[(e + 2 * pairs) >> 1] & 0x0f) as usize + 1);
        acc[row] += lut[w[w.len() - 1].to_bits() as usize] * xk;
    }
}

/// Asks the cache for the whole next active column while this one is processed. Skipped
/// columns break the hardware prefetchers' streams at every jump, which otherwise leaves the
/// kernel waiting on DRAM latency at the start of each column.
#[inline(always)]
fn prefetch_column(values: &[half::f16], runs: &[u8], start: usize, end: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        for v in values[start..end].iter().step_by(32) {
            // SAFETY: a prefetch is a hint that never faults; the pointer is in bounds anyway.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((v as *const half::f16).cast()) };
        }
        for r in runs[start / 2..end.div_ceil(2)].iter().step_by(64) {
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((r as *const u8).cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (values, runs, start, end);
}
