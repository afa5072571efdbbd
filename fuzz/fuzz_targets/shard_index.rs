//! Fuzzes the Hugging Face shard index reader (`model.safetensors.index.json`): any bytes give
//! shard names that are plain file names of the checkpoint's directory (never a path that leaves
//! it) and a map whose every index names one of them, or an error; never a panic.
//!
//! Run by hand: `cd fuzz && cargo fuzz run shard_index corpus/shard_index seeds/shard_index` (seeds: `seeds/shard_index/`).
#![no_main]

use lacuna_compiler::hf::parse_shard_index;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if let Ok((files, map)) = parse_shard_index(data, Path::new("model.safetensors.index.json")) {
        for f in &files {
            assert!(!f.is_empty() && !f.contains('/') && !f.contains('\\') && f != ".." && f != ".");
        }
        assert!(map.values().all(|&i| i < files.len()));
    }
});
