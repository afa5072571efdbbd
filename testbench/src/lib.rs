//! # lacuna-testbench: the RTL under Verilator, beside the cycle model and the golden references
//!
//! `build.rs` Verilates every block `lacuna_rtl` emits (for the presets, and the cores of the
//! archs in `archs/`) and links generated C++ shims; [`model::Verilated`] drives any block cycle by
//! cycle and [`verilated`] runs the FP units in batches. [`core_engine`] runs a whole job on the
//! Verilated core against the model's memory timing; [`cosim`] puts the golden, the model and the
//! RTL behind one `Engine` trait, draws random and named cases and names the first divergence;
//! [`gpu_engine`] adds the GPU kernels (`lacuna_gpu`) as engines of the same trait;
//! [`vcd`] writes waveforms; [`synth`] runs Verilator lint and Yosys; [`timing`] maps a block to a real
//! standard-cell library and times it with OpenSTA. Where the machine has no
//! Verilator the crate builds without it ([`verilated::AVAILABLE`] is false) and every RTL call
//! returns [`RtlError::NotBuilt`].

pub mod case;
pub mod core_engine;
pub mod cosim;
pub mod expert_cases;
pub mod gpu_engine;
pub mod model;
pub mod synth;
pub mod timing;
pub mod vcd;
pub mod verilated;

/// Why the RTL could not be run.
#[derive(Debug, thiserror::Error)]
pub enum RtlError {
    /// This build has no Verilated models.
    #[error(
        "this build of lacuna has no RTL engine: Verilator was not found when it was built; \
         install it (`apt-get install verilator`, 5.x) and rebuild"
    )]
    NotBuilt,
    /// No block of that name was built.
    #[error("no RTL block `{0}` in this build")]
    UnknownBlock(String),
    /// The block has no such port.
    #[error("RTL block `{block}` has no port `{port}`")]
    UnknownPort {
        /// The block.
        block: String,
        /// The port asked for.
        port: String,
    },
    /// Operand slices of different lengths.
    #[error("operand slices differ in length ({0} and {1})")]
    LengthMismatch(usize, usize),
}
