//! The README's commands as written: every `lacuna ...` and `cargo run ... -- ...` line of its
//! code blocks (continuation lines joined) is accepted by the command line parser, and then run,
//! in the README's order, in a scratch directory holding the files the README assumes a user has
//! (`w.npy`, `model.safetensors`, `model.gguf`, `x.npy`) and the repository's `traces/`. The few
//! that take minutes ([`LONG`]) run only with `LACUNA_README_ALL=1` (`scripts/readme-check.sh`
//! runs them all on the release build); their code paths run on small inputs in the tests named.

mod common;

use std::path::Path;
use std::process::Command;

/// Splits a command line into words, honouring double quotes.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The README's code lines, continuation lines joined, as written.
fn readme_lines() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let mut lines: Vec<String> = Vec::new();
    let mut joined = String::new();
    for line in text.lines().filter(|l| l.starts_with("    ")) {
        let line = line.trim();
        match line.strip_suffix('\\') {
            Some(head) => joined.push_str(head),
            None => {
                joined.push_str(line);
                lines.push(std::mem::take(&mut joined));
            }
        }
    }
    lines
}

/// A README line as a `lacuna` command line (`cargo run --release -- ARGS` is `lacuna ARGS`).
fn as_lacuna(line: &str) -> Option<String> {
    if line.starts_with("lacuna ") {
        Some(line.to_string())
    } else if line.starts_with("cargo run") {
        line.split_once(" -- ").map(|(_, rest)| format!("lacuna {rest}"))
    } else {
        None
    }
}

/// The argument lists of the README's `lacuna` commands.
fn readme_commands() -> Vec<Vec<String>> {
    readme_lines()
        .iter()
        .filter_map(|l| {
            let l = l.split(" # ").next().unwrap().split(" | ").next().unwrap().trim();
            if let Some(rest) = l.strip_prefix("lacuna ") {
                Some(words(rest))
            } else if l.starts_with("cargo run") {
                l.split_once(" -- ").map(|(_, rest)| words(rest))
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn every_lacuna_command_of_the_readme_parses_as_written() {
    let commands = readme_commands();
    assert!(commands.len() >= 20, "only {} commands found in the README", commands.len());
    for args in &commands {
        let o = Command::new(env!("CARGO_BIN_EXE_lacuna")).args(args).env("LACUNA_PARSE_ONLY", "1").output().unwrap();
        assert!(o.status.success(), "lacuna {}: {}", args.join(" "), String::from_utf8_lossy(&o.stderr));
    }
    // The parser does refuse: a flag that does not exist fails the same way.
    let o = Command::new(env!("CARGO_BIN_EXE_lacuna"))
        .args(["simulate", "--no-such-flag"])
        .env("LACUNA_PARSE_ONLY", "1")
        .output()
        .unwrap();
    assert!(!o.status.success());
}

/// README commands that take minutes, and the tests that run their code on small inputs.
const LONG: &[(&str, &str)] = &[
    // The main job: the paper's six shapes x three levels and every baseline (~30 s release).
    ("lacuna simulate", "tests/cli.rs: simulate_reports_the_core_and_every_baseline_with_the_documented_keys"),
    // The kernels on the six shapes, timed with repetitions (~70 s release).
    ("lacuna spmspv", "tests/cli.rs: spmspv_runs_a_small_workload_bit_exactly_and_labels_it_synthetic"),
    // Perplexity over whole texts at four levels (minutes).
    (
        "lacuna eval smollm2-135m --levels 0,30,50,70 --out eval/",
        "tests/cli_models.rs: eval_reports_accuracy_beside_speed_on_a_small_text",
    ),
    // The accuracy-speed front over 16 points and two allocations (about 30 minutes release).
    (
        "lacuna eval smollm2-135m --front --weight-levels 0,20,40,60 --act-levels 0,20,40,60 --out front/",
        "tests/cli_models.rs: eval_front_reports_each_point_with_its_allocation_and_writes_the_figure",
    ),
    // The second family's real checkpoint compiled (about a minute release; its 262,144-row head
    // makes a 540 MB image), then simulated; the tiny Gemma 3 program runs the same code.
    (
        "lacuna compile gemma3-270m -o gemma-w50a50/",
        "compiler/src/gemma3_tests.rs: a_gemma3_program_passes_the_program_check",
    ),
    ("lacuna simulate gemma-w50a50/", "compiler/src/gemma3_tests.rs: a_gemma3_program_passes_the_program_check"),
    // Yosys, the cell library and OpenSTA on every `tiny` block, and Yosys on its tops (minutes).
    ("lacuna emit-verilog --arch tiny -o verilog/ --check", "testbench/tests/synthesis.rs"),
];

/// The command part of a README line (a trailing `# comment` cut).
fn command_of(line: &str) -> &str {
    line.split(" # ").next().unwrap().trim()
}

/// The files the README's examples assume a user has, in `dir`.
fn users_files(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(root.join("traces"), dir.join("traces")).unwrap();
    common::write_npy(&dir.join("w.npy"), 200, 96);
    // A Hugging Face style checkpoint with the tensor the README encodes (64 x 96, FP32).
    let down = common::write_npy(&dir.join("down.npy"), 64, 96);
    let bytes: Vec<u8> = down.iter().flat_map(|v| v.to_le_bytes()).collect();
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![64, 96], &bytes).unwrap();
    let file = safetensors::serialize(vec![("model.layers.0.mlp.down_proj.weight".to_string(), view)], None).unwrap();
    std::fs::write(dir.join("model.safetensors"), file).unwrap();
    common::write_x_npy(&dir.join("x.npy"), 96);
    let gguf = lacuna_compiler::models::SMOLLM2_135M.locate().unwrap();
    std::os::unix::fs::symlink(gguf, dir.join("model.gguf")).unwrap();
}

#[test]
fn every_lacuna_command_of_the_readme_runs_as_written() {
    if common::skip_without_smollm2() {
        return;
    }
    let all = std::env::var("LACUNA_README_ALL").as_deref() == Ok("1");
    let lines: Vec<String> = readme_lines().iter().filter_map(|l| as_lacuna(l)).collect();
    for (long, _) in LONG {
        assert!(lines.iter().any(|l| command_of(l) == *long), "`{long}` is no longer in the README: update LONG");
    }
    let dir = tempfile::tempdir().unwrap();
    users_files(dir.path());
    let bin = Path::new(env!("CARGO_BIN_EXE_lacuna")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut ran = 0;
    for line in &lines {
        if !all && LONG.iter().any(|(long, _)| command_of(line) == *long) {
            continue;
        }
        let o = Command::new("bash").args(["-c", line]).current_dir(dir.path()).env("PATH", &path).output().unwrap();
        let err = common::stderr(&o);
        if line.contains("--engine gpu") && !o.status.success() && err.contains("no CUDA driver found") {
            // The README says so: without a GPU, one error line.
            common::assert_clean_error(&o, "error: no CUDA driver found (");
        } else {
            assert!(o.status.success(), "`{line}` failed:\n{err}");
            assert!(!err.contains("error") && !err.contains("panicked"), "`{line}`:\n{err}");
        }
        if line.contains(" | head") {
            assert_eq!(common::stdout(&o).lines().count(), 10, "`{line}`");
            assert!(err.is_empty(), "`{line}`: a closed pipe must end the output quietly:\n{err}");
        }
        ran += 1;
    }
    assert!(ran + if all { 0 } else { LONG.len() } == lines.len() && ran >= 15, "{ran} of {} ran", lines.len());
}
