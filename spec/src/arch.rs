//! `Arch`: every hardware parameter of the accelerator, in one typed, validated value.
//!
//! Contract: the RTL generator, the cycle model, the compiler and the testbench all read the same
//! `Arch`; none of them keeps a copy of a parameter of its own. Derived quantities (tile height,
//! index widths, chunk size) are computed here, once. An `Arch` is only handed out after
//! [`Arch::validate`] has passed, so consumers may rely on every invariant listed there.
//!
//! The file is organised as one section per hardware unit (`core`, `memory`, `sram`,
//! `vector_unit`, `expert_unit`), so that a unit adds a section instead of new loose fields.
//! Artifacts record [`Arch::hash`], a stable digest of the canonical JSON form, and refuse an
//! `Arch` whose hash differs.

pub use crate::expert_unit::ExpertUnitParams;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::Path;

/// The numeric datapath of the Sparse SIMT core: the formats of its weights, activations and
/// outputs in memory, and so the sizes every consumer derives from them.
///
/// Kept as a parameter (not an assumption spread through the code) because the EdgeXpert half
/// computes at A8W4 (INT8 activations, INT4 weights, INT32 accumulation). Consumers match on it
/// (exhaustively: a new datapath is a compile error wherever it needs handling): the `.rlc`
/// value-format code (`rlc_file`), the byte sizes of the derived quantities (`derived.rs`) and
/// the RTL generator's limits (`rtl_fit.rs`, which refuses a datapath the RTL does not build).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Datapath {
    /// FP16 weights x FP16 activations, exact FP32 products, FP32 round-to-nearest-even sums.
    Fp16Fp32,
}

impl Datapath {
    /// Every datapath.
    pub const ALL: [Datapath; 1] = [Datapath::Fp16Fp32];

    /// Bytes of one weight value in memory.
    pub const fn weight_bytes(self) -> u32 {
        match self {
            Datapath::Fp16Fp32 => 2,
        }
    }

    /// Bytes of one activation (an element of x) in memory.
    pub const fn activation_bytes(self) -> u32 {
        match self {
            Datapath::Fp16Fp32 => 2,
        }
    }

    /// Bytes of one output (an element of y) in memory.
    pub const fn output_bytes(self) -> u32 {
        match self {
            Datapath::Fp16Fp32 => 4,
        }
    }

    /// The `.rlc` header's value-format code of its weights.
    pub const fn value_format(self) -> u16 {
        match self {
            Datapath::Fp16Fp32 => 1,
        }
    }

    /// The datapath whose weights an `.rlc` value-format code holds.
    pub fn from_value_format(code: u16) -> Option<Datapath> {
        Datapath::ALL.into_iter().find(|d| d.value_format() == code)
    }
}

/// The deepest lane FIFO an arch may ask for. Each entry is a register index and an FP32 product
/// held in flops beside its lane; the cycle model sizes its per-lane rings by this bound.
pub const MAX_LANE_QUEUE_DEPTH: u32 = 64;

/// The largest activation buffer an arch may ask for: 16 MiB, K up to 8 M columns (the largest
/// K of the Celty workloads is 28,672). The RTL holds less (`lacuna_rtl` says how much).
pub const MAX_ACTIVATION_BYTES: u32 = 1 << 24;
/// The largest column-pointer buffer an arch may ask for (1 MiB).
pub const MAX_COLPTR_BYTES: u32 = 1 << 20;
/// The widest memory an arch may ask for, in bytes per cycle.
pub const MAX_MEMORY_BYTES_PER_CYCLE: u32 = 1 << 16;
/// The most requests an arch may keep in flight.
pub const MAX_OUTSTANDING: u32 = 1 << 16;
/// The longest memory latency an arch may ask for, in cycles (a simulated job waits this long
/// per dependent request).
pub const MAX_LATENCY_CYCLES: u32 = 100_000;

