//! A real checkpoint in memory: its decode-step graph, its weights as f32 matrices and its
//! tokenizer, read from a GGUF file or a Hugging Face directory (config.json + safetensors,
//! [`crate::hf`]).
//!
//! Contract: [`Checkpoint::open`] reads the model's shape from the checkpoint's own metadata
//! (GGUF `llama.*` or `gemma3.*` keys, or config.json), builds [`Graph::decoder`], and loads every weight the
//! graph names with the dimensions the graph expects; a missing tensor, a wrong shape, an
//! unsupported architecture or tensor type is an error naming it. GGUF weights are dequantized to
//! f32 exactly as ggml does ([`crate::gguf`]), so the golden forward sees the checkpoint's values,
//! not a re-rounding.

use crate::gguf::{GgufError, GgufFile};
use crate::tokenizer::Tokenizer;
use lacuna_spec::graph::{Family, Gating, Gemma3Shape, Graph, LlamaConfig, MoeConfig, WeightId};

/// A dense f32 matrix, row-major (one output row after the other).
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// `rows * cols` values, row-major.
    pub data: Vec<f32>,
}

impl Matrix {
    /// Row `r`.
    pub fn row(&self, r: usize) -> &[f32] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
}

/// Why a checkpoint could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A GGUF file's error.
    #[error(transparent)]
    Gguf(#[from] GgufError),
    /// A Hugging Face directory (config.json, safetensors, tokenizer.json) that cannot be read or
    /// is not a supported model.
    #[error("{path}: {message}")]
    Invalid {
        /// The file or directory.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// A loaded checkpoint.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    /// Where it came from (the file name).
    pub source: String,
    /// The checkpoint's `general.name`, if it has one.
    pub name: String,
    /// The decode-step graph.
    pub graph: Graph,
    /// Weights, by [`WeightId`].
    pub weights: Vec<Matrix>,
    /// The tokenizer built from the checkpoint's vocabulary and merges.
    pub tokenizer: Tokenizer,
}

/// GGUF keys (of architecture `arch`) that would change the computation of the graph this
/// reader builds: honoured where they say what the graph already does (no RoPE scaling, key and
/// value heads of the head size, no space prefix added to the text, no logit soft-capping),
/// refused otherwise, never ignored.
fn refuse_unsupported_keys(file: &GgufFile, arch: &str, head_dim: usize) -> Result<(), GgufError> {
    use crate::gguf::MetaValue;
    let refuse = |message: String| Err(GgufError::Missing { path: file.path.clone(), message });
    // A key of an unexpected type is refused, not read as absent.
    let typed = |key: &str, want: &str, ok: fn(&MetaValue) -> bool| -> Result<Option<&MetaValue>, GgufError> {
        match file.metadata.get(key) {
            Some(v) if !ok(v) => {
                Err(GgufError::Missing { path: file.path.clone(), message: format!("{key} is {v:?}, not {want}") })
            }
            v => Ok(v),
        }
    };
    let number = |key: &str| -> Result<Option<f64>, GgufError> {
        Ok(typed(key, "a number", |v| v.as_f64().or(v.as_u64().map(|n| n as f64)).is_some())?
            .and_then(|v| v.as_f64().or(v.as_u64().map(|n| n as f64))))
    };
    let key = |k: &str| format!("{arch}.{k}");
    let scaling = typed(&key("rope.scaling.type"), "a string", |v| v.as_str().is_some())?.and_then(|v| v.as_str());
    if let Some(t) = scaling.filter(|t| *t != "none") {
        let factor = number(&key("rope.scaling.factor"))?.unwrap_or(1.0);
        if !(t == "linear" && factor == 1.0) {
            return refuse(format!("RoPE scaling {t:?} (factor {factor}) is not supported"));
        }
    }
    if let Some(s) = number(&key("rope.freq_scale"))?.filter(|&s| s != 1.0) {
        return refuse(format!("{arch}.rope.freq_scale {s} is not supported (plain RoPE only)"));
    }
    for k in ["attn_logit_softcapping", "final_logit_softcapping"] {
        if let Some(v) = number(&key(k))?.filter(|&v| v != 0.0) {
            return refuse(format!("{arch}.{k} {v} is not supported (Gemma 2's soft-capping)"));
        }
    }
    for key in [key("attention.key_length"), key("attention.value_length")] {
        let key = key.as_str();
        let n = typed(key, "an unsigned integer", |v| v.as_u64().is_some())?.and_then(|v| v.as_u64());
        match (key, n) {
            (_, None) => {}
            (_, Some(n)) if n as usize != head_dim => {
                return refuse(format!("{key} {n} differs from the head size {head_dim} (not supported)"))
            }
            _ => {}
        }
    }
    // A BOS token is added where the file asks (`Tokenizer::from_gguf`); a space prefix or an
    // EOS token appended would change the text's tokens and are refused.
    typed("tokenizer.ggml.add_bos_token", "a bool", |v| matches!(v, MetaValue::Bool(_)))?;
    for key in ["tokenizer.ggml.add_space_prefix", "tokenizer.ggml.add_eos_token"] {
        if let Some(MetaValue::Bool(true)) = typed(key, "a bool", |v| matches!(v, MetaValue::Bool(_)))? {
            return refuse(format!("{key} is true: not supported (the tokenizer adds no space prefix or EOS)"));
        }
    }
    Ok(())
}

/// The mixture a `llama` GGUF declares (`llama.expert_count` > 0), as llama.cpp runs it: softmax
/// over the router's logits, the top `llama.expert_used_count`, renormalised; experts of
/// `llama.expert_feed_forward_length` (else the FFN size). Keys that would change this (no
/// renormalisation, another gating function, a weight scale, shared experts) are refused.
fn mixture_of(file: &GgufFile) -> Result<Option<MoeConfig>, GgufError> {
    use crate::gguf::MetaValue;
    let refuse = |message: String| GgufError::Missing { path: file.path.clone(), message };
    let count = |key: &str| -> Result<Option<u64>, GgufError> {
        match file.metadata.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) => Ok(Some(n)),
                None => Err(refuse(format!("{key} is {v:?}, not an unsigned integer"))),
            },
        }
    };
    let experts = count("llama.expert_count")?.unwrap_or(0);
    if experts == 0 {
        return Ok(None);
    }
    let Some(top_k) = count("llama.expert_used_count")? else {
        return Err(refuse(format!("llama.expert_count is {experts} but llama.expert_used_count is missing")));
    };
    if let Some(shared) = count("llama.expert_shared_count")?.filter(|&n| n > 0) {
        return Err(refuse(format!("{shared} shared experts (llama.expert_shared_count) are not supported")));
    }
    if let Some(f) = count("llama.expert_gating_func")?.filter(|&f| f != 1) {
        return Err(refuse(format!("llama.expert_gating_func {f} is not supported (1, softmax, only)")));
    }
    if let Some(v) = file.metadata.get("llama.expert_weights_scale") {
        if v.as_f64() != Some(1.0) {
            return Err(refuse(format!("llama.expert_weights_scale {v:?} is not supported (1 only)")));
        }
    }
    // llama.cpp's `llama` architecture renormalises the top k whatever this key says (as candle
    // does): a file that asks otherwise is refused rather than run two ways.
    match file.metadata.get("llama.expert_weights_norm") {
        None | Some(MetaValue::Bool(true)) => {}
        Some(v) => {
            return Err(refuse(format!(
                "llama.expert_weights_norm is {v:?}: the llama architecture renormalises the chosen experts' weights"
            )))
        }
    }
    let gating = Gating::SoftmaxTopKNormalized;
    let expert_ffn = match count("llama.expert_feed_forward_length")? {
        Some(n) => n,
        None => file.require_u64("llama.feed_forward_length")?,
    };
    let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Ok(Some(MoeConfig {
        experts: size(experts),
        top_k: size(top_k),
        expert_ffn: size(expert_ffn),
        gating,
        unrouted_mean: false,
    }))
}

