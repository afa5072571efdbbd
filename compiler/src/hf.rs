//! Hugging Face checkpoints: a directory with `config.json`, the weights as safetensors
//! (`model.safetensors`, or the shards `model.safetensors.index.json` names) and
//! `tokenizer.json`, as `transformers` saves a Llama-family model (`llama`, `mistral`, and the
//! mixture `mixtral`, whose expert layout and window are [`crate::hf_moe`]'s).
//!
//! Contract: [`open`] builds the same [`Checkpoint`] that a GGUF file of the same weights gives,
//! logit for logit. Two layouts differ between the formats and are mapped here:
//! - tensor names: `model.layers.3.self_attn.q_proj.weight` is the graph's `blk.3.attn_q.weight`
//!   ([`hf_tensor_name`]);
//! - the rows of the query and key projections: Hugging Face's Llama rotates the halves of each
//!   head (`rotate_half`: dimension `i` pairs with `i + d/2`), the graph (like GGUF and llama.cpp)
//!   rotates adjacent pairs (`2i` with `2i + 1`). [`rope_rows_to_interleaved`] permutes the rows of
//!   each head so that both compute the same attention, as llama.cpp's converter does.
//!
//! Weights may be F32, F16 or BF16 (widened to f32 exactly). `config.json` is read as the fields
//! this graph needs; the ones that would change the computation (`rope_scaling`, biases, an
//! activation other than SiLU, another model type) are checked and refused, never
//! ignored. Unknown fields are allowed: real configs carry dozens that do not concern the graph
//! (this is an outside format, unlike our own configs, which deny unknown fields).
//!
//! [`write_dir`] writes a checkpoint back in this layout (F32, optionally in shards): the tests
//! use it to check the reader against the GGUF path on the real model.

use crate::checkpoint::{Checkpoint, CheckpointError, Matrix};
use crate::tokenizer::{TokenId, Tokenizer};
use lacuna_spec::graph::{Graph, LlamaConfig};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The fields of a Hugging Face `config.json` this reader uses or checks.
#[derive(Debug, Deserialize)]
struct HfConfig {
    model_type: Option<String>,
    hidden_size: usize,
    intermediate_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    num_key_value_heads: Option<usize>,
    head_dim: Option<usize>,
    vocab_size: usize,
    rms_norm_eps: f64,
    rope_theta: Option<f64>,
    max_position_embeddings: usize,
    /// `transformers`' LlamaConfig defaults this to false.
    #[serde(default)]
    tie_word_embeddings: bool,
    rope_scaling: Option<serde_json::Value>,
    /// `transformers` 5 writes the RoPE settings here (`rope_theta`, `rope_type`, scaling).
    rope_parameters: Option<serde_json::Value>,
    hidden_act: Option<String>,
    #[serde(default)]
    attention_bias: bool,
    #[serde(default)]
    mlp_bias: bool,
    eos_token_id: Option<serde_json::Value>,
    #[serde(rename = "_name_or_path")]
    name_or_path: Option<String>,
    /// Experts and the attention window (Mistral, Mixtral).
    #[serde(flatten)]
    moe: crate::hf_moe::MoeFields,
}

/// The graph's (GGUF) tensor name -> the Hugging Face Llama name.
pub fn hf_tensor_name(graph_name: &str) -> Option<String> {
    match graph_name {
        "token_embd.weight" => return Some("model.embed_tokens.weight".into()),
        "output_norm.weight" => return Some("model.norm.weight".into()),
        "output.weight" => return Some("lm_head.weight".into()),
        _ => {}
    }
    let rest = graph_name.strip_prefix("blk.")?;
    let (layer, part) = rest.split_once('.')?;
    let part = part.strip_suffix(".weight")?;
    let hf = match part {
        "attn_norm" => "input_layernorm",
        "attn_q" => "self_attn.q_proj",
        "attn_k" => "self_attn.k_proj",
        "attn_v" => "self_attn.v_proj",
        "attn_output" => "self_attn.o_proj",
        "ffn_norm" => "post_attention_layernorm",
        "ffn_gate" => "mlp.gate_proj",
        "ffn_up" => "mlp.up_proj",
        "ffn_down" => "mlp.down_proj",
        _ => return crate::hf_moe::tensor_name(layer, part),
    };
    layer.parse::<u32>().ok()?;
    Some(format!("model.layers.{layer}.{hf}.weight"))
}

