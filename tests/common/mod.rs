//! What every command-line test needs: run the binary, read what it said, check a user's
//! mistake ended cleanly.
#![allow(dead_code)] // each test file uses its own share

use std::path::Path;
use std::process::{Command, Output};

/// Whether a real-model test must skip: SmolLM2 is not in the model cache and the suite does
/// not require it (`LACUNA_REQUIRE_MODELS=1`, set by scripts/test.sh, makes a missing model fail).
pub fn skip_without_smollm2() -> bool {
    let skip = lacuna_compiler::models::SMOLLM2_135M.locate().is_err()
        && std::env::var("LACUNA_REQUIRE_MODELS").as_deref() != Ok("1");
    if skip {
        eprintln!("skipped: SmolLM2 is not in the model cache (scripts/fetch-models.sh)");
    }
    skip
}

pub fn lacuna(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lacuna")).args(args).output().expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A user's mistake: non-zero exit, one `error:` line on stderr, no panic or backtrace.
pub fn assert_clean_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert!(!o.status.success(), "expected failure, got success: {err}");
    assert!(err.starts_with("error: "), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
}

/// A deterministic sparse FP32 matrix with runs of every interesting length, written with npyz.
pub fn write_npy(path: &Path, rows: usize, cols: usize) -> Vec<f32> {
    let mut data = vec![0.0f32; rows * cols];
    let mut state = 12345u64;
    for (i, v) in data.iter_mut().enumerate() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let col = i % cols;
        // Column c keeps roughly one value in (c + 1): long zero runs in later columns.
        if (state >> 33) % (col as u64 + 1) == 0 {
            *v = ((state >> 40) % 2000) as f32 / 100.0 - 10.0;
        }
    }
    let mut out = std::fs::File::create(path).unwrap();
    use npyz::WriterBuilder;
    let mut w = npyz::WriteOptions::<f32>::new()
        .default_dtype()
        .shape(&[rows as u64, cols as u64])
        .writer(&mut out)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
    data
}

/// A vector of K floats as .npy (every third one zero).
pub fn write_x_npy(path: &Path, k: usize) {
    use npyz::WriterBuilder;
    let mut f = std::fs::File::create(path).unwrap();
    let mut w = npyz::WriteOptions::<f32>::new().default_dtype().shape(&[k as u64]).writer(&mut f).begin_nd().unwrap();
    w.extend((0..k).map(|i| if i % 3 == 0 { 0.0 } else { i as f32 / 10.0 })).unwrap();
    w.finish().unwrap();
}

/// Refused by the argument parser (clap adds a usage hint after its one `error:` line): non-zero
/// exit, the reason on stderr, no panic.
pub fn assert_refused_by_clap(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "clap exits with 2: {err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "`{needle}` not in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
