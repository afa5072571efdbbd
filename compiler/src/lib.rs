//! # lacuna-compiler: from weights to what the hardware runs
//!
//! Two paths. Single matrices: dense weights from `.npy` and `.safetensors` files ([`input`]),
//! exact magnitude pruning of weights and activations ([`prune`]), parallel RLC-CSC encoding in
//! row panels ([`encode`]), and the synthetic workloads of the Celty paper ([`workload`]).
//! Real LLMs (`docs/compiler.md`): checkpoints from GGUF ([`gguf`]) or Hugging Face directories
//! ([`hf`]) into a [`checkpoint::Checkpoint`] (graph IR `lacuna_spec::graph`, tokenizer
//! [`tokenizer`]), the golden forward ([`forward`]), the passes ([`passes`]), and the program
//! ([`program`] assembles `lacuna_spec::program`) and decode trace (`lacuna_spec::trace`) that
//! [`compile::compile`] writes.
#![warn(missing_docs)]

pub mod calibrate;
pub mod checkpoint;
pub mod coalesce;
pub mod compile;
pub mod corpus;
pub mod encode;
pub mod eval;
pub mod forward;
#[cfg(test)]
mod fuzz_seeds;
#[cfg(test)]
mod gemma3_tests;
mod ggml_type;
pub mod gguf;
mod gguf_dequant;
mod gguf_write;
pub mod hf;
pub mod hf_moe;
pub mod input;
pub mod kernels;
pub mod mixture_stats;
pub mod models;
pub mod moe_eval;
#[cfg(test)]
mod moe_tests;
pub mod moe_trace;
pub mod moefy;
mod open;
pub mod passes;
pub mod program;
pub mod prune;
pub mod speculate;
#[cfg(test)]
mod speculate_tests;
mod spm;
pub mod tokenizer;
pub mod workload;

pub use encode::encode_parallel;
pub use input::{load_activations, load_dense, InputError};
pub use workload::{Shape, SyntheticWorkload, PAPER_SHAPES};
