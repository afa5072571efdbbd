//! Tests of the Hugging Face reader (`crate::hf`): round trips through `write_dir`, the RoPE row
//! permutation against Hugging Face's rotate-half, and every refused directory.

use super::*;
use crate::checkpoint::test_models::{random_checkpoint, tiny_tokenizer};
use lacuna_spec::graph::LlamaConfig;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The error as the user sees it (the file, then what is wrong).
fn message(e: CheckpointError) -> String {
    assert!(matches!(e, CheckpointError::Invalid { .. }), "expected an invalid-checkpoint error, got {e}");
    e.to_string()
}

#[test]
fn every_tensor_of_the_graph_has_its_own_hugging_face_name() {
    let config = LlamaConfig { tied_output: false, ..LlamaConfig::tiny() };
    let g = Graph::decoder(&config);
    let names: std::collections::HashSet<String> =
        g.weights.iter().map(|w| hf_tensor_name(&w.tensor).expect("named")).collect();
    assert_eq!(names.len(), g.weights.len());
    assert_eq!(hf_tensor_name("blk.12.attn_k.weight").as_deref(), Some("model.layers.12.self_attn.k_proj.weight"));
    assert_eq!(hf_tensor_name("blk.x.attn_k.weight"), None);
    assert_eq!(hf_tensor_name("blk.0.attn_k.bias"), None);
}

/// Hugging Face's Llama RoPE: dimension `i` of a head rotates with dimension `i + d/2`.
fn rotate_half_rope(x: &mut [f32], d: usize, inv_freq: &[f32], position: usize) {
    for head in x.chunks_exact_mut(d) {
        for (i, &f) in inv_freq.iter().enumerate() {
            let (sin, cos) = (position as f32 * f).sin_cos();
            let (a, b) = (head[i], head[i + d / 2]);
            head[i] = a * cos - b * sin;
            head[i + d / 2] = b * cos + a * sin;
        }
    }
}

#[test]
fn permuted_rows_under_interleaved_rope_give_hugging_faces_rotate_half_rope() {
    let (heads, d, k) = (3, 8, 5);
    let inv_freq: Vec<f32> = (0..d / 2).map(|i| 1.0 / 10_000f32.powf((2 * i) as f32 / d as f32)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let w_hf =
        Matrix { rows: heads * d, cols: k, data: (0..heads * d * k).map(|_| rng.random_range(-1.0..1.0)).collect() };
    let x: Vec<f32> = (0..k).map(|_| rng.random_range(-1.0..1.0)).collect();
    let matvec =
        |m: &Matrix| -> Vec<f32> { (0..m.rows).map(|r| m.row(r).iter().zip(&x).map(|(a, b)| a * b).sum()).collect() };
    let w_il = rope_rows_to_interleaved(&w_hf, heads);
    for position in [0, 1, 17] {
        let mut q_hf = matvec(&w_hf);
        rotate_half_rope(&mut q_hf, d, &inv_freq, position);
        let mut q_il = matvec(&w_il);
        crate::kernels::rope(&mut q_il, d, &inv_freq, position);
        // The same rotated vector, in the interleaved order: every dot product (attention
        // score) between such vectors is the same.
        let back = rope_rows_to_half_split(&Matrix { rows: heads * d, cols: 1, data: q_il }, heads);
        assert_eq!(back.data, q_hf, "position {position}");
    }
    assert_eq!(rope_rows_to_half_split(&w_il, heads), w_hf);
}

#[test]
fn a_checkpoint_written_in_hugging_face_layout_reads_back_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    for (config, shards) in [(LlamaConfig::tiny(), 1), (LlamaConfig { tied_output: false, ..LlamaConfig::tiny() }, 3)] {
        let ckpt = random_checkpoint(&config, 1);
        let at = dir.path().join(format!("shards{shards}"));
        write_dir(&ckpt, &at, shards).unwrap();
        assert_eq!(at.join("model.safetensors.index.json").exists(), shards > 1);
        let back = Checkpoint::open(&at).unwrap();
        assert_eq!(back.graph, ckpt.graph);
        assert_eq!(back.weights, ckpt.weights);
        assert_eq!(back.name, "tiny");
        assert_eq!(back.tokenizer.eos, Some(TokenId(6)));
        assert_eq!(back.tokenizer.encode("ab a<|end|>c"), ckpt.tokenizer.encode("ab a<|end|>c"));
        // Opened through one of its files as well.
        assert_eq!(Checkpoint::open(&at.join("config.json")).unwrap().weights, ckpt.weights);
    }
}

#[test]
fn a_transformers_5_config_gives_its_rope_theta_from_rope_parameters() {
    // transformers 5 moved rope_theta into rope_parameters; once it was ignored (10,000 used,
    // wrong logits, no error).
    let dir = tempfile::tempdir().unwrap();
    write_dir(&random_checkpoint(&LlamaConfig::tiny(), 3), dir.path(), 1).unwrap();
    edit_json(&dir.path().join("config.json"), |v| {
        v.as_object_mut().unwrap().remove("rope_theta");
        v["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": 100000.0});
    });
    assert_eq!(Checkpoint::open(dir.path()).unwrap().graph.config.rope_base, 100_000.0);
}

#[test]
fn merges_as_pairs_read_like_merges_as_strings() {
    let dir = tempfile::tempdir().unwrap();
    let mut json = tokenizer_json(&tiny_tokenizer());
    json["model"]["merges"] = serde_json::json!([["a", "b"], ["Ġ", "a"]]);
    let p = dir.path().join("tokenizer.json");
    std::fs::write(&p, json.to_string()).unwrap();
    let t = read_tokenizer(&p, None).unwrap();
    assert_eq!(t.encode("ab a"), tiny_tokenizer().encode("ab a"));
    assert_eq!(t.encode("ab a"), vec![TokenId(4), TokenId(5)]);
}

