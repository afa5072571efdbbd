//! `down_engine`: the down projection on `down_lanes` lanes
//! (`lacuna_model::expert_unit::down_engine`). Each lane's arithmetic is a
//! [`down_product::DownProduct`] (the channel's FP16 operand times the weight's group scale,
//! exact, then times the INT4 weight, rounded once) followed by the shared FP32 adder
//! ([`crate::fp32_add::Fp32Add`]) into the token's output row.

pub mod down_product;