/// The Gemma 3 block pattern: the sliding window from `gemma3.attention.sliding_window`, every
/// 6th block global and local RoPE base 10,000 (what llama.cpp's `gemma3` hard-codes), or what
/// `gemma3.attention.sliding_window_pattern` and `gemma3.rope.freq_base_swa` say where present. Refused: a mixture of experts, and the 62-block model (27B),
/// whose attention llama.cpp scales by `hidden / heads` instead of the head size.
fn gemma3_shape(file: &GgufFile, layers: usize) -> Result<Family, GgufError> {
    let refuse = |message: String| GgufError::Missing { path: file.path.clone(), message };
    if file.metadata.get("gemma3.expert_count").and_then(|v| v.as_u64()).unwrap_or(0) > 0 {
        return Err(refuse("a Gemma 3 mixture of experts (gemma3.expert_count) is not supported".into()));
    }
    if layers == 62 {
        return Err(refuse(
            "Gemma 3 27B (62 blocks) scales attention by hidden / heads, not by the head size: not supported".into(),
        ));
    }
    let sliding_window = file.require_u64("gemma3.attention.sliding_window")? as usize;
    let global_every = match file.metadata.get("gemma3.attention.sliding_window_pattern") {
        None => 6,
        Some(_) => file.require_u64("gemma3.attention.sliding_window_pattern")? as usize,
    };
    let rope_local_base = match file.metadata.get("gemma3.rope.freq_base_swa") {
        None => 10_000.0,
        Some(_) => file.require_f64("gemma3.rope.freq_base_swa")? as f32,
    };
    Ok(Family::Gemma3(Gemma3Shape { sliding_window, global_every, rope_local_base }))
}