/// How many heads' rows a projection holds, if its rows need the RoPE permutation.
fn rope_heads(graph_name: &str, config: &LlamaConfig) -> Option<usize> {
    if graph_name.ends_with(".attn_q.weight") {
        Some(config.heads)
    } else if graph_name.ends_with(".attn_k.weight") {
        Some(config.kv_heads)
    } else {
        None
    }
}

/// Permutes the rows of a query or key projection from Hugging Face's half-split RoPE layout to
/// the interleaved one: within each head, row `half * d/2 + i` moves to row `2i + half`.
pub fn rope_rows_to_interleaved(m: &Matrix, heads: usize) -> Matrix {
    permute_rope_rows(m, heads, |i, half, d| (half * d / 2 + i, 2 * i + half))
}

/// The inverse of [`rope_rows_to_interleaved`]: interleaved rows back to the half-split layout.
pub fn rope_rows_to_half_split(m: &Matrix, heads: usize) -> Matrix {
    permute_rope_rows(m, heads, |i, half, d| (2 * i + half, half * d / 2 + i))
}

/// Moves row `from` of each head to row `to`, `(from, to) = map(i, half, head_dim)`.
fn permute_rope_rows(m: &Matrix, heads: usize, map: impl Fn(usize, usize, usize) -> (usize, usize)) -> Matrix {
    let d = m.rows / heads;
    let mut out = Matrix { rows: m.rows, cols: m.cols, data: vec![0.0; m.data.len()] };
    for h in 0..heads {
        for half in 0..2 {
            for i in 0..d / 2 {
                let (from, to) = map(i, half, d);
                let (from, to) = (h * d + from, h * d + to);
                out.data[to * m.cols..(to + 1) * m.cols].copy_from_slice(m.row(from));
            }
        }
    }
    out
}

fn invalid(path: &Path, message: impl Into<String>) -> CheckpointError {
    CheckpointError::Invalid { path: path.display().to_string(), message: message.into() }
}

fn read(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    std::fs::read(path).map_err(|e| invalid(path, e.to_string()))
}

/// The model's shape from `config.json`, with every setting the graph cannot compute refused.
fn llama_config(path: &Path, c: &HfConfig) -> Result<LlamaConfig, CheckpointError> {
    let refuse = |what: String| Err(invalid(path, format!("{what} is not supported (Llama family only)")));
    let model_type = c.model_type.as_deref().unwrap_or("llama");
    if let Some(why) = crate::hf_moe::refusal(model_type) {
        return Err(invalid(path, why));
    }
    if let Some(s) = c.rope_scaling.as_ref().filter(|s| !s.is_null()) {
        return refuse(format!("rope_scaling {s}"));
    }
    if let Some(a) = c.hidden_act.as_deref().filter(|a| *a != "silu") {
        return refuse(format!("hidden_act {a:?}"));
    }
    if c.attention_bias || c.mlp_bias {
        return refuse("a linear layer with a bias".into());
    }
    let has_theta = c.rope_theta.is_some() || c.rope_parameters.as_ref().is_some_and(|p| p.get("rope_theta").is_some());
    if let Some(why) = crate::hf_moe::missing_default(model_type, &c.moe, has_theta) {
        return Err(invalid(path, why));
    }
    let rope_base = rope_theta(c).map_err(|what| invalid(path, what))?;
    let heads = c.num_attention_heads;
    let head_dim = c.head_dim.unwrap_or(if heads == 0 { 0 } else { c.hidden_size / heads });
    let config = LlamaConfig {
        layers: c.num_hidden_layers,
        hidden: c.hidden_size,
        ffn: c.intermediate_size,
        heads,
        kv_heads: c.num_key_value_heads.unwrap_or(heads),
        head_dim,
        vocab: c.vocab_size,
        rms_eps: c.rms_norm_eps as f32,
        rope_base,
        context: crate::hf_moe::context(&c.moe, c.max_position_embeddings),
        tied_output: c.tie_word_embeddings,
        moe: crate::hf_moe::mixture(model_type, &c.moe, c.intermediate_size).map_err(|e| invalid(path, e))?,
        family: lacuna_spec::graph::Family::Llama,
    };
    config.check().map_err(|e| invalid(path, e))?;
    Ok(config)
}

