//! Decode traces: what every linear layer of a real model saw, step by step, in a compact,
//! versioned file (`.lctr`) that the cycle model replays. The format is documented in
//! `traces/README.md`; in short:
//!
//! ```text
//!   0   8  magic      "LACUNTRC"
//!   8   2  version    u16 = 1
//!  10   2  reserved   u16 = 0
//!  12   4  header     u32 = length of the header JSON
//!  16      header     JSON: TraceHeader (model, text, tokens, the inputs and their readers)
//! then per step, per input in header order:
//!          mask       ceil(len / 8) bytes, bit j (LSB first in byte j / 8) = activation j stored
//!          values     one FP16 per set bit, in order
//! trailer
//!   0   4  crc32      CRC-32 (IEEE) of every byte before it
//! ```
//!
//! An input is stored once per step however many layers read it (q, k and v share one). An
//! activation is stored iff it is active under the smallest threshold of its readers (nonzero
//! and `|x| >=` that threshold, in FP16); the others read back as zero, which every reader skips
//! anyway, so a replay runs the very jobs the model ran. `routing` is the experts each token was
//! routed to in each MoE layer ([`StepRouting`], typed, one per step); null for a dense model.
//!
//! Contract: [`read_trace`] returns a trace only if the magic, version, header, every step and
//! the CRC are consistent, else a [`TraceError`] naming the first problem; it never panics and
//! never allocates more than the input's length warrants.

use crate::graph::NodeId;
use crate::ActivationFilter;
use half::f16;
use serde::{Deserialize, Serialize};

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"LACUNTRC";
/// The format version this code reads and writes.
pub const VERSION: u16 = 1;

/// A linear layer that reads an input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceReader {
    /// The linear node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// Its FP16 activation threshold, as bits.
    pub threshold_bits: u16,
}

/// One input vector of the step (the input of one or more linear layers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceInput {
    /// The node that produces it.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// Its length (K of its readers).
    pub len: usize,
    /// The layers that read it.
    pub readers: Vec<TraceReader>,
}

/// What the trace is of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceHeader {
    /// The model (checkpoint name and file).
    pub model: String,
    /// Weight sparsity and method the model was pruned with, as the program records them.
    pub settings: String,
    /// The prompt text.
    pub prompt: String,
    /// The token of each step (prompt tokens, then generated ones).
    pub tokens: Vec<u32>,
    /// How many of the tokens are the prompt's.
    pub prompt_tokens: usize,
    /// The inputs recorded at each step.
    pub inputs: Vec<TraceInput>,
    /// Expert routing, one entry per step, where the model has experts (none for a dense model).
    pub routing: Option<Vec<StepRouting>>,
}

/// An expert of a MoE layer: the spec's one expert id.
pub use crate::moe::ExpertId;

/// Where one step's token went in every MoE layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepRouting {
    /// One per MoE layer, in layer order.
    pub layers: Vec<LayerRouting>,
}

/// The experts one token was routed to in one MoE layer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerRouting {
    /// The block.
    pub layer: crate::graph::LayerId,
    /// The experts chosen (top-k), best first.
    pub experts: Vec<ExpertId>,
    /// Their gate weights, in the same order.
    pub weights: Vec<f32>,
}

/// A decode trace: header and, per step, per input, the FP16 activation vector.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// What it is of.
    pub header: TraceHeader,
    /// `steps[s][i]`: step s, input i (header order), `len` FP16 values.
    pub steps: Vec<Vec<Vec<f16>>>,
}

/// Why a trace file was refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TraceError {
    /// Not a trace, or corrupted.
    #[error("not a valid lacuna trace: {0}")]
    Malformed(String),
    /// Written by a newer format version.
    #[error("trace format version {0} is not supported (this build reads version {VERSION})")]
    Version(u16),
    /// The CRC does not match.
    #[error("trace CRC mismatch: stored {stored:08x}, computed {computed:08x} (the file is corrupted)")]
    Crc {
        /// In the file.
        stored: u32,
        /// Of the bytes.
        computed: u32,
    },
}

impl TraceInput {
    /// The smallest threshold among the readers: what decides which activations are stored.
    pub fn store_filter(&self) -> ActivationFilter {
        let t = self.readers.iter().map(|r| f16::from_bits(r.threshold_bits)).fold(f16::INFINITY, f16::min);
        ActivationFilter { threshold: if t.is_finite() { t } else { f16::ZERO } }
    }
}

