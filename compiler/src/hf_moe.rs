//! The model types of Hugging Face checkpoints beyond `llama`: Mistral (Llama's tensors and
//! computation with a sliding attention window) and Mixtral (Mistral with a mixture of experts in
//! every block), read and written; the other mixtures recognised and refused with their reason.
//!
//! Mixtral's layout, as `transformers`' `MixtralForCausalLM` names it, against the graph's (GGUF's):
//!
//! ```text
//!   model.layers.N.block_sparse_moe.gate.weight         blk.N.ffn_gate_inp.weight   experts x hidden
//!   model.layers.N.block_sparse_moe.experts.E.w1.weight blk.N.ffn_gate.E.weight     ffn x hidden
//!   model.layers.N.block_sparse_moe.experts.E.w3.weight blk.N.ffn_up.E.weight       ffn x hidden
//!   model.layers.N.block_sparse_moe.experts.E.w2.weight blk.N.ffn_down.E.weight     hidden x ffn
//! ```
//!
//! The router's softmax over all experts, its top `num_experts_per_tok` renormalised to sum to
//! one: [`Gating::SoftmaxTopKNormalized`], as in llama.cpp's `llama` files with experts.
//!
//! Every field that changes inference is honoured or refused: `sliding_window` bounds the context
//! (attention never reaches further back than the window, so a model run within it computes
//! exactly what the window would; longer sequences are refused by the forward, not run wrong);
//! `router_jitter_noise` and the router's auxiliary loss apply only in training. OLMoE, Qwen-MoE
//! and DeepSeek checkpoints are refused with the part of their computation the graph lacks.

use lacuna_spec::graph::{Gating, MoeConfig, MAX_EXPERTS};
use serde::Deserialize;

/// The model types this reader takes.
pub const MODEL_TYPES: [&str; 3] = ["llama", "mistral", "mixtral"];

/// The fields of a `config.json` about experts and the attention window.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct MoeFields {
    /// Mixtral's expert count.
    num_local_experts: Option<usize>,
    /// Experts chosen per token (Mixtral, OLMoE, Qwen-MoE).
    num_experts_per_tok: Option<usize>,
    /// OLMoE's and Qwen-MoE's expert count (refused with their model types; never with ours).
    num_experts: Option<usize>,
    /// Mistral's and Mixtral's attention window: absent (`None`), null (`Some(None)`: no window)
    /// or a length.
    #[serde(default, deserialize_with = "present")]
    sliding_window: Option<Option<u64>>,
}

/// A field that may be null, told apart from one that is absent.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

/// Why a known model type cannot be read, or `None` for the ones this reader takes.
pub(crate) fn refusal(model_type: &str) -> Option<String> {
    if MODEL_TYPES.contains(&model_type) {
        return None;
    }
    let lacks = lacks(model_type);
    let supported = MODEL_TYPES.join(", ");
    Some(match lacks {
        Some(why) => format!("model_type {model_type:?} ({why}) is not supported ({supported} only)"),
        None => format!("model_type {model_type:?} is not supported ({supported} only)"),
    })
}

/// What the graph lacks to run a known mixture family (a Hugging Face `model_type`).
pub(crate) fn lacks(model_type: &str) -> Option<&'static str> {
    match model_type {
        "olmoe" => Some("its attention normalises q and k (q_norm, k_norm), which the graph does not compute yet"),
        "qwen2_moe" => Some("attention biases and a gated shared expert, which the graph does not compute yet"),
        "qwen3_moe" => Some("per-head q and k norms, which the graph does not compute yet"),
        "deepseek_v2" | "deepseek_v3" => Some("multi-head latent attention, which the graph does not compute"),
        _ => None,
    }
}

/// The context a model is run within: `max_position_embeddings`, or the attention window where it
/// is shorter (within it, sliding-window attention is full causal attention).
pub(crate) fn context(f: &MoeFields, max_position_embeddings: usize) -> usize {
    match f.sliding_window {
        Some(Some(w)) => max_position_embeddings.min(usize::try_from(w).unwrap_or(usize::MAX)),
        _ => max_position_embeddings,
    }
}