/// Writes a valid tiny checkpoint, lets `spoil` change one file, and returns the error.
fn spoiled(spoil: impl Fn(&Path)) -> String {
    let dir = tempfile::tempdir().unwrap();
    write_dir(&random_checkpoint(&LlamaConfig::tiny(), 2), dir.path(), 1).unwrap();
    spoil(dir.path());
    message(Checkpoint::open(dir.path()).expect_err("a spoiled checkpoint must be refused"))
}

fn edit_json(path: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, v.to_string()).unwrap();
}

#[test]
fn bad_checkpoint_directories_are_refused_with_what_is_wrong() {
    let config = |edit: fn(&mut serde_json::Value)| move |d: &Path| edit_json(&d.join("config.json"), edit);
    let cases: Vec<(Box<dyn Fn(&Path)>, &str)> = vec![
        (Box::new(|d: &Path| std::fs::remove_file(d.join("config.json")).unwrap()), "config.json"),
        (Box::new(config(|v| v["rope_scaling"] = serde_json::json!({"type": "yarn"}))), "rope_scaling"),
        (Box::new(config(|v| v["model_type"] = "gemma3".into())), "model_type"),
        (
            Box::new(config(|v| v["rope_parameters"] = serde_json::json!({"rope_type": "llama3", "factor": 8.0}))),
            "rope_parameters.",
        ),
        (
            Box::new(config(|v| {
                v["rope_theta"] = 10000.0.into();
                v["rope_parameters"] = serde_json::json!({"rope_type": "default", "rope_theta": 500000.0});
            })),
            "disagree",
        ),
        (
            Box::new(config(|v| {
                v.as_object_mut().unwrap().remove("rope_theta");
                v["rope_parameters"] = serde_json::json!({"rope_theta": -1.0});
            })),
            "out of range",
        ),
        (Box::new(config(|v| v["hidden_act"] = "gelu".into())), "hidden_act"),
        (Box::new(config(|v| v["attention_bias"] = true.into())), "bias"),
        (Box::new(config(|v| v["num_key_value_heads"] = 3.into())), "attention shape"),
        (Box::new(config(|v| v["hidden_size"] = "8".into())), "not a Llama config.json"),
        (Box::new(config(|v| v["intermediate_size"] = 17.into())), "shape"),
        (Box::new(config(|v| v["vocab_size"] = 4.into())), "tokenizer has 7 tokens"),
        (Box::new(|d: &Path| std::fs::remove_file(d.join("model.safetensors")).unwrap()), "no model.safetensors"),
        (
            Box::new(|d: &Path| {
                let p = d.join("model.safetensors");
                let b = std::fs::read(&p).unwrap();
                std::fs::write(&p, &b[..b.len() - 3]).unwrap();
            }),
            "not a valid safetensors file",
        ),
        (
            Box::new(|d: &Path| {
                let views = [("x", TensorView::new(Dtype::I64, vec![1], &[0u8; 8]).unwrap())];
                std::fs::write(d.join("model.safetensors"), safetensors::serialize(views, None).unwrap()).unwrap();
            }),
            "is missing",
        ),
        (
            Box::new(|d: &Path| {
                let b = [0u8; 8 * 10 * 8];
                let views = [("model.embed_tokens.weight", TensorView::new(Dtype::I64, vec![10, 8], &b).unwrap())];
                std::fs::write(d.join("model.safetensors"), safetensors::serialize(views, None).unwrap()).unwrap();
            }),
            "type I64",
        ),
        (
            Box::new(|d: &Path| {
                let index = serde_json::json!({"weight_map": {}});
                std::fs::write(d.join("model.safetensors.index.json"), index.to_string()).unwrap();
            }),
            "is in no shard of the index",
        ),
        (
            Box::new(|d: &Path| {
                let index = serde_json::json!({"weight_map": {"model.embed_tokens.weight": "../x.safetensors"}});
                std::fs::write(d.join("model.safetensors.index.json"), index.to_string()).unwrap();
            }),
            "not a file name of this directory",
        ),
        (
            Box::new(|d: &Path| {
                edit_json(&d.join("tokenizer.json"), |v| v["pre_tokenizer"] = serde_json::json!({"type": "Whitespace"}))
            }),
            "pre-tokenizer",
        ),
        (
            Box::new(|d: &Path| edit_json(&d.join("tokenizer.json"), |v| v["model"]["vocab"]["zz"] = 9.into())),
            "ids must be 0..n",
        ),
        (
            Box::new(|d: &Path| {
                edit_json(&d.join("tokenizer.json"), |v| {
                    v["added_tokens"][0]["id"] = u32::MAX.into();
                })
            }),
            "ids must be 0..n",
        ),
        (
            Box::new(|d: &Path| edit_json(&d.join("tokenizer.json"), |v| v["model"]["vocab"]["zz"] = 0.into())),
            "token id 0 is both",
        ),
        (
            Box::new(|d: &Path| {
                edit_json(&d.join("tokenizer.json"), |v| v["model"]["merges"] = serde_json::json!(["ab"]))
            }),
            "not two symbols",
        ),
    ];
    for (spoil, needle) in cases {
        let m = spoiled(spoil);
        assert!(m.contains(needle), "expected {needle:?} in {m:?}");
    }
}
