//! The compiled program: what `lacuna compile` writes and `lacuna simulate DIR` runs.
//!
//! A program is a directory:
//! - `program.json`: the manifest ([`Program`]): format name and version, the `Arch` (its TOML
//!   and hash), the model, the pruning and sparsity settings with what calibration measured, the
//!   decode-step graph, and one [`ProgramLayer`] per linear layer (shape, tiling, threshold,
//!   where its weights lie in the image);
//! - `image.bin`: the weights, each layer's RLC-CSC matrix as an `.rlc` file
//!   (`lacuna_spec::rlc_file`, CRC-checked) at a 64-byte aligned offset; a layer whose job is
//!   `gemv` runs over the same weights in dense panels (`crate::dense_panels`), laid out from
//!   them on load (the image stays compact; the job's memory layout is `crate::job`'s);
//! - `trace.lctr`: a decode trace of the compiled model on a real prompt ([`crate::trace`]), the
//!   activations the simulation replays.
//!
//! - `checksum.sha256`: the SHA-256 of `program.json` and `image.bin`, in `sha256sum` format
//!   (`sha256sum -c checksum.sha256` checks a copy by hand).
//!
//! Contract: a program directory is trusted only after checking. [`Program::read`] refuses, each
//! with an error naming the file and the problem: files whose checksums differ from
//! `checksum.sha256`; a manifest of another format or version; an `Arch` whose hash is not the
//! recorded one; a graph that is not the one its config builds, or a placement that is not the
//! one the graph gets ([`crate::placement`]); settings out of range; a layer list that is not
//! exactly the graph's linear layers in order (no duplicated, missing or reordered layer) with
//! their kinds, inputs and shapes; panels that do not fit the arch's tile; a threshold that is
//! not a finite non-negative FP16; layers that overlap in the image or lie outside it; an image
//! whose size or CRC differ; a matrix whose shape, panels, entries or zeros differ from its
//! layer's record; a gemv layer whose weights would not take fewer bytes in dense panels than in
//! RLC-CSC (so loading cannot expand a sparse layer), or any gemv layer under
//! `settings.layout = rlc-csc`. The version stays 2: `job` and `settings.layout` are optional
//! (absent: spmspv, rlc-csc), so older programs read; an older build refuses a newer program
//! with "unknown field `job`". Every size in a manifest that passes is bounded by the graph's limits
//! (`graph::MAX_DIMENSION`), so nothing run from it can loop or allocate beyond them.

pub mod check;

use crate::dense_panels::DensePanels;
use crate::graph::{Graph, LayerId, LinearKind, NodeId};
use crate::job::{JobKind, Layout, Weights};
use crate::rlc_file::read_rlc;
use crate::{Arch, RlcMatrix};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The manifest's format name.
pub const FORMAT: &str = "lacuna-program";
/// The manifest version this code reads and writes (2: with `checksum.sha256` and the checks
/// above; a version-1 program is recompiled).
pub const VERSION: u32 = 2;
/// The checksum file of a program directory.
pub const CHECKSUM_FILE: &str = "checksum.sha256";

/// What the program was compiled with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Target weight sparsity of every block linear (0..1).
    pub weight_sparsity: f64,
    /// Pruning method (`magnitude` or `wanda`).
    pub prune_method: String,
    /// Target activation sparsity of every block linear's input (0..1).
    pub act_sparsity: f64,
    /// How the targets are placed over the layers (`uniform`, or `sensitivity`: per block and
    /// per input from measured sensitivity, the targets being means; each layer's own weight
    /// zeros and threshold are in its entry). Programs from before it was recorded are uniform.
    #[serde(default = "uniform")]
    pub allocation: String,
    /// How each layer's layout was chosen (`rlc-csc`: every layer a spmspv job; `auto`: a gemv
    /// job over dense panels where they take fewer bytes). Programs from before it was recorded
    /// are rlc-csc.
    #[serde(default = "rlc_csc")]
    pub layout: Layout,
    /// The calibration text and how much of it was used.
    pub calibration: String,
    /// Calibration tokens.
    pub calibration_tokens: usize,
    /// Activation sparsity the thresholds reached on held-out text.
    pub held_out_act_sparsity: f64,
    /// The held-out text.
    pub held_out: String,
}

fn uniform() -> String {
    "uniform".into()
}

fn spmspv() -> JobKind {
    JobKind::Spmspv
}

fn rlc_csc() -> Layout {
    Layout::RlcCsc
}

