//! The seed corpus of the fuzz targets of this crate's readers (`fuzz/seeds/`): small valid
//! inputs the fuzzer mutates from. Written by `LACUNA_BLESS=1 cargo test -p lacuna-compiler
//! fuzz_seeds`, checked on every test run: each seed must still be accepted by its reader (a
//! format change that leaves the seeds behind fails here, not silently in a fuzz run).

use crate::checkpoint::test_models::tiny_program;
use crate::hf::parse_shard_index;
use half::f16;
use lacuna_spec::program::Program;
use lacuna_spec::trace::{read_trace, write_trace, Trace, TraceHeader, TraceInput, TraceReader};
use std::path::{Path, PathBuf};

fn corpus(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds").join(target).join(name)
}

/// A two-step trace of one input of 12 activations read by two layers.
fn tiny_trace() -> Trace {
    let reader = |node: u32, name: &str, t: f32| TraceReader {
        node: lacuna_spec::graph::NodeId(node),
        name: name.into(),
        threshold_bits: f16::from_f32(t).to_bits(),
    };
    let input = TraceInput {
        node: lacuna_spec::graph::NodeId(1),
        name: "blk.0.attn_norm".into(),
        len: 12,
        readers: vec![reader(2, "blk.0.attn_q", 0.25), reader(3, "blk.0.attn_k", 0.5)],
    };
    let x: Vec<f16> = (0..12).map(|i| f16::from_f32((i as f32 - 5.0) / 4.0)).collect();
    Trace {
        header: TraceHeader {
            model: "seed".into(),
            settings: "none".into(),
            prompt: "ab".into(),
            tokens: vec![4, 5],
            prompt_tokens: 1,
            inputs: vec![input],
            routing: None,
        },
        steps: vec![vec![x.clone()], vec![x]],
    }
}

/// The program target's input: `u32 manifest length, manifest JSON, image`.
fn program_seed() -> Vec<u8> {
    let (p, image) = tiny_program();
    let json = serde_json::to_vec(&p).unwrap();
    let mut out = (json.len() as u32).to_le_bytes().to_vec();
    out.extend(json);
    out.extend(image);
    out
}

const SHARD_INDEX: &str = r#"{"metadata": {"total_size": 64}, "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}}"#;

#[test]
fn the_committed_fuzz_seeds_are_accepted_by_their_readers() {
    let seeds: [(&str, &str, Vec<u8>); 5] = [
        ("trace", "tiny.lctr", write_trace(&tiny_trace())),
        ("program", "tiny.bin", program_seed()),
        ("shard_index", "two_shards.json", SHARD_INDEX.as_bytes().to_vec()),
        ("moe_trace", "tiny.json", moe_trace_seed()),
        ("a8w4_channel", "tiny.bin", a8w4_channel_seed()),
    ];
    for (target, name, bytes) in &seeds {
        let path = corpus(target, name);
        if std::env::var("LACUNA_BLESS").as_deref() == Ok("1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
        }
        let committed =
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (LACUNA_BLESS=1 writes it)", path.display()));
        assert!(committed.len() < 64 * 1024, "{}: a seed stays small", path.display());
        match *target {
            "trace" => drop(read_trace(&committed).unwrap()),
            "moe_trace" => drop(lacuna_spec::moe_trace::MoeTrace::read(&committed).unwrap()),
            "a8w4_channel" => {
                let hidden = u16::from_le_bytes([committed[0], committed[1]]) as usize;
                drop(lacuna_spec::a8w4::ExpertChannel::from_bytes(&committed[2..], hidden).unwrap());
            }
            "program" => {
                let n = u32::from_le_bytes(committed[..4].try_into().unwrap()) as usize;
                let p: Program = serde_json::from_slice(&committed[4..4 + n]).unwrap();
                p.load(committed[4 + n..].to_vec(), Path::new("program.json"), Path::new("image.bin")).unwrap();
            }
            _ => drop(parse_shard_index(&committed, Path::new("index.json")).unwrap()),
        }
    }
}

/// One A8W4 channel record of 70 values (three groups, the last one partial), after its hidden
/// size (u16 LE).
fn a8w4_channel_seed() -> Vec<u8> {
    let row: Vec<f32> = (0..70).map(|i| ((i * 37 % 23) as f32 - 11.0) / 7.0).collect();
    let up: Vec<f32> = row.iter().map(|v| -v * 0.5).collect();
    let ch = lacuna_spec::a8w4::ExpertChannel::quantize(&row, &up, &row[..].iter().rev().copied().collect::<Vec<_>>())
        .unwrap();
    let mut out = 70u16.to_le_bytes().to_vec();
    out.extend(ch.to_bytes());
    out
}

/// Every policy's passes on the tiny mixture (2 blocks of 4x2 experts), 2 tokens from a
/// 2-token prompt, trees of 2x2.
fn moe_trace_seed() -> Vec<u8> {
    use crate::coalesce::calibrate_mixture;
    use crate::moe_trace::{trace_policies, TraceOptions};
    use crate::speculate::Draft;
    use crate::tokenizer::TokenId;
    use lacuna_spec::graph::LlamaConfig;
    use lacuna_spec::speculation::{MoePolicy, TreeShape};
    let mix = crate::checkpoint::test_models::random_checkpoint(&LlamaConfig::tiny_moe(), 5);
    let docs: Vec<Vec<TokenId>> = (0..4).map(|d| (0..8).map(|i| TokenId((d + 3 * i) % 10)).collect()).collect();
    let stats = calibrate_mixture(&mix, &docs, 2).unwrap();
    let opts = TraceOptions {
        shape: TreeShape { depth: 2, width: 2 },
        draft: Draft::first(1, 2).unwrap(),
        tokens: 2,
        expert_budget: 3,
        channel_budget: 0.5,
        reuse: None,
    };
    let t = trace_policies(&mix, &stats, &MoePolicy::ALL, &[TokenId(1), TokenId(4)], "t1 t4", &opts, &mut |_| {});
    serde_json::to_vec(&t.unwrap()).unwrap()
}
