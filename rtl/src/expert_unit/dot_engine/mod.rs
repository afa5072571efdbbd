//! `dot_engine`: the gate and up projections on `dot_units` INT8 x INT4 group units
//! (`lacuna_model::expert_unit::dot_engine`). Each unit is a [`group_dot::GroupDot`] (the exact
//! INT32 sum of a group's 32 products, two pipeline stages) followed by a
//! [`group_scale::GroupScale`] (the sum times the group's FP16 scale, rounded once to FP32):
//! rule 1 of `lacuna_spec::a8w4` up to the row's FP32 accumulation; [`dot_unit::DotUnit`] is a
//! whole unit: the two, the accumulation into the row and the token scale (rule 1 in full);
//! [`engine::DotEngine`] runs `dot_units` of them in lock step over a wave of channels.

pub mod dot_unit;
pub mod engine;
pub mod group_dot;
pub mod group_scale;
