//! `swiglu`: the element-wise step between the two engines
//! (`lacuna_model::expert_unit::swiglu`): `h = silu(gate) x up`, then the down operand
//! `a = fp16(w h)`: [`lane::SwigluLane`] does both for one element a cycle (23 pipeline
//! stages, every FP32 unit pipelined; the SiLU's segment ROMs from the spec's table), its last
//! steps the blocks of [`down_operand::DownOperand`] (the FP32 product and its saturating
//! rounding to FP16); [`engine::SwigluEngine`] runs a lane over the dot engine's values in
//! their stream order.

pub mod down_operand;
pub mod engine;
pub mod lane;
