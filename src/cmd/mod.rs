//! One module per subcommand.

pub mod encode;
pub mod inspect;
pub mod simulate;
pub mod spmspv;
