//! The graph IR of one decode step of a decoder LLM (the Llama and Gemma 3 families), and its
//! builders.
//!
//! A [`Graph`] is a list of [`Node`]s in execution order; each node's operands are earlier
//! nodes ([`NodeId`]) and weights ([`WeightId`]), so a pass walks it front to back with no
//! scheduling of its own. The graph is one token's step: the input is a token id, the last
//! node is the logits. Attention reads and extends the layer's KV cache, which lives with the
//! executor, not in the graph.
//!
//! Every matrix-vector product is a [`Op::Linear`]: these are what the compiler lowers to
//! jobs of the Sparse SIMT core (spMspV, or gemv over dense panels). Everything else (norms, RoPE, attention over the cache,
//! SwiGLU, residual adds) is placed elsewhere by the placement pass.
//!
//! A family is a builder, not a special case in the passes: Gemma 3 ([`Family::Gemma3`]) lays
//! out the same kinds of nodes with a few more options (a scaled embedding, per-head norms of
//! queries and keys, norms after attention and after the FFN, RoPE on half-split pairs with a
//! base per block, sliding-window attention on most blocks, a GELU-gated FFN); every executor
//! and pass reads those options from the node, never from the family.

use serde::{Deserialize, Serialize};

/// A node of the graph (its index in [`Graph::nodes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

/// A weight tensor (its index in [`Graph::weights`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WeightId(pub u32);

/// A transformer block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LayerId(pub u32);

/// The shape of a decoder: a Llama-family one, or another [`Family`] built from the same sizes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlamaConfig {
    /// Transformer blocks.
    pub layers: usize,
    /// Hidden size.
    pub hidden: usize,
    /// FFN inner size (SwiGLU).
    pub ffn: usize,
    /// Query heads.
    pub heads: usize,
    /// Key/value heads (grouped-query attention: `heads` is a multiple of it).
    pub kv_heads: usize,
    /// Per-head size.
    pub head_dim: usize,
    /// Vocabulary size.
    pub vocab: usize,
    /// RMSNorm epsilon.
    pub rms_eps: f32,
    /// RoPE base frequency.
    pub rope_base: f32,
    /// Longest context the checkpoint was trained for.
    pub context: usize,
    /// Whether the output projection is the embedding table (tied).
    pub tied_output: bool,
    /// A mixture of experts in place of each block's FFN (absent: the dense SwiGLU FFN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<MoeConfig>,
    /// The block structure (absent: Llama's).
    #[serde(default, skip_serializing_if = "Family::is_llama")]
    pub family: Family,
}

/// Which block structure the graph builder lays out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Llama: pre-norm blocks, interleaved RoPE, SwiGLU FFN.
    #[default]
    Llama,
    /// Gemma 3 (llama.cpp's `gemma3`; Hugging Face's `Gemma3ForCausalLM`).
    Gemma3(Gemma3Shape),
}

impl Family {
    /// Whether it is [`Family::Llama`] (the default, left out of serialized graphs).
    pub fn is_llama(&self) -> bool {
        matches!(self, Family::Llama)
    }

    /// Its name in reports (`llama`, `gemma3`).
    pub fn name(&self) -> &'static str {
        match self {
            Family::Llama => "llama",
            Family::Gemma3(_) => "gemma3",
        }
    }
}

pub use crate::moe::{ExpertId, Gating, MoeConfig, MAX_EXPERTS, MAX_EXPERT_FFNS};

/// The expert a linear layer belongs to, and the node whose routing decides whether it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpertSlot {
    /// The block's [`Op::Route`] node.
    pub route: NodeId,
    /// The expert.
    pub expert: ExpertId,
}

/// The largest size a checkpoint may declare for any one dimension (hidden, FFN, vocabulary,
/// attention width): far above any model this tool targets, low enough that no product of two
/// overflows and that a corrupted header cannot make the graph builder loop or allocate for ever.
pub const MAX_DIMENSION: usize = 1 << 22;
/// The most transformer blocks a checkpoint may declare.
pub const MAX_LAYERS: usize = 4096;

