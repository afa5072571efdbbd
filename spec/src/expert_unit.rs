//! `expert_unit`: the parameters of the EdgeXpert expert unit (the `[expert_unit]` section of an
//! [`Arch`](crate::Arch)), their limits, and the quantities derived from them.
//!
//! The unit executes a mixture block of one pass (a prefill chunk or a verified draft tree) at
//! A8W4 ([`crate::a8w4`]): its blocks and their contracts are in docs/microarchitecture.md
//! ("expert unit"); the cycle model is `lacuna_model::expert_unit`.

use serde::{Deserialize, Serialize};

/// Parameters of the expert unit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpertUnitParams {
    /// INT8 x INT4 dot units of the gate/up engine; each sums one group
    /// ([`crate::a8w4::GROUP`] products) of one token's row into an INT32 per cycle.
    pub dot_units: u32,
    /// Lanes of the down engine; each adds one FP16 x INT4 product into a token's FP32 output
    /// per cycle.
    pub down_lanes: u32,
    /// FP32 lanes of the element-wise work: the tokens' quantization and calibration's kappa
    /// (SwiGLU has its own lane in the SwiGLU engine; the calibration terms and the unrouted
    /// means are added on the down lanes; each dot unit scales its own group sums).
    pub fp32_lanes: u32,
    /// Tokens one job may carry (a draft tree's nodes, or a chunk of a prompt).
    pub max_tokens: u32,
    /// The largest hidden size a job may have (the token and output buffers hold
    /// `max_tokens x max_hidden` values).
    pub max_hidden: u32,
    /// The channel buffer: expert channels stay here after a job, and a later job of the same
    /// block that needs one finds it without a load while it has not been evicted
    /// (least recently used first). 0: nothing is kept.
    pub channel_buffer_bytes: u32,
    /// Channels the fetch may run ahead of the down engine (the staging buffer, in channel
    /// records): at least 2, so one channel is fetched while the previous one is computed, and
    /// at least `dot_units`, since a wave of the dot engine reads that many records at once
    /// (`3 x dot_units` lets the next wave's records arrive while a wave computes and the one
    /// before is in the down engine).
    pub fetch_ahead_channels: u32,
}

/// The down lane's pipeline (`lacuna_rtl::expert_unit::down_engine::lane`), which the model's
/// down engine schedules by: an element reads its row's value this many cycles after it issues...
pub const DOWN_ACC_AT: u64 = 2;
/// ... and its sum is written at the end of the cycle this many cycles after it issues.
pub const DOWN_LATENCY: u64 = 5;
/// So two elements of one row block issue at least this many cycles apart (the later one's
/// read comes the cycle after the earlier one's write): the down engine stalls an element whose
/// block issued fewer cycles ago.
pub const DOWN_ROW_REUSE: u64 = DOWN_LATENCY - DOWN_ACC_AT + 1;

/// The dot unit's pipeline (`lacuna_rtl::expert_unit::dot_engine::dot_unit`), which the model's
/// dot engine schedules by: a row's value comes out this many cycles after its last group is
/// presented.
pub const DOT_LATENCY: u64 = 9;

/// The SwiGLU engine (`lacuna_rtl::expert_unit::swiglu::engine`), which the model's SwiGLU stage
/// schedules by: the down operand of a user's channel `u` of a wave comes out this many cycles,
/// plus `u`, after the user's up value (one lane, the wave's channels in order).
pub const SWIGLU_OUT_AFTER_UP: u64 = 25;

/// The token quantizer (`lacuna_rtl::expert_unit::token_quant::quantizer`), which the model's
/// quantization stage schedules by: a token's lanes' running maxima go to the token scale this
/// many a cycle (their maximum)...
pub const QUANT_FEED_LANES: u32 = 4;
/// ... its `127 / amax` and `amax / 127` come out this many cycles after the token's last value
/// was taken, when the dividers were free ...
pub const TOKEN_SCALE_READY_AFTER_LAST: u64 = 31;
/// ... the dividers take this many cycles from their start to their quotients (a held token
/// starts them in the cycle the previous token's finish) ...
pub const DIVIDE_CYCLES: u64 = 29;
/// ... and a value's INT8 comes out of its quantizer lane this many cycles after it was read.
pub const QUANT_LATENCY: u64 = 4;

