//! One module per subcommand.

pub mod encode;
pub mod inspect;
pub mod merge;
pub mod simulate;
pub mod spmspv;
pub mod sweep;