/// Why a config must state a field it leaves out: the defaults `transformers` fills in differ by
/// model type (and version) from the ones this reader would assume (`rope_theta` 10,000, no
/// window), so a missing one is refused rather than guessed.
pub(crate) fn missing_default(model_type: &str, f: &MoeFields, has_rope_theta: bool) -> Option<String> {
    if model_type != "llama" && f.sliding_window.is_none() {
        return Some(format!(
            "a {model_type} config without sliding_window (its default is not ours to guess; null for none)"
        ));
    }
    if model_type == "mixtral" && !has_rope_theta {
        return Some("a mixtral config without rope_theta (transformers' Mixtral default is 1e6, not 10,000)".into());
    }
    None
}

/// The mixture a config declares (`Some` for `mixtral`), its fields checked; an expert field in a
/// dense model's config, or a window in a Llama one, is refused rather than ignored.
pub(crate) fn mixture(model_type: &str, f: &MoeFields, intermediate: usize) -> Result<Option<MoeConfig>, String> {
    if model_type == "llama" && f.sliding_window.is_some_and(|w| w.is_some()) {
        return Err("a llama config with sliding_window (a Mistral field) is not supported".into());
    }
    if model_type != "mixtral" {
        if f.num_local_experts.is_some() || f.num_experts.is_some() || f.num_experts_per_tok.is_some() {
            return Err(format!("a {model_type} config with expert fields (a mixture is model_type \"mixtral\")"));
        }
        return Ok(None);
    }
    if f.num_experts.is_some() {
        return Err("num_experts in a mixtral config (Mixtral's count is num_local_experts)".into());
    }
    let experts = f.num_local_experts.ok_or("a mixtral config without num_local_experts")?;
    let top_k = f.num_experts_per_tok.ok_or("a mixtral config without num_experts_per_tok")?;
    if experts == 0 || experts > MAX_EXPERTS || top_k == 0 || top_k > experts {
        return Err(format!(
            "num_local_experts {experts} and num_experts_per_tok {top_k} are out of range (1 <= top k <= experts <= {MAX_EXPERTS})"
        ));
    }
    Ok(Some(MoeConfig {
        experts,
        top_k,
        expert_ffn: intermediate,
        gating: Gating::SoftmaxTopKNormalized,
        unrouted_mean: false,
    }))
}

/// The Mixtral name of a block's mixture tensor, from the graph's `layer` and `part` (the name
/// between the block number and `.weight`: `ffn_gate_inp`, `ffn_gate.E`, `ffn_up.E`, `ffn_down.E`).
pub(crate) fn tensor_name(layer: &str, part: &str) -> Option<String> {
    layer.parse::<u32>().ok()?;
    if part == "ffn_gate_inp" {
        return Some(format!("model.layers.{layer}.block_sparse_moe.gate.weight"));
    }
    let (kind, expert) = part.split_once('.')?;
    let w = match kind {
        "ffn_gate" => "w1",
        "ffn_up" => "w3",
        "ffn_down" => "w2",
        _ => return None,
    };
    expert.parse::<u32>().ok()?;
    Some(format!("model.layers.{layer}.block_sparse_moe.experts.{expert}.{w}.weight"))
}

/// The `config.json` fields that declare `moe` in Mixtral's layout (model type, architecture,
/// expert counts), or why it has none: only Mixtral's gating has a Hugging Face layout here, and
/// the mean outputs of unrouted experts (our extension) have none at all.
pub(crate) fn config_fields(moe: Option<&MoeConfig>, ffn: usize) -> Result<serde_json::Value, String> {
    let Some(m) = moe else {
        return Ok(serde_json::json!({"model_type": "llama", "architectures": ["LlamaForCausalLM"]}));
    };
    if m.gating != Gating::SoftmaxTopKNormalized {
        return Err(format!(
            "a mixture gated {:?} has no Hugging Face layout (Mixtral's is a softmax with the top k renormalised)",
            m.gating
        ));
    }
    if m.unrouted_mean {
        return Err(
            "a mixture with the unrouted experts' mean outputs (our extension) has no Hugging Face layout".into()
        );
    }
    if m.expert_ffn != ffn {
        return Err(format!(
            "experts of inner size {} in a model of FFN size {ffn}: Mixtral has one size",
            m.expert_ffn
        ));
    }
    Ok(serde_json::json!({
        "model_type": "mixtral",
        "architectures": ["MixtralForCausalLM"],
        "num_local_experts": m.experts,
        "num_experts_per_tok": m.top_k,
        "sliding_window": null,
    }))
}

#[cfg(test)]
#[path = "hf_moe_tests.rs"]
mod tests;
