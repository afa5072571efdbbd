//! Dense GEMV references.
//!
//! - [`gemv_f64`]: every product and sum in f64. The products of FP16 values are exact in f64 and
//!   the sums carry 53 bits, so for the sizes here this is the exact value to within `K * 2^-53`
//!   relative; it is what the sparse results are bounded against.
//! - [`gemv_f32_sequential`]: f32, each row summed over k in increasing order (no skipping).
//! - [`FaerGemv`]: the dense f32 baseline of the benchmarks, `faer`'s matrix-vector product.
//!   faer was chosen because its GEMV path is SIMD-vectorised and multi-threaded and is
//!   maintained; `matrixmultiply` packs the whole matrix on every call, which is right for GEMM
//!   but makes a GEMV slower than a plain loop, so it would be a weak baseline.
//! - [`DenseF16Gemv`]: the like-for-like baseline of the sparse kernel: the same FP16 weights
//!   (half the bytes of f32), widened to f32 in registers (`vcvtph2ps` with AVX2 and FMA where
//!   the CPU has them, detected at run time as faer does; portable code otherwise), f32 products
//!   and sums, rows split over the same threads. A sparse kernel that reads FP16 must beat this, not only an f32 GEMV that moves
//!   twice the bytes.

use half::f16;
use lacuna_spec::{ActivationFilter, DenseMatrix};

/// The activation as the sparse engines see it: zero when it fails the filter.
#[inline]
pub fn effective(x: f16, filter: ActivationFilter) -> f16 {
    if filter.is_active(x) {
        x
    } else {
        f16::ZERO
    }
}

/// `y = W x` in f64.
pub fn gemv_f64(w: &DenseMatrix, x: &[f16], filter: ActivationFilter) -> Vec<f64> {
    let xe: Vec<f64> = x.iter().map(|&v| effective(v, filter).to_f64()).collect();
    (0..w.rows()).map(|r| w.row(r).iter().zip(&xe).map(|(wv, xv)| wv.to_f64() * xv).sum()).collect()
}

/// `y = W x` in f32, each row summed in increasing k.
pub fn gemv_f32_sequential(w: &DenseMatrix, x: &[f16], filter: ActivationFilter) -> Vec<f32> {
    let xe: Vec<f32> = x.iter().map(|&v| effective(v, filter).to_f32()).collect();
    (0..w.rows()).map(|r| w.row(r).iter().zip(&xe).fold(0.0f32, |acc, (wv, xv)| acc + wv.to_f32() * xv)).collect()
}

/// A dense f32 matrix held by faer, for the dense GEMV baseline.
pub struct FaerGemv {
    w: faer::Mat<f32>,
}

impl FaerGemv {
    /// Converts W to f32 once (outside any timed region).
    pub fn new(w: &DenseMatrix) -> Self {
        let data: Vec<f32> = w.data().iter().map(|v| v.to_f32()).collect();
        let cols = w.cols();
        FaerGemv { w: faer::Mat::from_fn(w.rows(), cols, |r, k| data[r * cols + k]) }
    }

    /// `y = W x` on `threads` threads (1: sequential), all K columns.
    pub fn run(&self, x: &[f32], threads: usize) -> Vec<f32> {
        let xv = faer::ColRef::from_slice(x);
        let mut y = faer::Col::<f32>::zeros(self.w.nrows());
        let par = if threads <= 1 { faer::Par::Seq } else { faer::Par::rayon(threads) };
        faer::linalg::matmul::matmul(y.as_mut(), faer::Accum::Replace, self.w.as_ref(), xv, 1.0f32, par);
        y.iter().copied().collect()
    }
}

/// Dense FP16 weights, row-major, for the dense FP16 GEMV baseline.
pub struct DenseF16Gemv {
    rows: usize,
    cols: usize,
    w: Vec<f16>,
}

/// Weights widened per block: small enough to stay in L1 beside a block of x.
const F16_BLOCK: usize = 256;

impl DenseF16Gemv {
    /// Copies W (outside any timed region).
    pub fn new(w: &DenseMatrix) -> Self {
        DenseF16Gemv { rows: w.rows(), cols: w.cols(), w: w.data().to_vec() }
    }

    /// `y = W x` on the calling thread pool (`threads` 1: sequential), all K columns.
    pub fn run(&self, x: &[f32], threads: usize) -> Vec<f32> {
        use rayon::prelude::*;
        assert_eq!(x.len(), self.cols, "x has K entries");
        let mut y = vec![0.0f32; self.rows];
        let row = |(r, out): (usize, &mut f32)| *out = dot_f16(&self.w[r * self.cols..(r + 1) * self.cols], x);
        if threads <= 1 {
            y.iter_mut().enumerate().for_each(row);
        } else {
            // Blocks of rows: one task per 64 rows keeps the scheduling cost far below the work.
            y.par_chunks_mut(64)
                .enumerate()
                .for_each(|(b, chunk)| chunk.iter_mut().enumerate().for_each(|(i, out)| row((b * 64 + i, out))));
        }
        y
    }
}

