//! A block's mixture of experts as the graph declares it: how many experts, how many a token
//! chooses, how their weights are gated ([`crate::graph`] builds the nodes, ties an expert's
//! linears to its routing, and re-exports these types).

use serde::{Deserialize, Serialize};

/// How the router's logits become the weights of the chosen experts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gating {
    /// Softmax over all experts, the top k kept and renormalised to sum to one (Mixtral, and
    /// llama.cpp's `llama` architecture with experts).
    SoftmaxTopKNormalized,
    /// Softmax over all experts, the top k kept as they are (OLMoE, Qwen-MoE without
    /// `norm_topk_prob`).
    SoftmaxTopK,
    /// The top k by logit, each weighted 1 (a dense FFN split into experts: the chosen experts'
    /// outputs are the dense FFN's terms, MoEfication).
    UnitTopK,
}

/// The experts of a mixture-of-experts FFN.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoeConfig {
    /// Experts per block.
    pub experts: usize,
    /// Experts chosen per token.
    pub top_k: usize,
    /// Inner size of each expert's SwiGLU FFN.
    pub expert_ffn: usize,
    /// How the chosen experts are weighted.
    pub gating: Gating,
    /// Whether each block carries every expert's mean output (tensor `blk.N.ffn_exp_mean.weight`,
    /// experts x hidden), added for the experts a token does not choose: the compensation a
    /// mixture derived from a dense FFN needs, whose experts' outputs are not zero-mean (our
    /// extension, FLAP-style; no checkpoint format has it, so readers never set it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unrouted_mean: bool,
}

/// The most experts a block may declare.
pub const MAX_EXPERTS: usize = 1024;
/// The most expert FFNs a model may declare (layers x experts): each is three graph nodes and
/// weights, built before any tensor is read, so a header of a few bytes must not ask for millions
/// (DeepSeek-V3, 61 x 256, has 15,616).
pub const MAX_EXPERT_FFNS: usize = 1 << 16;

/// An expert of a block's mixture (its index among the block's experts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ExpertId(pub u32);
