//! Lowering: every linear layer of the decode step to one job of the Sparse SIMT core.
//!
//! Contract: for each [`Op::Linear`] of the graph, in execution order, [`lower_linears`] rounds
//! the (pruned) f32 weights to FP16 (round to nearest even; a value that overflows FP16 is an
//! error naming the layer, row and column), tiles the rows into panels of equal height that fit
//! the `Arch`'s accumulator tile (`Arch::balanced_panel_rows`), encodes them as RLC-CSC, chooses
//! the job ([`Layout`]: under `auto`, a `gemv` job over dense panels where they take fewer bytes
//! than RLC-CSC, `lacuna_spec::dense_panels::dense_pays`, else `spmspv`), and attaches the
//! layer's activation threshold. A layer whose K does not fit the activation SRAM is refused with
//! the sizes. The result is what the program stores and the core runs.
//!
//! Why bytes decide: a decode-step job is memory-bound (the decoder takes a chunk a cycle, about
//! one cycle of DRAM bandwidth), and both jobs skip the same inactive columns, so the layout with
//! fewer bytes is the faster one; a dense panel costs 2 bytes a weight, RLC-CSC 2.5 a stored entry.

use crate::checkpoint::Checkpoint;
use crate::encode_parallel;
use crate::passes::act_thresholds::Thresholds;
use half::f16;
use lacuna_spec::graph::{LayerId, LinearKind, NodeId};
use lacuna_spec::job::JobKind;
pub use lacuna_spec::job::Layout;
use lacuna_spec::{ActivationFilter, Arch, DenseMatrix, RlcMatrix};
use rayon::prelude::*;

/// One linear layer as a core job.
#[derive(Clone, Debug)]
pub struct LoweredLinear {
    /// The graph node.
    pub node: NodeId,
    /// Its name.
    pub name: String,
    /// What it computes.
    pub kind: LinearKind,
    /// Its block.
    pub layer: Option<LayerId>,
    /// The weights, tiled and encoded.
    pub matrix: RlcMatrix,
    /// The job that runs it (`Gemv`: the same weights in dense panels).
    pub job: JobKind,
    /// The activation filter of the job.
    pub filter: ActivationFilter,
    /// Zero weights after rounding to FP16 (pruned, zero already, or too small for FP16).
    pub weight_zeros: u64,
}

/// Why a layer could not be lowered.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    /// A weight overflows FP16.
    #[error("{layer}: weight {value} at row {row}, column {col} overflows FP16")]
    Overflow {
        /// The layer.
        layer: String,
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// The value.
        value: f32,
    },
    /// K does not fit the activation SRAM.
    #[error("{layer}: K = {cols} activations do not fit the activation SRAM of arch {arch} ({max} at most)")]
    TooManyColumns {
        /// The layer.
        layer: String,
        /// K.
        cols: usize,
        /// The arch.
        arch: String,
        /// Its limit.
        max: u32,
    },
    /// M needs more panels than the core's panel table holds.
    #[error(
        "{layer}: M = {rows} rows need {panels} panels, the panel table of arch {arch} holds {max} (core.max_panels)"
    )]
    TooManyPanels {
        /// The layer.
        layer: String,
        /// M.
        rows: usize,
        /// Panels needed.
        panels: usize,
        /// The arch.
        arch: String,
        /// Its limit.
        max: u32,
    },
    /// Encoding failed (a matrix too large for the format).
    #[error("{layer}: {message}")]
    Encode {
        /// The layer.
        layer: String,
        /// The encoder's message.
        message: String,
    },
}

/// Rounds an f32 weight matrix to FP16.
pub fn to_fp16(name: &str, rows: usize, cols: usize, data: &[f32]) -> Result<DenseMatrix, LowerError> {
    let values: Vec<f16> = data.par_iter().map(|&v| f16::from_f32(v)).collect();
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(LowerError::Overflow { layer: name.into(), row: i / cols, col: i % cols, value: data[i] });
    }
    // The sizes agree by construction (the matrix's own rows x cols).
    DenseMatrix::new(rows, cols, values).map_err(|e| LowerError::Encode { layer: name.into(), message: e.to_string() })
}

/// Lowers every linear layer of `ckpt` for `arch`, with the activation thresholds, each to the
/// job `layout` chooses.
pub fn lower_linears(
    ckpt: &Checkpoint,
    thresholds: &Thresholds,
    arch: &Arch,
    layout: Layout,
) -> Result<Vec<LoweredLinear>, LowerError> {
    let mut out = Vec::new();
    for (node, weight, kind, layer) in ckpt.graph.linears() {
        let name = ckpt.graph.node_at(node).name.clone();
        let w = ckpt.weight(weight);
        if w.cols > arch.max_cols() as usize {
            return Err(LowerError::TooManyColumns {
                layer: name,
                cols: w.cols,
                arch: arch.name.clone(),
                max: arch.max_cols(),
            });
        }
        let panels = w.rows.div_ceil(arch.tile_rows() as usize);
        if panels > arch.core.max_panels as usize {
            return Err(LowerError::TooManyPanels {
                layer: name,
                rows: w.rows,
                panels,
                arch: arch.name.clone(),
                max: arch.core.max_panels,
            });
        }
        let dense = to_fp16(&name, w.rows, w.cols, &w.data)?;
        let weight_zeros = (dense.rows() * dense.cols() - dense.nnz()) as u64;
        let panel_rows = arch.balanced_panel_rows(w.rows);
        let matrix = encode_parallel(&dense, Some(panel_rows))
            .map_err(|e| LowerError::Encode { layer: name.clone(), message: e.to_string() })?;
        let job = layout.job(&matrix);
        out.push(LoweredLinear { node, name, kind, layer, matrix, job, filter: thresholds.filter(node), weight_zeros });
    }
    Ok(out)
}
