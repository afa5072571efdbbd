//! `calibration`: computational calibration of a coalesced expert (`coalesced-calibrated`):
//! the skipped channels' expected contribution added without their weights.
//!
//! Contract: for expert `e` with loaded channels `L`, the down engine runs the channels' FP16
//! means `mu_j` as one more operand beside the tokens' (`m = W_down[:, L] mu_L`, in channel
//! order from 0), the FP32 lanes sum each token's `|h_j|` and the channels' `nu_j`; after the
//! expert's last channel each token gets `y += (w kappa) (c - m)` with
//! `kappa = sum|h| / sum nu` (1 when the loaded channels' `sum nu` is 0, as when nothing loads). The statistics (`c`, `mu`, `nu`, FP16) are
//! fetched once per expert a job calibrates; no weight is loaded for the skipped channels.

/// FP32 lane operations per calibrated (token, expert) before the terms: the division for
/// kappa and the product `w kappa`.
pub const FP32_OPS: u64 = 2;

/// `kappa` from a token's `sum |h_j|` and the loaded channels' `sum nu_j`.
pub fn kappa(a_l1: f32, nu_l1: f32) -> f32 {
    if nu_l1 > 0.0 {
        a_l1 / nu_l1
    } else {
        1.0
    }
}

/// Adds one token's calibration term: `y += (w kappa) (c - m)`.
pub fn apply(y: &mut [f32], weight: f32, kappa: f32, mean_out: &[half::f16], m: &[f32]) {
    let wk = weight * kappa;
    for ((y, c), m) in y.iter_mut().zip(mean_out).zip(m) {
        *y += wk * (c.to_f32() - m);
    }
}
