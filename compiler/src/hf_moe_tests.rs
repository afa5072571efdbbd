//! Tests of the Mixtral layout (`crate::hf_moe`): a mixture written by `write_dir` reads back to
//! the checkpoint that was written, runs as candle's `mixtral` (an implementation no one here
//! wrote) runs the same directory, and every field that would change the computation is honoured
//! or refused.

use crate::checkpoint::test_models::random_checkpoint;
use crate::checkpoint::{Checkpoint, CheckpointError};
use crate::forward::{Dense, Forward};
use crate::hf::{hf_tensor_name, open, write_dir};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{Gating, LlamaConfig};

/// The tiny mixture (4 experts of 6, top 2) in a shape Mixtral's layout holds: one FFN size, an
/// output head of its own.
fn tiny_mixtral() -> LlamaConfig {
    let c = LlamaConfig::tiny_moe();
    LlamaConfig { ffn: c.moe.unwrap().expert_ffn, tied_output: false, ..c }
}

fn logits(ckpt: &Checkpoint, tokens: &[u32]) -> Vec<Vec<f32>> {
    let mut f = Forward::new(ckpt);
    tokens.iter().map(|&t| f.step(TokenId(t), &mut Dense).unwrap()).collect()
}

const TOKENS: [u32; 8] = [1, 5, 2, 9, 0, 7, 3, 3];

/// The message of a refused directory.
fn refused(dir: &std::path::Path) -> String {
    match open(dir) {
        Err(e @ CheckpointError::Invalid { .. }) => e.to_string(),
        Err(e) => panic!("expected an invalid-checkpoint error, got {e}"),
        Ok(_) => panic!("{} was read", dir.display()),
    }
}

/// Writes `ckpt`, then edits its config.json.
fn written_with(
    ckpt: &Checkpoint,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_dir(ckpt, dir.path(), 1).unwrap();
    let path = dir.path().join("config.json");
    let mut config: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(config.as_object_mut().unwrap());
    std::fs::write(&path, config.to_string()).unwrap();
    dir
}

#[test]
fn mixture_tensors_take_the_names_transformers_gives_mixtral() {
    let name = |g: &str| hf_tensor_name(g);
    assert_eq!(name("blk.3.ffn_gate_inp.weight").as_deref(), Some("model.layers.3.block_sparse_moe.gate.weight"));
    assert_eq!(name("blk.3.ffn_gate.7.weight").as_deref(), Some("model.layers.3.block_sparse_moe.experts.7.w1.weight"));
    assert_eq!(name("blk.3.ffn_up.7.weight").as_deref(), Some("model.layers.3.block_sparse_moe.experts.7.w3.weight"));
    assert_eq!(name("blk.3.ffn_down.7.weight").as_deref(), Some("model.layers.3.block_sparse_moe.experts.7.w2.weight"));
    assert_eq!(name("blk.3.ffn_down.x.weight"), None);
    assert_eq!(name("blk.x.ffn_gate_inp.weight"), None);
    assert_eq!(name("blk.3.ffn_exp_mean.weight"), None, "our extension has no Hugging Face name");
    let g = lacuna_spec::graph::Graph::decoder(&tiny_mixtral());
    let names: std::collections::HashSet<String> = g.weights.iter().map(|w| name(&w.tensor).expect("named")).collect();
    assert_eq!(names.len(), g.weights.len(), "every tensor its own name");
}

#[test]
fn a_mixture_written_in_mixtrals_layout_reads_back_to_the_checkpoint_that_was_written() {
    let written = random_checkpoint(&tiny_mixtral(), 7);
    for shards in [1, 3] {
        let dir = tempfile::tempdir().unwrap();
        write_dir(&written, dir.path(), shards).unwrap();
        let config: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("config.json")).unwrap()).unwrap();
        assert_eq!(config["model_type"], "mixtral");
        assert_eq!(config["num_local_experts"], 4);
        assert_eq!(config["num_experts_per_tok"], 2);
        let read = open(dir.path()).unwrap();
        assert_eq!(read.graph, written.graph, "{shards} shards");
        assert_eq!(read.weights, written.weights, "{shards} shards");
        assert_eq!(logits(&read, &TOKENS), logits(&written, &TOKENS));
    }
}

