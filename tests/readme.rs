//! The README's commands as written: every `lacuna ...` and `cargo run ... -- ...` line of its
//! code blocks (continuation lines joined, comments and pipes cut) is accepted by the command
//! line parser, so a renamed flag or subcommand cannot leave the README behind. The commands are
//! parsed (`LACUNA_PARSE_ONLY=1`), not run: most need the real model, minutes of compute or a GPU;
//! what they do is covered by the other CLI tests.

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

/// The argument lists of the README's `lacuna` commands.
fn readme_commands() -> Vec<Vec<String>> {
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
