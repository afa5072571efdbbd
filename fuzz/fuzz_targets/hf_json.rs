//! Fuzzes the Hugging Face checkpoint's JSON readers (`config.json`, `tokenizer.json`): any bytes
//! give a checked model shape, a tokenizer, or an error; never a panic, a hang or an allocation
//! the input cannot back (a token id of 2^32 - 1 must not size a table). A tokenizer that is
//! built must encode and decode text without panicking. The safetensors files are read by the
//! `safetensors` crate, fuzzed through `weight_files`.
//!
//! Run by hand: `cd fuzz && cargo fuzz run hf_json` (seed it with the config.json and
//! tokenizer.json `lacuna_compiler::hf::write_dir` writes).
#![no_main]

use lacuna_compiler::hf::{parse_config, parse_tokenizer};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let _ = parse_config(data, Path::new("config.json"));
    if let Ok(t) = parse_tokenizer(data, Path::new("tokenizer.json"), None) {
        let ids = t.encode("The capital of France is 42 <|im_end|>");
        let _ = t.decode(&ids);
    }
});
