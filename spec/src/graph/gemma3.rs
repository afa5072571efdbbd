//! The Gemma 3 decode step ([`Family::Gemma3`]), laid out as llama.cpp's `gemma3` graph and
//! Hugging Face's `Gemma3ForCausalLM` compute it, with GGUF tensor names:
//!
//! ```text
//! x = sqrt(hidden) * embed[token]
//! per block l:  a = attn_norm(x)
//!               q = rope(q_norm(W_q a)), k = rope(k_norm(W_k a)), v = W_v a   (norms per head)
//!               x = x + post_attention_norm(W_o attention(q, k, v))         (window unless global)
//!               f = ffn_norm(x)
//!               x = x + post_ffw_norm(W_down (gelu(W_gate f) * W_up f))
//! logits = W_head output_norm(x)
//! ```
//!
//! RoPE pairs halves of each head; the local blocks use `rope_local_base`, the global ones
//! `rope_base`. The norms' gains are used as stored: llama.cpp's converter stores Gemma's
//! `1 + w` already added.

use super::{Family, Graph, LayerId, LinearKind, LlamaConfig, NodeId, Op, RopeStyle};
use serde::{Deserialize, Serialize};

/// What Gemma 3 adds to the shared sizes of [`LlamaConfig`]: block `l` (from 0) attends
/// globally when `(l + 1) % global_every == 0`, else over the last `sliding_window` positions
/// (itself included) with RoPE base `rope_local_base`; the global blocks use
/// [`LlamaConfig::rope_base`]. The embedding is scaled by `sqrt(hidden)`; the FFN is GELU-gated
/// (tanh approximation); attention scores are scaled by `1 / sqrt(head_dim)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gemma3Shape {
    /// Positions a local block's query sees, itself included.
    pub sliding_window: usize,
    /// Every this-many-th block is global.
    pub global_every: usize,
    /// RoPE base of the local blocks.
    pub rope_local_base: f32,
}

impl Gemma3Shape {
    /// Whether block `l` (from 0) attends globally.
    pub fn is_global(&self, l: usize) -> bool {
        (l + 1) % self.global_every == 0
    }
}

impl Graph {
    pub(super) fn gemma3(config: &LlamaConfig, shape: &Gemma3Shape) -> Graph {
        let mut g = Graph { config: config.clone(), weights: Vec::new(), nodes: Vec::new() };
        let (h, hd) = (config.hidden, config.head_dim);
        let (qd, kv) = (config.heads * hd, config.kv_heads * hd);
        let embed = g.weight("token_embd.weight", config.vocab, h);
        let e = g.node("token_embd", Op::Embed { table: embed }, h);
        let mut x = g.node("embed_scale", Op::Scale { input: e, factor: (h as f32).sqrt() }, h);
        for l in 0..config.layers {
            let layer = LayerId(l as u32);
            let name = |s: &str| format!("blk.{l}.{s}");
            let global = shape.is_global(l);
            let xn = g.norm(&name("attn_norm"), x, h, 1);
            let q = g.linear(&name("attn_q"), xn, LinearKind::Q, Some(layer), qd, h);
            let k = g.linear(&name("attn_k"), xn, LinearKind::K, Some(layer), kv, h);
            let v = g.linear(&name("attn_v"), xn, LinearKind::V, Some(layer), kv, h);
            let q = g.norm(&name("attn_q_norm"), q, hd, config.heads);
            let k = g.norm(&name("attn_k_norm"), k, hd, config.kv_heads);
            let base = (!global).then_some(shape.rope_local_base);
            let style = RopeStyle::Halves;
            let q = g.node(&name("rope_q"), Op::Rope { input: q, heads: config.heads, style, base }, qd);
            let k = g.node(&name("rope_k"), Op::Rope { input: k, heads: config.kv_heads, style, base }, kv);
            let window = (!global).then_some(shape.sliding_window);
            let att = g.node(&name("attention"), Op::Attention { q, k, v, layer, window }, qd);
            let o = g.linear(&name("attn_output"), att, LinearKind::O, Some(layer), h, qd);
            let o = g.norm(&name("post_attention_norm"), o, h, 1);
            x = g.node(&name("attn_residual"), Op::Add { a: x, b: o }, h);
            let xn = g.norm(&name("ffn_norm"), x, h, 1);
            let gate = g.linear(&name("ffn_gate"), xn, LinearKind::Gate, Some(layer), config.ffn, h);
            let up = g.linear(&name("ffn_up"), xn, LinearKind::Up, Some(layer), config.ffn, h);
            let act = g.node(&name("geglu"), Op::GeGlu { gate, up }, config.ffn);
            let down = g.linear(&name("ffn_down"), act, LinearKind::Down, Some(layer), h, config.ffn);
            let down = g.norm(&name("post_ffw_norm"), down, h, 1);
            x = g.node(&name("ffn_residual"), Op::Add { a: x, b: down }, h);
        }
        let x = g.norm("output_norm", x, h, 1);
        let head = if config.tied_output { embed } else { g.weight("output.weight", config.vocab, h) };
        g.node(
            "output",
            Op::Linear { input: x, weight: head, kind: LinearKind::LmHead, layer: None, expert: None },
            config.vocab,
        );
        g
    }

