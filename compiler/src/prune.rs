//! Exact magnitude pruning: zero the smallest-magnitude fraction of a set of FP16 values.
//!
//! "Pruned to x %" means exactly `round(x * n)` of the n values are zero afterwards (values that
//! were zero already count). The values are ranked by magnitude; ties at the cut are broken by
//! position (earlier first), so the result is deterministic. Ranking uses a histogram of the
//! 15 magnitude bits: for finite FP16 values, the order of `bits & 0x7fff` is the order of `|v|`,
//! so the cut is found in one O(n) pass with no sort.

use half::f16;
use rayon::prelude::*;

/// What a pruning pass did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PruneResult {
    /// Values that are zero afterwards.
    pub zeros: usize,
    /// `zeros / n`.
    pub sparsity: f64,
    /// The magnitude at the cut: every kept value has at least this magnitude, every value of a
    /// smaller magnitude is zero.
    pub threshold: f16,
}

/// Zeros exactly `round(fraction * values.len())` values of the smallest magnitude.
///
/// `fraction` must lie in `[0, 1]` and the values must be finite.
pub fn prune_smallest(values: &mut [f16], fraction: f64) -> PruneResult {
    assert!((0.0..=1.0).contains(&fraction), "fraction must be in [0, 1], got {fraction}");
    let n = values.len();
    let target = ((fraction * n as f64).round() as usize).min(n);
    let hist = values
        .par_chunks(1 << 16)
        .fold(
            || vec![0usize; 1 << 15],
            |mut h, chunk| {
                for v in chunk {
                    h[(v.to_bits() & 0x7fff) as usize] += 1;
                }
                h
            },
        )
        .reduce(
            || vec![0usize; 1 << 15],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    // The cut bucket: every magnitude below it is zeroed, and `take` of the values in it.
    let (mut below, mut cut) = (0usize, 0usize);
    while cut < hist.len() && below + hist[cut] <= target {
        below += hist[cut];
        cut += 1;
        if below == target {
            break;
        }
    }
    let mut take = target - below;
    values.par_iter_mut().for_each(|v| {
        if ((v.to_bits() & 0x7fff) as usize) < cut {
            *v = f16::ZERO;
        }
    });
    if take > 0 {
        for v in values.iter_mut() {
            if (v.to_bits() & 0x7fff) as usize == cut {
                *v = f16::ZERO;
                take -= 1;
                if take == 0 {
                    break;
                }
            }
        }
    }
    let zeros = values.par_iter().filter(|v| v.to_bits() & 0x7fff == 0).count();
    PruneResult {
        zeros,
        sparsity: if n == 0 { 0.0 } else { zeros as f64 / n as f64 },
        threshold: f16::from_bits(cut.min(0x7bff) as u16),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_at_the_cut_are_broken_by_position() {
        let mut v: Vec<f16> = [3.0, 1.0, 1.0, 2.0, 1.0].iter().map(|&x| f16::from_f32(x)).collect();
        let r = prune_smallest(&mut v, 0.4);
        assert_eq!(r.zeros, 2);
        let out: Vec<f32> = v.iter().map(|x| x.to_f32()).collect();
        assert_eq!(out, vec![3.0, 0.0, 0.0, 2.0, 1.0]);
    }

    #[test]
    fn pruning_everything_and_nothing_work() {
        let mut v = vec![f16::ONE; 10];
        assert_eq!(prune_smallest(&mut v, 0.0).zeros, 0);
        assert_eq!(prune_smallest(&mut v, 1.0).zeros, 10);
    }

    proptest! {
        #[test]
        fn pruning_reaches_its_target_exactly_and_keeps_the_largest(
            raw in proptest::collection::vec(-100.0f32..100.0, 0..500),
            fraction in 0.0f64..=1.0,
        ) {
            let mut v: Vec<f16> = raw.iter().map(|&x| f16::from_f32(x)).collect();
            let before = v.clone();
            let r = prune_smallest(&mut v, fraction);
            let target = (fraction * v.len() as f64).round() as usize;
            prop_assert_eq!(r.zeros, target.max(before.iter().filter(|x| x.to_bits() & 0x7fff == 0).count()));
            // Every kept value is at least as large as every zeroed one.
            let kept_min = v.iter().filter(|x| x.to_bits() & 0x7fff != 0).map(|x| x.to_f32().abs()).fold(f32::INFINITY, f32::min);
            for (b, a) in before.iter().zip(&v) {
                if a.to_bits() & 0x7fff == 0 { prop_assert!(b.to_f32().abs() <= kept_min); }
                else { prop_assert_eq!(a, b); }
            }
        }
    }
}
