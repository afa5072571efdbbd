//! One module per subcommand.

pub mod compile;
pub mod compile_moe;
pub mod cosim;
pub mod emit_verilog;
pub mod encode;
pub mod eval;
pub mod eval_front;
pub mod eval_moe;
pub mod forward;
pub mod inspect;
pub mod merge;
pub mod run_program;
pub mod simulate;
pub mod simulate_moe;
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

/// A sparsity level as users type it (percent, 0..=100) and as every library takes it (a
/// fraction): clap parses and checks it once, the commands ask for [`Percent::fraction`].
#[derive(Clone, Copy, PartialEq)]
pub struct Percent(f64);

impl Percent {
    /// The level as typed, in percent.
    pub fn percent(self) -> f64 {
        self.0
    }

    /// The level as a fraction of 1.
    pub fn fraction(self) -> f64 {
        self.0 / 100.0
    }

    /// The fraction of a level that must leave something (pruning every weight of a model is
    /// no operating point): `name` is the argument, for the error.
    pub fn partial_fraction(self, name: &str) -> anyhow::Result<f64> {
        if self.0 >= 100.0 {
            anyhow::bail!("--{name} must lie in [0, 100), got {}", self.0);
        }
        Ok(self.fraction())
    }
}

impl std::str::FromStr for Percent {
    type Err = String;
    fn from_str(s: &str) -> Result<Percent, String> {
        let v: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number"))?;
        if !(0.0..=100.0).contains(&v) {
            return Err(format!("a level is a percentage in 0..=100, got {s}"));
        }
        Ok(Percent(v))
    }
}

/// As the number (`50.0`): sweep ids hash the grid's debug form, which must not change.
impl std::fmt::Debug for Percent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl std::fmt::Display for Percent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}
