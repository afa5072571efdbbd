//! End-to-end tests of the `lacuna` command line on real models (SmolLM2 from the model cache):
//! `compile`, `simulate` of a compiled directory, `eval` at a level and `eval --front`, the MoE
//! trace, and the arguments they refuse. The commands on files and synthetic workloads are in
//! tests/cli.rs.

mod common;
use common::{assert_clean_error, assert_refused_by_clap, lacuna, stderr, stdout};

#[test]
fn compile_and_eval_refuse_bad_arguments_clearly() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    assert_clean_error(&lacuna(&["compile", "/nonexistent/model.gguf", "-o", o]), "no such file");
    let not_gguf = out.path().join("x.gguf");
    std::fs::write(&not_gguf, b"not a model").unwrap();
    assert_clean_error(&lacuna(&["compile", not_gguf.to_str().unwrap(), "-o", o]), "not a valid GGUF file");
    let hf = out.path().join("hf");
    std::fs::create_dir(&hf).unwrap();
    assert_clean_error(&lacuna(&["compile", hf.to_str().unwrap(), "-o", o]), "config.json");
    std::fs::write(hf.join("config.json"), r#"{"model_type": "llama", "hidden_size": 8}"#).unwrap();
    assert_clean_error(&lacuna(&["compile", hf.to_str().unwrap(), "-o", o]), "not a Llama config.json");
    assert_clean_error(&lacuna(&["compile", "smollm2-135m", "--weight-sparsity", "100", "-o", o]), "--weight-sparsity");
    assert_clean_error(&lacuna(&["compile", "smollm2-135m", "--method", "random", "-o", o]), "unknown pruning method");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--levels", "150"]), "--levels");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--moe", "4x8"]), "is not ExK");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--moe", "16x4", "--tree", "4"]), "is not DxW");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--moe", "16x4", "--channel-budget=-1"]), "--channel-budget");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--moe", "16x4", "--policies", "greedy"]), "unknown policy");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--moe", "16x4", "--expert-budget", "0"]), "--expert-budget");
    // The front's options without it, and a single level's with it, would be ignored.
    assert_refused_by_clap(&lacuna(&["eval", "--weight-levels", "30"]), "--front");
    assert_refused_by_clap(&lacuna(&["eval", "--front", "--levels", "30"]), "cannot be used with");
    assert_refused_by_clap(&lacuna(&["eval", "--front", "--docs", "3"]), "cannot be used with");
    assert_refused_by_clap(&lacuna(&["eval", "--front", "--numerics", "core"]), "cannot be used with");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--front", "--act-levels", "95"]), "up to 90 %");
    assert_clean_error(
        &lacuna(&["compile", "smollm2-135m", "--allocation", "sensitivity", "--act-sparsity", "95", "-o", o]),
        "up to 90 %",
    );
    assert_refused_by_clap(&lacuna(&["eval", "--allocation", "best"]), "unknown allocation");
    assert_refused_by_clap(&lacuna(&["compile", "smollm2-135m", "--allocation", "owl", "-o", o]), "unknown allocation");
    assert_refused_by_clap(&lacuna(&["compile", "smollm2-135m", "--layout", "dense", "-o", o]), "unknown layout");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--tokens", "10"]), "--tokens goes with --moe or --front");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--allocation", "uniform,sensitivity"]), "one allocation");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--front", "--weight-levels", "100"]), "--weight-levels");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--front", "--tokens", "1"]), "--tokens");
    assert_clean_error(&lacuna(&["eval", "smollm2-135m", "--front", "--allocation", "uniform,uniform"]), "twice");
    // A mixture's options without a mixture, and dual sparsity's with one, would be ignored.
    assert_refused_by_clap(&lacuna(&["eval", "--tree", "2x2"]), "--moe");
    assert_refused_by_clap(&lacuna(&["eval", "--channel-budget", "0.5"]), "--moe");
    assert_refused_by_clap(&lacuna(&["eval", "--moe", "16x4", "--levels", "30"]), "cannot be used with");
    assert_refused_by_clap(&lacuna(&["eval", "--moe", "16x4", "--out", "x"]), "cannot be used with");
    assert_refused_by_clap(&lacuna(&["compile", "smollm2-135m", "--tree", "2x2", "-o", o]), "--moe");
    assert_refused_by_clap(&lacuna(&["compile", "smollm2-135m", "--policies", "naive", "-o", o]), "--moe");
    let moe_with = |flag: &str| lacuna(&["compile", "smollm2-135m", "--moe", "16x8", flag, "30", "-o", o]);
    assert_refused_by_clap(&moe_with("--weight-sparsity"), "cannot be used with");
    assert_refused_by_clap(&moe_with("--held-out-docs"), "cannot be used with");
    let twice = ["compile", "smollm2-135m", "--moe", "16x8", "--policies", "naive,budget,naive", "-o", o];
    assert_clean_error(&lacuna(&twice), "--policies names naive twice");
    assert_clean_error(&lacuna(&["eval", "--moe", "16x8", "--policies", "budget,budget"]), "names budget twice");
    assert_clean_error(
        &lacuna(&["compile", "smollm2-135m", "--moe", "16x8", "--generate", "0", "-o", o]),
        "--generate",
    );
    assert_clean_error(
        &lacuna(&["compile", "smollm2-135m", "--moe", "16x8", "--expert-budget", "0", "-o", o]),
        "--expert-budget",
    );
}

