//! # lacuna-rtl: lacuna's hardware in rust-hdl
//!
//! One file per block, with the block names of `docs/microarchitecture.md` and the cycle model
//! (`model/src/`). Every block is a rust-hdl `LogicBlock` built by `from_arch` (the same
//! constructor for emission, the blocks that hold it and the tests); [`emit::emit`] turns a block
//! into Verilog for synthesis flows and for Verilator (the `testbench` crate), under a plain module
//! name and with its documented port list. The layout mirrors the model's (`model/src/`): the top
//! is [`system::System`] (`lacuna_system_<arch>`, [`top_name`]): the [`core::Core`] and the
//! [`memory::mem_port::MemPort`] its requesters share.
//!
//! Blocks (status and verification: `docs/rtl.md`): in [`core`], [`core::act_load::ActLoad`],
//! [`core::act_sram::ActSram`] and [`core::act_scan::ActScan`], wired as
//! [`core::act_path::ActPath`]; [`core::colptr_fetch::ColptrFetch`];
//! [`core::chunk_fetch::ChunkFetch`] (the fetch buffer's stores in [`sram::Sram`]);
//! [`core::rlc_decoder::RlcDecoder`] and [`core::multiplier::Multiplier`], wired as
//! [`core::decode_path::DecodePath`]; [`core::route::Route`] and the accumulator lanes
//! [`core::accumulator::AccLane`] (registers in [`core::reg_file::RegFile`]), wired as
//! [`core::backend::Backend`]; [`core::drain::Drain`]. In [`memory`], the port
//! [`memory::mem_port::MemPort`]. In [`expert_unit`] (the EdgeXpert unit, begun): the dot
//! engine's group unit [`expert_unit::dot_engine::group_dot::GroupDot`] and its dequantisation
//! [`expert_unit::dot_engine::group_scale::GroupScale`], composed with the row's accumulation
//! as [`expert_unit::dot_engine::dot_unit::DotUnit`]; the down engine's lane product
//! [`expert_unit::down_engine::down_product::DownProduct`] and the pipelined lane around it
//! [`expert_unit::down_engine::lane::DownLane`]; a SwiGLU lane
//! [`expert_unit::swiglu::lane::SwigluLane`] and its down operand
//! [`expert_unit::swiglu::down_operand::DownOperand`]. Shared by every unit: the arithmetic, [`fp16_mul::Fp16Mul`]
//! (exact FP16 x FP16 -> FP32), [`fp32_add::Fp32Add`] (FP32 add, round to nearest even; pipelined as
//! [`fp32_add::pipe::Fp32AddPipe`], the accumulator's) and
//! [`fp32_mul::Fp32Mul`] (FP32 multiply, round to nearest even: the expert unit's lanes); the
//! state element [`reg::Reg`], the ring pointers of every queue [`ring::Ring`], and the helpers
//! [`widen`], [`wiring`]; the FP units' leading-zero normalizer [`normalize::Normalize`]; the
//! 256-word table [`rom::Rom256`]; the rounding units' right shift with a sticky bit
//! [`sticky_shift::StickyShift`].
//!
//! Why rust-hdl (0.46, crates.io): it is the Rust HDL the design card names, it builds on current
//! Rust and emits synthesizable Verilog-2001. Its limits (16 x 16 multipliers only, 32-bit
//! literals, no concatenation, one level of `Vec` indexing in `#[hdl_gen]`) shape the code: see
//! `docs/rtl.md` and `docs/synthesis.md`. The blocks are simulated with Verilator only.

pub mod core;
pub mod delay;
pub mod emit;
pub mod expert_unit;
pub mod fp16_mul;
pub mod fp32_add;
pub mod fp32_div;
pub mod fp32_mul;
pub mod memory;
pub mod normalize;
pub mod pack;
pub mod reg;
pub mod ring;
pub mod rom;
pub mod split_always;
pub mod sram;
pub mod sticky_shift;
pub mod system;
pub mod widen;
pub mod wiring;

pub use emit::{emit, Direction, EmitError, Module, Port, PortDoc};
use expert_unit::dot_engine::{self, dot_unit, group_dot, group_scale};
use expert_unit::down_engine::{self, down_product};
use expert_unit::swiglu::{self, down_operand};
use expert_unit::token_quant;

/// Every block that can be emitted as a top module on its own for `arch`, in dependency order
/// (the datapath units do not depend on the arch).
pub fn blocks(arch: &lacuna_spec::Arch) -> Result<Vec<Module>, EmitError> {
    blocks_where(arch, |_| true)
}

