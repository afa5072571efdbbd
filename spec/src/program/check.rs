//! The checks that make a program manifest trustworthy (see [`crate::program`]'s contract).
//!
//! A manifest is JSON anyone can edit, and the cycle model runs what it says: a head size of
//! 2^32 once made `simulate DIR` loop for ever, an element-wise count of 2^64 - 1 wrapped to a
//! wrong cycle count, duplicated or missing layers changed the energy. So nothing in it is taken
//! on trust: what can be derived (the graph from its config, the placement from the graph, the
//! layer list from the graph, the panels from the rows and the arch) must equal what is derived;
//! what cannot (thresholds, offsets, settings) must lie in range; each layer's record must agree
//! with its matrix in the image. The first problem is returned as a message; the caller names the
//! file.

use crate::dense_panels::{dense_pays, layout_bytes};
use crate::graph::{Graph, Op};
use crate::job::{JobKind, Layout};
use crate::placement::place;
use crate::program::{Program, ProgramLayer};
use crate::{Arch, RlcMatrix};
use half::f16;

/// Alignment of each layer in the image (what the compiler's image builder writes).
pub const LAYER_ALIGN: u64 = 64;

/// Checks everything in the manifest that does not need the image's matrices.
pub fn check_manifest(p: &Program, arch: &Arch) -> Result<(), String> {
    check_graph(p)?;
    check_settings(p)?;
    let linears: Vec<_> = p.graph.linears().collect();
    if p.layers.len() != linears.len() {
        return Err(format!(
            "{} layers, but its graph has {} linear layers (one layer each, in graph order)",
            p.layers.len(),
            linears.len()
        ));
    }
    let mut end = 0u64;
    for (i, (l, &(node, weight, kind, layer))) in p.layers.iter().zip(&linears).enumerate() {
        let n = p.graph.node_at(node);
        let at = |m: String| format!("layer {i} ({}): {m}", l.name);
        if l.node != node || l.name != n.name {
            return Err(at(format!(
                "node {} `{}`, but the graph's linear layer {i} is node {} `{}` (a duplicated, missing or reordered layer)",
                l.node.0, l.name, node.0, n.name
            )));
        }
        let Op::Linear { input, .. } = n.op else { unreachable!("Graph::linears yields linear nodes") };
        let w = p.graph.weight_at(weight);
        if l.kind != kind || l.layer != layer || l.input != input {
            return Err(at(format!(
                "kind {:?}, block {:?}, input {}; the graph says {kind:?}, {layer:?}, {}",
                l.kind, l.layer, l.input.0, input.0
            )));
        }
        if (l.rows as usize, l.cols as usize) != (w.rows, w.cols) {
            return Err(at(format!("{} x {}, the graph's weight is {} x {}", l.rows, l.cols, w.rows, w.cols)));
        }
        if l.panel_rows == 0 || l.panel_rows > arch.tile_rows() {
            return Err(at(format!(
                "{} rows per panel; the arch's tile holds 1 to {}",
                l.panel_rows,
                arch.tile_rows()
            )));
        }
        let panels = l.rows.div_ceil(l.panel_rows);
        if panels > arch.core.max_panels {
            return Err(at(format!(
                "{panels} panels; the arch's panel table holds {} (core.max_panels)",
                arch.core.max_panels
            )));
        }
        if l.panels != panels {
            return Err(at(format!(
                "{} panels, but {} rows in panels of {} make {panels}",
                l.panels, l.rows, l.panel_rows
            )));
        }
        if l.panel_rows != arch.balanced_panel_rows(l.rows as usize) {
            return Err(at(format!(
                "panels of {} rows; the compiler tiles {} rows on this arch in panels of {}",
                l.panel_rows,
                l.rows,
                arch.balanced_panel_rows(l.rows as usize)
            )));
        }
        if l.weight_zeros > l.rows as u64 * l.cols as u64 {
            return Err(at(format!("{} zero weights of {} x {}", l.weight_zeros, l.rows, l.cols)));
        }
        let t = f16::from_bits(l.threshold_bits);
        if !t.is_finite() || t.is_sign_negative() {
            return Err(at(format!(
                "threshold {t} (bits {:#06x}) is not a finite non-negative FP16",
                l.threshold_bits
            )));
        }
        if l.offset % LAYER_ALIGN != 0 || l.offset < end {
            return Err(at(format!(
                "image offset {} is not {LAYER_ALIGN}-byte aligned after the previous layer's end {end} (overlapping or aliased layers)",
                l.offset
            )));
        }
        end = l.offset.checked_add(l.bytes).filter(|&e| e <= p.image_bytes && l.bytes > 0).ok_or_else(|| {
            at(format!("{} bytes at {} do not lie in the image of {} bytes", l.bytes, l.offset, p.image_bytes))
        })?;
    }
    Ok(())
}

