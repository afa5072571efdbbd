//! One module per subcommand.

pub mod compile;
pub mod cosim;
pub mod emit_verilog;
pub mod encode;
pub mod eval;
pub mod forward;
pub mod inspect;
pub mod merge;
pub mod run_program;
pub mod simulate;
pub mod spmspv;
pub mod spmspv_gpu;
pub mod sweep;

/// The activation filter of a threshold a user typed: a finite, non-negative number that FP16
/// holds (the hardware compares FP16 activations with an FP16 threshold; 1e9 would round to
/// +Inf and silently drop every activation).
pub fn threshold_filter(threshold: f32) -> anyhow::Result<lacuna_spec::ActivationFilter> {
    let t = half::f16::from_f32(threshold);
    if !(threshold >= 0.0 && t.is_finite()) {
        anyhow::bail!("--threshold must be a number in 0..=65504 (the largest FP16), got {threshold}");
    }
    Ok(lacuna_spec::ActivationFilter { threshold: t })
}
