//! `Checkpoint::open`: a checkpoint from a path, whatever its format: the one place that knows
//! every reader (`gguf`, `hf`), so that the checkpoint type and the readers do not import each
//! other.

use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::gguf::GgufFile;
use crate::hf;
use std::path::Path;

impl Checkpoint {
    /// Reads a checkpoint of the Llama family: a GGUF file, or a Hugging Face directory (given
    /// as the directory, or as its config.json or one of its .safetensors files).
    pub fn open(path: &Path) -> Result<Self, CheckpointError> {
        if path.is_dir() {
            return hf::open(path);
        }
        let hf_file = path.extension().is_some_and(|e| e == "safetensors" || e == "json");
        match path.parent() {
            Some(dir) if hf_file => hf::open(if dir.as_os_str().is_empty() { Path::new(".") } else { dir }),
            _ => Ok(Self::from_gguf(&GgufFile::open(path)?)?),
        }
    }
}