/// `simulate DIR` on a small hand-checked MoE trace (the fuzz seed): a row per policy, the tiny
/// arch's limits applied, and the directory's contents checked first.
#[test]
fn a_moe_trace_directory_simulates_on_the_expert_unit_and_bad_ones_are_refused() {
    let out = tempfile::tempdir().unwrap();
    let d = out.path().join("moe");
    std::fs::create_dir_all(&d).unwrap();
    let seed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/moe_trace/tiny.json")).unwrap();
    std::fs::write(d.join(lacuna_spec::moe_trace::FILE), &seed).unwrap();
    let dir = d.to_str().unwrap();
    for arch in ["edge", "tiny"] {
        let o = lacuna(&["simulate", dir, "--arch", arch, "--json"]);
        assert!(o.status.success(), "{arch}: {}", stderr(&o));
        let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let t = lacuna_spec::moe_trace::MoeTrace::read(&seed).unwrap();
        assert_eq!(r["policies"].as_array().unwrap().len(), t.policies.len());
        assert!(r["policies"][0]["latency_per_token_us"].as_f64().unwrap() > 0.0, "{r}");
    }
    // A trace that does not read is refused with the file's name.
    std::fs::write(d.join(lacuna_spec::moe_trace::FILE), &seed[..seed.len() / 2]).unwrap();
    assert_clean_error(&lacuna(&["simulate", dir]), "moe_trace.json");
    // A directory with a program too is ambiguous.
    std::fs::write(d.join(lacuna_spec::moe_trace::FILE), &seed).unwrap();
    std::fs::write(d.join("program.json"), "{}").unwrap();
    assert_clean_error(&lacuna(&["simulate", dir]), "holds both a program");
}