/// The RoPE base: `rope_theta`, at the top level (`transformers` 4) or in `rope_parameters`
/// (`transformers` 5), 10,000 when neither has it. `rope_parameters` is honoured or refused as a
/// whole: a RoPE type other than `default`, any scaling key, or two different bases is an error.
fn rope_theta(c: &HfConfig) -> Result<f32, String> {
    let mut theta = c.rope_theta;
    if let Some(p) = c.rope_parameters.as_ref().filter(|p| !p.is_null()) {
        let map = p.as_object().ok_or_else(|| format!("rope_parameters {p} is not an object"))?;
        for (key, v) in map {
            match (key.as_str(), v) {
                ("rope_type", serde_json::Value::String(t)) if t == "default" => {}
                ("rope_theta", v) => {
                    let t = v.as_f64().ok_or_else(|| format!("rope_parameters.rope_theta {v} is not a number"))?;
                    if c.rope_theta.is_some_and(|top| top != t) {
                        return Err(format!(
                            "rope_theta {} and rope_parameters.rope_theta {t} disagree",
                            c.rope_theta.unwrap_or_default()
                        ));
                    }
                    theta = Some(t);
                }
                _ => return Err(format!("rope_parameters.{key} = {v} is not supported (plain RoPE only)")),
            }
        }
    }
    let theta = theta.unwrap_or(10_000.0);
    if !(theta.is_finite() && theta > 0.0 && theta <= f32::MAX as f64) {
        return Err(format!("rope_theta {theta} is out of range"));
    }
    Ok(theta as f32)
}

/// The safetensors files of a checkpoint directory, and which of them holds each tensor (`None`:
/// a single `model.safetensors` holds them all).
fn weight_files(dir: &Path) -> Result<(Vec<PathBuf>, Option<HashMap<String, usize>>), CheckpointError> {
    let index = dir.join("model.safetensors.index.json");
    if !index.exists() {
        let single = dir.join("model.safetensors");
        if !single.exists() {
            return Err(invalid(dir, "no model.safetensors or model.safetensors.index.json"));
        }
        return Ok((vec![single], None));
    }
    let (files, map) = parse_shard_index(&read(&index)?, &index)?;
    Ok((files.iter().map(|f| dir.join(f)).collect(), Some(map)))
}

/// Parses a `model.safetensors.index.json` (`path` names it in errors): the shard file names,
/// sorted and distinct, and for each tensor the index of its shard. A shard must be a plain file
/// name of the checkpoint's directory, never a path that leaves it.
pub fn parse_shard_index(bytes: &[u8], path: &Path) -> Result<(Vec<String>, HashMap<String, usize>), CheckpointError> {
    #[derive(Deserialize)]
    struct Index {
        weight_map: BTreeMap<String, String>,
    }
    let parsed: Index = serde_json::from_slice(bytes).map_err(|e| invalid(path, format!("not a shard index: {e}")))?;
    let mut files: Vec<String> = parsed.weight_map.values().cloned().collect();
    files.sort();
    files.dedup();
    for f in &files {
        if f.is_empty() || f.contains('/') || f.contains('\\') || f == ".." || f == "." {
            return Err(invalid(path, format!("shard {f:?} is not a file name of this directory")));
        }
    }
    // Every value is one of `files` (they were collected from the values).
    let map = parsed.weight_map.iter().map(|(t, f)| (t.clone(), files.binary_search(f).unwrap_or(0))).collect();
    Ok((files, map))
}

/// One tensor widened to f32, with its shape checked against the graph's.
fn tensor_f32(st: &SafeTensors, file: &Path, name: &str, expected: &[usize]) -> Result<Vec<f32>, CheckpointError> {
    let t = st.tensor(name).map_err(|_| invalid(file, format!("tensor {name} is missing")))?;
    if t.shape() != expected {
        return Err(invalid(file, format!("tensor {name} has shape {:?}, the config needs {expected:?}", t.shape())));
    }
    let b = t.data();
    Ok(match t.dtype() {
        Dtype::F32 => b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        Dtype::F16 => b.chunks_exact(2).map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
        Dtype::BF16 => b.chunks_exact(2).map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32()).collect(),
        other => {
            return Err(invalid(file, format!("tensor {name} has type {other:?} (supported: F32, F16, BF16)")));
        }
    })
}

/// What a `config.json` says: the model's shape, its end-of-sequence token, its name.
#[derive(Debug)]
pub struct ModelConfig {
    /// The shape, checked ([`LlamaConfig::check`]).
    pub shape: LlamaConfig,
    /// `eos_token_id` (the first, where it is a list).
    pub eos: Option<TokenId>,
    /// `_name_or_path`, where set.
    pub name: Option<String>,
}