/// The graph must be the one its config builds, and the placement the one the graph gets.
fn check_graph(p: &Program) -> Result<(), String> {
    p.graph.config.check().map_err(|e| format!("its graph's config: {e}"))?;
    // The program format runs every linear each step: a mixture's routing has no place in it yet.
    if let Some(m) = &p.graph.config.moe {
        return Err(format!("its graph is a mixture of {} experts, which programs do not carry yet", m.experts));
    }
    let built = Graph::decoder(&p.graph.config);
    if built != p.graph {
        let what = if built.weights != p.graph.weights {
            "its weights".to_string()
        } else {
            match built.nodes.iter().zip(&p.graph.nodes).position(|(a, b)| a != b) {
                Some(i) => format!("node {i} (`{}`)", built.nodes[i].name),
                None => format!("its node count ({}, the config makes {})", p.graph.nodes.len(), built.nodes.len()),
            }
        };
        return Err(format!("its graph is not the one its config builds: {what} differs"));
    }
    let placed = place(&p.graph);
    if placed != p.placement {
        return Err(match placed.iter().zip(&p.placement).position(|(a, b)| a != b) {
            Some(i) => format!(
                "the placement of node {i} (`{}`) is {:?}, its graph gives {:?}",
                placed[i].name, p.placement[i].work, placed[i].work
            ),
            None => format!("{} placed nodes, the graph has {}", p.placement.len(), placed.len()),
        });
    }
    Ok(())
}

/// Sparsities are fractions, the pruning method one the compiler knows.
fn check_settings(p: &Program) -> Result<(), String> {
    let s = &p.settings;
    for (what, v) in [
        ("weight_sparsity", s.weight_sparsity),
        ("act_sparsity", s.act_sparsity),
        ("held_out_act_sparsity", s.held_out_act_sparsity),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return Err(format!("settings.{what} {v} is not a fraction in 0..=1"));
        }
    }
    if !["magnitude", "wanda"].contains(&s.prune_method.as_str()) {
        return Err(format!("settings.prune_method {:?} is not magnitude or wanda", s.prune_method));
    }
    if !["uniform", "sensitivity"].contains(&s.allocation.as_str()) {
        return Err(format!("settings.allocation {:?} is not uniform or sensitivity", s.allocation));
    }
    if s.layout == Layout::RlcCsc {
        if let Some(l) = p.layers.iter().find(|l| l.job != JobKind::Spmspv) {
            return Err(format!("layer {} is a {} job, but settings.layout is rlc-csc", l.name, l.job.name()));
        }
    }
    if let Some(sum) = &p.model_sha256 {
        if sum.len() != 64 || !sum.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("model_sha256 {sum:?} is not 64 hex digits"));
        }
    }
    Ok(())
}

/// A layer's record must describe its matrix: shape, panels, stored entries, zero weights.
pub fn check_matrix(l: &ProgramLayer, m: &RlcMatrix) -> Result<(), String> {
    if (m.rows(), m.cols(), m.panel_rows()) != (l.rows, l.cols, l.panel_rows) {
        return Err(format!(
            "the matrix is {} x {} in panels of {}, the manifest says {} x {} in panels of {}",
            m.rows(),
            m.cols(),
            m.panel_rows(),
            l.rows,
            l.cols,
            l.panel_rows
        ));
    }
    let stats = m.stats();
    let zeros = l.rows as u64 * l.cols as u64 - stats.nnz;
    if (stats.panels, stats.stored_entries, zeros) != (l.panels as u64, l.entries, l.weight_zeros) {
        return Err(format!(
            "the matrix has {} panels, {} entries and {zeros} zero weights; the manifest says {}, {} and {}",
            stats.panels, stats.stored_entries, l.panels, l.entries, l.weight_zeros
        ));
    }
    match l.job {
        JobKind::Spmspv => {}
        JobKind::Gemv if dense_pays(m) => {}
        JobKind::Gemv => {
            let (rlc, dense) = layout_bytes(m);
            return Err(format!(
                "a gemv job, but its weights take {dense} bytes in dense panels and {rlc} in RLC-CSC (gemv only where dense panels take fewer)"
            ));
        }
    }
    Ok(())
}
