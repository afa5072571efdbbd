//! Placement of the rest of a decode step: what runs where, and how much work it is.
//!
//! Contract: every node of the graph gets a unit. Linear layers are core jobs (lowered by
//! the compiler's lowering pass). Attention over the KV cache runs on the core as dense matrix-vector
//! jobs, per query head: the scores `K q` (M = cached positions, K = head_dim) and the output
//! `V^T p` (M = head_dim, K = positions); its scaling and softmax run on the vector unit. Norms,
//! RoPE, SiLU, residual adds and the embedding lookup run on the vector unit. The work of each
//! is counted in FP32 element operations and special functions (exp, sin/cos, reciprocal,
//! reciprocal square root), as functions of the position where attention makes it grow:
//!
//! | op | element ops | special functions |
//! |---|---|---|
//! | embedding lookup (n) | n (the copy) | 0 |
//! | RMSNorm (n, in h parts) | 3n (square-accumulate, scale, gain) | h (rsqrt) |
//! | RoPE (n) | 3n (four multiplies and two adds per pair) | n (a sin and a cos per pair) |
//! | attention, vector part (h heads, p positions) | 4hp (scale, max, subtract, sum) | 2hp (exp, reciprocal-multiply) |
//! | SwiGLU (n) | 2n (multiply, add) | 2n (exp, reciprocal) |
//! | GeGLU (n) | 6n (cube, multiply-adds, halving, product) | n (tanh) |
//! | scale (n) | n | 0 |
//! | residual add (n) | n | 0 |
//!
//! Attention with a sliding window (Gemma 3's local blocks) counts the positions inside the
//! window only.
//!
//! The vector unit's time and energy follow from these counts and `Arch::vector_unit`
//! (`lacuna_model::program`). The compiler writes it into every program; [`crate::program::check`]
//! holds a manifest's placement to what [`place`] derives.

use crate::graph::{Graph, Op};
use serde::{Deserialize, Serialize};

/// Where a node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// The Sparse SIMT core.
    Core,
    /// The vector unit.
    VectorUnit,
}

impl Unit {
    /// Its name in reports (as serialized).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Core => "core",
            Unit::VectorUnit => "vector_unit",
        }
    }
}

/// The work of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// A linear layer: a program layer of its own.
    Linear,
    /// Element-wise work of the same size at every position.
    Elementwise {
        /// FP32 element operations.
        ops: u64,
        /// Special functions.
        specials: u64,
    },
    /// Attention: grows with the cached positions.
    Attention {
        /// Query heads.
        heads: u32,
        /// Per-head size.
        head_dim: u32,
        /// Positions a query sees at most (none: all).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<u64>,
    },
}

/// One node's placement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placed {
    /// Node name.
    pub name: String,
    /// Its unit (attention: the core, for its matrix-vector part).
    pub unit: Unit,
    /// Its work.
    pub work: Work,
}

/// A dense matrix-vector job of attention on the core: `count` jobs of M x K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DenseJobs {
    /// Rows.
    pub m: u64,
    /// Columns.
    pub k: u64,
    /// How many.
    pub count: u64,
}

impl Work {
    /// Vector-unit work at a step with `positions` cached positions: (element ops, specials).
    pub fn vector(&self, positions: u64) -> (u64, u64) {
        match *self {
            Work::Linear => (0, 0),
            Work::Elementwise { ops, specials } => (ops, specials),
            Work::Attention { heads, window, .. } => {
                let positions = window.map_or(positions, |w| positions.min(w));
                (4 * heads as u64 * positions, 2 * heads as u64 * positions)
            }
        }
    }

    /// Core jobs at a step with `positions` cached positions (attention only).
    pub fn core_jobs(&self, positions: u64) -> Vec<DenseJobs> {
        match *self {
            Work::Attention { heads, head_dim, window } => {
                let positions = window.map_or(positions, |w| positions.min(w));
                vec![
                    DenseJobs { m: positions, k: head_dim as u64, count: heads as u64 },
                    DenseJobs { m: head_dim as u64, k: positions, count: heads as u64 },
                ]
            }
            _ => Vec::new(),
        }
    }
}

