//! End-to-end tests of the `lacuna` command line: what a user types, what they get back.

use half::f16;
use std::process::Command;

mod common;
use common::{assert_clean_error, lacuna, stderr, stdout, write_npy};

/// (nonzeros, padding entries) by the encoding rule, counted from the dense matrix directly:
/// a gap of g zeros before a nonzero costs floor(g / 16) padding entries; trailing gaps cost none.
fn rule_counts(data: &[f32], rows: usize, cols: usize, panel_rows: usize) -> (u64, u64) {
    let (mut nnz, mut padding) = (0u64, 0u64);
    for start in (0..rows).step_by(panel_rows) {
        for c in 0..cols {
            let mut gap = 0u64;
            for r in start..(start + panel_rows).min(rows) {
                if f16::from_f32(data[r * cols + c]).to_f32() != 0.0 {
                    nnz += 1;
                    padding += gap / 16;
                    gap = 0;
                } else {
                    gap += 1;
                }
            }
        }
    }
    (nnz, padding)
}

#[test]
fn encode_then_inspect_reports_the_entries_the_encoding_rule_gives() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("w.npy");
    let rlc = dir.path().join("w.rlc");
    let (rows, cols) = (300, 40);
    let data = write_npy(&npy, rows, cols);
    // --arch tiny: 300 rows on a 32-row tile make 10 balanced panels of 30 rows.
    for (panel_flag, panel_rows) in [(vec![], rows), (vec!["--panel-rows", "64"], 64), (vec!["--arch", "tiny"], 30)] {
        let mut args = vec!["encode", npy.to_str().unwrap(), "-o", rlc.to_str().unwrap()];
        args.extend(panel_flag);
        let o = lacuna(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = lacuna(&["inspect", rlc.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let (nnz, padding) = rule_counts(&data, rows, cols, panel_rows);
        assert!(padding > 0, "the test matrix must exercise padding");
        assert_eq!(v["rows"], rows);
        assert_eq!(v["cols"], cols);
        assert_eq!(v["nnz"], nnz);
        assert_eq!(v["padding_entries"], padding);
        assert_eq!(v["stored_entries"], nnz + padding);
        assert_eq!(v["valid"], true);
        let stored = nnz + padding;
        let panels = rows.div_ceil(panel_rows) as u64;
        // Bytes: 20 bits per entry (padded to 8 per panel) + 4-byte column pointers per panel.
        assert!(v["bytes"].as_u64().unwrap() >= stored * 5 / 2 + panels * (cols as u64 + 1) * 4);
        assert!(v["bytes"].as_u64().unwrap() <= (stored + 7 * panels) * 5 / 2 + panels * (cols as u64 + 1) * 4);
    }
    let o = lacuna(&["inspect", rlc.to_str().unwrap()]);
    assert!(stdout(&o).contains("RLC-CSC"), "{}", stdout(&o));
    assert!(stdout(&o).contains("valid"));
}

#[test]
fn inspect_refuses_a_corrupted_file_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("w.npy");
    let rlc = dir.path().join("w.rlc");
    write_npy(&npy, 50, 5);
    assert!(lacuna(&["encode", npy.to_str().unwrap(), "-o", rlc.to_str().unwrap()]).status.success());
    let mut bytes = std::fs::read(&rlc).unwrap();
    bytes[70] ^= 0x40;
    std::fs::write(&rlc, &bytes).unwrap();
    assert_clean_error(&lacuna(&["inspect", rlc.to_str().unwrap()]), "checksum mismatch");
    let o = lacuna(&["inspect", rlc.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["valid"], false);
    std::fs::write(&rlc, &bytes[..30]).unwrap();
    assert_clean_error(&lacuna(&["inspect", rlc.to_str().unwrap()]), "truncated");
    std::fs::write(&rlc, b"hello").unwrap();
    assert_clean_error(&lacuna(&["inspect", rlc.to_str().unwrap()]), "truncated");
    assert_clean_error(&lacuna(&["inspect", npy.to_str().unwrap()]), "not an .rlc file");
}

#[test]
fn encode_reports_missing_and_unsupported_inputs_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.rlc");
    let o = lacuna(&["encode", "/nonexistent/w.npy", "-o", out.to_str().unwrap()]);
    assert_clean_error(&o, "/nonexistent/w.npy");
    let txt = dir.path().join("w.txt");
    std::fs::write(&txt, "1 2 3").unwrap();
    assert_clean_error(
        &lacuna(&["encode", txt.to_str().unwrap(), "-o", out.to_str().unwrap()]),
        "expected .npy or .safetensors",
    );
    let npy = dir.path().join("w.npy");
    write_npy(&npy, 4, 4);
    let o = lacuna(&["encode", npy.to_str().unwrap(), "-o", out.to_str().unwrap(), "--arch", "nope"]);
    assert_clean_error(&o, "unknown arch `nope`");
}

#[test]
fn spmspv_runs_a_small_workload_bit_exactly_and_labels_it_synthetic() {
    let o = lacuna(&["spmspv", "--shape", "256x300", "--sparsity", "50,70", "--threads", "1,2", "--reps", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("synthetic"), "{out}");
    assert_eq!(out.matches("bit-exact").count(), 4, "{out}");
    let o = lacuna(&["spmspv", "--shape", "64x64", "--sparsity", "70", "--threads", "1", "--reps", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let run = &v[0];
    for key in
        ["shape", "weight_sparsity", "act_sparsity", "bytes_loaded", "byte_ratio", "speedup_vs_dense_f32", "provenance"]
    {
        assert!(!run[key].is_null(), "missing {key}: {run}");
    }
    assert_eq!(run["bit_exact_with_golden"], true);
    // round(0.7 * 4096) = 2867 weights pruned, exactly.
    assert_eq!(run["weight_sparsity"], 2867.0 / 4096.0);
}

#[test]
fn spmspv_on_the_gpu_gives_three_checked_rows_or_without_a_gpu_one_error_line() {
    let o =
        lacuna(&["spmspv", "--engine", "gpu", "--shape", "256x300", "--sparsity", "70", "--gpu-reps", "3", "--json"]);
    if !o.status.success() && stderr(&o).contains("no CUDA driver found") {
        assert_clean_error(&o, "error: no CUDA driver found (");
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let kernels: Vec<&str> = v.as_array().unwrap().iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["golden", "fast", "cublas"]);
    for r in v.as_array().unwrap() {
        for key in ["time_us", "speedup_vs_cublas", "max_bound_fraction", "gpu", "bytes_loaded"] {
            assert!(!r[key].is_null(), "missing {key}: {r}");
        }
    }
    assert_eq!(v[0]["bit_exact_with_golden"], true);
}

#[test]
fn spmspv_refuses_bad_arguments_clearly() {
    assert_clean_error(&lacuna(&["spmspv", "--sparsity", "120"]), "a percentage in 0..=100");
    let o = lacuna(&["spmspv", "--shape", "12"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("ROWSxCOLS"), "{}", stderr(&o));
}

#[test]
fn simulate_reports_the_core_and_every_baseline_with_the_documented_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o =
        lacuna(&["simulate", "--shape", "300x200", "--sparsity", "50,70", "--json", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2 * 6, "two levels x six kernels");
    for r in rows {
        for key in [
            "shape",
            "weight_sparsity",
            "act_sparsity",
            "kernel",
            "cycles",
            "speedup_vs_dense",
            "roofline_fraction",
            "energy_pj",
            "bytes_loaded",
        ] {
            assert!(!r[key].is_null(), "missing {key}: {r}");
        }
        assert!(r["provenance"].as_str().unwrap().contains("synthetic"));
    }
    let ours: Vec<&serde_json::Value> = rows.iter().filter(|r| r["kernel"] == "lacuna").collect();
    assert!(ours.iter().all(|r| r["speedup_vs_dense"].as_f64().unwrap() > 1.0));
    for f in ["simulate.json", "simulate.csv", "speedup.svg"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(out.join("simulate.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 12);
    assert!(std::fs::read_to_string(out.join("speedup.svg")).unwrap().contains("<svg"));
}

#[test]
fn simulate_runs_an_rlc_file_with_an_activation_file() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("w.npy");
    let rlc = dir.path().join("w.rlc");
    write_npy(&npy, 100, 40);
    let xs = dir.path().join("x.npy");
    {
        use npyz::WriterBuilder;
        let mut f = std::fs::File::create(&xs).unwrap();
        let mut w = npyz::WriteOptions::<f32>::new().default_dtype().shape(&[40]).writer(&mut f).begin_nd().unwrap();
        w.extend((0..40).map(|i| if i % 3 == 0 { 0.0 } else { i as f32 / 10.0 })).unwrap();
        w.finish().unwrap();
    }
    let o = lacuna(&["encode", npy.to_str().unwrap(), "-o", rlc.to_str().unwrap(), "--arch", "tiny"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lacuna(&["simulate", rlc.to_str().unwrap(), "--x", xs.to_str().unwrap(), "--arch", "tiny", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v[0]["kernel"], "lacuna");
    assert!(v[0]["provenance"].as_str().unwrap().contains("x.npy"));
    // The views: a Ramulator 2 trace of every burst, a Perfetto timeline of cycles and bursts.
    let (mt, tl) = (dir.path().join("mem.trace"), dir.path().join("timeline.json"));
    let (r, x) = (rlc.to_str().unwrap(), xs.to_str().unwrap());
    let o = lacuna(&[
        "simulate",
        r,
        "--x",
        x,
        "--arch",
        "tiny",
        "--mem-trace",
        mt.to_str().unwrap(),
        "--timeline",
        tl.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let counters = &serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()[0]["counters"];
    let trace = std::fs::read_to_string(&mt).unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    assert_eq!(lines.len() as u64, counters["bytes"]["requests"].as_u64().unwrap(), "one line per burst");
    for l in &lines {
        let (op, addr) = l.split_once(' ').unwrap();
        assert!(op == "LD" || op == "ST", "{l}");
        assert_eq!(u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap() % 16, 0, "{l}: burst aligned");
    }
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("ST")).count() as u64 * 16,
        counters["bytes"]["outputs"].as_u64().unwrap()
    );
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let spans: Vec<&serde_json::Value> =
        t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").collect();
    let cycles_of = |track: &str| -> u64 {
        spans.iter().filter(|e| e["cat"] == track).map(|e| e["args"]["cycles"].as_u64().unwrap()).sum()
    };
    // The core's cycles by class cover the job exactly; every burst is a span.
    assert_eq!(cycles_of("core cycles"), counters["cycles"].as_u64().unwrap());
    let busy: u64 = spans
        .iter()
        .filter(|e| e["cat"] == "core cycles" && e["name"] == "busy")
        .map(|e| e["args"]["cycles"].as_u64().unwrap())
        .sum();
    assert_eq!(busy, counters["busy"].as_u64().unwrap());
    let bursts = spans.iter().filter(|e| e["cat"].as_str().unwrap().starts_with("memory")).count();
    assert_eq!(bursts, lines.len());
    // An .rlc encoded for a larger tile than the arch has is refused with the fix in the message.
    let o = lacuna(&["encode", npy.to_str().unwrap(), "-o", rlc.to_str().unwrap()]);
    assert!(o.status.success());
    assert_clean_error(
        &lacuna(&["simulate", rlc.to_str().unwrap(), "--x", xs.to_str().unwrap(), "--arch", "tiny"]),
        "--arch",
    );
}

#[test]
fn simulate_refuses_a_bad_arch_file_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("a.toml");
    let text = lacuna_spec_text().replace("lanes = 16", "lanes = 6");
    std::fs::write(&toml, text).unwrap();
    assert_clean_error(
        &lacuna(&["simulate", "--arch", toml.to_str().unwrap(), "--shape", "64x64"]),
        "core.lanes must be a power of two, got 6",
    );
    std::fs::write(&toml, "name = \"x\"\nbogus = 1\n").unwrap();
    assert_clean_error(&lacuna(&["simulate", "--arch", toml.to_str().unwrap()]), "bogus");
}

fn lacuna_spec_text() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/spec/presets/edge.toml")).unwrap()
}

#[test]
fn a_sweep_split_into_shards_merges_to_the_unsplit_sweep_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let grid = [
        "--arch",
        "tiny",
        "--lanes",
        "4,8",
        "--entries-per-lane",
        "2",
        "--write-ports",
        "1,2",
        "--bytes-per-cycle",
        "16",
        "--shape",
        "64x48",
        "--sparsity",
        "50,70",
    ];
    let run = |extra: &[&str], threads: &str| {
        let mut args = vec!["sweep"];
        args.extend(grid);
        args.extend(extra);
        let o =
            Command::new(env!("CARGO_BIN_EXE_lacuna")).args(&args).env("RAYON_NUM_THREADS", threads).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run(&["-o", &p("all.jsonl")], "2");
    run(&["-o", &p("all1.jsonl")], "1");
    assert_eq!(std::fs::read(p("all.jsonl")).unwrap(), std::fs::read(p("all1.jsonl")).unwrap());
    run(&["--shard", "0/3", "-o", &p("s0.jsonl")], "2");
    run(&["--shard", "1/3", "-o", &p("s1.jsonl")], "2");
    run(&["--shard", "2/3", "-o", &p("s2.jsonl")], "2");
    let o = lacuna(&["merge", &p("s2.jsonl"), &p("s0.jsonl"), &p("s1.jsonl"), "-o", &p("merged.jsonl")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(p("merged.jsonl")).unwrap(), std::fs::read_to_string(p("all.jsonl")).unwrap());
    assert!(std::path::Path::new(&p("merged.csv")).exists());
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(p("all.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 8);
    // lanes 4 x 1 entry... every point here is valid; each ran the model.
    assert!(lines.iter().all(|l| l["cycles"].as_u64().unwrap() > 0 && l["invalid"].is_null()));
    // A missing shard and a duplicated shard are refused.
    assert_clean_error(&lacuna(&["merge", &p("s0.jsonl"), &p("s1.jsonl"), "-o", &p("m.jsonl")]), "missing");
    assert_clean_error(&lacuna(&["merge", &p("s0.jsonl"), &p("s0.jsonl"), "-o", &p("m.jsonl")]), "twice");
    assert_clean_error(&lacuna(&["sweep", "--shard", "3/3", "-o", &p("x.jsonl")]), "--shard must be I/N");
}

#[test]
fn emit_verilog_writes_one_file_per_module_and_a_manifest_with_documented_ports() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    let o = lacuna(&["emit-verilog", "--arch", "tiny", "-o", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["arch"], "tiny");
    assert_eq!(manifest["arch_hash"], lacuna_spec::Arch::preset("tiny").unwrap().hash().to_string());
    assert_eq!(manifest["top"], "lacuna_system_tiny");
    let blocks = manifest["blocks"].as_array().unwrap();
    assert!(blocks.iter().any(|b| b["top"] == manifest["top"]), "the system top is among the blocks");
    assert!(!blocks.is_empty());
    for block in blocks {
        for file in block["files"].as_array().unwrap() {
            let text = std::fs::read_to_string(out.join(file.as_str().unwrap())).unwrap();
            assert!(text.starts_with(&format!("module {}(", file.as_str().unwrap().trim_end_matches(".v"))));
        }
        for port in block["ports"].as_array().unwrap() {
            assert!(port["width"].as_u64().unwrap() >= 1);
            assert!(!port["meaning"].as_str().unwrap().is_empty());
        }
    }
}

#[test]
fn emit_verilog_check_times_a_block_in_the_cell_library_and_fails_a_clock_it_cannot_meet() {
    // One small block (the memory port: seconds), through lint, Yosys, the OSU 0.18 um library
    // and OpenSTA, as `--check` does for every block.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v");
    let block = "lacuna_mem_port_tiny";
    let args = |clock: &str| {
        let o = out.to_str().unwrap().to_string();
        vec!["emit-verilog", "--arch", "tiny", "--block", block, "-o", &o, "--check", "--clock-mhz", clock, "--json"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let run = |clock: &str| {
        let a = args(clock);
        lacuna(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("800");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let manifest: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let blocks = manifest["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "--block keeps the named block only");
    let t = &blocks[0]["timing"];
    assert!(t["library"].as_str().unwrap().contains("osu018"), "{t}");
    assert!(t["area_um2"].as_f64().unwrap() > 0.0 && t["flip_flops"].as_u64().unwrap() > 0, "{t}");
    let reg = t["paths"].as_array().unwrap().iter().find(|p| p["kind"] == "reg_to_reg").expect("a reg -> reg path");
    let (ns, fo4) = (reg["delay_ns"].as_f64().unwrap(), reg["fo4"].as_f64().unwrap());
    assert!(ns > 0.5 && fo4 < lacuna_spec::timing::budget_fo4(800), "{reg}");
    assert!(!reg["start"].as_str().unwrap().is_empty() && reg["levels"].as_u64().unwrap() > 0, "{reg}");
    // At 10 GHz the budget is about 6 FO4: the same block is over it, and --check says so.
    let o = run("10000");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("over the clock budget of 10000 MHz") && stderr(&o).contains(block), "{}", stderr(&o));
    // A block the arch does not have is refused with the list of those it has.
    let o = lacuna(&["emit-verilog", "--arch", "tiny", "--block", "lacuna_core_edge", "-o", out.to_str().unwrap()]);
    assert_clean_error(&o, "no such block");
}

#[test]
fn emit_verilog_refuses_an_unknown_arch_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let o = lacuna(&["emit-verilog", "--arch", "huge", "-o", dir.path().to_str().unwrap()]);
    assert_clean_error(&o, "unknown arch `huge`");
}

#[test]
fn cosim_reports_three_way_agreement_as_json() {
    let o = lacuna(&["cosim", "--arch", "tiny", "--jobs", "30", "--seed", "100", "--json"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["random_jobs"], 30);
    assert_eq!(r["jobs"], 30 + r["named_cases"].as_u64().unwrap());
    assert_eq!(r["passed"], r["jobs"]);
    for key in ["mismatches", "cycle_mismatches", "divergences", "golden_mismatches", "dense_violations", "errors"] {
        assert_eq!(r[key], 0, "{key}");
    }
    assert!(r["first_failure"].is_null());
    // Half the random jobs are real-valued: the golden's sums round, so they differ from dense.
    let fraction = r["max_dense_bound_fraction"].as_f64().unwrap();
    assert!(fraction > 0.0 && fraction <= 1.0, "{fraction}");
}

#[test]
fn cosim_on_an_arch_this_build_has_no_rtl_for_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let arch = dir.path().join("other.toml");
    let mut a = lacuna_spec::Arch::preset("tiny").unwrap();
    a.name = "other".into();
    std::fs::write(&arch, a.to_toml()).unwrap();
    let o = lacuna(&["cosim", "--arch", arch.to_str().unwrap(), "--jobs", "1"]);
    assert_clean_error(&o, "no RTL block `lacuna_system_other`");
}
