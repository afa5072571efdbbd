//! `expert_unit`: the EdgeXpert expert unit's blocks in RTL, with the names of the cycle model
//! (`lacuna_model::expert_unit`) and of docs/microarchitecture.md ("The expert unit").
//!
//! Built so far: [`token_quant`] (the token scale, the quantizer lanes and the quantizer that runs
//! a job's tokens through them), the three engines ([`dot_engine`], [`swiglu`], [`down_engine`]),
//! [`pipe`] (the engines wired with the operand banks, wave by wave, and the unrouted means'
//! passes) and [`datapath`] (the quantizer, the token store and the pipe). Not yet in RTL: the
//! job's sequencer, the channel fetch and its buffers, calibration and the unit's top:
//! docs/rtl.md keeps the status.

pub mod datapath;
pub mod dot_engine;
pub mod down_engine;
pub mod pipe;
pub mod swiglu;
pub mod token_quant;