/// One linear layer of the program.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramLayer {
    /// The graph node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// What it computes.
    pub kind: LinearKind,
    /// Its block.
    pub layer: Option<LayerId>,
    /// The node its input comes from.
    pub input: NodeId,
    /// M.
    pub rows: u32,
    /// K.
    pub cols: u32,
    /// Rows per panel.
    pub panel_rows: u32,
    /// Panels.
    pub panels: u32,
    /// Zero weights (of rows x cols).
    pub weight_zeros: u64,
    /// Stored entries (nonzeros + padding).
    pub entries: u64,
    /// FP16 activation threshold, as bits.
    pub threshold_bits: u16,
    /// The job that runs it: `spmspv` (RLC-CSC panels) or `gemv` (the same weights in dense
    /// panels, `crate::dense_panels`, only where they take fewer bytes). Programs from before
    /// it was recorded are all spmspv.
    #[serde(default = "spmspv")]
    pub job: JobKind,
    /// Offset of its `.rlc` bytes in the image.
    pub offset: u64,
    /// Length of its `.rlc` bytes.
    pub bytes: u64,
}

/// The manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] for files this build writes.
    pub version: u32,
    /// The target architecture, as TOML.
    pub arch_toml: String,
    /// Its hash (`Arch::hash`), checked on read.
    pub arch_hash: String,
    /// The model: checkpoint name and source.
    pub model: String,
    /// The model file's sha256, where known.
    pub model_sha256: Option<String>,
    /// Compile settings.
    pub settings: Settings,
    /// The decode-step graph.
    pub graph: Graph,
    /// The linear layers, in execution order.
    pub layers: Vec<ProgramLayer>,
    /// Every node's unit and work (`passes::place`), in graph order.
    pub placement: Vec<crate::placement::Placed>,
    /// Bytes of `image.bin`.
    pub image_bytes: u64,
    /// CRC-32 of `image.bin`.
    pub image_crc32: u32,
}

/// A program read back: manifest, arch and each layer's matrix.
#[derive(Debug)]
pub struct LoadedProgram {
    /// The manifest.
    pub program: Program,
    /// The arch it was compiled for.
    pub arch: Arch,
    /// Each layer's weights, in manifest order.
    pub matrices: Vec<RlcMatrix>,
    /// Each gemv layer's weights in dense panels (`None` for a spmspv layer).
    pub dense: Vec<Option<DensePanels>>,
}

impl LoadedProgram {
    /// Layer `i`'s weights in the layout its job reads.
    pub fn weights(&self, i: usize) -> Weights<'_> {
        match &self.dense[i] {
            Some(d) => Weights::Dense(d),
            None => Weights::Rlc(&self.matrices[i]),
        }
    }
}

/// Why a program could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ProgramError {
    /// File system.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The program is not valid.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ProgramError + '_ {
    move |source| ProgramError::Io { path: path.display().to_string(), source }
}