impl LlamaConfig {
    /// Checks that the shape is one the graph can be built for: every size non-zero and within
    /// [`MAX_DIMENSION`] / [`MAX_LAYERS`], query heads a multiple of the KV heads, an even head
    /// size (RoPE rotates pairs). The error says which.
    pub fn check(&self) -> Result<(), String> {
        if self.layers == 0 || self.layers > MAX_LAYERS {
            return Err(format!("{} layers (1 to {MAX_LAYERS} supported)", self.layers));
        }
        let sizes = [
            ("hidden size", self.hidden),
            ("FFN size", self.ffn),
            ("vocabulary", self.vocab),
            ("context", self.context),
            ("head count", self.heads),
            ("KV head count", self.kv_heads),
            ("head size", self.head_dim),
        ];
        for (what, n) in sizes {
            if n == 0 || n > MAX_DIMENSION {
                return Err(format!("{what} {n} (1 to {MAX_DIMENSION} supported)"));
            }
        }
        if self.heads % self.kv_heads != 0 || self.head_dim % 2 != 0 {
            return Err(format!(
                "attention shape: {} heads over {} KV heads of size {} (heads must be a multiple of KV heads, the size even)",
                self.heads, self.kv_heads, self.head_dim
            ));
        }
        if let Some(m) = &self.moe {
            if m.experts == 0 || m.experts > MAX_EXPERTS || m.top_k == 0 || m.top_k > m.experts {
                return Err(format!(
                    "{} experts, {} chosen per token (1 to {MAX_EXPERTS} experts, 1 to all of them chosen)",
                    m.experts, m.top_k
                ));
            }
            if self.layers * m.experts > MAX_EXPERT_FFNS {
                return Err(format!(
                    "{} layers of {} experts ({} expert FFNs; at most {MAX_EXPERT_FFNS})",
                    self.layers,
                    m.experts,
                    self.layers * m.experts
                ));
            }
            if m.expert_ffn == 0 || m.expert_ffn > MAX_DIMENSION {
                return Err(format!("expert FFN size {} (1 to {MAX_DIMENSION} supported)", m.expert_ffn));
            }
        }
        if self.heads * self.head_dim > MAX_DIMENSION {
            return Err(format!("attention width {} (at most {MAX_DIMENSION})", self.heads * self.head_dim));
        }
        if !(self.rms_eps.is_finite() && self.rms_eps >= 0.0 && self.rope_base.is_finite() && self.rope_base > 0.0) {
            return Err(format!("RMSNorm epsilon {} or RoPE base {} out of range", self.rms_eps, self.rope_base));
        }
        if let Family::Gemma3(g) = &self.family {
            if g.sliding_window == 0
                || g.global_every == 0
                || !(g.rope_local_base.is_finite() && g.rope_local_base > 0.0)
            {
                return Err(format!(
                    "Gemma 3 sliding window {}, global every {} blocks, local RoPE base {} (each must be positive)",
                    g.sliding_window, g.global_every, g.rope_local_base
                ));
            }
            if self.moe.is_some() {
                return Err("a Gemma 3 mixture of experts is not supported".into());
            }
        }
        Ok(())
    }
}

/// What a linear layer computes, for reports and per-kind settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum LinearKind {
    Q,
    K,
    V,
    O,
    Gate,
    Up,
    Down,
    /// The output projection to the vocabulary.
    LmHead,
    /// A mixture's router: one logit per expert.
    Router,
}

impl LinearKind {
    /// The short name used in reports (`q`, `gate`, `lm_head`).
    pub fn name(self) -> &'static str {
        match self {
            LinearKind::Q => "q",
            LinearKind::K => "k",
            LinearKind::V => "v",
            LinearKind::O => "o",
            LinearKind::Gate => "gate",
            LinearKind::Up => "up",
            LinearKind::Down => "down",
            LinearKind::LmHead => "lm_head",
            LinearKind::Router => "router",
        }
    }
}