/// Expert `E`'s matrix if `tensor` names one (`blk.N.ffn_{gate,up,down}.E.weight`) and the file
/// stacks that part as llama.cpp writes it today (`blk.N.ffn_gate_exps.weight`, dims
/// `[cols, rows, experts]`, each expert a contiguous slab): only that slab is dequantized. `None`
/// if it names no expert or the file has no stack for it (the older per-expert layout, read as it
/// is).
fn stacked_expert(
    file: &GgufFile,
    tensor: &str,
    rows: usize,
    cols: usize,
    experts: usize,
) -> Result<Option<Matrix>, GgufError> {
    let Some((stack, e)) = stacked_name(tensor) else { return Ok(None) };
    let Some(info) = file.tensor(&stack) else { return Ok(None) };
    let bad = |message: String| GgufError::Missing { path: file.path.clone(), message };
    if info.dims != [cols as u64, rows as u64, experts as u64] {
        return Err(bad(format!(
            "tensor {stack} has dims {:?}, the model's shape needs [{cols}, {rows}, {experts}]",
            info.dims
        )));
    }
    let (info, raw) = file.raw(&stack)?;
    let Some((per_block, block_bytes)) = info.dtype.block() else {
        return Err(bad(format!(
            "tensor {stack} is of type {}, which this reader does not dequantize",
            info.dtype.name()
        )));
    };
    // `check_tensor` made dims[0] a multiple of the block: a slab is whole blocks.
    let slab = rows * cols / per_block * block_bytes;
    let mut data = vec![0f32; rows * cols];
    crate::gguf_dequant::dequantize_into(info.dtype, &raw[e * slab..(e + 1) * slab], &mut data);
    Ok(Some(Matrix { rows, cols, data }))
}

/// `blk.N.ffn_gate.E.weight` -> (`blk.N.ffn_gate_exps.weight`, E).
pub(crate) fn stacked_name(tensor: &str) -> Option<(String, usize)> {
    let (head, e) = tensor.strip_suffix(".weight")?.rsplit_once('.')?;
    let e = e.parse().ok()?;
    let (_, part) = head.rsplit_once('.')?;
    ["ffn_gate", "ffn_up", "ffn_down"].contains(&part).then(|| (format!("{head}_exps.weight"), e))
}