impl Program {
    /// Writes `program.json`, `image.bin` and `checksum.sha256` into `dir` (created if missing).
    pub fn write(&self, dir: &Path, image: &[u8]) -> Result<(), ProgramError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let manifest = dir.join("program.json");
        let json = serde_json::to_vec_pretty(self).expect("the manifest serializes");
        std::fs::write(&manifest, &json).map_err(io(&manifest))?;
        let img = dir.join("image.bin");
        std::fs::write(&img, image).map_err(io(&img))?;
        let sums = format!("{}  program.json\n{}  image.bin\n", sha256_hex(&json), sha256_hex(image));
        let sums_path = dir.join(CHECKSUM_FILE);
        std::fs::write(&sums_path, sums).map_err(io(&sums_path))
    }

    /// Reads and checks a program directory.
    pub fn read(dir: &Path) -> Result<LoadedProgram, ProgramError> {
        let manifest = dir.join("program.json");
        let invalid =
            |path: &Path, message: String| ProgramError::Invalid { path: path.display().to_string(), message };
        let text = std::fs::read(&manifest).map_err(io(&manifest))?;
        // The format and version first, so an old or foreign file gets that message rather
        // than a missing-checksum or missing-field one; then the checksums, then the fields.
        let probe: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| invalid(&manifest, format!("not JSON: {e}")))?;
        if probe.get("format").and_then(|v| v.as_str()) != Some(FORMAT) {
            return Err(invalid(&manifest, format!("not a {FORMAT} manifest")));
        }
        match probe.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == VERSION as u64 => {}
            v => {
                return Err(invalid(
                    &manifest,
                    format!("program version {v:?} is not supported (this build reads {VERSION})"),
                ))
            }
        }
        let img_path = dir.join("image.bin");
        let image = std::fs::read(&img_path).map_err(io(&img_path))?;
        check_sums(dir, &[("program.json", &text), ("image.bin", &image)])?;
        let program: Program = serde_json::from_value(probe).map_err(|e| invalid(&manifest, e.to_string()))?;
        program.load(image, &manifest, &img_path)
    }

    /// Checks a manifest against its image and decodes every layer's matrix; the paths name the
    /// two in errors.
    pub fn load(self, image: Vec<u8>, manifest: &Path, img_path: &Path) -> Result<LoadedProgram, ProgramError> {
        let invalid =
            |path: &Path, message: String| ProgramError::Invalid { path: path.display().to_string(), message };
        let program = self;
        let arch = Arch::from_toml_str(&program.arch_toml, "program.json arch_toml")
            .map_err(|e| invalid(manifest, format!("its arch: {e}")))?;
        if arch.hash().to_string() != program.arch_hash {
            return Err(invalid(
                manifest,
                format!("its arch hashes to {}, but the program records {}", arch.hash(), program.arch_hash),
            ));
        }
        check::check_manifest(&program, &arch).map_err(|m| invalid(manifest, m))?;
        if image.len() as u64 != program.image_bytes {
            return Err(invalid(img_path, format!("{} bytes, the manifest says {}", image.len(), program.image_bytes)));
        }
        let crc = crc32fast::hash(&image);
        if crc != program.image_crc32 {
            return Err(invalid(img_path, format!("CRC {crc:08x}, the manifest says {:08x}", program.image_crc32)));
        }
        let mut matrices = Vec::with_capacity(program.layers.len());
        let mut dense = Vec::with_capacity(program.layers.len());
        for l in &program.layers {
            let bytes = (l.offset as usize)
                .checked_add(l.bytes as usize)
                .and_then(|end| image.get(l.offset as usize..end))
                .ok_or_else(|| invalid(img_path, format!("layer {} lies outside the image", l.name)))?;
            let m = read_rlc(bytes).map_err(|e| invalid(img_path, format!("layer {}: {e}", l.name)))?;
            check::check_matrix(l, &m).map_err(|m| invalid(img_path, format!("layer {}: {m}", l.name)))?;
            dense.push(match l.job {
                JobKind::Gemv => {
                    Some(DensePanels::from_rlc(&m).map_err(|e| invalid(img_path, format!("layer {}: {e}", l.name)))?)
                }
                JobKind::Spmspv => None,
            });
            matrices.push(m);
        }
        Ok(LoadedProgram { program, arch, matrices, dense })
    }
}

/// Lower-case hex SHA-256.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks `files` (name, bytes) against the program directory's `checksum.sha256`.
fn check_sums(dir: &Path, files: &[(&str, &[u8])]) -> Result<(), ProgramError> {
    let path = dir.join(CHECKSUM_FILE);
    let invalid = |message: String| ProgramError::Invalid { path: path.display().to_string(), message };
    let meta = std::fs::metadata(&path).map_err(io(&path))?;
    // Two lines of 64 hex digits and a name: anything much longer is not ours.
    if meta.len() > 4096 {
        return Err(invalid(format!("{} bytes, not a program's checksum file", meta.len())));
    }
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let mut sums = std::collections::BTreeMap::new();
    for line in text.lines() {
        let (sum, name) =
            line.split_once("  ").ok_or_else(|| invalid(format!("line {line:?} is not `SHA256  NAME`")))?;
        if sums.insert(name, sum).is_some() {
            return Err(invalid(format!("{name} is listed twice")));
        }
    }
    for &(name, bytes) in files {
        let want = sums.get(name).ok_or_else(|| invalid(format!("no checksum for {name}")))?;
        let got = sha256_hex(bytes);
        if *want != got {
            return Err(ProgramError::Invalid {
                path: dir.join(name).display().to_string(),
                message: format!("SHA-256 {got}, {CHECKSUM_FILE} says {want} (the file was changed after compiling)"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Settings;

    #[test]
    fn settings_written_before_allocations_existed_read_as_uniform() {
        let old = r#"{"weight_sparsity": 0.5, "prune_method": "wanda", "act_sparsity": 0.5, "calibration": "c",
            "calibration_tokens": 10, "held_out_act_sparsity": 0.5, "held_out": "h"}"#;
        let s: Settings = serde_json::from_str(old).unwrap();
        assert_eq!(s.allocation, "uniform");
        assert_eq!(s.layout, super::Layout::RlcCsc, "programs from before dense panels ran every layer as spmspv");
    }
}
