//! # lacuna-golden: the references every engine is checked against
//!
//! Written independently of the cycle model and the RTL, from the spec alone:
//! - [`dense`]: dense GEMV in f64 (the exact reference) and f32 (sequential), and a fast
//!   multi-threaded f32 GEMV from `faer` (the dense baseline of the benchmarks);
//! - [`spmspv`]: spMspV over RLC-CSC that adds in column order, the order the hardware uses, so
//!   that the cycle model and the RTL can be compared to it bit for bit;
//! - [`cpu_kernel`]: a fast multi-threaded CPU spMspV kernel with activation skipping, the CPU
//!   counterpart of the Celty GPU kernel, bit-identical to [`spmspv::column_order`];
//! - [`expert`]: the expert unit's A8W4 job (`lacuna_spec::a8w4`'s rules in their order) and an
//!   f64 reference of it with a stated bound;
//! - [`bound`]: the check of a sparse result against the dense f64 reference within the stated
//!   FP32 summation bound.
#![warn(missing_docs)]

pub mod bound;
pub mod cpu_kernel;
pub mod dense;
pub mod expert;
pub mod spmspv;

pub use bound::{check_against_dense, BoundReport};
pub use cpu_kernel::{CpuKernel, Decode};
pub use spmspv::column_order;