/// `compile --moe` on the real model (small calibration): the MoE trace of two policies, read
/// back by the spec's checked reader, its steps the tokens generated.
#[test]
fn a_real_model_compiles_to_the_moe_trace_of_its_policies() {
    if common::skip_without_smollm2() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let d = out.path().join("moe");
    let args = [
        "compile",
        "smollm2-135m",
        "--moe",
        "16x8",
        "--tree",
        "2x2",
        "--calibration-docs",
        "12",
        "--max-tokens",
        "64",
        "--generate",
        "3",
        "--policies",
        "naive,coalesced-calibrated",
        "-o",
        d.to_str().unwrap(),
    ];
    let o = lacuna(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("coalesced-calibrated"), "{}", stdout(&o));
    let bytes = std::fs::read(d.join(lacuna_spec::moe_trace::FILE)).unwrap();
    let t = lacuna_spec::moe_trace::MoeTrace::read(&bytes).unwrap();
    assert!(t.model.contains("MoEfication"), "{}", t.model);
    assert_eq!((t.layers, t.moe.experts, t.moe.top_k, t.tree.to_string()), (30, 16, 8, "2x2".to_string()));
    let names: Vec<String> = t.policies.iter().map(|p| p.policy.to_string()).collect();
    assert_eq!(names, ["naive", "coalesced-calibrated"]);
    for p in &t.policies {
        let committed: usize = p.passes[1..].iter().map(|s| s.accepted.len()).sum();
        assert!(committed >= 3, "{}: {committed} tokens committed", p.policy);
        assert_eq!(p.passes[0].tokens.len(), 5, "The capital of France is");
    }

    // The trace through the expert unit's cycle model: one row per policy, its numbers the
    // unit's (the scope says what they leave out).
    let o = lacuna(&["simulate", d.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(r["scope"].as_str().unwrap().contains("expert unit only"), "{r}");
    let rows = r["policies"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, p) in rows.iter().zip(&t.policies) {
        assert_eq!(row["policy"], p.policy.to_string());
        let generated: usize = p.passes[1..].iter().map(|s| s.accepted.len()).sum();
        assert_eq!(row["generated"], generated);
        for key in ["latency_per_token_us", "energy_per_token_uj", "expert_bytes_per_token", "tokens_per_step"] {
            assert!(row[key].as_f64().unwrap() > 0.0, "{key}: {row}");
        }
        // The unit reads at least the trace's channel bytes of the steps (bursts round up;
        // the statistics and means come on top).
        let step_bytes: u64 = p.passes[1..].iter().flat_map(|s| &s.blocks).map(|b| t.block_bytes(b)).sum();
        let read = row["counters"]["channel_bytes"].as_u64().unwrap()
            + row["counters"]["buffer_hits"].as_u64().unwrap() * lacuna_spec::a8w4::channel_bytes(t.hidden);
        assert!(read >= step_bytes, "{}: {read} < {step_bytes}", p.policy);
    }
    let naive = rows[0]["expert_bytes_per_token"].as_f64().unwrap();
    let coalesced = rows[1]["expert_bytes_per_token"].as_f64().unwrap();
    assert!(coalesced < naive, "coalescing loads fewer bytes a token: {coalesced} vs {naive}");
    let files = out.path().join("report");
    let table = lacuna(&["simulate", d.to_str().unwrap(), "--out", files.to_str().unwrap()]);
    assert!(stdout(&table).contains("vs naive"), "{}", stdout(&table));
    let svg = std::fs::read_to_string(files.join("policies.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("coalesced-calibrated"), "the plot names the policies");
    let csv = std::fs::read_to_string(files.join("simulate_moe.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "a header and a line per policy: {csv}");
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(files.join("simulate_moe.json")).unwrap()).unwrap();
    assert_eq!(back["policies"].as_array().unwrap().len(), 2);
    assert_clean_error(&lacuna(&["simulate", d.to_str().unwrap(), "--x", "x.npy"]), "does not apply to a MoE trace");
}

/// The real model end to end through the CLI: compile (small calibration), simulate the
/// program's own trace and the committed one, and refuse a corrupted trace and program.
#[test]
fn a_real_model_compiles_and_its_decode_trace_simulates_from_the_command_line() {
    if common::skip_without_smollm2() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("w50a50");
    let d = dir.to_str().unwrap();
    let small = ["--calibration-docs", "4", "--held-out-docs", "2", "--max-tokens", "32", "--generate", "1"];
    let mut args = vec!["compile", "smollm2-135m", "--weight-sparsity", "50", "--act-sparsity", "50", "-o", d];
    args.extend(small);
    let o = lacuna(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("50 % pruned (wanda)"), "{}", stdout(&o));
    // Half the block weights pruned: RLC-CSC pays there; the unpruned LM head is a gemv job.
    let layout = "layout         auto: 1 gemv jobs (dense panels), 210 spmspv (RLC-CSC): output";
    assert!(stdout(&o).contains(layout), "{}", stdout(&o));
    let o = lacuna(&["simulate", d, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let steps = v["steps"].as_array().unwrap();
    let jobs: Vec<&str> = steps[0]["layers"].as_array().unwrap().iter().map(|l| l["job"].as_str().unwrap()).collect();
    assert_eq!((jobs[0], jobs[210]), ("spmspv", "gemv"), "blk.0.attn_q and the LM head");
    assert_eq!(steps.len(), 5, "The capital of France is: 5 prompt steps");
    assert_eq!(steps[0]["layers"].as_array().unwrap().len(), 211);
    assert!(v["scope"].as_str().unwrap().contains("attention"));
    for s in steps {
        let units = s["units"].as_array().unwrap();
        let names: Vec<&str> = units.iter().map(|u| u["unit"].as_str().unwrap()).collect();
        assert_eq!(names, ["core", "vector_unit"]);
        let sum: u64 = units.iter().map(|u| u["cycles"].as_u64().unwrap()).sum();
        assert_eq!(sum, s["serial_cycles"].as_u64().unwrap(), "{s}");
        assert!(s["cycles"].as_u64().unwrap() <= sum);
        for key in ["busy_cycles", "dram_bytes", "energy_pj", "jobs", "stalls"] {
            assert!(units.iter().all(|u| !u[key].is_null()), "{key}");
        }
    }
    assert!(stdout(&lacuna(&["simulate", d])).contains("vector_unit"));
    // Its timeline: every step, and on each unit's track the step's jobs, within the step.
    let tl = out.path().join("timeline.json");
    let o = lacuna(&["simulate", d, "--timeline", tl.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&tl).unwrap()).unwrap();
    let spans: Vec<&serde_json::Value> =
        t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").collect();
    let on = |cat: &str| spans.iter().filter(|e| e["cat"] == cat).count();
    assert_eq!(on("decode step"), 5);
    assert_eq!(on("core"), 5 * (211 + 2 * 30), "every linear layer and attention's two core jobs a step");
    assert!(on("vector_unit") > 5 * 30 * 5);
    assert_clean_error(&lacuna(&["simulate", d, "--mem-trace", tl.to_str().unwrap()]), "--mem-trace");
    let committed = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/smollm2-135m-w50-a50.lctr");
    let o = lacuna(&["simulate", d, "--trace", committed]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("lm_head"), "{}", stdout(&o));
    // A corrupted trace and a corrupted image: one clear line each.
    let mut bytes = std::fs::read(committed).unwrap();
    bytes[100] ^= 1;
    let bad = out.path().join("bad.lctr");
    std::fs::write(&bad, &bytes).unwrap();
    assert_clean_error(&lacuna(&["simulate", d, "--trace", bad.to_str().unwrap()]), "CRC");
    let img = dir.join("image.bin");
    let mut image = std::fs::read(&img).unwrap();
    image[5000] ^= 1;
    std::fs::write(&img, &image).unwrap();
    assert_clean_error(&lacuna(&["simulate", d]), "image.bin: SHA-256");
}

/// `eval` end to end on a small text: one level, its perplexity and agreement beside the
/// simulated decode step (the README's `eval` over four levels and whole texts takes minutes).
#[test]
fn eval_reports_accuracy_beside_speed_on_a_small_text() {
    if common::skip_without_smollm2() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = lacuna(&[
        "eval",
        "smollm2-135m",
        "--levels",
        "50",
        "--docs",
        "1",
        "--calibration-docs",
        "1",
        "--max-tokens",
        "16",
        "--numerics",
        "f32",
        "--json",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let row = &v["rows"][0];
    assert_eq!(row["level_percent"], 50.0);
    let ppl = row["perplexity"].as_f64().unwrap();
    assert!(ppl.is_finite() && ppl > 1.0, "{row}");
    let agree = row["top1_agreement_with_dense"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&agree), "{row}");
    assert!(row["perplexity_core"].is_null(), "--numerics f32 measures f32 products only: {row}");
    let speedup = row["speedup_vs_dense"].as_f64().unwrap();
    assert!(speedup > 1.0 && speedup < 10.0, "50/50 must be faster than dense, within reason: {row}");
    assert!(row["energy_uj_per_token"].as_f64().unwrap() < row["dense_energy_uj_per_token"].as_f64().unwrap());
    assert!(out.path().join("eval.json").exists() && out.path().join("eval.csv").exists());
}

/// `eval --front` end to end on a few tokens: one point under the sensitivity allocation (OWL
/// per block, the measured per-kind activation levels), its front and target entries, and the
/// JSON, CSV and SVG written.
#[test]
fn eval_front_reports_each_point_with_its_allocation_and_writes_the_figure() {
    if common::skip_without_smollm2() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = lacuna(&[
        "eval",
        "smollm2-135m",
        "--front",
        "--allocation",
        "sensitivity",
        "--weight-levels",
        "50",
        "--act-levels",
        "50",
        "--tokens",
        "8",
        "--calibration-docs",
        "1",
        "--max-tokens",
        "8",
        "--json",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let p = &v["points"][0];
    assert_eq!((p["allocation"].as_str(), p["weight_sparsity"].as_f64()), (Some("sensitivity"), Some(0.5)), "{p}");
    let blocks: Vec<f64> =
        p["weight_sparsity_by_block"].as_array().unwrap().iter().map(|b| b.as_f64().unwrap()).collect();
    assert_eq!(blocks.len(), 30, "SmolLM2's 30 blocks: {p}");
    assert!((blocks.iter().sum::<f64>() / 30.0 - 0.5).abs() < 1e-9, "OWL keeps the mean: {blocks:?}");
    assert!(blocks.iter().any(|&b| b != 0.5), "and moves blocks off it: {blocks:?}");
    assert_eq!(
        p["act_sparsity_by_kind"].as_object().unwrap().len(),
        5,
        "four kinds of block input and the head's: {p}"
    );
    assert_eq!(p["on_front"], true, "a lone point is on its front");
    assert!(p["speedup_vs_dense"].as_f64().unwrap() > 1.0 && p["perplexity"].as_f64().unwrap() > 1.0, "{p}");
    assert_eq!(v["targets"].as_array().unwrap().len(), 2, "{v}");
    for f in ["front.json", "front.csv", "front.svg"] {
        assert!(out.path().join(f).exists(), "{f}");
    }
    let svg = std::fs::read_to_string(out.path().join("front.svg")).unwrap();
    assert!(svg.contains("sensitivity (Pareto front)"), "the figure names its curve");
}