impl Checkpoint {
    /// Builds the checkpoint from a parsed GGUF file.
    pub fn from_gguf(file: &GgufFile) -> Result<Self, GgufError> {
        let missing = |message: String| GgufError::Missing { path: file.path.clone(), message };
        let arch = file.require_str("general.architecture")?;
        if arch != "llama" && arch != "gemma3" {
            // llama.cpp's names of the mixture families whose computation the graph lacks.
            let family = match arch {
                "qwen2moe" => "qwen2_moe",
                "qwen3moe" => "qwen3_moe",
                "deepseek2" => "deepseek_v2",
                other => other,
            };
            let why = crate::hf_moe::lacks(family).map(|w| format!(" ({w})")).unwrap_or_default();
            return Err(missing(format!("architecture {arch:?}{why} is not supported (llama and gemma3 only)")));
        }
        let gemma = arch == "gemma3";
        let key = |k: &str| format!("{arch}.{k}");
        let get = |k: &str| -> Result<usize, GgufError> { Ok(file.require_u64(&key(k))? as usize) };
        let (hidden, heads) = (get("embedding_length")?, get("attention.head_count")?);
        let kv_heads = match file.metadata.get(&key("attention.head_count_kv")) {
            Some(_) => get("attention.head_count_kv")?,
            None => heads,
        };
        // Gemma's heads are not hidden / heads wide: the file says how wide.
        let head_dim = if gemma {
            get("attention.key_length")?
        } else {
            if heads == 0 || hidden % heads != 0 {
                return Err(missing(format!("attention shape: {heads} heads do not divide the hidden size {hidden}")));
            }
            hidden / heads
        };
        if let Some(rope) = file.metadata.get(&key("rope.dimension_count")).and_then(|v| v.as_u64()) {
            if rope as usize != head_dim {
                return Err(missing(format!("partial RoPE ({rope} of {head_dim} dimensions) is not supported")));
            }
        }
        refuse_unsupported_keys(file, arch, head_dim)?;
        let vocab = file.tensor("token_embd.weight").map(|t| t.dims.get(1).copied().unwrap_or(0) as usize);
        if let (Some(declared), Some(rows)) = (file.metadata.get(&key("vocab_size")).and_then(|v| v.as_u64()), vocab) {
            if declared as usize != rows {
                return Err(missing(format!("{arch}.vocab_size is {declared}, the embedding has {rows} rows")));
            }
        }
        let layers = get("block_count")?;
        let (family, moe) =
            if gemma { (gemma3_shape(file, layers)?, None) } else { (Family::Llama, mixture_of(file)?) };
        let config = LlamaConfig {
            layers,
            hidden,
            ffn: get("feed_forward_length")?,
            heads,
            kv_heads,
            head_dim,
            vocab: vocab.ok_or_else(|| missing("tensor token_embd.weight is missing".into()))?,
            rms_eps: file.require_f64(&key("attention.layer_norm_rms_epsilon"))? as f32,
            rope_base: match file.metadata.get(&key("rope.freq_base")) {
                Some(_) => file.require_f64(&key("rope.freq_base"))? as f32,
                None if gemma => return Err(missing("gemma3.rope.freq_base is missing".into())),
                None => 10_000.0,
            },
            context: get("context_length")?,
            tied_output: file.tensor("output.weight").is_none(),
            moe,
            family,
        };
        config.check().map_err(missing)?;
        let tokenizer = Tokenizer::from_gguf(file)?;
        // Every token id the tokenizer can make must have an embedding row (as the Hugging Face
        // reader checks): a shorter table fails the forward at the first such token.
        if tokenizer.vocab_size() > config.vocab {
            return Err(missing(format!(
                "the tokenizer has {} tokens, the embedding only {}",
                tokenizer.vocab_size(),
                config.vocab
            )));
        }
        let graph = Graph::decoder(&config);
        let mut weights: Vec<Matrix> = Vec::with_capacity(graph.weights.len());
        let experts = config.moe.as_ref().map_or(0, |m| m.experts);
        for w in &graph.weights {
            if file.tensor(&w.tensor).is_none() {
                if let Some(m) = stacked_expert(file, &w.tensor, w.rows, w.cols, experts)? {
                    weights.push(m);
                    continue;
                }
            }
            let info = file.tensor(&w.tensor).ok_or_else(|| missing(format!("tensor {} is missing", w.tensor)))?;
            let expected: Vec<u64> = if w.rows == 1 { vec![w.cols as u64] } else { vec![w.cols as u64, w.rows as u64] };
            if info.dims != expected {
                return Err(missing(format!(
                    "tensor {} has dims {:?}, the model's shape needs {:?}",
                    w.tensor, info.dims, expected
                )));
            }
            // A tied head is the embedding's own WeightId (`Graph::decoder`): each tensor loads once.
            weights.push(Matrix { rows: w.rows, cols: w.cols, data: file.dequantize(&w.tensor)? });
        }
        let name = file.metadata.get("general.name").and_then(|v| v.as_str()).unwrap_or("unnamed").to_string();
        Ok(Checkpoint { source: file.path.clone(), name, graph, weights, tokenizer })
    }