/// Parameters of the Sparse SIMT core (decoder, multipliers, register-file accumulators).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreParams {
    /// Accumulator lanes L. Row r of a tile lives in lane `r % L`, register `r / L`.
    pub lanes: u32,
    /// RLC entries each lane decodes per chunk E; a chunk is `L * E` entries.
    pub entries_per_lane: u32,
    /// Accumulator registers per lane R; a tile (row panel) holds `L * R` rows.
    pub acc_regs_per_lane: u32,
    /// Accumulate write ports per lane P: adds one lane can retire per cycle.
    pub acc_write_ports: u32,
    /// Depth of each lane's product queue, which absorbs imbalance between lanes
    /// (2..=`MAX_LANE_QUEUE_DEPTH`).
    pub lane_queue_depth: u32,
    /// Depth of the queue of active columns (k, x_k) between the activation scan and the fetch.
    pub activation_queue_depth: u32,
    /// Activations the scan examines per cycle.
    pub scan_width: u32,
    /// Depth of the queue of column descriptors (k, x_k, start, end) before the chunk fetch.
    pub column_queue_depth: u32,
    /// Slices the chunk fetch may hold fetched (or in flight) ahead of the decoder.
    pub fetch_buffer_chunks: u32,
    /// Cycles of the pipelined FP32 accumulate adder: an add issued in cycle t completes in
    /// cycle t + acc_add_latency, and no other add to that register may issue before.
    pub acc_add_latency: u32,
    /// Panels one job may have: the entries of the core's panel table (1..=65535, the 16-bit
    /// `panels` register). Left out of the TOML (and of the hash) at its default, 256, so every
    /// arch written before this field existed keeps its hash.
    #[serde(default = "CoreParams::default_max_panels", skip_serializing_if = "CoreParams::is_default_max_panels")]
    pub max_panels: u32,
}

impl CoreParams {
    /// The panel table of every arch that does not say otherwise.
    pub const DEFAULT_MAX_PANELS: u32 = 256;

    fn default_max_panels() -> u32 {
        Self::DEFAULT_MAX_PANELS
    }

    fn is_default_max_panels(v: &u32) -> bool {
        *v == Self::DEFAULT_MAX_PANELS
    }
}

/// Parameters of the memory system every loading or storing block shares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryParams {
    /// What the numbers model, for reports (e.g. "LPDDR5-6400 x64").
    pub technology: String,
    /// Sustained bytes delivered per core clock cycle.
    pub bytes_per_cycle: u32,
    /// Cycles from issuing a request to its first byte.
    pub latency_cycles: u32,
    /// Requests in flight at once.
    pub max_outstanding: u32,
    /// Bytes per request (the burst the fetch units issue).
    pub request_bytes: u32,
    /// Who gets the port when several requesters want it in one cycle. Left out of the TOML (and
    /// of the hash) when it is the default, fixed priority, so every arch written before this
    /// field existed keeps its hash.
    #[serde(default, skip_serializing_if = "Arbitration::is_fixed_priority")]
    pub arbitration: Arbitration,
}

/// The memory port's arbitration policy among its requesters (`lacuna_spec::MemRequester`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// The first requester in `MemRequester::ALL` order wins (drain > act_load > colptr_fetch >
    /// chunk_fetch): the order the core's data needs.
    #[default]
    FixedPriority,
    /// The first requester after the last one granted wins, in a ring: no requester waits more
    /// than `requesters - 1` grants.
    RoundRobin,
}

impl Arbitration {
    /// Whether this is the default policy.
    pub fn is_fixed_priority(&self) -> bool {
        *self == Arbitration::FixedPriority
    }
}

/// On-chip SRAM sizes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SramParams {
    /// Activation buffer: holds the FP16 input vector x of one job.
    pub activation_bytes: u32,
    /// Column-pointer buffer: holds prefetched column pointers.
    pub colptr_bytes: u32,
}