/// The most dot units, down lanes or FP32 lanes an arch may ask for.
pub const MAX_LANES: u32 = 4096;
/// The most tokens a job may carry.
pub const MAX_TOKENS: u32 = 1024;
/// The largest hidden size.
pub const MAX_HIDDEN: u32 = 1 << 16;
/// The largest channel buffer (64 MiB).
pub const MAX_CHANNEL_BUFFER_BYTES: u32 = 1 << 26;

impl Default for ExpertUnitParams {
    /// The `edge` preset's unit (an arch file without the section gets it).
    fn default() -> Self {
        ExpertUnitParams {
            dot_units: 16,
            down_lanes: 256,
            fp32_lanes: 32,
            max_tokens: 32,
            max_hidden: 4096,
            channel_buffer_bytes: 1 << 20,
            fetch_ahead_channels: 48,
        }
    }
}

impl ExpertUnitParams {
    /// Why these parameters are out of range, naming the first field that is.
    pub fn check(&self) -> Result<(), String> {
        for (field, v) in
            [("dot_units", self.dot_units), ("down_lanes", self.down_lanes), ("fp32_lanes", self.fp32_lanes)]
        {
            if v == 0 || v > MAX_LANES {
                return Err(format!("expert_unit.{field} must be in 1..={MAX_LANES}, got {v}"));
            }
        }
        if !(1..=MAX_TOKENS).contains(&self.max_tokens) {
            return Err(format!("expert_unit.max_tokens must be in 1..={MAX_TOKENS}, got {}", self.max_tokens));
        }
        if !(1..=MAX_HIDDEN).contains(&self.max_hidden) {
            return Err(format!("expert_unit.max_hidden must be in 1..={MAX_HIDDEN}, got {}", self.max_hidden));
        }
        if self.channel_buffer_bytes > MAX_CHANNEL_BUFFER_BYTES {
            return Err(format!(
                "expert_unit.channel_buffer_bytes must be at most {MAX_CHANNEL_BUFFER_BYTES}, got {}",
                self.channel_buffer_bytes
            ));
        }
        if !(2..=1024).contains(&self.fetch_ahead_channels) {
            return Err(format!(
                "expert_unit.fetch_ahead_channels must be in 2..=1024, got {}",
                self.fetch_ahead_channels
            ));
        }
        if self.fetch_ahead_channels < self.dot_units {
            return Err(format!(
                "expert_unit.fetch_ahead_channels ({}) must be at least dot_units ({}): a wave of the dot \
                 engine reads one channel record per unit, all staged at once",
                self.fetch_ahead_channels, self.dot_units
            ));
        }
        Ok(())
    }

    /// Multiply-accumulates per cycle of the gate/up engine.
    pub fn dot_macs_per_cycle(&self) -> u64 {
        self.dot_units as u64 * crate::a8w4::GROUP as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_unit_is_valid_and_each_field_out_of_range_is_named() {
        ExpertUnitParams::default().check().unwrap();
        let cases: [(&str, fn(&mut ExpertUnitParams)); 8] = [
            ("fetch_ahead_channels", |p| p.fetch_ahead_channels = 1),
            ("fetch_ahead_channels", |p| p.fetch_ahead_channels = p.dot_units - 1),
            ("dot_units", |p| p.dot_units = 0),
            ("down_lanes", |p| p.down_lanes = MAX_LANES + 1),
            ("fp32_lanes", |p| p.fp32_lanes = 0),
            ("max_tokens", |p| p.max_tokens = 0),
            ("max_hidden", |p| p.max_hidden = u32::MAX),
            ("channel_buffer_bytes", |p| p.channel_buffer_bytes = u32::MAX),
        ];
        for (field, set) in cases {
            let mut p = ExpertUnitParams::default();
            set(&mut p);
            let err = p.check().unwrap_err();
            assert!(err.contains(&format!("expert_unit.{field}")), "{field}: {err}");
        }
    }
}
