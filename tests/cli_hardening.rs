//! What a suspicious user typed once and got a hang, a crash or a silently wrong answer: each now
//! gets one clear `error:` line (or a correct result) within seconds.

mod common;
use common::{assert_clean_error, assert_refused_by_clap, lacuna, stderr, write_npy, write_x_npy};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An .rlc of a 100 x 40 matrix encoded for `tiny`, and its activation vector.
fn rlc_job(dir: &Path) -> (PathBuf, PathBuf) {
    let (npy, rlc, x) = (dir.join("w.npy"), dir.join("w.rlc"), dir.join("x.npy"));
    write_npy(&npy, 100, 40);
    write_x_npy(&x, 40);
    let o = lacuna(&["encode", npy.to_str().unwrap(), "-o", rlc.to_str().unwrap(), "--arch", "tiny"]);
    assert!(o.status.success(), "{}", stderr(&o));
    (rlc, x)
}

#[test]
fn a_threshold_that_fp16_cannot_hold_is_refused_not_rounded_to_infinity() {
    // Once: FP16 +Inf, every activation dropped, "12.1x", exit 0.
    let dir = tempfile::tempdir().unwrap();
    let (rlc, x) = rlc_job(dir.path());
    let (rlc, x) = (rlc.to_str().unwrap(), x.to_str().unwrap());
    for t in ["1e9", "65520", "-1", "NaN"] {
        let o = lacuna(&["simulate", rlc, "--x", x, "--arch", "tiny", &format!("--threshold={t}")]);
        assert_clean_error(&o, "--threshold must be a number in 0..=65504");
    }
    let o = lacuna(&["simulate", rlc, "--x", x, "--arch", "tiny", "--threshold", "65504", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_shape_too_large_to_hold_is_refused_before_allocating() {
    // Once: "memory allocation failed", exit 134.
    for cmd in ["simulate", "spmspv"] {
        assert_refused_by_clap(&lacuna(&[cmd, "--shape", "1048576x1048576"]), "at most 268435456");
    }
}

#[test]
fn simulate_of_a_program_directory_refuses_the_flags_of_a_single_job() {
    // Once: silently ignored. The flags are checked before the directory is read.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (flags, name) in [
        (vec!["--arch", "tiny"], "--arch"),
        (vec!["--x", "x.npy"], "--x"),
        (vec!["--threshold", "0.5"], "--threshold"),
        (vec!["--out", "o"], "--out"),
    ] {
        let mut args = vec!["simulate", d];
        args.extend(flags);
        assert_clean_error(&lacuna(&args), &format!("{name} does not apply to a program directory"));
    }
    assert_refused_by_clap(&lacuna(&["simulate", d, "--seed", "3"]), "--seed");
}

#[test]
fn a_missing_or_broken_file_is_named_once() {
    let dir = tempfile::tempdir().unwrap();
    let (rlc, x) = rlc_job(dir.path());
    let missing = dir.path().join("nothere.rlc");
    let o = lacuna(&["simulate", missing.to_str().unwrap(), "--x", x.to_str().unwrap(), "--arch", "tiny"]);
    assert_clean_error(&o, "nothere.rlc");
    assert_eq!(stderr(&o).matches("os error").count(), 1, "{}", stderr(&o));
    // A truncated .rlc: the error names the file (`inspect` did, `simulate` did not).
    let bytes = std::fs::read(&rlc).unwrap();
    let trunc = dir.path().join("trunc.rlc");
    std::fs::write(&trunc, &bytes[..bytes.len() / 2]).unwrap();
    let o = lacuna(&["simulate", trunc.to_str().unwrap(), "--x", x.to_str().unwrap(), "--arch", "tiny"]);
    assert_clean_error(&o, "trunc.rlc is not a valid .rlc file");
    // An arch file that does not exist is a missing file, not an unknown preset.
    assert_clean_error(&lacuna(&["simulate", "--arch", "nothere.toml", "--shape", "64x64"]), "cannot read arch file");
}

#[test]
fn an_arch_file_with_a_huge_activation_buffer_is_refused_under_its_file_name() {
    // Once: `emit-verilog` wrote `reg [15:0] mem [0:1999999999]`.
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("big.toml");
    let mut text = lacuna_spec::Arch::preset("tiny").unwrap().to_toml();
    text = text.replace("activation_bytes = 512", "activation_bytes = 4000000000");
    std::fs::write(&toml, text).unwrap();
    let out = dir.path().join("v");
    let o = lacuna(&["emit-verilog", "--arch", toml.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_clean_error(&o, "invalid arch file");
    assert!(stderr(&o).contains("big.toml") && stderr(&o).contains("sram.activation_bytes"), "{}", stderr(&o));
    assert!(!out.exists(), "nothing is written for a refused arch");
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    // Once: "failed printing to stdout: Broken pipe", a panic, exit 101.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(["simulate", "--shape", "64x64", "--sparsity", "50", "--arch", "tiny", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    assert_ne!(o.status.code(), Some(101), "{err}");
}

#[test]
fn merge_refuses_a_claimed_total_it_cannot_have_and_points_that_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = lacuna(&[
        "sweep",
        "--arch",
        "tiny",
        "--lanes",
        "4,8",
        "--entries-per-lane",
        "2",
        "--write-ports",
        "1",
        "--bytes-per-cycle",
        "16",
        "--shape",
        "32x16",
        "--sparsity",
        "50",
        "-o",
        &p("all.jsonl"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(p("all.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let write = |name: &str, points: &[serde_json::Value]| {
        let body: String = points.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(p(name), body).unwrap();
    };
    // Once: a total of 2^64 - 1 aborted out of memory.
    let mut huge = lines.clone();
    huge.iter_mut().for_each(|v| v["total"] = serde_json::json!(u64::MAX));
    write("huge.jsonl", &huge);
    assert_clean_error(&lacuna(&["merge", &p("huge.jsonl"), "-o", &p("m.jsonl")]), "points missing");
    // Once: points that disagree on the total were not noticed.
    let mut mixed = lines.clone();
    mixed[1]["total"] = serde_json::json!(3);
    write("mixed.jsonl", &mixed);
    assert_clean_error(&lacuna(&["merge", &p("mixed.jsonl"), "-o", &p("m.jsonl")]), "earlier points say 2");
}

#[test]
fn the_test_command_refuses_to_run_while_blessing_is_asked_for() {
    // Once: any value of LACUNA_BLESS, `0` included, rewrote the golden files. The guard is
    // tested on its own (running the whole test command here would, if the guard regressed, run
    // the suite recursively with blessing on); the test command must source it first.
    let root = env!("CARGO_MANIFEST_DIR");
    let guard = |bless: Option<&str>| {
        let mut c = Command::new("bash");
        c.current_dir(root).args(["-c", ". scripts/lib/refuse-bless.sh && echo unguarded"]).env_remove("LACUNA_BLESS");
        if let Some(v) = bless {
            c.env("LACUNA_BLESS", v);
        }
        c.output().unwrap()
    };
    for value in ["1", "0", ""] {
        let o = guard(Some(value));
        assert_eq!(o.status.code(), Some(2), "LACUNA_BLESS={value:?}: {}", String::from_utf8_lossy(&o.stdout));
        assert!(String::from_utf8_lossy(&o.stderr).contains("LACUNA_BLESS is set"));
    }
    assert_eq!(String::from_utf8_lossy(&guard(None).stdout).trim(), "unguarded");
    let script = std::fs::read_to_string(format!("{root}/scripts/test.sh")).unwrap();
    let sourced = script.find(". scripts/lib/refuse-bless.sh").expect("test.sh sources the guard");
    assert!(sourced < script.find("cargo ").unwrap(), "the guard comes before any cargo command");
}

#[test]
fn forward_writes_the_logits_of_every_position_and_refuses_bad_ids() {
    // Without a checkpoint the ids are refused clearly; argument errors come first.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("logits.npy");
    let out_s = out.to_str().unwrap();
    assert_refused_by_clap(&lacuna(&["forward", "x.gguf", "--out", out_s]), "--ids");
    assert_clean_error(&lacuna(&["forward", "/nonexistent.gguf", "--ids", "1", "--out", out_s]), "no such file");
    if lacuna_compiler::models::SMOLLM2_135M.locate().is_err()
        && std::env::var("LACUNA_REQUIRE_MODELS").as_deref() != Ok("1")
    {
        eprintln!("skipped the real-model part: SmolLM2 is not in the model cache");
        return;
    }
    let o = lacuna(&["forward", "smollm2-135m", "--prompt", "The capital of France is", "--out", out_s, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let tokens = r["ids"].as_array().unwrap().len();
    let bytes = std::fs::read(&out).unwrap();
    let npy = npyz::NpyFile::new(bytes.as_slice()).unwrap();
    assert_eq!(npy.shape(), [tokens as u64, 49152]);
    let logits: Vec<f32> = npy.into_vec().unwrap();
    // The file holds the logits the report's argmax came from; the last position names Paris.
    let last = &logits[(tokens - 1) * 49152..];
    let best = last.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
    assert_eq!(r["argmax"][tokens - 1], best as u64);
    // The table names the top token after the prompt as text: Paris.
    let o = lacuna(&["forward", "smollm2-135m", "--prompt", "The capital of France is", "--out", out_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(table.trim_end().lines().last().unwrap().contains("Paris"), "{table}");
    assert_clean_error(
        &lacuna(&["forward", "smollm2-135m", "--ids", "1,99999999", "--out", out_s]),
        "outside the vocabulary",
    );
}
