//! Mixtures of experts in `llama` GGUF files: read in both of llama.cpp's layouts (one tensor per
//! expert, or the experts stacked in one 3-D tensor per part) to the same checkpoint, run by the
//! golden forward as candle's `quantized_llama` (an implementation no one here wrote) runs the
//! same file, and refused where a key would change the computation.

use crate::checkpoint::test_models::random_checkpoint;
use crate::checkpoint::Checkpoint;
use crate::forward::{route, Dense, Forward};
use crate::gguf::{write_gguf, GgmlType, GgufFile, MetaValue, RawTensor};
use crate::tokenizer::TokenId;
use lacuna_spec::graph::{Gating, LlamaConfig};

/// The tiny mixture (4 experts, top 2) with random weights as a GGUF file: experts one tensor
/// each (`stacked` false) or stacked per part (`blk.N.ffn_gate_exps.weight`, dims
/// `[cols, rows, experts]`).
fn tiny_moe_gguf(stacked: bool, extra: Vec<(String, MetaValue)>) -> (Checkpoint, Vec<u8>) {
    let c = LlamaConfig::tiny_moe();
    let m = c.moe.clone().unwrap();
    let ckpt = random_checkpoint(&c, 3);
    let u32v = |v: usize| MetaValue::U32(v as u32);
    let strings = |v: Vec<String>| MetaValue::Array(v.into_iter().map(MetaValue::String).collect());
    let meta: Vec<(String, MetaValue)> = vec![
        ("general.architecture".to_string(), MetaValue::String("llama".into())),
        ("llama.block_count".into(), u32v(c.layers)),
        ("llama.embedding_length".into(), u32v(c.hidden)),
        ("llama.feed_forward_length".into(), u32v(c.ffn)),
        ("llama.expert_feed_forward_length".into(), u32v(m.expert_ffn)),
        ("llama.attention.head_count".into(), u32v(c.heads)),
        ("llama.attention.head_count_kv".into(), u32v(c.kv_heads)),
        ("llama.rope.dimension_count".into(), u32v(c.head_dim)),
        ("llama.rope.freq_base".into(), MetaValue::F32(c.rope_base)),
        ("llama.attention.layer_norm_rms_epsilon".into(), MetaValue::F32(c.rms_eps)),
        ("llama.context_length".into(), u32v(c.context)),
        ("llama.expert_count".into(), u32v(m.experts)),
        ("llama.expert_used_count".into(), u32v(m.top_k)),
        ("tokenizer.ggml.model".into(), MetaValue::String("gpt2".into())),
        ("tokenizer.ggml.tokens".into(), strings((0..c.vocab).map(|i| format!("t{i}")).collect())),
        ("tokenizer.ggml.merges".into(), strings(vec!["t 0".into()])),
    ]
    .into_iter()
    .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k))
    .chain(extra.clone())
    .collect();
    let f32s = |data: &[f32]| data.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let mut tensors: Vec<RawTensor> = Vec::new();
    for (w, mat) in ckpt.graph.weights.iter().zip(&ckpt.weights) {
        let dims = if w.rows == 1 { vec![w.cols as u64] } else { vec![w.cols as u64, w.rows as u64] };
        // `blk.N.ffn_gate.E.weight`: in the stacked layout, appended to `blk.N.ffn_gate_exps`
        // (the reader's own name mapping).
        match crate::checkpoint::stacked_name(&w.tensor) {
            Some((name, _)) if stacked => match tensors.iter_mut().find(|t| t.name == name) {
                Some(t) => {
                    t.dims[2] += 1;
                    t.data.extend(f32s(&mat.data));
                }
                None => tensors.push(RawTensor {
                    name,
                    dims: vec![w.cols as u64, w.rows as u64, 1],
                    dtype: GgmlType::F32,
                    data: f32s(&mat.data),
                }),
            },
            _ => tensors.push(RawTensor { name: w.tensor.clone(), dims, dtype: GgmlType::F32, data: f32s(&mat.data) }),
        }
    }
    (ckpt, write_gguf(&meta, &tensors))
}

fn logits(ckpt: &Checkpoint, tokens: &[u32]) -> Vec<Vec<f32>> {
    let mut f = Forward::new(ckpt);
    tokens.iter().map(|&t| f.step(TokenId(t), &mut Dense).unwrap()).collect()
}

const TOKENS: [u32; 8] = [1, 5, 2, 9, 0, 7, 3, 3];

#[test]
fn both_expert_layouts_read_to_the_checkpoint_that_was_written() {
    for stacked in [false, true] {
        let (written, bytes) = tiny_moe_gguf(stacked, vec![]);
        let read = Checkpoint::from_gguf(&GgufFile::parse(bytes, "moe.gguf").unwrap()).unwrap();
        assert_eq!(read.graph, written.graph, "stacked {stacked}");
        assert_eq!(read.weights, written.weights, "stacked {stacked}");
        assert_eq!(logits(&read, &TOKENS), logits(&written, &TOKENS));
    }
}

