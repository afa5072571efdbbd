//! Fuzzes the program manifest and image checks: the input is split into a manifest (JSON) and
//! an image; whatever parses as a manifest goes through every check `Program::read` makes after
//! the checksums (`Program::load`). Never a panic, a hang or an allocation the input cannot back;
//! a program that is accepted has one matrix per layer, each of its record's shape, and dense
//! panels exactly for its gemv layers, each smaller than the layer's RLC-CSC weights.
//!
//! Run by hand: `cd fuzz && cargo fuzz run program corpus/program seeds/program -- -rss_limit_mb=1024` (seeds: `seeds/program/`,
//! a tiny program as `u32 manifest length, manifest, image`).
#![no_main]

use lacuna_spec::program::Program;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let n = u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize;
    let Some(manifest) = data.get(4..4usize.saturating_add(n)) else { return };
    let image = data[4 + n..].to_vec();
    let Ok(program) = serde_json::from_slice::<Program>(manifest) else { return };
    if let Ok(p) = program.load(image, Path::new("program.json"), Path::new("image.bin")) {
        assert_eq!(p.matrices.len(), p.program.layers.len());
        for ((m, l), d) in p.matrices.iter().zip(&p.program.layers).zip(&p.dense) {
            assert_eq!((m.rows(), m.cols()), (l.rows, l.cols));
            // Dense panels only for gemv layers, and only where they are smaller than the
            // RLC-CSC weights the image holds (so the loader's memory is the input's size).
            assert_eq!(d.is_some(), l.job == lacuna_spec::job::JobKind::Gemv);
            if let Some(d) = d {
                assert!(d.bytes() < lacuna_spec::dense_panels::layout_bytes(m).0);
            }
        }
    }
});