/// The blocks of [`blocks`] whose module name `keep` accepts, the others not emitted: rust-hdl
/// writes a module per instance, so `edge`'s largest blocks are megabytes of Verilog that take
/// a minute to generate (the down engine's 256 lanes: 14 MB), and a user of a few blocks (the
/// testbench's build, the synthesis test) should not pay for them.
pub fn blocks_where(arch: &lacuna_spec::Arch, keep: impl Fn(&str) -> bool) -> Result<Vec<Module>, EmitError> {
    check_fits(arch)?;
    let name = |block: &str| format!("lacuna_{block}_{}", module_suffix(arch));
    let fixed = |block: &str| block.to_string();
    let list: Vec<Entry> = vec![
        entry(name("system"), || system::System::from_arch(arch), system::PORTS),
        entry(name("core"), || core::Core::from_arch(arch), core::PORTS),
        entry(name("decode_path"), || core::decode_path::DecodePath::from_arch(arch), core::decode_path::PORTS),
        entry(name("backend"), || core::backend::Backend::from_arch(arch), core::backend::PORTS),
        entry(name("act_path"), || core::act_path::ActPath::from_arch(arch), core::act_path::PORTS),
        entry(name("act_scan"), || core::act_scan::ActScan::from_arch(arch), core::act_scan::PORTS),
        entry(name("colptr_fetch"), || core::colptr_fetch::ColptrFetch::from_arch(arch), core::colptr_fetch::PORTS),
        entry(name("chunk_fetch"), || core::chunk_fetch::ChunkFetch::from_arch(arch), core::chunk_fetch::PORTS),
        entry(name("mem_port"), || memory::mem_port::MemPort::from_arch(arch), memory::mem_port::PORTS),
        entry(name("drain"), || core::drain::Drain::from_arch(arch), core::drain::PORTS),
        entry(name("acc_lane"), || core::accumulator::AccLane::from_arch(arch), core::accumulator::LANE_PORTS),
        entry(name("down_engine"), || down_engine::engine::DownEngine::from_arch(arch), down_engine::engine::PORTS),
        entry(name("dot_engine"), || dot_engine::engine::DotEngine::from_arch(arch), dot_engine::engine::PORTS),
        entry(name("swiglu_engine"), || swiglu::engine::SwigluEngine::from_arch(arch), swiglu::engine::PORTS),
        entry(name("quantizer"), || token_quant::quantizer::Quantizer::from_arch(arch), token_quant::quantizer::PORTS),
        entry(
            name("expert_datapath"),
            || expert_unit::datapath::ExpertDatapath::from_arch(arch),
            expert_unit::datapath::PORTS,
        ),
        entry(name("expert_pipe"), || expert_unit::pipe::ExpertPipe::from_arch(arch), expert_unit::pipe::PORTS),
        entry(fixed("lacuna_fp16_mul"), fp16_mul::Fp16Mul::default, fp16_mul::PORTS),
        entry(fixed("lacuna_fp32_add"), fp32_add::Fp32Add::default, fp32_add::PORTS),
        entry(
            fixed("lacuna_fp32_add_pipe"),
            || fp32_add::pipe::Fp32AddPipe::new(fp32_add::pipe::EMITTED_LATENCY),
            fp32_add::pipe::PORTS,
        ),
        entry(fixed("lacuna_fp32_mul"), fp32_mul::Fp32Mul::default, fp32_mul::PORTS),
        entry(fixed("lacuna_fp32_mul_pipe"), fp32_mul::Fp32MulPipe::default, fp32_mul::PIPE_PORTS),
        entry(fixed("lacuna_fp32_div"), fp32_div::Fp32Div::default, fp32_div::PORTS),
        entry(fixed("lacuna_group_dot"), group_dot::GroupDot::default, group_dot::PORTS),
        entry(fixed("lacuna_group_scale"), group_scale::GroupScale::default, group_scale::PORTS),
        entry(fixed("lacuna_dot_unit"), dot_unit::DotUnit::default, dot_unit::PORTS),
        entry(fixed("lacuna_down_product"), down_product::DownProduct::default, down_product::PORTS),
        entry(fixed("lacuna_down_lane"), down_engine::lane::DownLane::default, down_engine::lane::PORTS),
        entry(fixed("lacuna_down_operand"), down_operand::DownOperand::default, down_operand::PORTS),
        entry(fixed("lacuna_swiglu_lane"), swiglu::lane::SwigluLane::default, swiglu::lane::PORTS),
        entry(
            fixed("lacuna_token_scale"),
            token_quant::token_scale::TokenScale::default,
            token_quant::token_scale::PORTS,
        ),
        entry(fixed("lacuna_quant_lane"), token_quant::quant_lane::QuantLane::default, token_quant::quant_lane::PORTS),
    ];
    list.into_iter().filter(|(n, _)| keep(n)).map(|(_, make)| make()).collect()
}

