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
//!
//! Decoding: where the CPU has AVX-512 (detected at run time), 16 entries at a time: their 8
//! run-length bytes widened to 16 row steps and summed in registers, the FP16 weights widened
//! with `vcvtph2ps`, the accumulators gathered, added to and scattered back. The rows of one
//! column are distinct, so this is the same one FP32 addition per entry as the scalar loop, in
//! the same order per row: the result stays bit-identical (tests run both paths,
//! [`Decode::Scalar`] and [`Decode::Auto`]).

use crate::spmspv::{check_job, JobError};
use half::f16;
use lacuna_spec::{ActivationFilter, Activations, RlcCsc, RlcMatrix};
use rayon::prelude::*;

/// The CPU spMspV kernel.
pub struct CpuKernel;

/// How the kernel decodes the run lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decode {
    /// 16 entries at a time with AVX-512 where the CPU has it, else [`Decode::Scalar`].
    Auto,
    /// Two entries per run-length byte, one at a time (any CPU).
    Scalar,
}

impl Decode {
    /// What `Auto` resolves to on this CPU (`Scalar` stays `Scalar`).
    pub fn resolve(self) -> Decode {
        match self {
            Decode::Auto if avx512::available() => Decode::Auto,
            _ => Decode::Scalar,
        }
    }
}

impl CpuKernel {
    /// The panel height the kernel is tuned for: 2048 FP32 accumulators are 8 KiB, within L1.
    pub const PANEL_ROWS: u32 = 2048;

    /// `y = W x` on the current rayon pool (use `ThreadPool::install` to choose the threads).
    pub fn run(m: &RlcMatrix, x: &Activations, filter: ActivationFilter) -> Result<Vec<f32>, JobError> {
        Self::run_with(m, x, filter, Decode::Auto)
    }

    /// [`CpuKernel::run`] with a chosen decoder (the result is the same bits either way).
    pub fn run_with(
        m: &RlcMatrix,
        x: &Activations,
        filter: ActivationFilter,
        decode: Decode,
    ) -> Result<Vec<f32>, JobError> {
        check_job(m, x)?;
        let decode = decode.resolve();
        let active = active_columns(x.as_slice(), filter);
        let mut y = vec![0.0f32; m.rows() as usize];
        y.par_chunks_mut(m.panel_rows() as usize)
            .zip(m.panels().par_iter())
            .for_each(|(acc, panel)| panel_spmspv(panel, &active, acc, decode));
        Ok(y)
    }
}

/// The activation scan: (k, x_k as f32) for every column that takes part, k increasing.
pub fn active_columns(x: &[f16], filter: ActivationFilter) -> Vec<(u32, f32)> {
    x.iter().enumerate().filter(|(_, &v)| filter.is_active(v)).map(|(k, &v)| (k as u32, v.to_f32())).collect()
}

/// One panel: scatter-add every active column into `acc` (length = panel rows).
fn panel_spmspv(panel: &RlcCsc, active: &[(u32, f32)], acc: &mut [f32], decode: Decode) {
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
        match decode {
            // SAFETY: `Auto` survives `Decode::resolve` only where the CPU has AVX-512.
            Decode::Auto => unsafe { avx512::scatter_column(acc, &values[start..end], runs, start, xk, lut) },
            Decode::Scalar => scatter_column(acc, &values[start..end], runs, start, xk, lut),
        }
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
    // One before row 0; each entry steps by run + 1.
    scatter_from(acc, w, runs, start, usize::MAX, xk, lut);
}

/// [`scatter_column`] from entry `e` (the first of `w`) on, the row before it being `row`.
#[inline(always)]
fn scatter_from(acc: &mut [f32], w: &[half::f16], runs: &[u8], e: usize, row: usize, xk: f32, lut: &[f32; 65536]) {
    let mut row = row;
    let mut w = w;
    let mut e = e;
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

/// The AVX-512 decoder: 16 entries (8 run-length bytes) a step.
mod avx512 {
    use half::f16;

    /// Whether this CPU runs [`scatter_column`].
    pub fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::arch::is_x86_feature_detected!("avx512f")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// [`super::scatter_column`], 16 entries at a time; the same additions in the same order.
    ///
    /// # Safety
    /// The CPU must have AVX-512F ([`available`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    pub unsafe fn scatter_column(acc: &mut [f32], w: &[f16], runs: &[u8], start: usize, xk: f32, lut: &[f32; 65536]) {
        use std::arch::x86_64::*;
        let (mut row, mut e, mut w) = (usize::MAX, start, w);
        if e & 1 == 1 && !w.is_empty() {
            row = row.wrapping_add((runs[e >> 1] >> 4) as usize + 1);
            acc[row] += lut[w[0].to_bits() as usize] * xk;
            w = &w[1..];
            e += 1;
        }
        // Rows are i32 lanes: panels this tall are far beyond any layer (the tail takes the rest).
        if acc.len() < i32::MAX as usize {
            let (xv, one, zero) = (_mm512_set1_ps(xk), _mm512_set1_epi32(1), _mm512_setzero_si512());
            while w.len() >= 16 {
                let r = e >> 1;
                let mut word = [0u8; 8];
                word.copy_from_slice(&runs[r..r + 8]);
                let bytes = u64::from_le_bytes(word);
                // Entry j's run is nibble j, low nibble first: interleave the low and high nibbles.
                let lo = _mm_cvtsi64_si128((bytes & 0x0f0f_0f0f_0f0f_0f0f) as i64);
                let hi = _mm_cvtsi64_si128(((bytes >> 4) & 0x0f0f_0f0f_0f0f_0f0f) as i64);
                let steps = _mm512_add_epi32(_mm512_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi)), one);
                // Inclusive prefix sum of the steps over the 16 lanes (shift up by 1, 2, 4, 8).
                let mut s = steps;
                s = _mm512_add_epi32(s, _mm512_alignr_epi32::<15>(s, zero));
                s = _mm512_add_epi32(s, _mm512_alignr_epi32::<14>(s, zero));
                s = _mm512_add_epi32(s, _mm512_alignr_epi32::<12>(s, zero));
                s = _mm512_add_epi32(s, _mm512_alignr_epi32::<8>(s, zero));
                let total = _mm_extract_epi32::<3>(_mm512_extracti32x4_epi32::<3>(s)) as usize;
                let last = row.wrapping_add(total);
                if last >= acc.len() {
                    break; // out of the panel: the scalar tail reports it as before
                }
                let rows = _mm512_add_epi32(_mm512_set1_epi32(row as i32), s);
                let wv = _mm512_cvtph_ps(_mm256_loadu_si256(w.as_ptr().cast()));
                let prod = _mm512_mul_ps(wv, xv);
                // SAFETY: every row is in 0..acc.len() (the last, the largest, was checked), and
                // the 16 rows are distinct, so the scatter writes each gathered value once.
                let old = _mm512_i32gather_ps::<4>(rows, acc.as_ptr());
                _mm512_i32scatter_ps::<4>(acc.as_mut_ptr(), rows, _mm512_add_ps(old, prod));
                row = last;
                w = &w[16..];
                e += 16;
            }
        }
        super::scatter_from(acc, w, runs, e, row, xk, lut);
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub unsafe fn scatter_column(acc: &mut [f32], w: &[f16], runs: &[u8], start: usize, xk: f32, lut: &[f32; 65536]) {
        super::scatter_column(acc, w, runs, start, xk, lut)
    }
}
