//! `token_quant`: the quantization of a job's tokens to A8 (INT8 values and one FP32 scale a
//! token, `lacuna_spec::a8w4::Int8Vector::quantize`), the unit's first step: a token's largest
//! magnitude and its two quotients ([`token_scale::TokenScale`]: `127 / amax` and `amax / 127`
//! on two iterative dividers, tokens back to back), then each value times `127 / amax`, rounded
//! to INT8 ([`quant_lane::QuantLane`], pipelined, one value a cycle; its rounding
//! [`to_int8::ToInt8`]); [`quantizer::Quantizer`] runs a job's tokens through them: the lanes'
//! running maxima, the token scale, then `fp32_lanes` quantizer lanes.

pub mod quant_lane;
pub mod quantizer;
pub mod to_int8;
pub mod token_scale;
