//! Fuzzes the weight-file readers (`.npy` and `.safetensors`): any bytes give a finite FP16
//! matrix of the stated shape or an error, never a panic or an allocation the input cannot back.
//!
//! Run by hand: `cd fuzz && cargo fuzz run weight_files`.
#![no_main]

use lacuna_compiler::input::{load_npy, load_safetensors};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = load_npy(data, "fuzz.npy") {
        assert_eq!(m.data().len(), m.rows() * m.cols());
        assert!(m.data().iter().all(|v| v.is_finite()));
    }
    if let Ok(m) = load_safetensors(data, "fuzz.safetensors", None) {
        assert_eq!(m.data().len(), m.rows() * m.cols());
        assert!(m.data().iter().all(|v| v.is_finite()));
    }
});