/// An operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// The row of the step's token in an embedding table.
    Embed {
        /// The table (vocab x hidden).
        table: WeightId,
    },
    /// `x * w / sqrt(mean(x^2) + eps)`, over the whole input or over each of its `heads` equal
    /// parts on its own (Gemma's norms of queries and keys, one gain for every head).
    RmsNorm {
        /// Input.
        input: NodeId,
        /// Per-channel gain (the input's length, or one part's).
        weight: WeightId,
        /// Parts normalized each on its own (1: the whole vector).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        heads: usize,
    },
    /// `factor * x` (Gemma's embedding scale).
    Scale {
        /// Input.
        input: NodeId,
        /// The factor.
        factor: f32,
    },
    /// `W x` for a weight of M outputs x K inputs: lowered to the Sparse SIMT core.
    Linear {
        /// Input vector (K).
        input: NodeId,
        /// The matrix.
        weight: WeightId,
        /// What it computes.
        kind: LinearKind,
        /// Its block (none for the LM head).
        layer: Option<LayerId>,
        /// The expert it belongs to (none outside a mixture): it runs only for a token whose
        /// routing chose that expert, and gives zeros otherwise.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expert: Option<ExpertSlot>,
    },
    /// A mixture's routing: the router's logits to one weight per expert, zero for every
    /// expert not among the top k (ties to the lower index), by the block's [`Gating`].
    Route {
        /// The router's logits (one per expert).
        logits: NodeId,
        /// Experts chosen.
        top_k: usize,
        /// How they are weighted.
        gating: Gating,
    },
    /// A mixture's output: `sum_e w[e] * experts[e]` over the chosen experts (the others are
    /// not read: they were not computed), plus row e of `mean` for each expert not chosen.
    Combine {
        /// The routing weights ([`Op::Route`]).
        route: NodeId,
        /// Each expert's output, by expert.
        experts: Vec<NodeId>,
        /// Each expert's mean output (experts x hidden), for the experts not chosen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean: Option<WeightId>,
    },
    /// Rotary position embedding on `heads` heads of `head_dim`: pair `i` of a head is
    /// elements (2i, 2i+1) ([`RopeStyle::Interleaved`], Llama as GGUF stores it) or
    /// (i, i + head_dim/2) ([`RopeStyle::Halves`], Gemma); rotated by `position / base^(2i/head_dim)`.
    Rope {
        /// Input (heads x head_dim).
        input: NodeId,
        /// Number of heads in the input.
        heads: usize,
        /// Which elements pair up.
        #[serde(default, skip_serializing_if = "RopeStyle::is_interleaved")]
        style: RopeStyle,
        /// The base frequency, where it is not [`LlamaConfig::rope_base`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base: Option<f32>,
    },
    /// Causal attention of one query over the layer's KV cache, after appending `k` and `v`.
    Attention {
        /// Query (heads x head_dim), after RoPE.
        q: NodeId,
        /// Key (kv_heads x head_dim), after RoPE.
        k: NodeId,
        /// Value (kv_heads x head_dim).
        v: NodeId,
        /// Whose cache.
        layer: LayerId,
        /// Positions the query sees, itself included (none: all of them).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<usize>,
    },
    /// `silu(gate) * up`.
    SwiGlu {
        /// Gate projection.
        gate: NodeId,
        /// Up projection.
        up: NodeId,
    },
    /// `gelu(gate) * up`, GELU in its tanh approximation:
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
    GeGlu {
        /// Gate projection.
        gate: NodeId,
        /// Up projection.
        up: NodeId,
    },
    /// `a + b` (the residual connection).
    Add {
        /// Left.
        a: NodeId,
        /// Right.
        b: NodeId,
    },
}

impl Op {
    /// The nodes it reads, in operand order (the dependences a schedule must respect).
    pub fn operands(&self) -> Vec<NodeId> {
        match *self {
            Op::Embed { .. } => Vec::new(),
            Op::RmsNorm { input, .. } | Op::Linear { input, .. } | Op::Rope { input, .. } | Op::Scale { input, .. } => {
                vec![input]
            }
            Op::Attention { q, k, v, .. } => vec![q, k, v],
            Op::SwiGlu { gate: a, up: b } | Op::GeGlu { gate: a, up: b } | Op::Add { a, b } => vec![a, b],
            Op::Route { logits, .. } => vec![logits],
            Op::Combine { route, ref experts, .. } => std::iter::once(route).chain(experts.iter().copied()).collect(),
        }
    }
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// A node: an operation and the size of the vector it produces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// A readable name (`blk.3.ffn_down`).
    pub name: String,
    /// The operation.
    pub op: Op,
    /// Length of the output vector.
    pub len: usize,
}

/// A weight tensor the graph reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightRef {
    /// The checkpoint's tensor name (GGUF naming: `blk.0.attn_q.weight`).
    pub tensor: String,
    /// Rows (outputs of a linear layer; vocabulary of an embedding table; 1 for a norm gain).
    pub rows: usize,
    /// Columns (inputs of a linear layer; the hidden size of an embedding table).
    pub cols: usize,
}

