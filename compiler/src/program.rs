//! Assembles a compiled program: the image of the lowered layers and the manifest
//! (`lacuna_spec::program`, the format `lacuna compile` writes and `lacuna simulate DIR` runs).

use crate::passes::lower::LoweredLinear;
use lacuna_spec::graph::{Graph, Op};
use lacuna_spec::program::check::LAYER_ALIGN;
use lacuna_spec::program::{Program, ProgramLayer, Settings, FORMAT, VERSION};
use lacuna_spec::rlc_file::write_rlc;
use lacuna_spec::Arch;

/// Alignment of each layer in the image.
const ALIGN: usize = LAYER_ALIGN as usize;

/// Builds the image and the layer table from lowered layers.
pub fn build_image(graph: &Graph, lowered: &[LoweredLinear]) -> (Vec<u8>, Vec<ProgramLayer>) {
    let mut image = Vec::new();
    let mut layers = Vec::new();
    for l in lowered {
        let bytes = write_rlc(&l.matrix);
        image.resize(image.len().div_ceil(ALIGN) * ALIGN, 0);
        let input = match graph.node_at(l.node).op {
            Op::Linear { input, .. } => input,
            _ => l.node,
        };
        layers.push(ProgramLayer {
            node: l.node,
            name: l.name.clone(),
            kind: l.kind,
            layer: l.layer,
            input,
            rows: l.matrix.rows(),
            cols: l.matrix.cols(),
            panel_rows: l.matrix.panel_rows(),
            panels: l.matrix.panels().len() as u32,
            weight_zeros: l.weight_zeros,
            entries: l.matrix.panels().iter().map(|p| p.entries()).sum(),
            threshold_bits: l.filter.threshold.to_bits(),
            job: l.job,
            offset: image.len() as u64,
            bytes: bytes.len() as u64,
        });
        image.extend(bytes);
    }
    (image, layers)
}

/// The program of lowered layers for `arch`: manifest (placement derived from the graph, image
/// size and CRC) and image.
pub fn assemble(
    graph: &Graph,
    lowered: &[LoweredLinear],
    arch: &Arch,
    model: String,
    settings: Settings,
) -> (Program, Vec<u8>) {
    let (image, layers) = build_image(graph, lowered);
    let program = Program {
        format: FORMAT.into(),
        version: VERSION,
        arch_toml: arch.to_toml(),
        arch_hash: arch.hash().to_string(),
        model,
        model_sha256: None,
        settings,
        placement: lacuna_spec::placement::place(graph),
        graph: graph.clone(),
        layers,
        image_bytes: image.len() as u64,
        image_crc32: crc32fast::hash(&image),
    };
    (program, image)
}

#[cfg(test)]
mod tests {
    use crate::checkpoint::test_models::tiny_program;
    use lacuna_spec::graph::{LinearKind, NodeId};
    use lacuna_spec::job::{JobKind, Layout};
    use lacuna_spec::placement::Work;
    use lacuna_spec::program::Program;
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
        // Unpruned random weights: dense panels take fewer bytes, so every layer is a gemv job
        // (layout auto), laid out densely on load.
        assert!(p.layers.iter().all(|l| l.job == JobKind::Gemv));
        assert!(back.dense.iter().all(Option::is_some));
    }

    #[test]
    fn a_gemv_layer_is_accepted_only_where_dense_panels_take_fewer_bytes() {
        use lacuna_spec::program::check::check_matrix;
        use lacuna_spec::{DenseMatrix, RlcMatrix};
        let (p, _) = tiny_program();
        let mut l = p.layers[0].clone();
        let zeros = DenseMatrix::zeros(l.rows as usize, l.cols as usize);
        let m = RlcMatrix::encode(&zeros, Some(l.panel_rows)).unwrap();
        (l.entries, l.weight_zeros) = (0, l.rows as u64 * l.cols as u64);
        l.job = JobKind::Spmspv;
        check_matrix(&l, &m).unwrap();
        l.job = JobKind::Gemv;
        let e = check_matrix(&l, &m).unwrap_err();
        assert!(e.contains("gemv only where dense panels take fewer"), "{e}");
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
                    p.placement[i].work = Work::Attention { heads: 4, head_dim: u32::MAX, window: None };
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
            (Box::new(|p| p.settings.allocation = "best".into()), "settings.allocation"),
            (Box::new(|p| p.settings.layout = Layout::RlcCsc), "but settings.layout is rlc-csc"),
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
