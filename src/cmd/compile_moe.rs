//! `lacuna compile MODEL --moe ExK --tree DxW -o DIR`: the MoE trace of a mixture's speculative
//! decoding, for the expert unit (issue 16). The mixture is derived from the dense model
//! (MoEfication, labelled so) with its calibration statistics, as `lacuna eval --moe` derives it;
//! every policy then generates from the prompt and each pass is recorded: the tree, each token's
//! routing, the experts and channels each block loads (`DIR/moe_trace.json`, read and checked by
//! `lacuna_spec::moe_trace::MoeTrace::read`).
//!
//! A mixture's program for the core (its attention and router layers) and the experts' A8W4
//! image come with the expert unit; this writes the trace alone, and says so.

use crate::cmd::eval_moe::{derive_mixture, fortune_docs, MoeFlags, MoeShape};
use anyhow::{bail, Context, Result};
use lacuna_compiler::checkpoint::Checkpoint;
use lacuna_compiler::corpus::Split;
use lacuna_compiler::moe_trace::{summarize, trace_policies, TraceOptions};
use lacuna_spec::moe_trace::FILE;
use lacuna_spec::speculation::a8w4_channel_bytes;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// What `compile --moe` needs of the command line.
pub struct MoeCompileArgs {
    pub model_path: PathBuf,
    pub moe: MoeShape,
    pub flags: MoeFlags,
    pub prompt: String,
    pub generate: usize,
    pub calibration_docs: usize,
    pub max_tokens: usize,
    pub out: PathBuf,
}

pub fn run(a: MoeCompileArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let say = |what: &str| eprintln!("[{:>6.1} s] {what}", start.elapsed().as_secs_f64());
    let dense = Checkpoint::open(&a.model_path)?;
    let c = &dense.graph.config;
    let f = &a.flags;
    let draft = f.draft_for(c)?;
    let prompt = dense.tokenizer.encode(&a.prompt);
    if prompt.is_empty() {
        bail!("--prompt is empty");
    }
    if prompt.len() + a.generate + f.tree.max_nodes() > c.context {
        bail!(
            "the prompt ({} tokens), --generate {} and a tree of {} overrun the context of {}",
            prompt.len(),
            a.generate,
            f.tree,
            c.context
        );
    }
    let calib = fortune_docs(&dense, Split::Calibration, a.calibration_docs, a.max_tokens)?;
    let (mix, stats) = derive_mixture(&dense, a.moe, &calib, f.predictor_rank, &say)?;
    drop(dense);
    let opts = TraceOptions {
        shape: f.tree,
        draft,
        tokens: a.generate,
        expert_budget: f.expert_budget_for(a.moe),
        channel_budget: f.channel_budget,
        reuse: None,
    };
    let trace = trace_policies(&mix, &stats, &f.policies, &prompt, &a.prompt, &opts, &mut |s| say(s))
        .map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&a.out).with_context(|| a.out.display().to_string())?;
    let path = a.out.join(FILE);
    std::fs::write(&path, serde_json::to_vec(&trace)?).with_context(|| path.display().to_string())?;
    say(&format!("wrote {}", path.display()));
    println!("model        {}", trace.model);
    println!("tree         {} (self-draft: blocks {})", trace.tree, trace.draft);
    println!("prompt       {:?} ({} tokens), {} generated", a.prompt, prompt.len(), a.generate);
    println!(
        "bytes        expert weights in A8W4 ({} B a channel), per block and pass",
        a8w4_channel_bytes(trace.hidden)
    );
    println!("program      the trace only: the core's program and the experts' image come with the expert unit");
    let mut t = crate::table::Table::new(&["policy", "steps", "tokens/step", "expert KB/token", "prefill expert KB"]);
    for p in &trace.policies {
        let s = summarize(&trace, p);
        t.row(vec![
            p.policy.to_string(),
            s.steps.to_string(),
            format!("{:.2}", s.generated as f64 / s.steps.max(1) as f64),
            format!("{:.1}", s.step_bytes as f64 / s.generated.max(1) as f64 / 1e3),
            format!("{:.1}", s.prefill_bytes as f64 / 1e3),
        ]);
    }
    print!("{}", t.render());
    Ok(ExitCode::SUCCESS)
}
