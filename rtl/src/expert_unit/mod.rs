//! `expert_unit`: the EdgeXpert expert unit's blocks in RTL, with the names of the cycle model
//! (`lacuna_model::expert_unit`) and of docs/microarchitecture.md ("The expert unit").
//!
//! Built so far: the A8W4 arithmetic of the two engines: [`dot_engine`] (the group unit and the
//! group dequantisation) and [`down_engine`] (a lane's product), and [`swiglu`] (a lane: SiLU, the product with up, the down operand). The sequencing blocks (channel
//! fetch, channel buffer, SwiGLU, the engines' control, calibration) and the unit's top are not
//! in RTL yet: docs/rtl.md keeps the status.

pub mod dot_engine;
pub mod down_engine;
pub mod swiglu;
