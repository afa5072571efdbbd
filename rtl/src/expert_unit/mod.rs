//! `expert_unit`: the EdgeXpert expert unit's blocks in RTL, with the names of the cycle model
//! (`lacuna_model::expert_unit`) and of docs/microarchitecture.md ("The expert unit").
//!
//! Built so far, the unit's arithmetic: [`dot_engine`] (the group unit, the group's
//! dequantisation, and a whole unit that turns a row's groups into its value), [`down_engine`]
//! (a lane's product) and [`swiglu`] (a lane: SiLU, the product with up, the down operand). Not
//! yet in RTL: the control (channel fetch, channel buffer, the token buffers, the engines'
//! sequencing), calibration and the unit's top: docs/rtl.md keeps the status.

pub mod datapath;
pub mod dot_engine;
pub mod down_engine;
pub mod pipe;
pub mod swiglu;
pub mod token_quant;