    /// The file name of the source (without its directory), for reports that travel.
    pub fn file_name(&self) -> &str {
        std::path::Path::new(&self.source).file_name().and_then(|n| n.to_str()).unwrap_or(&self.source)
    }

    /// The matrix of a weight id.
    pub fn weight(&self, id: WeightId) -> &Matrix {
        &self.weights[id.0 as usize]
    }
}

/// A tiny random Llama checkpoint and its GGUF form, for tests of the readers and passes.
#[cfg(test)]
pub(crate) mod test_models {
    use super::*;
    use crate::gguf::{write_gguf, GgmlType, MetaValue, RawTensor};
    use crate::tokenizer::TokenId;
    use lacuna_spec::graph::LlamaConfig;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A byte-level BPE of seven tokens (the last one the end of text).
    pub fn tiny_tokenizer() -> Tokenizer {
        let tokens = ["a", "b", "c", "Ġ", "ab", "Ġa", "<|end|>"].map(String::from).to_vec();
        let merges = vec![("a".into(), "b".into()), ("Ġ".into(), "a".into())];
        Tokenizer::from_parts(tokens, merges, vec![6], Some(TokenId(6)))
    }

    /// Uniform random weights in [-1, 1) for the graph of `config`.
    pub fn random_checkpoint(config: &LlamaConfig, seed: u64) -> Checkpoint {
        let graph = Graph::decoder(config);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let weights = graph
            .weights
            .iter()
            .map(|w| Matrix {
                rows: w.rows,
                cols: w.cols,
                data: (0..w.rows * w.cols).map(|_| rng.random_range(-1.0..1.0)).collect(),
            })
            .collect();
        Checkpoint { source: "random".into(), name: "tiny".into(), graph, weights, tokenizer: tiny_tokenizer() }
    }

    /// The GGUF file of `LlamaConfig::tiny()` with random F32 weights and a tokenizer of `tokens`
    /// single-letter tokens.
    pub fn tiny_gguf(tokens: usize) -> Vec<u8> {
        tiny_gguf_with(tokens, vec![])
    }

    /// Every weight of a checkpoint as an F32 GGUF tensor (GGUF dims: columns first; a gain alone).
    pub fn f32_tensors(ckpt: &Checkpoint) -> Vec<RawTensor> {
        (ckpt.graph.weights.iter().zip(&ckpt.weights))
            .map(|(w, m)| RawTensor {
                name: w.tensor.clone(),
                dims: if w.rows == 1 { vec![w.cols as u64] } else { vec![w.cols as u64, w.rows as u64] },
                dtype: GgmlType::F32,
                data: m.data.iter().flat_map(|v| v.to_le_bytes()).collect(),
            })
            .collect()
    }

    /// [`tiny_gguf`] with more metadata.
    pub fn tiny_gguf_with(tokens: usize, extra: Vec<(String, MetaValue)>) -> Vec<u8> {
        let c = LlamaConfig::tiny();
        let ckpt = random_checkpoint(&c, 1);
        let u32v = |v: usize| MetaValue::U32(v as u32);
        let strings = |v: Vec<String>| MetaValue::Array(v.into_iter().map(MetaValue::String).collect());
        let meta = vec![
            ("general.architecture".to_string(), MetaValue::String("llama".into())),
            ("llama.block_count".into(), u32v(c.layers)),
            ("llama.embedding_length".into(), u32v(c.hidden)),
            ("llama.feed_forward_length".into(), u32v(c.ffn)),
            ("llama.attention.head_count".into(), u32v(c.heads)),
            ("llama.attention.head_count_kv".into(), u32v(c.kv_heads)),
            ("llama.attention.layer_norm_rms_epsilon".into(), MetaValue::F32(c.rms_eps)),
            ("llama.context_length".into(), u32v(c.context)),
            ("tokenizer.ggml.model".into(), MetaValue::String("gpt2".into())),
            ("tokenizer.ggml.tokens".into(), strings((0..tokens).map(|i| format!("t{i}")).collect())),
            ("tokenizer.ggml.merges".into(), strings(vec!["t 0".into()])),
        ]
        .into_iter()
        .chain(extra)
        .collect::<Vec<_>>();
        let tensors = f32_tensors(&ckpt);
        write_gguf(&meta, &tensors)
    }