/// Reads the bytes of a `config.json` (`path` names them in errors).
pub fn parse_config(bytes: &[u8], path: &Path) -> Result<ModelConfig, CheckpointError> {
    let hf: HfConfig =
        serde_json::from_slice(bytes).map_err(|e| invalid(path, format!("not a Llama config.json: {e}")))?;
    Ok(ModelConfig {
        shape: llama_config(path, &hf)?,
        eos: eos_of(&hf),
        name: hf.name_or_path.filter(|n| !n.is_empty()),
    })
}

/// Reads a Hugging Face Llama checkpoint directory.
pub fn open(dir: &Path) -> Result<Checkpoint, CheckpointError> {
    let config_path = dir.join("config.json");
    let ModelConfig { shape: config, eos, name } = parse_config(&read(&config_path)?, &config_path)?;
    let tokenizer = read_tokenizer(&dir.join("tokenizer.json"), eos)?;
    if tokenizer.vocab_size() > config.vocab {
        return Err(invalid(
            dir,
            format!("the tokenizer has {} tokens, the embedding only {}", tokenizer.vocab_size(), config.vocab),
        ));
    }
    let (files, map) = weight_files(dir)?;
    let blobs: Vec<Vec<u8>> = files.iter().map(|f| read(f)).collect::<Result<_, _>>()?;
    let parsed: Vec<SafeTensors> = blobs
        .iter()
        .zip(&files)
        .map(|(b, f)| SafeTensors::deserialize(b).map_err(|e| invalid(f, format!("not a valid safetensors file: {e}"))))
        .collect::<Result<_, _>>()?;
    let graph = Graph::decoder(&config);
    let mut weights = Vec::with_capacity(graph.weights.len());
    for w in &graph.weights {
        let name = hf_tensor_name(&w.tensor).expect("every tensor of Graph::decoder has a Hugging Face name");
        let at = match &map {
            None => 0,
            Some(map) => {
                *map.get(&name).ok_or_else(|| invalid(dir, format!("tensor {name} is in no shard of the index")))?
            }
        };
        let shape: Vec<usize> = if w.rows == 1 { vec![w.cols] } else { vec![w.rows, w.cols] };
        let m = Matrix { rows: w.rows, cols: w.cols, data: tensor_f32(&parsed[at], &files[at], &name, &shape)? };
        weights.push(match rope_heads(&w.tensor, &config) {
            Some(heads) => rope_rows_to_interleaved(&m, heads),
            None => m,
        });
    }
    let name =
        name.or_else(|| dir.file_name().and_then(|n| n.to_str()).map(String::from)).unwrap_or_else(|| "unnamed".into());
    Ok(Checkpoint { source: dir.display().to_string(), name, graph, weights, tokenizer })
}

/// `eos_token_id` is a number or a list of them (the first is the end of a sequence).
fn eos_of(c: &HfConfig) -> Option<TokenId> {
    let v = c.eos_token_id.as_ref()?;
    let first = if let Some(list) = v.as_array() { list.first()? } else { v };
    first.as_u64().and_then(|n| u32::try_from(n).ok()).map(TokenId)
}

/// The parts of a `tokenizer.json` the BPE needs.
#[derive(Deserialize)]
struct TokenizerJson {
    model: BpeModel,
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<serde_json::Value>,
    pre_tokenizer: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct BpeModel {
    #[serde(rename = "type")]
    kind: String,
    vocab: HashMap<String, u32>,
    merges: Vec<Merge>,
    #[serde(default)]
    byte_fallback: bool,
}

/// `tokenizers` writes a merge as `"a b"` (before 0.20) or as `["a", "b"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Merge {
    Joined(String),
    Pair(String, String),
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    #[serde(default)]
    special: bool,
}

/// The pre-tokenizer [`Tokenizer`] implements: single digits, then byte-level with GPT-2's regex
/// and no prefix space (SmolLM2's).
fn pre_tokenizer_json() -> serde_json::Value {
    serde_json::json!({
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Digits", "individual_digits": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}
        ]
    })
}

