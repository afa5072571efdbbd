//! Gemma 3 on tiny random checkpoints: the reader of its GGUF keys and SentencePiece vocabulary,
//! the forward's sliding window, the kernels it adds, and a program built for it. (The real
//! checkpoint against candle: `tests/candle_check.rs`; its tokenizer and a sanity prompt:
//! `tests/real_model.rs`.)

use crate::checkpoint::test_models::{f32_tensors, random_checkpoint};
use crate::checkpoint::Checkpoint;
use crate::forward::{Dense, Forward};
use crate::gguf::{write_gguf, GgufFile, MetaValue};
use crate::kernels::{gelu_tanh, rope_halves};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{Family, Gemma3Shape, LlamaConfig};

/// A tiny Gemma 3 in which every block is local: each block widens what a position sees by
/// `window - 1` positions.
fn all_local(window: usize) -> LlamaConfig {
    let shape = Gemma3Shape { sliding_window: window, global_every: 1000, rope_local_base: 50.0 };
    LlamaConfig { context: 16, family: Family::Gemma3(shape), ..LlamaConfig::tiny_gemma3() }
}

fn last_logits(ckpt: &Checkpoint, tokens: &[u32]) -> Vec<f32> {
    let mut f = Forward::new(ckpt);
    tokens.iter().map(|&t| f.step(TokenId(t), &mut Dense).unwrap()).last().unwrap()
}

#[test]
fn a_sliding_window_hides_what_lies_beyond_its_reach() {
    // Window 2 over 3 blocks: the last of 6 positions sees back to position 2 at most.
    let ckpt = random_checkpoint(&all_local(2), 7);
    let a = last_logits(&ckpt, &[1, 2, 3, 4, 5, 6]);
    assert_eq!(a, last_logits(&ckpt, &[9, 8, 3, 4, 5, 6]), "positions 0 and 1 are out of reach");
    assert_ne!(a, last_logits(&ckpt, &[1, 2, 7, 4, 5, 6]), "position 2 is within reach");
    // The same weights with a window wider than the context see everything.
    let wide = random_checkpoint(&all_local(16), 7);
    assert_eq!(wide.weights, ckpt.weights);
    assert_ne!(last_logits(&wide, &[1, 2, 3, 4, 5, 6]), last_logits(&wide, &[9, 8, 3, 4, 5, 6]));
}

#[test]
fn gelu_and_half_split_rope_compute_their_formulas() {
    // GELU's tanh form at 1, -1 and 0 (PyTorch's gelu(approximate="tanh")).
    assert!((gelu_tanh(1.0) - 0.841_192).abs() < 1e-6);
    assert!((gelu_tanh(-1.0) + 0.158_808).abs() < 1e-6);
    assert_eq!(gelu_tanh(0.0), 0.0);
    // One head of 4: pairs (0, 2) and (1, 3), rotated by position * inv_freq.
    let mut x = [1.0, 2.0, 0.0, 0.0];
    rope_halves(&mut x, 4, &[1.0, 0.5], 1);
    let (s1, c1, s2, c2) = (1f32.sin(), 1f32.cos(), 0.5f32.sin(), 0.5f32.cos());
    assert_eq!(x, [c1, 2.0 * c2, s1, 2.0 * s2]);
}

/// A tiny Gemma 3 GGUF: llama.cpp's `gemma3` keys, an SPM vocabulary (bytes, then `▁a`, `b`,
/// `<bos>`), random F32 weights; the checkpoint it was written from. `extra` replaces keys (an
/// empty array: leaves the key out).
fn tiny_gemma3_gguf(extra: Vec<(&str, MetaValue)>) -> (Checkpoint, Vec<u8>) {
    let c = LlamaConfig { vocab: 260, ..LlamaConfig::tiny_gemma3() };
    let ckpt = random_checkpoint(&c, 3);
    let Family::Gemma3(shape) = &c.family else { unreachable!() };
    let mut tokens: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
    tokens.extend(["\u{2581}a", "b", "<bos>", "<eos>"].map(String::from));
    let u32v = |v: usize| MetaValue::U32(v as u32);
    let mut meta: Vec<(String, MetaValue)> = vec![
        ("general.architecture".into(), MetaValue::String("gemma3".into())),
        ("gemma3.block_count".into(), u32v(c.layers)),
        ("gemma3.embedding_length".into(), u32v(c.hidden)),
        ("gemma3.feed_forward_length".into(), u32v(c.ffn)),
        ("gemma3.attention.head_count".into(), u32v(c.heads)),
        ("gemma3.attention.head_count_kv".into(), u32v(c.kv_heads)),
        ("gemma3.attention.key_length".into(), u32v(c.head_dim)),
        ("gemma3.attention.value_length".into(), u32v(c.head_dim)),
        ("gemma3.attention.layer_norm_rms_epsilon".into(), MetaValue::F32(c.rms_eps)),
        ("gemma3.attention.sliding_window".into(), u32v(shape.sliding_window)),
        ("gemma3.attention.sliding_window_pattern".into(), u32v(shape.global_every)),
        ("gemma3.rope.freq_base".into(), MetaValue::F32(c.rope_base)),
        ("gemma3.rope.freq_base_swa".into(), MetaValue::F32(shape.rope_local_base)),
        ("gemma3.context_length".into(), u32v(c.context)),
        ("tokenizer.ggml.model".into(), MetaValue::String("llama".into())),
        ("tokenizer.ggml.pre".into(), MetaValue::String("default".into())),
        ("tokenizer.ggml.scores".into(), MetaValue::Array((0..260).map(|i| MetaValue::F32(-(i as f32))).collect())),
        (
            "tokenizer.ggml.token_type".into(),
            MetaValue::Array(
                (0..260)
                    .map(|i| {
                        MetaValue::I32(if i < 256 {
                            6
                        } else if i < 258 {
                            1
                        } else {
                            3
                        })
                    })
                    .collect(),
            ),
        ),
        ("tokenizer.ggml.tokens".into(), MetaValue::Array(tokens.into_iter().map(MetaValue::String).collect())),
        ("tokenizer.ggml.bos_token_id".into(), u32v(258)),
        ("tokenizer.ggml.eos_token_id".into(), u32v(259)),
        ("tokenizer.ggml.add_bos_token".into(), MetaValue::Bool(true)),
        ("tokenizer.ggml.add_space_prefix".into(), MetaValue::Bool(false)),
    ];
    for (k, v) in extra {
        meta.retain(|(m, _)| m != k);
        // A unit value: the key is left out.
        if v != MetaValue::Array(Vec::new()) {
            meta.push((k.into(), v));
        }
    }
    let tensors = f32_tensors(&ckpt);
    (ckpt, write_gguf(&meta, &tensors))
}

