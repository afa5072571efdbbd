//! # lacuna-rtl: the Sparse SIMT core in rust-hdl
//!
//! One file per block, with the block names of `docs/microarchitecture.md` and the cycle model
//! (`model/src/`). Every block is a rust-hdl `LogicBlock`; [`emit::emit`] turns a block into
//! Verilog for synthesis flows and for Verilator (the `testbench` crate), under a plain module name
//! and with its documented port list.
//!
//! Blocks so far (status and verification: `docs/rtl.md`): the arithmetic,
//! [`fp16_mul::Fp16Mul`] (exact FP16 x FP16 -> FP32) and [`fp32_add::Fp32Add`] (FP32 add, round
//! to nearest even); [`act_scan::ActScan`]; [`rlc_decoder::RlcDecoder`] and
//! [`multiplier::Multiplier`], wired as [`decode_path::DecodePath`]; [`route::Route`] and the
//! accumulator lanes [`accumulator::AccLane`] (registers in [`reg_file::RegFile`]), wired as
//! [`backend::Backend`]; the state element [`reg::Reg`] and the helpers [`widen`], [`wiring`].
//!
//! Why rust-hdl (0.46, crates.io): it is the Rust HDL the design card names, it builds on current
//! Rust and emits synthesizable Verilog-2001. Its limits (16 x 16 multipliers only, 32-bit
//! literals, no concatenation, one level of `Vec` indexing in `#[hdl_gen]`) shape the code: see
//! `docs/rtl.md` and `docs/synthesis.md`. The blocks are simulated with Verilator only.

pub mod accumulator;
pub mod act_scan;
pub mod backend;
pub mod decode_path;
pub mod emit;
pub mod fp16_mul;
pub mod fp32_add;
pub mod multiplier;
pub mod reg;
pub mod reg_file;
pub mod rlc_decoder;
pub mod route;
pub mod widen;
pub mod wiring;

pub use emit::{emit, Direction, EmitError, Module, Port, PortDoc};

/// Every block that can be emitted as a top module on its own for `arch`, in dependency order
/// (the datapath units do not depend on the arch).
pub fn blocks(arch: &lacuna_spec::Arch) -> Result<Vec<Module>, EmitError> {
    let c = &arch.core;
    let max_push = (c.lane_queue_depth).min(arch.chunk_entries()) as usize;
    let lane = accumulator::AccLane::new(
        c.acc_regs_per_lane as usize,
        c.acc_write_ports as usize,
        c.acc_add_latency as usize,
        c.lane_queue_depth as usize,
        max_push,
    );
    Ok(vec![
        emit(
            &format!("lacuna_decode_path_{}", arch.name),
            decode_path::DecodePath::new(arch.chunk_entries() as usize),
            decode_path::PORTS,
        )?,
        emit(&format!("lacuna_backend_{}", arch.name), backend::Backend::new(arch), backend::PORTS)?,
        emit(
            &format!("lacuna_act_scan_{}", arch.name),
            act_scan::ActScan::new(c.scan_width as usize, c.activation_queue_depth as usize),
            act_scan::PORTS,
        )?,
        emit(&format!("lacuna_acc_lane_{}", arch.name), lane, accumulator::LANE_PORTS)?,
        emit("lacuna_fp16_mul", fp16_mul::Fp16Mul::default(), fp16_mul::PORTS)?,
        emit("lacuna_fp32_add", fp32_add::Fp32Add::default(), fp32_add::PORTS)?,
    ])
}
