//! The energy model: per-event energies from a TOML table that cites its source for each number,
//! times the events the model counted.
//!
//! Events per job: every decoded entry (useful or padding) costs a multiply, a decoder step (an
//! integer add), an add and two register-file accesses; every activation examined costs a
//! compare and a 16-bit activation-SRAM read; every byte fetched from DRAM costs 8 DRAM bits and
//! passes once through the fetch buffer (a 32-bit SRAM write and read per 4 bytes); every output
//! write costs its DRAM bits. Logic and SRAM energies are scaled by the table's `logic_scale`.

use crate::Counters;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One event's energy and where the number comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// Picojoules per event, at the table's own technology.
    pub pj: f64,
    /// Citation.
    pub source: String,
}

/// A table of per-event energies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyTable {
    /// Name, for reports.
    pub name: String,
    /// Factor applied to logic and SRAM energies (technology scaling).
    pub logic_scale: f64,
    /// The events, by name.
    pub events: BTreeMap<String, Event>,
}

/// The event names a table must define.
pub const EVENTS: [&str; 9] = [
    "fp16_mul",
    "fp32_add",
    "fp32_mul",
    "int_add",
    "int8_mul",
    "compare",
    "regfile_access",
    "sram_access_32b",
    "dram_bit",
];

/// Energy of the expert unit, in picojoules, by part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct ExpertEnergy {
    /// DRAM reads (channel records, statistics).
    pub dram_pj: f64,
    /// Staging writes, token-buffer and output-buffer accesses.
    pub sram_pj: f64,
    /// The dot engine: INT8 x INT4 products, INT32 sums, the FP32 group scaling.
    pub dot_pj: f64,
    /// The FP32 lanes.
    pub fp32_pj: f64,
    /// The down engine: FP16 x INT4 products and FP32 adds.
    pub down_pj: f64,
}

impl ExpertEnergy {
    /// The sum.
    pub fn total_pj(&self) -> f64 {
        self.dram_pj + self.sram_pj + self.dot_pj + self.fp32_pj + self.down_pj
    }
}

/// Why a table was refused.
#[derive(Debug, thiserror::Error)]
pub enum EnergyError {
    /// Bad TOML or a missing/unknown field.
    #[error("energy table: {0}")]
    Parse(#[from] toml::de::Error),
    /// A required event is missing or negative.
    #[error("energy table: {0}")]
    Invalid(String),
}

/// Energy per unit of the core, in picojoules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Energy {
    /// DRAM reads and writes.
    pub dram_pj: f64,
    /// Fetch buffer and activation SRAM.
    pub sram_pj: f64,
    /// Activation scan compares.
    pub scan_pj: f64,
    /// Run-length decoder.
    pub decoder_pj: f64,
    /// Multipliers.
    pub multiplier_pj: f64,
    /// Adders and register files.
    pub accumulator_pj: f64,
}

impl Energy {
    /// The sum.
    pub fn total_pj(&self) -> f64 {
        self.dram_pj + self.sram_pj + self.scan_pj + self.decoder_pj + self.multiplier_pj + self.accumulator_pj
    }
}

const DEFAULT_TABLE: &str = include_str!("../energy/horowitz-45nm-to-28nm.toml");

impl Default for EnergyTable {
    fn default() -> Self {
        EnergyTable::from_toml(DEFAULT_TABLE).expect("the built-in table is valid (tested)")
    }
}

impl EnergyTable {
    /// Parses and checks a table.
    pub fn from_toml(text: &str) -> Result<EnergyTable, EnergyError> {
        let t: EnergyTable = toml::from_str(text)?;
        for e in EVENTS {
            match t.events.get(e) {
                None => return Err(EnergyError::Invalid(format!("event `{e}` is missing"))),
                Some(ev) if !(ev.pj >= 0.0 && ev.pj.is_finite()) => {
                    return Err(EnergyError::Invalid(format!("event `{e}` has energy {}, expected >= 0", ev.pj)))
                }
                _ => {}
            }
        }
        if let Some(extra) = t.events.keys().find(|k| !EVENTS.contains(&k.as_str())) {
            return Err(EnergyError::Invalid(format!("unknown event `{extra}` (known: {})", EVENTS.join(", "))));
        }
        if !(t.logic_scale > 0.0 && t.logic_scale.is_finite()) {
            return Err(EnergyError::Invalid(format!("logic_scale must be positive, got {}", t.logic_scale)));
        }
        Ok(t)
    }

    fn pj(&self, event: &str) -> f64 {
        let e = self.events[event].pj;
        if event == "dram_bit" {
            e
        } else {
            e * self.logic_scale
        }
    }

