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

#[cfg(test)]
mod tests {
    use super::*;

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