#[test]
fn the_mixture_runs_as_candle_runs_the_same_file() {
    let (ckpt, bytes) = tiny_moe_gguf(false, vec![]);
    let mut reader = std::io::Cursor::new(bytes);
    let content = candle_core::quantized::gguf_file::Content::read(&mut reader).unwrap();
    let device = candle_core::Device::Cpu;
    let mut theirs =
        candle_transformers::models::quantized_llama::ModelWeights::from_gguf(content, &mut reader, &device).unwrap();
    let mut largest = 0f32;
    for (pos, (&t, ours)) in TOKENS.iter().zip(logits(&ckpt, &TOKENS)).enumerate() {
        let x = candle_core::Tensor::new(&[t], &device).unwrap().unsqueeze(0).unwrap();
        let b: Vec<f32> = theirs.forward(&x, pos).unwrap().squeeze(0).unwrap().to_vec1().unwrap();
        largest = ours.iter().zip(&b).map(|(x, y)| (x - y).abs()).fold(largest, f32::max);
    }
    // Logits of a few units, summed in another order: the mixture's routing matches (a token
    // routed to another expert would differ by whole units).
    assert!(largest < 1e-4, "largest logit difference {largest}");
    // And the tokens do route differently, so the comparison covers more than one choice.
    let mut f = Forward::new(&ckpt);
    let routes: Vec<usize> =
        ckpt.graph.nodes.iter().enumerate().filter(|(_, n)| n.name.ends_with("moe_route")).map(|(i, _)| i).collect();
    let mut choices = std::collections::BTreeSet::new();
    for &t in &TOKENS {
        let values = f.step_values(TokenId(t), &mut Dense).unwrap();
        for &r in &routes {
            choices.insert(values[r].iter().map(|&w| w != 0.0).collect::<Vec<_>>());
        }
    }
    assert!(choices.len() >= 3, "only {} expert choices", choices.len());
}

#[test]
fn routing_keeps_the_top_k_weighted_as_the_gating_says() {
    let logits = [0.5f32, 2.0, -1.0, 2.0];
    let w = route(&logits, 2, Gating::SoftmaxTopKNormalized);
    assert_eq!(w[0], 0.0);
    assert_eq!(w[2], 0.0);
    assert!((w[1] - 0.5).abs() < 1e-6 && (w[3] - 0.5).abs() < 1e-6, "{w:?}");
    let w = route(&logits, 2, Gating::SoftmaxTopK);
    let p = 2f32.exp() / logits.iter().map(|l| l.exp()).sum::<f32>();
    assert!((w[1] - p).abs() < 1e-6, "{w:?}");
    // Ties go to the lower index; unit gating weighs each chosen expert 1.
    assert_eq!(route(&logits, 1, Gating::UnitTopK), vec![0.0, 1.0, 0.0, 0.0]);
    assert_eq!(route(&logits, 3, Gating::UnitTopK), vec![1.0, 1.0, 0.0, 1.0]);
}

#[test]
fn keys_that_would_change_the_mixture_are_honoured_or_refused() {
    let read = |extra: Vec<(String, MetaValue)>| {
        let (_, bytes) = tiny_moe_gguf(true, extra);
        Checkpoint::from_gguf(&GgufFile::parse(bytes, "moe.gguf").unwrap()).map_err(|e| e.to_string())
    };
    let c = read(vec![("llama.expert_weights_norm".into(), MetaValue::Bool(true))]).unwrap();
    assert_eq!(c.graph.config.moe.unwrap().gating, Gating::SoftmaxTopKNormalized);
    for (key, value, says) in [
        ("llama.expert_weights_norm", MetaValue::Bool(false), "renormalises"),
        // The file stacks 4 experts: a header that declares 3 does not read the first 3 of them.
        ("llama.expert_count", MetaValue::U32(3), "the model's shape needs [8, 3]"),
        ("llama.expert_shared_count", MetaValue::U32(1), "shared experts"),
        ("llama.expert_gating_func", MetaValue::U32(2), "expert_gating_func 2"),
        ("llama.expert_weights_scale", MetaValue::F32(2.5), "expert_weights_scale"),
        ("llama.expert_used_count", MetaValue::U32(5), "4 experts, 5 chosen"),
        ("llama.expert_used_count", MetaValue::String("2".into()), "not an unsigned integer"),
        ("general.architecture", MetaValue::String("olmoe".into()), "olmoe\" (its attention normalises q and k"),
        ("general.architecture", MetaValue::String("qwen2moe".into()), "gated shared expert"),
        (
            "general.architecture",
            MetaValue::String("gemma2".into()),
            "\"gemma2\" is not supported (llama and gemma3 only)",
        ),
    ] {
        let e = read(vec![(key.into(), value)]).unwrap_err();
        assert!(e.contains(says), "{key}: {e}");
    }
}

#[test]
fn a_mixture_is_refused_by_compile_with_a_clear_reason() {
    let (ckpt, _) = tiny_moe_gguf(false, vec![]);
    let arch = lacuna_spec::Arch::preset("tiny").unwrap();
    let opts =
        crate::compile::CompileOptions::new(arch, 0.0, crate::passes::prune_weights::PruneMethod::Magnitude, 0.0);
    let e = crate::compile::compile(ckpt, &opts, |_| {}).err().unwrap();
    assert!(e.contains("mixture of 4 experts"), "{e}");
}