    /// A valid program of the tiny random model on the `tiny` arch (no pruning, no thresholds),
    /// and its image.
    pub fn tiny_program() -> (lacuna_spec::program::Program, Vec<u8>) {
        use crate::passes::{act_thresholds::Thresholds, lower::lower_linears};
        use lacuna_spec::program::Settings;
        let arch = lacuna_spec::Arch::preset("tiny").unwrap();
        let ckpt = random_checkpoint(&LlamaConfig::tiny(), 5);
        let lowered = lower_linears(&ckpt, &Thresholds::default(), &arch, Default::default()).unwrap();
        let settings = Settings {
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
        crate::program::assemble(&ckpt.graph, &lowered, &arch, "tiny (random)".into(), settings)
    }

    #[test]
    fn gguf_keys_that_change_the_computation_are_honoured_or_refused() {
        let open = |extra: Vec<(&str, MetaValue)>| {
            let extra = extra.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            Checkpoint::from_gguf(&GgufFile::parse(tiny_gguf_with(10, extra), "k.gguf").unwrap())
        };
        // What the graph does anyway is accepted.
        open(vec![
            ("llama.rope.scaling.type", MetaValue::String("none".into())),
            ("llama.attention.key_length", MetaValue::U32(2)),
            ("llama.vocab_size", MetaValue::U32(10)),
            ("tokenizer.ggml.add_bos_token", MetaValue::Bool(false)),
        ])
        .unwrap();
        // A BOS token is added where the file asks.
        let bos = open(vec![
            ("tokenizer.ggml.add_bos_token", MetaValue::Bool(true)),
            ("tokenizer.ggml.bos_token_id", MetaValue::U32(3)),
        ])
        .unwrap();
        assert_eq!(bos.tokenizer.encode("t1")[0], crate::tokenizer::TokenId(3));
        let cases: Vec<(Vec<(&str, MetaValue)>, &str)> = vec![
            (vec![("llama.rope.scaling.type", MetaValue::String("yarn".into()))], "RoPE scaling"),
            (vec![("llama.rope.freq_scale", MetaValue::F32(0.25))], "freq_scale"),
            (vec![("llama.attention.value_length", MetaValue::U32(4))], "value_length"),
            (vec![("llama.expert_count", MetaValue::U32(8))], "expert_used_count is missing"),
            (vec![("tokenizer.ggml.add_bos_token", MetaValue::Bool(true))], "bos_token_id is missing"),
            (vec![("tokenizer.ggml.add_space_prefix", MetaValue::Bool(true))], "add_space_prefix"),
            (vec![("llama.final_logit_softcapping", MetaValue::F32(30.0))], "soft-capping"),
            (vec![("llama.vocab_size", MetaValue::U32(12))], "llama.vocab_size is 12"),
            // A key of another type than expected is refused, not read as absent.
            (vec![("llama.rope.freq_scale", MetaValue::U32(4))], "freq_scale 4"),
            (vec![("llama.rope.scaling.type", MetaValue::U32(1))], "not a string"),
            (
                vec![
                    ("llama.rope.scaling.type", MetaValue::String("linear".into())),
                    ("llama.rope.scaling.factor", MetaValue::U32(4)),
                ],
                "factor 4",
            ),
            (vec![("tokenizer.ggml.add_bos_token", MetaValue::U8(1))], "not a bool"),
        ];
        for (extra, want) in cases {
            let e = open(extra).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("k.gguf"), "{want}: {e}");
        }
    }

    #[test]
    fn a_gguf_whose_embedding_is_shorter_than_its_tokenizer_is_refused() {
        let vocab = LlamaConfig::tiny().vocab;
        let ok = GgufFile::parse(tiny_gguf(vocab), "ok.gguf").unwrap();
        Checkpoint::from_gguf(&ok).unwrap();
        let short = GgufFile::parse(tiny_gguf(vocab + 2), "short.gguf").unwrap();
        let e = Checkpoint::from_gguf(&short).unwrap_err().to_string();
        assert!(e.contains("short.gguf") && e.contains("12 tokens, the embedding only 10"), "{e}");
    }
}