/// One decode step of a decoder LLM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// The model's shape.
    pub config: LlamaConfig,
    /// Weights, by [`WeightId`].
    pub weights: Vec<WeightRef>,
    /// Nodes in execution order, by [`NodeId`]; the last one is the logits.
    pub nodes: Vec<Node>,
}

mod gemma3;
pub use gemma3::Gemma3Shape;
mod rope;
pub use rope::RopeStyle;

impl Graph {
    /// The decode step of a model of `config`'s family, with GGUF tensor names.
    pub fn decoder(config: &LlamaConfig) -> Graph {
        match &config.family {
            Family::Llama => Graph::llama(config),
            Family::Gemma3(shape) => Graph::gemma3(config, shape),
        }
    }

    /// The decode step of a Llama-family model.
    fn llama(config: &LlamaConfig) -> Graph {
        let mut g = Graph { config: config.clone(), weights: Vec::new(), nodes: Vec::new() };
        let (h, kv) = (config.hidden, config.kv_heads * config.head_dim);
        let embed = g.weight("token_embd.weight", config.vocab, h);
        let mut x = g.node("token_embd", Op::Embed { table: embed }, h);
        for l in 0..config.layers {
            let layer = LayerId(l as u32);
            let name = |s: &str| format!("blk.{l}.{s}");
            let norm = g.weight(&name("attn_norm.weight"), 1, h);
            let xn = g.node(&name("attn_norm"), Op::RmsNorm { input: x, weight: norm, heads: 1 }, h);
            let q = g.linear(&name("attn_q"), xn, LinearKind::Q, Some(layer), config.heads * config.head_dim, h);
            let k = g.linear(&name("attn_k"), xn, LinearKind::K, Some(layer), kv, h);
            let v = g.linear(&name("attn_v"), xn, LinearKind::V, Some(layer), kv, h);
            let q = g.node(
                &name("rope_q"),
                Op::Rope { input: q, heads: config.heads, style: RopeStyle::Interleaved, base: None },
                config.heads * config.head_dim,
            );
            let k = g.node(
                &name("rope_k"),
                Op::Rope { input: k, heads: config.kv_heads, style: RopeStyle::Interleaved, base: None },
                kv,
            );
            let att = g.node(
                &name("attention"),
                Op::Attention { q, k, v, layer, window: None },
                config.heads * config.head_dim,
            );
            let o = g.linear(&name("attn_output"), att, LinearKind::O, Some(layer), h, config.heads * config.head_dim);
            x = g.node(&name("attn_residual"), Op::Add { a: x, b: o }, h);
            let norm = g.weight(&name("ffn_norm.weight"), 1, h);
            let xn = g.node(&name("ffn_norm"), Op::RmsNorm { input: x, weight: norm, heads: 1 }, h);
            let ffn = match &config.moe {
                None => g.swiglu_ffn(l, xn, None, config.ffn, h),
                Some(m) => g.mixture(l, xn, layer, m, h),
            };
            x = g.node(&name("ffn_residual"), Op::Add { a: x, b: ffn }, h);
        }
        let norm = g.weight("output_norm.weight", 1, h);
        let x = g.node("output_norm", Op::RmsNorm { input: x, weight: norm, heads: 1 }, h);
        let head = if config.tied_output { embed } else { g.weight("output.weight", config.vocab, h) };
        let input = x;
        g.node(
            "output",
            Op::Linear { input, weight: head, kind: LinearKind::LmHead, layer: None, expert: None },
            config.vocab,
        );
        g
    }

    fn weight(&mut self, tensor: &str, rows: usize, cols: usize) -> WeightId {
        self.weights.push(WeightRef { tensor: tensor.into(), rows, cols });
        WeightId(self.weights.len() as u32 - 1)
    }

    fn node(&mut self, name: &str, op: Op, len: usize) -> NodeId {
        self.nodes.push(Node { name: name.into(), op, len });
        NodeId(self.nodes.len() as u32 - 1)
    }

    fn linear(
        &mut self,
        name: &str,
        input: NodeId,
        kind: LinearKind,
        layer: Option<LayerId>,
        m: usize,
        k: usize,
    ) -> NodeId {
        self.linear_of(&format!("{name}.weight"), name, input, kind, layer, None, m, k)
    }

    #[allow(clippy::too_many_arguments)]
    fn linear_of(
        &mut self,
        tensor: &str,
        name: &str,
        input: NodeId,
        kind: LinearKind,
        layer: Option<LayerId>,
        expert: Option<ExpertSlot>,
        m: usize,
        k: usize,
    ) -> NodeId {
        let weight = self.weight(tensor, m, k);
        self.node(name, Op::Linear { input, weight, kind, layer, expert }, m)
    }

