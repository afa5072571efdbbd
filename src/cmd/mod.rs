//! One module per subcommand.

pub mod cosim;
pub mod emit_verilog;
pub mod encode;
pub mod inspect;
pub mod merge;
pub mod simulate;
pub mod spmspv;
pub mod sweep;