#[test]
fn a_gemma3_gguf_reads_into_its_graph_weights_and_tokenizer() {
    let (want, bytes) = tiny_gemma3_gguf(vec![]);
    let got = Checkpoint::from_gguf(&GgufFile::parse(bytes, "g.gguf").unwrap()).unwrap();
    assert_eq!(got.graph, want.graph);
    assert_eq!(got.weights, want.weights);
    // <bos>, then "▁a" "b" "▁a" (a space is ▁), then "c" as its byte.
    let ids: Vec<u32> = got.tokenizer.encode(" ab ac").iter().map(|t| t.0).collect();
    assert_eq!(ids, [258, 256, 257, 256, b'c' as u32]);
    assert_eq!(got.tokenizer.decode(&got.tokenizer.encode(" ab ac")[1..]), " ab ac");
    assert_eq!(got.tokenizer.eos, Some(TokenId(259)));
}

#[test]
fn gemma3_keys_the_graph_cannot_honour_are_refused() {
    let read = |extra: Vec<(&str, MetaValue)>| {
        let (_, bytes) = tiny_gemma3_gguf(extra);
        Checkpoint::from_gguf(&GgufFile::parse(bytes, "g.gguf").unwrap()).map(|_| ()).map_err(|e| e.to_string())
    };
    let cases: Vec<(Vec<(&str, MetaValue)>, &str)> = vec![
        (vec![("gemma3.final_logit_softcapping", MetaValue::F32(30.0))], "soft-capping"),
        (vec![("gemma3.attention.value_length", MetaValue::U32(4))], "value_length 4"),
        (
            vec![
                ("gemma3.rope.scaling.type", MetaValue::String("linear".into())),
                ("gemma3.rope.scaling.factor", MetaValue::F32(8.0)),
            ],
            "RoPE scaling",
        ),
        (vec![("gemma3.attention.sliding_window_pattern", MetaValue::U32(0))], "global every 0"),
        (vec![("gemma3.expert_count", MetaValue::U32(4))], "mixture of experts"),
        (vec![("tokenizer.ggml.pre", MetaValue::String("gemma4".into()))], "tokenizer.ggml.pre"),
        (vec![("tokenizer.ggml.scores", MetaValue::Array(vec![MetaValue::F32(0.0)]))], "scores"),
        (vec![("tokenizer.ggml.bos_token_id", MetaValue::U32(999))], "bos_token_id"),
        (vec![("tokenizer.ggml.add_space_prefix", MetaValue::Bool(true))], "add_space_prefix"),
        // llama.cpp's default for a SentencePiece vocabulary without the key is a space prefix.
        (vec![("tokenizer.ggml.add_space_prefix", MetaValue::Array(Vec::new()))], "add_space_prefix"),
        (vec![("gemma3.rope.freq_base", MetaValue::Array(Vec::new()))], "freq_base is missing"),
    ];
    for (extra, says) in cases {
        let e = read(extra).unwrap_err();
        assert!(e.contains(says) && e.contains("g.gguf"), "{says}: {e}");
    }
    read(vec![]).unwrap();
}

#[test]
fn a_gemma3_program_passes_the_program_check() {
    use crate::passes::{act_thresholds::Thresholds, lower::lower_linears};
    let arch = lacuna_spec::Arch::preset("tiny").unwrap();
    let ckpt = random_checkpoint(&LlamaConfig::tiny_gemma3(), 5);
    let lowered = lower_linears(&ckpt, &Thresholds::default(), &arch, Default::default()).unwrap();
    let settings = lacuna_spec::program::Settings {
        weight_sparsity: 0.0,
        prune_method: "wanda".into(),
        act_sparsity: 0.0,
        allocation: "uniform".into(),
        layout: lacuna_spec::job::Layout::Auto,
        calibration: "none".into(),
        calibration_tokens: 0,
        held_out_act_sparsity: 0.0,
        held_out: "none".into(),
    };
    let (program, _image) =
        crate::program::assemble(&ckpt.graph, &lowered, &arch, "tiny gemma3 (random)".into(), settings);
    lacuna_spec::program::check::check_manifest(&program, &arch).unwrap();
    assert_eq!(program.layers.len(), ckpt.graph.linears().count());
}
