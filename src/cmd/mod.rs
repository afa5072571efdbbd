//! One module per subcommand.

pub mod compile;
pub mod cosim;
pub mod emit_verilog;
pub mod encode;
pub mod eval;
pub mod inspect;
pub mod merge;
pub mod run_program;
pub mod simulate;
pub mod spmspv;
pub mod spmspv_gpu;
pub mod sweep;