/// The vector unit beside the core: the element-wise and reduction work of a decode step that is
/// not a matrix-vector product (RMSNorm, RoPE, softmax, SiLU, residual adds), in FP32.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VectorUnitParams {
    /// FP32 element operations per cycle (one per lane).
    pub lanes: u32,
    /// Lane cycles of one special function (exp, sin/cos, reciprocal, reciprocal square root).
    pub special_cycles: u32,
}

impl Default for VectorUnitParams {
    /// 16 lanes, 4 cycles per special function: a small SIMD unit, sized to keep the element-wise
    /// work of a decode step well below its matrix work.
    fn default() -> Self {
        VectorUnitParams { lanes: 16, special_cycles: 4 }
    }
}

/// Every hardware parameter of one lacuna configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arch {
    /// Preset or user name; part of the hash.
    pub name: String,
    /// Core clock in MHz.
    pub clock_mhz: u32,
    /// Numeric datapath.
    pub datapath: Datapath,
    /// The Sparse SIMT core.
    pub core: CoreParams,
    /// The shared memory system.
    pub memory: MemoryParams,
    /// On-chip buffers.
    pub sram: SramParams,
    /// The vector unit (the default where an arch file has no `[vector_unit]` section).
    #[serde(default)]
    pub vector_unit: VectorUnitParams,
    /// The expert unit (the `edge` unit where an arch file has no `[expert_unit]` section).
    #[serde(default)]
    pub expert_unit: ExpertUnitParams,
}

/// A stable digest of an [`Arch`]: the first 16 hex digits of SHA-256 over its canonical JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArchHash(pub u64);

impl fmt::Display for ArchHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Why an `Arch` was refused.
#[derive(Debug, thiserror::Error)]
pub enum ArchError {
    /// A parameter is out of range; the message names it and its value.
    #[error("invalid arch `{arch}`: {message}")]
    Invalid {
        /// The arch's name.
        arch: String,
        /// What is wrong, e.g. "core.lanes must be a power of two, got 6".
        message: String,
    },
    /// The TOML text did not parse or had unknown or missing fields.
    #[error("cannot parse arch file {path}, line {line}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line of the problem (0 when unknown).
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A parameter of an arch file is out of range; the message names it and its value.
    #[error("invalid arch file {path}: {message}")]
    InvalidFile {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The file could not be read.
    #[error("cannot read arch file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// Neither a preset name nor an existing file.
    #[error("unknown arch `{0}`: expected a preset ({presets}) or a .toml file", presets = PRESET_NAMES.join(", "))]
    Unknown(String),
}

/// Names of the built-in presets; the first is the default.
pub const PRESET_NAMES: [&str; 2] = ["edge", "tiny"];

const EDGE_TOML: &str = include_str!("../presets/edge.toml");
const TINY_TOML: &str = include_str!("../presets/tiny.toml");

impl Default for Arch {
    fn default() -> Self {
        Arch::preset("edge").expect("the edge preset is valid (tested)")
    }
}

impl Arch {
    /// A built-in preset by name (`edge`, the default, or `tiny`, small enough for RTL tests).
    pub fn preset(name: &str) -> Result<Arch, ArchError> {
        let text = match name {
            "edge" => EDGE_TOML,
            "tiny" => TINY_TOML,
            _ => return Err(ArchError::Unknown(name.to_string())),
        };
        Arch::from_toml_str(text, &format!("<preset {name}>"))
    }

    /// A preset name or the path of a TOML file.
    pub fn load(name_or_path: &str) -> Result<Arch, ArchError> {
        if PRESET_NAMES.contains(&name_or_path) {
            return Arch::preset(name_or_path);
        }
        let path = Path::new(name_or_path);
        // A name that looks like a file is reported as a missing file, not as an unknown preset.
        let file_like = name_or_path.ends_with(".toml") || name_or_path.contains(std::path::MAIN_SEPARATOR);
        if !path.exists() && !file_like {
            return Err(ArchError::Unknown(name_or_path.to_string()));
        }
        let text =
            std::fs::read_to_string(path).map_err(|source| ArchError::Io { path: name_or_path.to_string(), source })?;
        Arch::from_toml_str(&text, name_or_path)
    }