    /// Energy of raw event counts: DRAM bytes, SRAM 32-bit accesses, compares, decoder steps,
    /// multiplies, adds (each with two register-file accesses).
    pub fn of_events(
        &self,
        dram_bytes: u64,
        sram_accesses: u64,
        compares: u64,
        decodes: u64,
        muls: u64,
        adds: u64,
    ) -> Energy {
        Energy {
            dram_pj: dram_bytes as f64 * 8.0 * self.pj("dram_bit"),
            sram_pj: sram_accesses as f64 * self.pj("sram_access_32b"),
            scan_pj: compares as f64 * self.pj("compare"),
            decoder_pj: decodes as f64 * self.pj("int_add"),
            multiplier_pj: muls as f64 * self.pj("fp16_mul"),
            accumulator_pj: adds as f64 * (self.pj("fp32_add") + 2.0 * self.pj("regfile_access")),
        }
    }

    /// Energy of the vector unit for `lane_cycles` lane cycles of FP32 work: each is charged as
    /// one FP32 multiply and one FP32 add (an upper bound for an add or a compare, a lower one for
    /// a special function, which is charged per lane cycle it takes).
    pub fn of_vector(&self, lane_cycles: u64) -> f64 {
        lane_cycles as f64 * (self.pj("fp32_mul") + self.pj("fp32_add"))
    }

    /// Energy of the expert unit's counted work. Per group operation: 32 INT8 multiplies (an
    /// upper bound for INT8 x INT4) and INT32 adds, one FP32 multiply and add (the scaling), and
    /// 4 32-bit SRAM reads (16 bytes of weights from the staging buffer); per cycle the dot
    /// engine issues, 8 (the token's 32 bytes, one read for all the wave's units in lock step).
    /// Per down operation: an FP16 multiply (the FP16 x INT4 product, an upper bound), an FP32
    /// add and an output-buffer read and write (32-bit SRAM). Per FP32 lane operation: a multiply
    /// and an add. Each fetched byte is written once into the channel buffer (which stages it),
    /// each byte found there read once (32-bit accesses).
    pub fn of_expert(&self, c: &crate::expert_unit::ExpertCounters) -> ExpertEnergy {
        let fetched = c.channel_bytes + c.stats_bytes;
        let buffer = fetched.div_ceil(4) + c.buffer_bytes.div_ceil(4);
        ExpertEnergy {
            dram_pj: fetched as f64 * 8.0 * self.pj("dram_bit"),
            sram_pj: (buffer + 4 * c.dot_group_ops + 8 * c.dot_busy + 2 * c.down_ops) as f64
                * self.pj("sram_access_32b"),
            dot_pj: c.dot_group_ops as f64
                * (32.0 * (self.pj("int8_mul") + self.pj("int_add")) + self.pj("fp32_mul") + self.pj("fp32_add")),
            fp32_pj: c.fp32_ops as f64 * (self.pj("fp32_mul") + self.pj("fp32_add")),
            down_pj: c.down_ops as f64 * (self.pj("fp16_mul") + self.pj("fp32_add")),
        }
    }

    /// Energy of one simulated job of the Sparse SIMT core; `scanned` is the activations examined.
    pub fn of_core(&self, k: &Counters, scanned: u64) -> Energy {
        let entries = k.useful_entries + k.padding_entries;
        let fetched = k.bytes.loaded() - k.bytes.activations;
        // Fetch buffer: written and read once per 4 bytes; activation SRAM: written once per
        // 4 bytes loaded, read once per 2 activations examined (16-bit reads).
        let sram = 2 * fetched.div_ceil(4) + k.bytes.activations.div_ceil(4) + scanned.div_ceil(2);
        self.of_events(k.bytes.loaded() + k.bytes.outputs, sram, scanned, entries, entries, k.adds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_cites_a_source_for_every_event() {
        let t = EnergyTable::default();
        for e in EVENTS {
            assert!(!t.events[e].source.is_empty(), "{e}");
        }
    }

    #[test]
    fn a_table_missing_an_event_or_with_an_unknown_one_is_refused() {
        let text = DEFAULT_TABLE.replace("[events.compare]", "[events.comparison]");
        let err = EnergyTable::from_toml(&text).unwrap_err().to_string();
        assert!(err.contains("`compare` is missing"), "{err}");
    }

    #[test]
    fn dram_energy_is_bytes_times_eight_bits_times_the_bit_energy_unscaled() {
        let t = EnergyTable::default();
        let e = t.of_events(1000, 0, 0, 0, 0, 0);
        assert!((e.dram_pj - 1000.0 * 8.0 * 7.0).abs() < 1e-9);
        let e = t.of_events(0, 0, 0, 0, 10, 0);
        assert!((e.multiplier_pj - 10.0 * 1.1 * 0.5).abs() < 1e-9);
    }
}
