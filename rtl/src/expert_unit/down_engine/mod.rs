//! `down_engine`: the down projection on `down_lanes` lanes
//! (`lacuna_model::expert_unit::down_engine`). A lane ([`lane::DownLane`], pipelined, one
//! element a cycle) multiplies the channel's FP16 operand by the weight's group scale, exactly
//! ([`crate::fp16_mul::Fp16Mul`]), then by the INT4 weight, rounded once
//! ([`down_scale::DownScale`]), and adds the product into the token's output row on the
//! pipelined FP32 adder. [`engine::DownEngine`] runs a channel's column through `down_lanes`
//! lanes into the output store, one pass a channel. [`down_product::DownProduct`] is the product
//! alone, combinational.

pub mod down_product;
pub mod down_scale;
pub mod engine;
pub mod lane;