/// Whether a `tokenizer.json` pre-tokenizer is the one [`Tokenizer`] implements.
fn is_supported_pre_tokenizer(v: &serde_json::Value) -> bool {
    let Some(steps) = v.get("pretokenizers").and_then(|p| p.as_array()) else { return false };
    let field = |s: &serde_json::Value, k: &str| s.get(k).cloned().unwrap_or(serde_json::Value::Null);
    v.get("type").and_then(|t| t.as_str()) == Some("Sequence")
        && steps.len() == 2
        && field(&steps[0], "type") == "Digits"
        && field(&steps[0], "individual_digits") == true
        && field(&steps[1], "type") == "ByteLevel"
        && field(&steps[1], "add_prefix_space") == false
        && field(&steps[1], "use_regex") != false
}

/// Builds the tokenizer of a `tokenizer.json` file (byte-level BPE only).
pub fn read_tokenizer(path: &Path, eos: Option<TokenId>) -> Result<Tokenizer, CheckpointError> {
    parse_tokenizer(&read(path)?, path, eos)
}

/// Builds the tokenizer of the bytes of a `tokenizer.json` (`path` names them in errors).
pub fn parse_tokenizer(bytes: &[u8], path: &Path, eos: Option<TokenId>) -> Result<Tokenizer, CheckpointError> {
    let t: TokenizerJson =
        serde_json::from_slice(bytes).map_err(|e| invalid(path, format!("not a BPE tokenizer.json: {e}")))?;
    if t.model.kind != "BPE" || t.model.byte_fallback {
        return Err(invalid(path, format!("model {} is not byte-level BPE", t.model.kind)));
    }
    if t.normalizer.as_ref().is_some_and(|n| !n.is_null()) {
        return Err(invalid(path, "a normalizer is not supported"));
    }
    match &t.pre_tokenizer {
        Some(p) if is_supported_pre_tokenizer(p) => {}
        other => {
            return Err(invalid(
                path,
                format!(
                    "pre-tokenizer {} is not supported (only Digits(individual) then ByteLevel without prefix space)",
                    other.as_ref().map_or("null".into(), |p| p.to_string())
                ),
            ));
        }
    }
    let entries: Vec<(u32, &str)> = t
        .model
        .vocab
        .iter()
        .map(|(s, &i)| (i, s.as_str()))
        .chain(t.added_tokens.iter().map(|a| (a.id, a.content.as_str())))
        .collect();
    // Ids are 0..n: one larger than the number of entries has a gap (and must not size a table).
    let len = entries.iter().map(|&(i, _)| i as usize + 1).max().unwrap_or(0);
    if len > entries.len() {
        return Err(invalid(
            path,
            format!("token ids reach {} with only {} tokens (ids must be 0..n)", len - 1, entries.len()),
        ));
    }
    let mut tokens: Vec<Option<String>> = vec![None; len];
    for (i, s) in entries {
        match &tokens[i as usize] {
            Some(prev) if prev != s => {
                return Err(invalid(path, format!("token id {i} is both {prev:?} and {s:?}")));
            }
            _ => tokens[i as usize] = Some(s.to_string()),
        }
    }
    let tokens: Vec<String> = tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| t.ok_or_else(|| invalid(path, format!("token id {i} has no token (ids must be 0..{len})"))))
        .collect::<Result<_, _>>()?;
    let mut merges = Vec::with_capacity(t.model.merges.len());
    for (rank, m) in t.model.merges.into_iter().enumerate() {
        merges.push(match m {
            Merge::Pair(a, b) => (a, b),
            Merge::Joined(s) => match s.split_once(' ') {
                Some((a, b)) => (a.to_string(), b.to_string()),
                None => return Err(invalid(path, format!("merge #{rank} {s:?} is not two symbols"))),
            },
        });
    }
    let control = t.added_tokens.iter().filter(|a| a.special).map(|a| a.id).collect();
    Ok(Tokenizer::from_parts(tokens, merges, control, eos))
}