    /// `down(silu(gate x) * up x)`: block `l`'s FFN (nodes `blk.N.ffn_gate`, `blk.N.swiglu`, ...)
    /// or one expert of it (tensors `blk.N.ffn_gate.E.weight`, llama.cpp's per-expert names;
    /// nodes `blk.N.ffn_gate.E`, `blk.N.swiglu.E`, ...).
    fn swiglu_ffn(&mut self, l: usize, x: NodeId, expert: Option<ExpertSlot>, inner: usize, h: usize) -> NodeId {
        let layer = Some(LayerId(l as u32));
        let name = |part: &str| match expert {
            None => format!("blk.{l}.{part}"),
            Some(s) => format!("blk.{l}.{part}.{}", s.expert.0),
        };
        let tensor = |part: &str| format!("{}.weight", name(part));
        let gate = self.linear_of(&tensor("ffn_gate"), &name("ffn_gate"), x, LinearKind::Gate, layer, expert, inner, h);
        let up = self.linear_of(&tensor("ffn_up"), &name("ffn_up"), x, LinearKind::Up, layer, expert, inner, h);
        let act = self.node(&name("swiglu"), Op::SwiGlu { gate, up }, inner);
        self.linear_of(&tensor("ffn_down"), &name("ffn_down"), act, LinearKind::Down, layer, expert, h, inner)
    }

    /// Block `l`'s mixture: the router, the routing, every expert's FFN, their weighted sum.
    fn mixture(&mut self, l: usize, x: NodeId, layer: LayerId, m: &MoeConfig, h: usize) -> NodeId {
        let logits = self.linear(&format!("blk.{l}.ffn_gate_inp"), x, LinearKind::Router, Some(layer), m.experts, h);
        let route =
            self.node(&format!("blk.{l}.moe_route"), Op::Route { logits, top_k: m.top_k, gating: m.gating }, m.experts);
        let experts = (0..m.experts)
            .map(|e| {
                let slot = ExpertSlot { route, expert: ExpertId(e as u32) };
                self.swiglu_ffn(l, x, Some(slot), m.expert_ffn, h)
            })
            .collect();
        let mean = m.unrouted_mean.then(|| self.weight(&format!("blk.{l}.ffn_exp_mean.weight"), m.experts, h));
        self.node(&format!("blk.{l}.moe_combine"), Op::Combine { route, experts, mean }, h)
    }

    /// The node of an id.
    pub fn node_at(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    /// The weight of an id.
    pub fn weight_at(&self, id: WeightId) -> &WeightRef {
        &self.weights[id.0 as usize]
    }

    /// The linear layers, in execution order: (node, weight, kind, layer).
    pub fn linears(&self) -> impl Iterator<Item = (NodeId, WeightId, LinearKind, Option<LayerId>)> + '_ {
        self.nodes.iter().enumerate().filter_map(|(i, n)| match n.op {
            Op::Linear { weight, kind, layer, .. } => Some((NodeId(i as u32), weight, kind, layer)),
            _ => None,
        })
    }

    /// The logits node.
    pub fn output(&self) -> NodeId {
        NodeId(self.nodes.len() as u32 - 1)
    }
}

impl LlamaConfig {
    /// A tiny Llama shape (2 layers, hidden 8) for the tests of the graph, its passes and the
    /// program format.
    pub fn tiny() -> LlamaConfig {
        LlamaConfig {
            layers: 2,
            hidden: 8,
            ffn: 16,
            heads: 4,
            kv_heads: 2,
            head_dim: 2,
            vocab: 10,
            rms_eps: 1e-5,
            rope_base: 1e4,
            context: 64,
            tied_output: true,
            moe: None,
            family: Family::Llama,
        }
    }

    /// [`LlamaConfig::tiny`] with a mixture of 4 experts of inner size 6, 2 chosen (Mixtral's
    /// gating).
    pub fn tiny_moe() -> LlamaConfig {
        let moe = MoeConfig {
            experts: 4,
            top_k: 2,
            expert_ffn: 6,
            gating: Gating::SoftmaxTopKNormalized,
            unrouted_mean: false,
        };
        LlamaConfig { moe: Some(moe), ..LlamaConfig::tiny() }
    }
}

#[cfg(test)]
mod tests;
