//! # lacuna-spec: the one spec of lacuna
//!
//! Everything the RTL, the cycle model, the compiler and the testbench must agree on lives here and
//! only here:
//! - [`arch`]: the hardware parameters ([`Arch`]), presets, validation and the stable hash;
//!   [`derived`]: the quantities derived from them;
//!   [`rtl_fit`]: the narrower limits of the RTL generator;
//! - [`a8w4`]: the expert unit's A8W4 format (INT4 weights in FP16-scaled groups, INT8 activations)
//!   and its numeric rules;
//! - [`rlc`]: the RLC-CSC sparse format, bit for bit, with its encoder, decoder and row panels;
//! - [`dense_panels`]: the dense column panels of a `gemv` job (no run lengths);
//! - [`rlc_file`]: the `.rlc` on-disk format and its validating reader;
//! - [`numerics`]: the FP16 x FP16 -> FP32 datapath rules and the activation filter;
//! - [`dense`]: the dense FP16 matrix the formats encode;
//! - [`memory_client`]: the clients of the memory port and their ids;
//! - [`fault`]: the fault codes a core job can end with;
//! - [`graph`]: the graph IR of a decode step; [`placement`]: which unit runs each node, and its work;
//! - [`timing`]: the process the clocks are claimed at and how a measured path scales to it;
//! - [`program`]: the compiled program (manifest + image) with its checks; [`trace`]: decode traces.
#![warn(missing_docs)]

pub mod a8w4;
pub mod arch;
pub mod dense;
pub mod dense_panels;
pub mod derived;
pub mod expert_job;
pub mod expert_unit;
pub mod fault;
pub mod graph;
pub mod job;
pub mod memory_client;
pub mod moe;
pub mod moe_trace;
pub mod numerics;
pub mod placement;
pub mod program;
pub mod rlc;
pub mod rlc_file;
pub mod rtl_fit;
pub mod speculation;
pub mod timing;
pub mod trace;

pub use arch::{Arbitration, Arch, ArchError, ArchHash, Datapath};
pub use dense::DenseMatrix;
pub use fault::FaultCode;
pub use memory_client::{MemClient, MemRequester};
pub use numerics::{ActivationFilter, Activations};
pub use rlc::{Entry, JobBytes, RlcCsc, RlcError, RlcMatrix, StorageStats};
pub use rlc_file::{read_rlc, read_rlc_file, write_rlc, write_rlc_file, RlcFileError};