    /// An RMSNorm node `name` with gain tensor `name.weight` of `gain` values, applied to each
    /// of the input's `heads` parts.
    fn norm(&mut self, name: &str, input: NodeId, gain: usize, heads: usize) -> NodeId {
        let weight = self.weight(&format!("{name}.weight"), 1, gain);
        self.node(name, Op::RmsNorm { input, weight, heads }, gain * heads)
    }
}

impl LlamaConfig {
    /// A tiny Gemma 3 shape (3 blocks, the third global; a window of 2 positions) for the tests
    /// of the graph, its executors and passes.
    pub fn tiny_gemma3() -> LlamaConfig {
        let shape = Gemma3Shape { sliding_window: 2, global_every: 3, rope_local_base: 100.0 };
        LlamaConfig { layers: 3, family: Family::Gemma3(shape), ..LlamaConfig::tiny() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gemma3_block_has_four_norms_around_attention_and_the_ffn_and_local_blocks_see_a_window() {
        let c = LlamaConfig::tiny_gemma3();
        let g = Graph::decoder(&c);
        assert_eq!(g.linears().count(), 3 * 7 + 1);
        let names: Vec<&str> = g.weights.iter().map(|w| w.tensor.as_str()).collect();
        for t in ["blk.0.attn_q_norm.weight", "blk.0.post_attention_norm.weight", "blk.2.post_ffw_norm.weight"] {
            assert!(names.contains(&t), "{t}");
        }
        let windows: Vec<Option<usize>> = g
            .nodes
            .iter()
            .filter_map(|n| match n.op {
                Op::Attention { window, .. } => Some(window),
                _ => None,
            })
            .collect();
        assert_eq!(windows, [Some(2), Some(2), None]);
        let bases: Vec<Option<f32>> = g
            .nodes
            .iter()
            .filter_map(|n| match n.op {
                Op::Rope { base, style, .. } => {
                    assert_eq!(style, RopeStyle::Halves);
                    Some(base)
                }
                _ => None,
            })
            .collect();
        assert_eq!(bases, [Some(100.0), Some(100.0), Some(100.0), Some(100.0), None, None]);
        // The per-head norm of the queries: one gain of head_dim for every head.
        let qn = g.nodes.iter().find(|n| n.name == "blk.0.attn_q_norm").unwrap();
        let Op::RmsNorm { weight, heads, .. } = qn.op else { panic!() };
        assert_eq!((heads, g.weight_at(weight).cols, qn.len), (c.heads, c.head_dim, c.heads * c.head_dim));
        assert!(matches!(g.nodes[1].op, Op::Scale { factor, .. } if factor == (8f32).sqrt()));
    }

    #[test]
    fn a_gemma3_graph_round_trips_and_a_llama_graph_keeps_its_bytes() {
        let g = Graph::decoder(&LlamaConfig::tiny_gemma3());
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(serde_json::from_str::<Graph>(&json).unwrap(), g);
        let llama = serde_json::to_string(&Graph::decoder(&LlamaConfig::tiny())).unwrap();
        for absent in ["\"family\"", "\"window\"", "\"style\"", "\"base\"", "\"heads\":1"] {
            assert!(!llama.contains(absent), "{absent}");
        }
        let mut bad = LlamaConfig::tiny_gemma3();
        if let Family::Gemma3(s) = &mut bad.family {
            s.global_every = 0;
        }
        assert!(bad.check().unwrap_err().contains("global every 0"));
    }
}
