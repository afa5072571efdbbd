//! The numeric rules every engine (golden, cycle model, RTL) follows, bit for bit.
//!
//! - Values and activations are FP16 (IEEE binary16). Non-finite values (infinities, NaN) are
//!   refused where they enter: the RLC-CSC encoder, the `.rlc` reader and [`Activations::new`].
//!   With finite inputs no engine can produce a non-finite value (see below), so the datapath
//!   needs no special cases.
//! - A product `w * x` of two FP16 values is computed in FP32 and is exact: the significands
//!   have 11 bits each, so the product has at most 22, and the exponent range of FP32 holds every
//!   product (largest `65504^2 < 2^32`, smallest `2^-24 * 2^-24 = 2^-48`, a normal FP32 number).
//! - Products are added into FP32 accumulators with round-to-nearest-even, in a fixed order:
//!   columns in increasing `k`, and within a column rows in increasing order (each row receives
//!   at most one product per column). That is plain Rust `f32` addition.
//! - Every product is a multiple of `2^-48`, and so is every sum of them, so FP32 subnormals
//!   (below `2^-126`) never arise. The largest sum is below `K * 2^32`; with `K < 2^32` it stays
//!   far below `f32::MAX`, so no sum overflows.
//! - Accumulators start at `+0.0`. Under round-to-nearest-even a sum is `-0.0` only if both
//!   addends are `-0.0`, so an accumulator never holds `-0.0`; adding a padding entry's product
//!   (`±0.0`) therefore never changes an accumulator's bits, and an engine may skip or add it.
//! - An activation takes part iff it is nonzero and `|x| >= threshold` ([`ActivationFilter`]).

use half::f16;

/// The exact FP32 product of two FP16 values.
#[inline(always)]
pub fn product(w: f16, x: f16) -> f32 {
    w.to_f32() * x.to_f32()
}

/// FP16 bits -> FP32, all 65,536 of them (256 KiB), built once: one load per value, where
/// `half`'s scalar conversion costs a run-time CPU-feature check and a call. Only the few thousand
/// values a matrix holds are touched, so the hot part stays in cache. Exact, like `to_f32`.
pub fn fp16_to_f32_table() -> &'static [f32; 65536] {
    static TABLE: std::sync::OnceLock<Box<[f32; 65536]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0.0f32; 65536]);
        for (bits, v) in t.iter_mut().enumerate() {
            *v = f16::from_bits(bits as u16).to_f32();
        }
        t
    })
}

/// One accumulation step: FP32 addition with round-to-nearest-even.
#[inline(always)]
pub fn accumulate(acc: f32, product: f32) -> f32 {
    acc + product
}

/// True for +0.0 and -0.0.
#[inline(always)]
pub fn is_zero(v: f16) -> bool {
    v.to_bits() & 0x7fff == 0
}

/// The activation test of the activation scan.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ActivationFilter {
    /// Activations with a smaller magnitude are skipped (their columns are never loaded).
    pub threshold: f16,
}

impl ActivationFilter {
    /// Keeps every nonzero activation.
    pub const NONZERO: ActivationFilter = ActivationFilter { threshold: f16::ZERO };

    /// Whether column `k` with activation `x` takes part.
    #[inline(always)]
    pub fn is_active(&self, x: f16) -> bool {
        !is_zero(x) && f16::from_bits(x.to_bits() & 0x7fff) >= self.threshold
    }
}

/// A finite FP16 activation vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Activations(Vec<f16>);

/// A non-finite activation.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("activation {index} is {value}, but activations must be finite")]
pub struct NonFiniteActivation {
    /// Its position.
    pub index: usize,
    /// Its value.
    pub value: f32,
}

impl Activations {
    /// Wraps `values` after checking that each is finite.
    pub fn new(values: Vec<f16>) -> Result<Self, NonFiniteActivation> {
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(NonFiniteActivation { index, value: values[index].to_f32() });
        }
        Ok(Activations(values))
    }

    /// The values.
    pub fn as_slice(&self) -> &[f16] {
        &self.0
    }

    /// Number of activations (K).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many pass `filter`.
    pub fn active_count(&self, filter: ActivationFilter) -> usize {
        self.0.iter().filter(|&&x| filter.is_active(x)).count()
    }
}

/// The unit roundoff of FP32 round-to-nearest: `2^-24`.
pub const F32_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

/// The classic bound on the error of a sum of `n` terms added one by one in FP32
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, eq. 4.4):
/// `|computed - exact| <= gamma(n - 1) * sum |term|`, `gamma(m) = m u / (1 - m u)`.
/// The terms here are exact (products of FP16 values), so this bounds the whole error.
pub fn sum_error_bound(n_terms: usize, abs_sum: f64) -> f64 {
    if n_terms <= 1 {
        return 0.0;
    }
    let mu = (n_terms - 1) as f64 * F32_UNIT_ROUNDOFF;
    mu / (1.0 - mu) * abs_sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_of_fp16_values_are_exact_in_fp32() {
        let cases = [
            (f16::MAX, f16::MAX),
            (f16::MIN_POSITIVE_SUBNORMAL, f16::MIN_POSITIVE_SUBNORMAL),
            (f16::from_f32(1.0009766), f16::from_f32(-1.0009766)),
            (f16::from_f32(-3.25), f16::from_f32(2.875)),
        ];
        for (w, x) in cases {
            let exact = w.to_f64() * x.to_f64();
            assert_eq!(product(w, x) as f64, exact, "{w} * {x}");
        }
    }

    #[test]
    fn the_conversion_table_is_exact_for_every_fp16_value() {
        let t = fp16_to_f32_table();
        for bits in 0..=u16::MAX {
            let v = f16::from_bits(bits);
            assert!(t[bits as usize].to_bits() == v.to_f32().to_bits() || v.is_nan(), "{bits:#06x}");
        }
    }

    #[test]
    fn an_accumulator_starting_at_positive_zero_ignores_signed_zero_products() {
        let acc = accumulate(0.0, product(f16::ZERO, f16::from_f32(-2.0)));
        assert_eq!(acc.to_bits(), 0.0f32.to_bits());
        let acc = accumulate(1.5, -0.0);
        assert_eq!(acc, 1.5);
    }

    #[test]
    fn the_filter_skips_zeros_and_small_magnitudes() {
        let f = ActivationFilter { threshold: f16::from_f32(0.5) };
        assert!(!f.is_active(f16::ZERO));
        assert!(!f.is_active(f16::NEG_ZERO));
        assert!(!f.is_active(f16::from_f32(-0.25)));
        assert!(f.is_active(f16::from_f32(-0.5)));
        assert!(f.is_active(f16::from_f32(2.0)));
        assert!(ActivationFilter::NONZERO.is_active(f16::MIN_POSITIVE_SUBNORMAL));
    }

    #[test]
    fn non_finite_activations_are_refused_with_their_position() {
        let err = Activations::new(vec![f16::ONE, f16::INFINITY]).unwrap_err();
        assert_eq!(err.index, 1);
    }
}