/// One row: AVX2 with F16C and FMA where the CPU has them (what a user's dense FP16 kernel
/// would use: faer's f32 GEMV dispatches to AVX2 + FMA at run time too), else portable code.
fn dot_f16(w: &[f16], x: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("f16c")
    {
        // SAFETY: the three features were detected on this CPU just above.
        return unsafe { dot_f16_avx2(w, x) };
    }
    dot_f16_portable(w, x)
}

/// 32 weights a step: four registers of eight FP16 widened by `vcvtph2ps`, four independent FMA
/// chains, then the lanes summed and the tail added.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn dot_f16_avx2(w: &[f16], x: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let n = w.len().min(x.len());
    let (wp, xp) = (w.as_ptr() as *const u16, x.as_ptr());
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut i = 0;
    // SAFETY (all loads): i + 8 * j + 8 <= n, so every 8-wide load lies inside both slices.
    while i + 32 <= n {
        for (j, a) in acc.iter_mut().enumerate() {
            let wv = _mm256_cvtph_ps(_mm_loadu_si128(wp.add(i + 8 * j) as *const __m128i));
            *a = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xp.add(i + 8 * j)), *a);
        }
        i += 32;
    }
    while i + 8 <= n {
        let wv = _mm256_cvtph_ps(_mm_loadu_si128(wp.add(i) as *const __m128i));
        acc[0] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(xp.add(i)), acc[0]);
        i += 8;
    }
    let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let mut lanes = [0.0f32; 8];
    _mm256_storeu_ps(lanes.as_mut_ptr(), sum);
    lanes.iter().sum::<f32>() + w[i..n].iter().zip(&x[i..n]).map(|(a, b)| a.to_f32() * b).sum::<f32>()
}

/// FP16 weights widened a block at a time, eight f32 partial sums (vectorisable), then their sum.
fn dot_f16_portable(w: &[f16], x: &[f32]) -> f32 {
    use half::slice::HalfFloatSliceExt;
    let mut wide = [0.0f32; F16_BLOCK];
    let mut acc = [0.0f32; 8];
    let mut tail = 0.0f32;
    for (wb, xb) in w.chunks(F16_BLOCK).zip(x.chunks(F16_BLOCK)) {
        let wide = &mut wide[..wb.len()];
        wb.convert_to_f32_slice(wide);
        let (w8, x8) = (wide.chunks_exact(8), xb.chunks_exact(8));
        let (wr, xr) = (w8.remainder(), x8.remainder());
        for (a, b) in w8.zip(x8) {
            for i in 0..8 {
                acc[i] += a[i] * b[i];
            }
        }
        tail += wr.iter().zip(xr).map(|(a, b)| a * b).sum::<f32>();
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dense_fp16_baseline_agrees_with_f64_within_the_fp32_bound_on_every_path() {
        // 37 x 1000 (a block boundary inside the row and a remainder), real-valued weights.
        let (rows, cols) = (37, 1000);
        let data: Vec<f16> =
            (0..rows * cols).map(|i| f16::from_f32(((i * 7919) % 2001) as f32 / 1000.0 - 1.0)).collect();
        let w = DenseMatrix::new(rows, cols, data).unwrap();
        let x16: Vec<f16> = (0..cols).map(|k| f16::from_f32(((k * 31) % 17) as f32 / 8.0 - 1.0)).collect();
        let x: Vec<f32> = x16.iter().map(|v| v.to_f32()).collect();
        let exact = gemv_f64(&w, &x16, ActivationFilter::NONZERO);
        let g = DenseF16Gemv::new(&w);
        let portable: Vec<f32> = (0..rows).map(|r| dot_f16_portable(&w.data()[r * cols..(r + 1) * cols], &x)).collect();
        for y in [g.run(&x, 1), g.run(&x, 2), portable] {
            for (r, (&got, &want)) in y.iter().zip(&exact).enumerate() {
                let abs: f64 = w.row(r).iter().zip(&x).map(|(a, b)| (a.to_f64() * *b as f64).abs()).sum();
                // Each sum of n terms in f32 is within gamma_n * sum |terms| of the exact value.
                let gamma = cols as f64 * 2f64.powi(-24) / (1.0 - cols as f64 * 2f64.powi(-24));
                assert!((got as f64 - want).abs() <= gamma * abs, "row {r}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn the_dense_references_agree_on_a_worked_example() {
        // W = [[1, 2], [3, -4]], x = [0.5, 0.25]: y = [1.0, 0.5]; with the filter at 0.5, x_1 is
        // skipped: y = [0.5, 1.5].
        let w = DenseMatrix::new(2, 2, [1.0, 2.0, 3.0, -4.0].iter().map(|&v| f16::from_f32(v)).collect()).unwrap();
        let x: Vec<f16> = [0.5, 0.25].iter().map(|&v| f16::from_f32(v)).collect();
        assert_eq!(gemv_f64(&w, &x, ActivationFilter::NONZERO), vec![1.0, 0.5]);
        assert_eq!(gemv_f32_sequential(&w, &x, ActivationFilter::NONZERO), vec![1.0, 0.5]);
        let half = ActivationFilter { threshold: f16::from_f32(0.5) };
        assert_eq!(gemv_f64(&w, &x, half), vec![0.5, 1.5]);
        let xf: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
        assert_eq!(FaerGemv::new(&w).run(&xf, 1), vec![1.0, 0.5]);
    }
}