/// Places every node of a decode-step graph.
pub fn place(graph: &Graph) -> Vec<Placed> {
    let c = &graph.config;
    graph
        .nodes
        .iter()
        .map(|n| {
            let len = n.len as u64;
            let (unit, work) = match n.op {
                Op::Linear { .. } => (Unit::Core, Work::Linear),
                Op::Attention { window, .. } => (
                    Unit::Core,
                    Work::Attention {
                        heads: c.heads as u32,
                        head_dim: c.head_dim as u32,
                        window: window.map(|w| w as u64),
                    },
                ),
                Op::Embed { .. } => (Unit::VectorUnit, Work::Elementwise { ops: len, specials: 0 }),
                // One rsqrt per part normalized on its own.
                Op::RmsNorm { heads, .. } => {
                    (Unit::VectorUnit, Work::Elementwise { ops: 3 * len, specials: heads as u64 })
                }
                Op::Rope { .. } => (Unit::VectorUnit, Work::Elementwise { ops: 3 * len, specials: len }),
                Op::SwiGlu { .. } => (Unit::VectorUnit, Work::Elementwise { ops: 2 * len, specials: 2 * len }),
                Op::GeGlu { .. } => (Unit::VectorUnit, Work::Elementwise { ops: 6 * len, specials: len }),
                Op::Scale { .. } => (Unit::VectorUnit, Work::Elementwise { ops: len, specials: 0 }),
                Op::Add { .. } => (Unit::VectorUnit, Work::Elementwise { ops: len, specials: 0 }),
                // Softmax over the experts (an exponential each), then k passes to find the top k.
                Op::Route { top_k, .. } => {
                    (Unit::VectorUnit, Work::Elementwise { ops: (2 + top_k as u64) * len, specials: len })
                }
                // A multiply-add per element of each chosen expert's output.
                Op::Combine { route, .. } => {
                    let k = match graph.node_at(route).op {
                        Op::Route { top_k, .. } => top_k as u64,
                        _ => 1,
                    };
                    (Unit::VectorUnit, Work::Elementwise { ops: 2 * k * len, specials: 0 })
                }
            };
            Placed { name: n.name.clone(), unit, work }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_is_placed_and_attention_grows_with_the_positions() {
        let g = Graph::decoder(&crate::graph::LlamaConfig::tiny());
        let p = place(&g);
        assert_eq!(p.len(), g.nodes.len());
        let att = p.iter().find(|p| matches!(p.work, Work::Attention { .. })).unwrap();
        assert_eq!(att.work.vector(3), (4 * 4 * 3, 2 * 4 * 3));
        assert_eq!(att.work.core_jobs(3), vec![DenseJobs { m: 3, k: 2, count: 4 }, DenseJobs { m: 2, k: 3, count: 4 }]);
        let linears = p.iter().filter(|p| p.work == Work::Linear).count();
        assert_eq!(linears, g.linears().count());
        // RMSNorm of 8: 24 element operations and one rsqrt.
        assert_eq!(p[1].work, Work::Elementwise { ops: 24, specials: 1 });
    }

    #[test]
    fn a_sliding_window_caps_the_attention_work_and_per_head_norms_take_an_rsqrt_each() {
        let g = Graph::decoder(&crate::graph::LlamaConfig::tiny_gemma3());
        let p = place(&g);
        let att: Vec<&Work> = p.iter().filter(|p| matches!(p.work, Work::Attention { .. })).map(|p| &p.work).collect();
        // Blocks 0 and 1 see 2 positions, block 2 (global) all of them.
        assert_eq!(att[0].vector(5), (4 * 4 * 2, 2 * 4 * 2));
        assert_eq!(att[0].core_jobs(5)[0], DenseJobs { m: 2, k: 2, count: 4 });
        assert_eq!(att[2].vector(5), (4 * 4 * 5, 2 * 4 * 5));
        let qn = p.iter().find(|p| p.name == "blk.0.attn_q_norm").unwrap();
        assert_eq!(qn.work, Work::Elementwise { ops: 3 * 8, specials: 4 });
    }
}