/// Writes a trace; activations inactive under every reader's threshold are stored as absent.
pub fn write_trace(t: &Trace) -> Vec<u8> {
    let header = serde_json::to_vec(&t.header).expect("the trace header serializes");
    let mut out = Vec::new();
    out.extend(MAGIC);
    out.extend(VERSION.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out.extend((header.len() as u32).to_le_bytes());
    out.extend(&header);
    for step in &t.steps {
        for (input, x) in t.header.inputs.iter().zip(step) {
            let filter = input.store_filter();
            let mut mask = vec![0u8; input.len.div_ceil(8)];
            let mut values = Vec::new();
            for (j, &v) in x.iter().enumerate() {
                if filter.is_active(v) {
                    mask[j / 8] |= 1 << (j % 8);
                    values.extend(v.to_le_bytes());
                }
            }
            out.extend(mask);
            out.extend(values);
        }
    }
    let crc = crc32fast::hash(&out);
    out.extend(crc.to_le_bytes());
    out
}

/// Reads and checks a trace.
pub fn read_trace(bytes: &[u8]) -> Result<Trace, TraceError> {
    let bad = |m: &str| TraceError::Malformed(m.to_string());
    if bytes.len() < 20 || bytes[..8] != MAGIC {
        return Err(bad("no LACUNTRC magic (or shorter than the smallest trace)"));
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != VERSION {
        return Err(TraceError::Version(version));
    }
    let body = &bytes[..bytes.len() - 4];
    let stored = u32::from_le_bytes([
        bytes[bytes.len() - 4],
        bytes[bytes.len() - 3],
        bytes[bytes.len() - 2],
        bytes[bytes.len() - 1],
    ]);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(TraceError::Crc { stored, computed });
    }
    let hlen = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
    let header_bytes = body.get(16..16usize.saturating_add(hlen)).ok_or_else(|| bad("the header runs past the end"))?;
    let header: TraceHeader =
        serde_json::from_slice(header_bytes).map_err(|e| TraceError::Malformed(format!("header: {e}")))?;
    if let Some(routing) = &header.routing {
        if routing.len() != header.tokens.len() {
            return Err(bad(&format!("routing for {} steps, but {} tokens", routing.len(), header.tokens.len())));
        }
        for (s, step) in routing.iter().enumerate() {
            if let Some(l) = step.layers.iter().find(|l| l.experts.len() != l.weights.len()) {
                return Err(bad(&format!(
                    "step {s}, layer {}: {} experts but {} gate weights",
                    l.layer.0,
                    l.experts.len(),
                    l.weights.len()
                )));
            }
        }
    }
    if header.prompt_tokens > header.tokens.len() {
        return Err(bad("more prompt tokens than tokens"));
    }
    for input in &header.inputs {
        if input.len == 0 || input.len > crate::graph::MAX_DIMENSION {
            return Err(TraceError::Malformed(format!(
                "input {}: length {} (1 to {} supported)",
                input.name,
                input.len,
                crate::graph::MAX_DIMENSION
            )));
        }
        if input.readers.is_empty() {
            return Err(TraceError::Malformed(format!("input {} has no reader", input.name)));
        }
    }
    // Every step stores every input's mask, at least one byte each: the masks the header asks
    // for must be in the file before anything is allocated for them, so what the reader holds
    // (per mask byte at most 16 bytes of activations and a share of one vector's header) is
    // linear in the file's size.
    let at = 16 + hlen;
    let per_step = header.inputs.iter().map(|i| i.len.div_ceil(8) as u64).sum::<u64>();
    let masks = per_step.checked_mul(header.tokens.len() as u64);
    if masks.is_none_or(|m| m > (body.len() - at) as u64) {
        return Err(TraceError::Malformed(format!(
            "the header asks for {} steps of {} inputs ({per_step} mask bytes a step), more than the file holds",
            header.tokens.len(),
            header.inputs.len()
        )));
    }
    let mut at = at;
    let mut steps = Vec::new();
    for s in 0..header.tokens.len() {
        let mut step = Vec::with_capacity(header.inputs.len());
        for input in &header.inputs {
            let mlen = input.len.div_ceil(8);
            let mask = body
                .get(at..at.saturating_add(mlen))
                .ok_or_else(|| TraceError::Malformed(format!("step {s}, input {}: truncated mask", input.name)))?;
            at += mlen;
            if input.len % 8 != 0 && mask[mlen - 1] >> (input.len % 8) != 0 {
                return Err(TraceError::Malformed(format!(
                    "step {s}, input {}: mask bits past the vector",
                    input.name
                )));
            }
            let set = mask.iter().map(|b| b.count_ones() as usize).sum::<usize>();
            let raw = body
                .get(at..at.saturating_add(2 * set))
                .ok_or_else(|| TraceError::Malformed(format!("step {s}, input {}: truncated values", input.name)))?;
            at += 2 * set;
            let mut x = vec![f16::ZERO; input.len];
            let mut vals = raw.chunks_exact(2).map(|c| f16::from_le_bytes([c[0], c[1]]));
            for (j, slot) in x.iter_mut().enumerate() {
                if mask[j / 8] >> (j % 8) & 1 == 1 {
                    let v = vals.next().unwrap_or(f16::ZERO);
                    if !v.is_finite() {
                        return Err(TraceError::Malformed(format!(
                            "step {s}, input {}: activation {j} is not finite",
                            input.name
                        )));
                    }
                    *slot = v;
                }
            }
            step.push(x);
        }
        steps.push(step);
    }
    if at != body.len() {
        return Err(TraceError::Malformed(format!("{} bytes after the last step", body.len() - at)));
    }
    Ok(Trace { header, steps })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Trace {
        let input = TraceInput {
            node: NodeId(3),
            name: "blk.0.attn_norm".into(),
            len: 10,
            readers: vec![
                TraceReader {
                    node: NodeId(4),
                    name: "blk.0.attn_q".into(),
                    threshold_bits: f16::from_f32(0.5).to_bits(),
                },
                TraceReader {
                    node: NodeId(5),
                    name: "blk.0.attn_k".into(),
                    threshold_bits: f16::from_f32(0.25).to_bits(),
                },
            ],
        };
        let x: Vec<f16> =
            [0.0, 0.1, -0.3, 0.6, 2.0, -0.2, 0.25, 0.0, 1.0, -1.0].iter().map(|&v| f16::from_f32(v)).collect();
        Trace {
            header: TraceHeader {
                model: "test".into(),
                settings: "none".into(),
                prompt: "hi".into(),
                tokens: vec![1, 2],
                prompt_tokens: 1,
                inputs: vec![input],
                routing: None,
            },
            steps: vec![vec![x.clone()], vec![x]],
        }
    }

    #[test]
    fn routing_is_typed_per_step_and_must_cover_every_step() {
        let mut t = sample();
        let layer = LayerRouting {
            layer: crate::graph::LayerId(0),
            experts: vec![ExpertId(3), ExpertId(1)],
            weights: vec![0.75, 0.25],
        };
        let step = StepRouting { layers: vec![layer] };
        t.header.routing = Some(vec![step.clone(), step.clone()]);
        assert_eq!(read_trace(&write_trace(&t)).unwrap().header.routing, t.header.routing);
        t.header.routing = Some(vec![step.clone()]);
        let e = read_trace(&write_trace(&t)).unwrap_err().to_string();
        assert!(e.contains("routing for 1 steps, but 2 tokens"), "{e}");
        let mut uneven = step.clone();
        uneven.layers[0].weights.pop();
        t.header.routing = Some(vec![step, uneven]);
        let e = read_trace(&write_trace(&t)).unwrap_err().to_string();
        assert!(e.contains("2 experts but 1 gate weights"), "{e}");
    }
    #[test]
    fn a_trace_round_trips_keeping_what_the_smallest_threshold_keeps() {
        let t = sample();
        let back = read_trace(&write_trace(&t)).unwrap();
        let kept: Vec<f32> = back.steps[0][0].iter().map(|v| v.to_f32()).collect();
        // Below 0.25 in magnitude reads back as zero.
        let want: Vec<f32> =
            [0.0, 0.0, -0.3, 0.6, 2.0, 0.0, 0.25, 0.0, 1.0, -1.0].iter().map(|&v| f16::from_f32(v).to_f32()).collect();
        assert_eq!(kept, want);
        assert_eq!(back.header, t.header);
    }

    /// A trace whose header is `header`, with a valid CRC and no step data.
    fn crafted(header: &TraceHeader, body: &[u8]) -> Vec<u8> {
        let json = serde_json::to_vec(header).unwrap();
        let mut out = Vec::new();
        out.extend(MAGIC);
        out.extend(VERSION.to_le_bytes());
        out.extend(0u16.to_le_bytes());
        out.extend((json.len() as u32).to_le_bytes());
        out.extend(&json);
        out.extend(body);
        let crc = crc32fast::hash(&out);
        out.extend(crc.to_le_bytes());
        out
    }

    #[test]
    fn a_crafted_header_cannot_make_the_reader_allocate_more_than_the_file_warrants() {
        // Once: 124 KB of header (empty inputs x many tokens) took 1.15 GB.
        let mut h = sample().header;
        h.tokens = vec![1; 20_000];
        h.prompt_tokens = 1;
        let input = h.inputs[0].clone();
        h.inputs = (0..1000).map(|_| TraceInput { len: 0, ..input.clone() }).collect();
        let e = read_trace(&crafted(&h, &[])).unwrap_err().to_string();
        assert!(e.contains("length 0"), "{e}");
        // Long inputs and many steps, with no data behind them: refused before allocating.
        h.inputs = (0..1000).map(|_| TraceInput { len: 1 << 20, ..input.clone() }).collect();
        let e = read_trace(&crafted(&h, &[0; 64])).unwrap_err().to_string();
        assert!(e.contains("more than the file holds"), "{e}");
        h.inputs = vec![TraceInput { len: usize::MAX, ..input.clone() }];
        assert!(read_trace(&crafted(&h, &[])).is_err());
        h.inputs = vec![TraceInput { readers: vec![], ..input }];
        let e = read_trace(&crafted(&h, &[0; 4])).unwrap_err().to_string();
        assert!(e.contains("no reader"), "{e}");
    }

    #[test]
    fn a_corrupted_or_truncated_trace_is_refused() {
        let bytes = write_trace(&sample());
        for len in 0..bytes.len() {
            assert!(read_trace(&bytes[..len]).is_err(), "cut to {len}");
        }
        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert!(matches!(read_trace(&flipped), Err(TraceError::Crc { .. })));
        let mut v2 = bytes;
        v2[8] = 2;
        assert_eq!(read_trace(&v2), Err(TraceError::Version(2)));
    }
}