/// A block's module name and how to emit it.
type Entry<'a> = (String, Box<dyn Fn() -> Result<Module, EmitError> + 'a>);

fn entry<'a, B: rust_hdl::prelude::Block + 'a>(
    name: String,
    make: impl Fn() -> B + 'a,
    ports: &'static [PortDoc],
) -> Entry<'a> {
    let module = name.clone();
    (name, Box::new(move || emit(&module, make(), ports)))
}

/// The name of `arch`'s top module, the system (`lacuna_system_<arch>`).
pub fn top_name(arch: &lacuna_spec::Arch) -> String {
    format!("lacuna_system_{}", module_suffix(arch))
}

/// Whether `module` (a name from [`blocks`]) is one of the tops that only wire other blocks
/// (the system, the core): the synthesis flows time their blocks instead of them.
pub fn is_wiring_top(module: &str) -> bool {
    module.starts_with("lacuna_system_") || module.starts_with("lacuna_core_")
}

/// The arch's name as a Verilog identifier suffix (anything but letters and digits becomes `_`).
pub fn module_suffix(arch: &lacuna_spec::Arch) -> String {
    arch.name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// The RTL generator's limits (`Arch::rtl_fit`, documented in `spec/src/rtl_fit.rs`).
fn check_fits(arch: &lacuna_spec::Arch) -> Result<(), EmitError> {
    arch.rtl_fit().map_err(|what| EmitError::ArchTooLarge { arch: arch.name.clone(), what })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_ids_the_ports_document_are_the_specs() {
        let legend = lacuna_spec::MemClient::legend();
        for (ports, name) in [(memory::mem_port::PORTS, "req_client_granted"), (system::PORTS, "mem_req_client")] {
            let doc = ports.iter().find(|(p, _)| *p == name).unwrap().1;
            assert!(doc.ends_with(&legend), "{name}: `{doc}` does not list `{legend}`");
        }
    }

    #[test]
    fn the_system_top_has_a_port_of_the_spec_width_and_meaning_for_every_job_register() {
        use lacuna_spec::job::{JobKind, PANEL_TABLE_REGISTERS};
        let arch = lacuna_spec::Arch::preset("tiny").unwrap();
        let top = emit(&top_name(&arch), system::System::from_arch(&arch), system::PORTS).unwrap();
        for r in JobKind::Spmspv.registers().iter().chain(&PANEL_TABLE_REGISTERS) {
            let port = top.ports.iter().find(|p| p.name == r.name).unwrap_or_else(|| panic!("no port {}", r.name));
            assert_eq!((port.direction, port.width), (Direction::Input, r.bits), "{}", r.name);
            assert!(port.meaning.ends_with(r.doc), "{}: `{}` is not `{}`", r.name, port.meaning, r.doc);
        }
    }

    #[test]
    fn an_arch_too_large_for_the_rtl_is_refused_with_the_parameter_named() {
        let mut arch = lacuna_spec::Arch::preset("tiny").unwrap();
        arch.core.lanes = 64;
        arch.core.entries_per_lane = 4;
        let err = blocks(&arch).unwrap_err().to_string();
        assert!(err.contains("chunk entries) is 256, the RTL holds at most 127"), "{err}");
    }

    #[test]
    fn the_rtl_refuses_a_chunk_or_register_row_spanning_two_bursts_and_a_memory_without_latency() {
        let refused = |f: &dyn Fn(&mut lacuna_spec::Arch)| {
            let mut arch = lacuna_spec::Arch::preset("tiny").unwrap();
            f(&mut arch);
            arch.validate().unwrap();
            blocks(&arch).unwrap_err().to_string()
        };
        let err = refused(&|a| a.core.entries_per_lane = 4);
        assert!(err.contains("a chunk's values (2 bytes x 16 entries) must lie in one memory request of 16"), "{err}");
        let err = refused(&|a| {
            a.core.lanes = 8;
            a.core.entries_per_lane = 1;
        });
        assert!(err.contains("a register row (4 bytes x 8 lanes) must fit one memory request of 16"), "{err}");
        let err = refused(&|a| a.memory.latency_cycles = 0);
        assert!(err.contains("memory.latency_cycles is 0"), "{err}");
    }

    #[test]
    fn arch_names_become_plain_identifiers() {
        let mut arch = lacuna_spec::Arch::preset("tiny").unwrap();
        arch.name = "my arch-2".into();
        assert_eq!(module_suffix(&arch), "my_arch_2");
    }
}