    /// Parses and validates TOML text; `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Arch, ArchError> {
        let arch: Arch = toml::from_str(text).map_err(|e| ArchError::Parse {
            path: origin.to_string(),
            line: e.span().map_or(0, |s| text[..s.start.min(text.len())].matches('\n').count() + 1),
            message: e.message().to_string(),
        })?;
        // A preset's problem is the arch's; a file's is reported under the file's name.
        arch.validate().map_err(|e| match e {
            ArchError::Invalid { message, .. } if !origin.starts_with("<preset") => {
                ArchError::InvalidFile { path: origin.to_string(), message }
            }
            e => e,
        })?;
        Ok(arch)
    }

    /// The TOML form, which [`Arch::from_toml_str`] reads back to an equal value.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("Arch has only TOML-representable fields")
    }

    /// Checks every invariant consumers rely on.
    pub fn validate(&self) -> Result<(), ArchError> {
        let bad = |message: String| Err(ArchError::Invalid { arch: self.name.clone(), message });
        let pow2 = |field: &str, v: u32, max: u32| -> Option<String> {
            if v == 0 || !v.is_power_of_two() {
                Some(format!("{field} must be a power of two, got {v}"))
            } else if v > max {
                Some(format!("{field} must be at most {max}, got {v}"))
            } else {
                None
            }
        };
        let c = &self.core;
        let m = &self.memory;
        let checks = [
            pow2("core.lanes", c.lanes, 256),
            // A chunk is fetched as whole 16-byte (8-entry) value words; E must tile them.
            pow2("core.entries_per_lane", c.entries_per_lane, 8),
            pow2("core.acc_regs_per_lane", c.acc_regs_per_lane, 4096),
            pow2("memory.request_bytes", m.request_bytes, 4096),
            pow2("core.scan_width", c.scan_width, 64),
        ];
        if let Some(message) = checks.into_iter().flatten().next() {
            return bad(message);
        }
        if self.name.is_empty() {
            return bad("name must not be empty".into());
        }
        if !(1..=10_000).contains(&self.clock_mhz) {
            return bad(format!("clock_mhz must be in 1..=10000, got {}", self.clock_mhz));
        }
        if !(1..=65_535).contains(&c.max_panels) {
            return bad(format!("core.max_panels must be in 1..=65535, got {}", c.max_panels));
        }
        if c.acc_write_ports == 0 || c.acc_write_ports > c.entries_per_lane * c.lanes {
            return bad(format!(
                "core.acc_write_ports must be in 1..=lanes*entries_per_lane ({}), got {}",
                c.entries_per_lane * c.lanes,
                c.acc_write_ports
            ));
        }
        if !(2..=MAX_LANE_QUEUE_DEPTH).contains(&c.lane_queue_depth) {
            return bad(format!(
                "core.lane_queue_depth must be in 2..={MAX_LANE_QUEUE_DEPTH}, got {}",
                c.lane_queue_depth
            ));
        }
        if !(2..=1024).contains(&c.activation_queue_depth) {
            return bad(format!("core.activation_queue_depth must be in 2..=1024, got {}", c.activation_queue_depth));
        }
        // The scan pushes a group's active columns in one cycle, only when all of them fit the
        // queue: a group wider than the queue could hold more active columns than ever fit, and
        // the scan would wait for ever.
        if c.scan_width > c.activation_queue_depth {
            return bad(format!(
                "core.scan_width ({}) must be at most core.activation_queue_depth ({}): every active column of a scan group must fit the queue at once",
                c.scan_width, c.activation_queue_depth
            ));
        }
        if self.chunk_entries() % 8 != 0 {
            return bad(format!(
                "core.lanes * core.entries_per_lane (chunk entries) must be a multiple of 8 (whole 16-byte value words), got {}",
                self.chunk_entries()
            ));
        }
        for (field, v) in [
            ("core.column_queue_depth", c.column_queue_depth),
            ("core.fetch_buffer_chunks", c.fetch_buffer_chunks),
            ("core.acc_add_latency", c.acc_add_latency),
        ] {
            if v == 0 || v > 1024 {
                return bad(format!("{field} must be in 1..=1024, got {v}"));
            }
        }
        if self.tile_rows() > 1 << 20 {
            return bad(format!(
                "core.lanes * core.acc_regs_per_lane (tile rows) must be at most {}, got {}",
                1 << 20,
                self.tile_rows()
            ));
        }
        for (field, v, max) in [
            ("memory.bytes_per_cycle", m.bytes_per_cycle, MAX_MEMORY_BYTES_PER_CYCLE),
            ("memory.max_outstanding", m.max_outstanding, MAX_OUTSTANDING),
        ] {
            if v == 0 || v > max {
                return bad(format!("{field} must be in 1..={max}, got {v}"));
            }
        }
        if m.latency_cycles > MAX_LATENCY_CYCLES {
            return bad(format!(
                "memory.latency_cycles must be at most {MAX_LATENCY_CYCLES}, got {}",
                m.latency_cycles
            ));
        }
        if m.request_bytes < 16 {
            return bad(format!(
                "memory.request_bytes must be at least 16 (one 8-entry value word), got {}",
                m.request_bytes
            ));
        }
        if !(2..=MAX_ACTIVATION_BYTES).contains(&self.sram.activation_bytes) {
            return bad(format!(
                "sram.activation_bytes must be in 2..={MAX_ACTIVATION_BYTES} (one FP16 value to {} of them), got {}",
                MAX_ACTIVATION_BYTES / 2,
                self.sram.activation_bytes
            ));
        }
        let v = &self.vector_unit;
        if v.lanes == 0 || v.lanes > 4096 {
            return bad(format!("vector_unit.lanes must be in 1..=4096, got {}", v.lanes));
        }
        if v.special_cycles == 0 || v.special_cycles > 1024 {
            return bad(format!("vector_unit.special_cycles must be in 1..=1024, got {}", v.special_cycles));
        }
        if let Err(message) = self.expert_unit.check() {
            return bad(message);
        }
        if !(8..=MAX_COLPTR_BYTES).contains(&self.sram.colptr_bytes) {
            return bad(format!(
                "sram.colptr_bytes must be in 8..={MAX_COLPTR_BYTES} (two 32-bit pointers at least), got {}",
                self.sram.colptr_bytes
            ));
        }
        Ok(())
    }

    /// The stable hash of this arch (SHA-256 over the canonical JSON form, first 64 bits).
    pub fn hash(&self) -> ArchHash {
        let json = serde_json::to_vec(self).expect("Arch serializes to JSON");
        let digest = Sha256::digest(&json);
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        ArchHash(u64::from_be_bytes(first))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_round_trips_through_toml() {
        for name in PRESET_NAMES {
            let arch = Arch::preset(name).unwrap();
            assert_eq!(arch.name, name);
            let back = Arch::from_toml_str(&arch.to_toml(), "round trip").unwrap();
            assert_eq!(back, arch);
            assert_eq!(back.hash(), arch.hash());
        }
    }

    #[test]
    fn the_edge_preset_is_800_mhz_with_lpddr5_6400_x64() {
        let arch = Arch::default();
        assert_eq!(arch.name, "edge");
        assert_eq!(arch.clock_mhz, 800);
        // LPDDR5-6400 on a 64-bit bus is 51.2 GB/s.
        assert!((arch.memory_gbps() - 51.2).abs() < 1e-9);
    }

    #[test]
    fn presets_hash_differently_and_a_changed_parameter_changes_the_hash() {
        let edge = Arch::preset("edge").unwrap();
        let tiny = Arch::preset("tiny").unwrap();
        assert_ne!(edge.hash(), tiny.hash());
        let mut wider = edge.clone();
        wider.core.lanes *= 2;
        assert_ne!(wider.hash(), edge.hash());
    }

    #[test]
    fn a_lane_count_that_is_not_a_power_of_two_is_refused_with_its_value() {
        let mut arch = Arch::default();
        arch.core.lanes = 6;
        let err = arch.validate().unwrap_err().to_string();
        assert!(err.contains("core.lanes must be a power of two, got 6"), "{err}");
    }

    #[test]
    fn a_vector_unit_without_lanes_is_refused_and_a_file_without_the_section_gets_the_default() {
        let mut arch = Arch::default();
        arch.vector_unit.lanes = 0;
        let err = arch.validate().unwrap_err().to_string();
        assert!(err.contains("vector_unit.lanes must be in 1..=4096, got 0"), "{err}");
        let text = Arch::default().to_toml();
        let cut = &text[..text.find("[vector_unit]").expect("the section is written")];
        assert_eq!(Arch::from_toml_str(cut, "t").unwrap().vector_unit, VectorUnitParams::default());
    }

    #[test]
    fn an_unknown_field_is_refused() {
        let text = Arch::default().to_toml().replace("[core]", "[core]\nbogus = 3");
        let err = Arch::from_toml_str(&text, "t").unwrap_err().to_string();
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn an_unknown_preset_names_the_known_ones() {
        let err = Arch::load("huge").unwrap_err().to_string();
        assert!(err.contains("edge, tiny"), "{err}");
    }

    #[test]
    fn a_scan_group_wider_than_the_activation_queue_is_refused() {
        // `edge` with scan_width 32 validated once, and its scan then waited for ever on a group
        // with more active columns than the 16-deep queue holds.
        for width in [32, 64] {
            let mut arch = Arch::default();
            arch.core.scan_width = width;
            let err = arch.validate().unwrap_err().to_string();
            assert!(err.contains("core.scan_width") && err.contains("activation_queue_depth"), "{err}");
        }
        let mut arch = Arch::default();
        arch.core.scan_width = arch.core.activation_queue_depth;
        arch.validate().unwrap();
    }

    #[test]
    fn every_size_has_an_upper_bound_named_in_its_error() {
        let cases: [(&str, fn(&mut Arch)); 6] = [
            ("sram.activation_bytes", |a| a.sram.activation_bytes = 4_000_000_000),
            ("sram.colptr_bytes", |a| a.sram.colptr_bytes = u32::MAX),
            ("memory.latency_cycles", |a| a.memory.latency_cycles = u32::MAX),
            ("memory.max_outstanding", |a| a.memory.max_outstanding = u32::MAX),
            ("memory.bytes_per_cycle", |a| a.memory.bytes_per_cycle = u32::MAX),
            ("core.activation_queue_depth", |a| a.core.activation_queue_depth = u32::MAX),
        ];
        for (field, set) in cases {
            let mut arch = Arch::default();
            set(&mut arch);
            let err = arch.validate().unwrap_err().to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
    }

    #[test]
    fn a_missing_arch_file_is_a_missing_file_and_its_errors_name_the_file() {
        let err = Arch::load("nothere.toml").unwrap_err().to_string();
        assert!(err.contains("cannot read arch file nothere.toml"), "{err}");
        let dir = std::env::temp_dir().join(format!("lacuna-arch-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("wide.toml");
        let text = Arch::default().to_toml().replace("scan_width = 8", "scan_width = 64");
        std::fs::write(&file, text).unwrap();
        let err = Arch::load(file.to_str().unwrap()).unwrap_err().to_string();
        assert!(err.contains("invalid arch file") && err.contains("wide.toml"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn derived_widths_follow_the_parameters() {
        let arch = Arch::preset("tiny").unwrap();
        assert_eq!(arch.tile_rows(), arch.core.lanes * arch.core.acc_regs_per_lane);
        assert_eq!(1u32 << arch.row_index_bits(), arch.tile_rows());
        assert_eq!(arch.lane_bits() + arch.reg_bits(), arch.row_index_bits());
    }
}
