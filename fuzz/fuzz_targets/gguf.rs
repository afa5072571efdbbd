//! Fuzzes the GGUF reader: any bytes give a parsed file whose every tensor dequantizes (or is
//! refused as unsupported), or an error; and a checkpoint (graph, weights, tokenizer) built from
//! the file, or an error; never a panic, a hang or an allocation the input cannot back.
//!
//! Run by hand: `cd fuzz && cargo fuzz run gguf` (seed it with a small GGUF written by
//! `lacuna_compiler::gguf::write_gguf`, as `compiler/tests/gguf_files.rs` does).
#![no_main]

use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::gguf::GgufFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = GgufFile::parse(data.to_vec(), "fuzz") {
        for t in f.tensors.clone() {
            let _ = f.dequantize(&t.name);
        }
        let _ = Checkpoint::from_gguf(&f);
    }
});