#[test]
fn the_mixture_runs_as_candles_mixtral_runs_the_same_directory() {
    use candle_core::{DType, Device, Tensor};
    let written = random_checkpoint(&tiny_mixtral(), 11);
    let dir = tempfile::tempdir().unwrap();
    write_dir(&written, dir.path(), 1).unwrap();
    let ours = logits(&open(dir.path()).unwrap(), &TOKENS);
    // candle's config needs a window (ours is null: none) and its attention kernel choice.
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("config.json")).unwrap()).unwrap();
    config["sliding_window"] = serde_json::json!(tiny_mixtral().context);
    config["use_flash_attn"] = serde_json::json!(false);
    let config: candle_transformers::models::mixtral::Config = serde_json::from_value(config).unwrap();
    let device = Device::Cpu;
    let bytes = std::fs::read(dir.path().join("model.safetensors")).unwrap();
    let vb = candle_nn::VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device).unwrap();
    let mut theirs = candle_transformers::models::mixtral::Model::new(&config, vb).unwrap();
    let mut largest = 0f32;
    for (pos, (&t, ours)) in TOKENS.iter().zip(&ours).enumerate() {
        let x = Tensor::new(&[t], &device).unwrap().unsqueeze(0).unwrap();
        let b: Vec<f32> = theirs.forward(&x, pos).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(b.len(), ours.len());
        largest = ours.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(largest, f32::max);
    }
    // f32 throughout, summed in other orders: the logits (of size ~10 here) agree to rounding.
    assert!(largest < 1e-4, "largest logit difference {largest}");
}

#[test]
fn a_sliding_window_shorter_than_the_context_bounds_the_context() {
    let ckpt = random_checkpoint(&tiny_mixtral(), 1);
    let dir = written_with(&ckpt, |c| {
        c.insert("sliding_window".into(), 16.into());
    });
    let read = open(dir.path()).unwrap();
    assert_eq!(read.graph.config.context, 16, "attention never reaches past the window");
    let dir = written_with(&ckpt, |c| {
        c.insert("sliding_window".into(), 4096.into());
    });
    assert_eq!(open(dir.path()).unwrap().graph.config.context, tiny_mixtral().context);
    // A dense Mistral is Llama with a window.
    let dense = random_checkpoint(&LlamaConfig::tiny(), 1);
    let dir = written_with(&dense, |c| {
        c.insert("model_type".into(), "mistral".into());
        c.insert("sliding_window".into(), 32.into());
    });
    let read = open(dir.path()).unwrap();
    assert_eq!((read.graph.config.context, read.graph.config.moe), (32, None));
}

#[test]
fn configs_whose_experts_the_graph_cannot_run_are_refused_with_the_reason() {
    let ckpt = random_checkpoint(&tiny_mixtral(), 1);
    let dense = random_checkpoint(&LlamaConfig::tiny(), 1);
    type Edit = fn(&mut serde_json::Map<String, serde_json::Value>);
    let cases: [(&Checkpoint, Edit, &str); 10] = [
        (&ckpt, |c| _ = c.remove("rope_theta"), "without rope_theta"),
        (&ckpt, |c| _ = c.remove("sliding_window"), "without sliding_window"),
        (&ckpt, |c| _ = c.insert("model_type".into(), "olmoe".into()), "q_norm, k_norm"),
        (&ckpt, |c| _ = c.insert("model_type".into(), "qwen2_moe".into()), "shared expert"),
        (&ckpt, |c| _ = c.insert("model_type".into(), "gpt2".into()), "llama, mistral, mixtral only"),
        (&ckpt, |c| _ = c.remove("num_local_experts"), "without num_local_experts"),
        (&ckpt, |c| _ = c.insert("num_experts_per_tok".into(), 5.into()), "out of range"),
        (&ckpt, |c| _ = c.insert("num_experts".into(), 4.into()), "num_experts in a mixtral config"),
        (&dense, |c| _ = c.insert("num_experts_per_tok".into(), 2.into()), "llama config with expert fields"),
        (&dense, |c| _ = c.insert("sliding_window".into(), 8.into()), "llama config with sliding_window"),
    ];
    for (ckpt, edit, expected) in cases {
        let dir = written_with(ckpt, edit);
        let e = refused(dir.path());
        assert!(e.contains(expected), "expected '{expected}' in: {e}");
    }
}

#[test]
fn mixtures_without_a_hugging_face_layout_are_not_written() {
    let mut unit = tiny_mixtral();
    unit.moe.as_mut().unwrap().gating = Gating::UnitTopK;
    let mut mean = tiny_mixtral();
    mean.moe.as_mut().unwrap().unrouted_mean = true;
    let two_sizes = LlamaConfig::tiny_moe();
    for (c, expected) in [(unit, "UnitTopK"), (mean, "mean outputs"), (two_sizes, "one size")] {
        let dir = tempfile::tempdir().unwrap();
        let e = write_dir(&random_checkpoint(&c, 1), dir.path(), 1).unwrap_err().to_string();
        assert!(e.contains(expected), "expected '{expected}' in: {e}");
    }
}