/// The `tokenizer.json` of a tokenizer (the layout [`read_tokenizer`] reads).
pub fn tokenizer_json(t: &Tokenizer) -> serde_json::Value {
    let control = t.control_tokens();
    // As `tokenizers` writes it: every token in the model's vocabulary, the control tokens also
    // among the added tokens (one only there would get a new id from `tokenizers`).
    let vocab: serde_json::Map<String, serde_json::Value> = (0..t.vocab_size() as u32)
        .map(TokenId)
        .map(|id| (t.token(id).unwrap_or_default().to_string(), id.0.into()))
        .collect();
    let added: Vec<serde_json::Value> = control
        .iter()
        .map(|&id| {
            serde_json::json!({"id": id.0, "content": t.token(id), "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let merges: Vec<String> = t.merges().into_iter().map(|(a, b)| format!("{a} {b}")).collect();
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer_json(),
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": vocab, "merges": merges}
    })
}

/// Writes a checkpoint as a Hugging Face Llama directory: `config.json`, `tokenizer.json` and the
/// weights in F32 (exact), in `shards` files with an index when `shards > 1`. Query and key rows
/// go back to the half-split RoPE layout.
pub fn write_dir(ckpt: &Checkpoint, dir: &Path, shards: usize) -> Result<(), CheckpointError> {
    let c = &ckpt.graph.config;
    if !c.family.is_llama() {
        return Err(invalid(
            dir,
            format!("writing a {} checkpoint is not supported (Llama family only)", c.family.name()),
        ));
    }
    if !ckpt.tokenizer.is_byte_level() {
        return Err(invalid(dir, "writing a SentencePiece tokenizer is not supported (byte-level BPE only)"));
    }
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| invalid(&p, e.to_string()))
    };
    std::fs::create_dir_all(dir).map_err(|e| invalid(dir, e.to_string()))?;
    let mut config = crate::hf_moe::config_fields(c.moe.as_ref(), c.ffn).map_err(|e| invalid(dir, e))?;
    let common = serde_json::json!({
        "_name_or_path": ckpt.name,
        "hidden_size": c.hidden,
        "intermediate_size": c.ffn,
        "num_hidden_layers": c.layers,
        "num_attention_heads": c.heads,
        "num_key_value_heads": c.kv_heads,
        "head_dim": c.head_dim,
        "vocab_size": c.vocab,
        "rms_norm_eps": c.rms_eps,
        "rope_theta": c.rope_base,
        "rope_scaling": null,
        "max_position_embeddings": c.context,
        "tie_word_embeddings": c.tied_output,
        "hidden_act": "silu",
        "eos_token_id": ckpt.tokenizer.eos.map(|t| t.0),
        "torch_dtype": "float32",
    });
    if let (Some(to), Some(from)) = (config.as_object_mut(), common.as_object()) {
        to.extend(from.clone());
    }
    write("config.json", serde_json::to_string_pretty(&config).expect("JSON of plain values").as_bytes())?;
    write("tokenizer.json", tokenizer_json(&ckpt.tokenizer).to_string().as_bytes())?;
    // Each tensor once (a tied head is the embedding's WeightId), in HF names and layout.
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (i, w) in ckpt.graph.weights.iter().enumerate() {
        let name = hf_tensor_name(&w.tensor)
            .ok_or_else(|| invalid(dir, format!("tensor {} has no Hugging Face name", w.tensor)))?;
        if tensors.iter().any(|t| t.0 == name) {
            continue;
        }
        let m = &ckpt.weights[i];
        let m = match rope_heads(&w.tensor, c) {
            Some(heads) => rope_rows_to_half_split(m, heads),
            None => m.clone(),
        };
        let shape = if w.rows == 1 { vec![w.cols] } else { vec![w.rows, w.cols] };
        tensors.push((name, shape, m.data.iter().flat_map(|v| v.to_le_bytes()).collect()));
    }
    let per = tensors.len().div_ceil(shards.clamp(1, tensors.len().max(1)));
    let shards = tensors.len().div_ceil(per);
    let mut weight_map = BTreeMap::new();
    for (s, chunk) in tensors.chunks(per).enumerate() {
        let file = if shards == 1 {
            "model.safetensors".to_string()
        } else {
            format!("model-{:05}-of-{:05}.safetensors", s + 1, shards)
        };
        let views = chunk
            .iter()
            .map(|(n, shape, b)| {
                let view = TensorView::new(Dtype::F32, shape.clone(), b).map_err(|e| invalid(dir, e.to_string()))?;
                weight_map.insert(n.clone(), file.clone());
                Ok((n.clone(), view))
            })
            .collect::<Result<Vec<_>, CheckpointError>>()?;
        let bytes = safetensors::serialize(views, None).map_err(|e| invalid(dir, e.to_string()))?;
        write(&file, &bytes)?;
    }
    if shards > 1 {
        let index = serde_json::json!({"metadata": {}, "weight_map": weight_map});
        write("model.safetensors.index.json", index.to_string().as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "hf_tests.rs"]
mod tests;
