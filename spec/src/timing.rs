//! `timing`: the process the presets' clocks are claimed at, and how a path measured in a real
//! (older) standard-cell library is scaled to it: the per-cycle budget every register-to-register
//! path of the RTL must meet.
//!
//! Method (docs/synthesis.md, "Timing"): a path's delay is expressed in FO4 delays (an inverter
//! driving four copies of itself) of the library it was measured in, and an FO4 delay of the
//! target process turns it back into time. The reference library's FO4 is *measured* (the
//! testbench builds an inverter chain and times it with the same static-timing tool); the target's
//! is the textbook rule FO4 ~ 0.5 ns per um of drawn gate length, which gives 90 ps at 180 nm where
//! the OSU 0.18 um library measures 99 ps, and 14 ps at 28 nm (real 28 nm libraries lie between
//! about 10 ps, fast corner and low Vt, and 20 ps, slow corner and high Vt). A clock
//! uncertainty (skew, jitter, and the wires the reference library's zero wire load leaves out)
//! takes a fixed share of the cycle. Scaling by FO4 holds for gate-dominated paths; long wires
//! scale worse, which the uncertainty is there to cover.

/// A process node as the scaling sees it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Process {
    /// Its name ("28 nm").
    pub name: &'static str,
    /// Drawn gate length in nanometres (the area scaling's ratio).
    pub drawn_nm: f64,
    /// The delay of one FO4 inverter, picoseconds.
    pub fo4_ps: f64,
}

/// The process of the presets' clocks (`edge`: EdgeXpert's 28 nm, 800 MHz).
pub const TARGET: Process = Process { name: "28 nm", drawn_nm: 28.0, fo4_ps: 14.0 };

/// The share of each cycle kept for clock uncertainty and wires (10 %).
pub const CLOCK_UNCERTAINTY: f64 = 0.10;

/// The clock every block must meet: the fastest preset's (`edge`, 800 MHz). The small preset
/// (`tiny`, the suite's) is the same generators at smaller sizes, held to the same budget.
pub const BUDGET_CLOCK_MHZ: u32 = 800;

/// The cycle's usable delay at `clock_mhz` on the target, in FO4 delays.
pub fn budget_fo4(clock_mhz: u32) -> f64 {
    let period_ps = 1e6 / clock_mhz as f64;
    period_ps * (1.0 - CLOCK_UNCERTAINTY) / TARGET.fo4_ps
}

/// That budget in nanoseconds of a library whose FO4 delay is `library_fo4_ns`.
pub fn budget_ns(clock_mhz: u32, library_fo4_ns: f64) -> f64 {
    budget_fo4(clock_mhz) * library_fo4_ns
}

/// A delay of the reference library (`delay_ns`, FO4 `library_fo4_ns`) scaled to the target.
pub fn scaled_ns(delay_ns: f64, library_fo4_ns: f64) -> f64 {
    delay_ns / library_fo4_ns * TARGET.fo4_ps / 1000.0
}

/// An area of a library drawn at `library_nm` scaled to the target by the square of the drawn
/// lengths: ideal scaling, optimistic (real cells shrink less, about 2x less from 180 to 28 nm).
pub fn scaled_area_um2(area_um2: f64, library_nm: f64) -> f64 {
    area_um2 * (TARGET.drawn_nm / library_nm).powi(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_hundred_megahertz_at_28_nm_is_about_eighty_fo4_with_the_uncertainty_taken() {
        let fo4 = budget_fo4(800);
        assert!((fo4 - 1250.0 * 0.9 / 14.0).abs() < 1e-9, "{fo4}");
        // In a library with a 99 ps FO4 (OSU 0.18 um) that is just under 8 ns.
        assert!((budget_ns(800, 0.099) - 7.955).abs() < 1e-3);
        // A path of exactly the budget scales back to 90 % of the period.
        assert!((scaled_ns(budget_ns(800, 0.099), 0.099) - 1.125).abs() < 1e-9);
    }

    #[test]
    fn area_scales_with_the_square_of_the_drawn_length() {
        assert!((scaled_area_um2(180.0 * 180.0, 180.0) - 28.0 * 28.0).abs() < 1e-9);
    }
}
