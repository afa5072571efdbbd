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

use crate::encode::balanced_panel_rows;
use crate::graph::{Graph, Op};
use crate::passes::place::place;
use crate::program::{Program, ProgramLayer};
use half::f16;
use lacuna_spec::{Arch, RlcMatrix};

/// Alignment of each layer in the image (what [`crate::program::build_image`] writes).
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
        if l.panels != panels {
            return Err(at(format!(
                "{} panels, but {} rows in panels of {} make {panels}",
                l.panels, l.rows, l.panel_rows
            )));
        }
        if l.panel_rows != balanced_panel_rows(l.rows as usize, arch.tile_rows()) {
            return Err(at(format!(
                "panels of {} rows; the compiler tiles {} rows on this arch in panels of {}",
                l.panel_rows,
                l.rows,
                balanced_panel_rows(l.rows as usize, arch.tile_rows())
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
    let built = Graph::llama(&p.graph.config);
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::checkpoint::test_models::tiny_program;
    use crate::graph::{LinearKind, NodeId};
    use crate::passes::place::Work;
    use crate::program::Program;
    use std::path::Path;

    /// Writes the program as changed by `spoil` (a consistent checksum: the writer is trusted)
    /// and returns why it is refused.
    fn refused(spoil: impl Fn(&mut Program)) -> String {
        let (mut p, image) = tiny_program();
        spoil(&mut p);
        let dir = tempfile::tempdir().unwrap();
        p.write(dir.path(), &image).unwrap();
        Program::read(dir.path()).expect_err("a spoiled program must be refused").to_string()
    }

    #[test]
    fn a_program_as_compiled_reads_back() {
        let (p, image) = tiny_program();
        let dir = tempfile::tempdir().unwrap();
        p.write(dir.path(), &image).unwrap();
        let back = Program::read(dir.path()).unwrap();
        assert_eq!(back.program, p);
        assert_eq!(back.matrices.len(), 2 * 7 + 1);
    }

    #[test]
    fn every_field_that_the_simulation_trusts_is_cross_checked() {
        let attention =
            |p: &Program| p.placement.iter().position(|n| matches!(n.work, Work::Attention { .. })).unwrap();
        let elementwise =
            |p: &Program| p.placement.iter().position(|n| matches!(n.work, Work::Elementwise { .. })).unwrap();
        let cases: Vec<(Box<dyn Fn(&mut Program)>, &str)> = vec![
            // Once: `simulate DIR` hung.
            (
                Box::new(move |p| {
                    let i = attention(p);
                    p.placement[i].work = Work::Attention { heads: 4, head_dim: u32::MAX };
                }),
                "placement of node",
            ),
            // Once: 137 vector-unit cycles instead of 47,882, exit 0.
            (
                Box::new(move |p| {
                    let i = elementwise(p);
                    p.placement[i].work = Work::Elementwise { ops: u64::MAX, specials: 0 };
                }),
                "placement of node",
            ),
            (Box::new(|p| p.graph.config.head_dim = 1 << 31), "its graph's config: head size"),
            (Box::new(|p| p.graph.nodes[3].len += 1), "not the one its config builds"),
            (Box::new(|p| p.layers[2].panels += 1), "panels"),
            (Box::new(|p| p.layers[2].panel_rows = 1), "make 4"),
            (Box::new(|p| p.layers[2].panel_rows = 1 << 20), "rows per panel"),
            (
                Box::new(|p| {
                    let l = p.layers[1].clone();
                    p.layers[2] = l;
                }),
                "duplicated, missing or reordered",
            ),
            (Box::new(|p| p.layers.truncate(3)), "linear layers"),
            (Box::new(|p| p.layers.clear()), "linear layers"),
            (Box::new(|p| p.layers.swap(0, 1)), "duplicated, missing or reordered"),
            (
                Box::new(|p| {
                    p.layers[1].offset = p.layers[0].offset;
                    p.layers[1].bytes = p.layers[0].bytes;
                }),
                "aliased",
            ),
            (Box::new(|p| p.layers[0].kind = LinearKind::Down), "kind"),
            (Box::new(|p| p.layers[0].input = NodeId(0)), "input 0; the graph says"),
            (Box::new(|p| p.layers[0].threshold_bits = 0x7c00), "threshold"),
            (Box::new(|p| p.layers[0].threshold_bits = 0x8001), "threshold"),
            (Box::new(|p| p.layers[0].weight_zeros += 1), "zero weights"),
            (Box::new(|p| p.layers[0].entries += 1), "entries"),
            (Box::new(|p| p.settings.act_sparsity = 50.0), "act_sparsity"),
            (Box::new(|p| p.settings.prune_method = "random".into()), "prune_method"),
            (Box::new(|p| p.image_bytes += 64), "the manifest says"),
            (Box::new(|p| p.layers[1].offset += 8), "not 64-byte aligned"),
            (Box::new(|p| p.layers[0].rows += 1), "the graph's weight is"),
            (Box::new(|p| p.layers[0].name = "blk.0.attn_k".into()), "duplicated, missing or reordered"),
            (Box::new(|p| p.model_sha256 = Some("abc".into())), "model_sha256"),
        ];
        for (i, (spoil, want)) in cases.into_iter().enumerate() {
            let e = refused(spoil);
            assert!(e.contains(want), "case {i}: wanted {want:?} in {e}");
        }
    }

    #[test]
    fn a_program_of_another_version_is_told_so_before_its_checksums() {
        let (mut p, image) = tiny_program();
        p.version = 1;
        let dir = tempfile::tempdir().unwrap();
        p.write(dir.path(), &image).unwrap();
        // A version-1 directory has no checksum file: the version is what the user must hear.
        std::fs::remove_file(dir.path().join("checksum.sha256")).unwrap();
        let e = Program::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("program version Some(1) is not supported"), "{e}");
    }

    #[test]
    fn a_hand_edited_manifest_or_image_fails_its_checksum() {
        let (p, image) = tiny_program();
        let dir = tempfile::tempdir().unwrap();
        p.write(dir.path(), &image).unwrap();
        let edit = |name: &str, f: &dyn Fn(&mut Vec<u8>)| {
            let path = dir.path().join(name);
            let mut b = std::fs::read(&path).unwrap();
            f(&mut b);
            std::fs::write(&path, b).unwrap();
        };
        edit("program.json", &|b| b.push(b'\n'));
        let e = Program::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("program.json") && e.contains("SHA-256"), "{e}");
        p.write(dir.path(), &image).unwrap();
        edit("image.bin", &|b| b[0] ^= 1);
        let e = Program::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("image.bin") && e.contains("SHA-256"), "{e}");
        p.write(dir.path(), &image).unwrap();
        std::fs::remove_file(dir.path().join("checksum.sha256")).unwrap();
        let e = Program::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("checksum.sha256"), "{e}");
        assert!(Path::new(dir.path()).join("image.bin").exists());
    }
}
