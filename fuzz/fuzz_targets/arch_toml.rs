//! Fuzzes the arch file parser: any text gives an `Arch` that passes validation or an error,
//! never a panic; an accepted arch round-trips through TOML to an equal value and hash, and runs
//! a small job on the cycle model to completion with the golden's bits (an arch once validated
//! whose activation scan then waited for ever).
//!
//! Run by hand: `cd fuzz && cargo fuzz run arch_toml` (seed it with `spec/presets/*.toml`).
#![no_main]

use half::f16;
use lacuna_spec::{ActivationFilter, Activations, Arch, DenseMatrix, RlcMatrix};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(arch) = Arch::from_toml_str(text, "fuzz") {
        let back = Arch::from_toml_str(&arch.to_toml(), "round trip").expect("a valid arch round-trips");
        assert_eq!(back, arch);
        assert_eq!(back.hash(), arch.hash());
        // Derived widths never overflow for a validated arch.
        let _ = (arch.tile_rows(), arch.chunk_entries(), arch.max_cols(), arch.row_index_bits());
        // A 3-panel job of the arch's tile with every kind of run: it must finish, bit-exact.
        let rows = (3 * arch.tile_rows() as usize).min(3000);
        let cols = (arch.max_cols() as usize).min(40);
        let mut w = DenseMatrix::zeros(rows, cols);
        for r in 0..rows {
            for k in 0..cols {
                if (r * 7 + k * 3) % (k + 2) == 0 {
                    w.set(r, k, f16::from_f32(((r + k) % 9) as f32 - 4.0));
                }
            }
        }
        let m = RlcMatrix::encode(&w, Some(arch.tile_rows())).expect("encodes");
        let x = Activations::new((0..cols).map(|k| f16::from_f32((k % 5) as f32 - 2.0)).collect()).unwrap();
        let job = lacuna_model::Job::new(&m, &x, ActivationFilter::NONZERO);
        let r = lacuna_model::simulate(&arch, &job).expect("every valid arch runs every job");
        let golden = lacuna_golden::spmspv::column_order(&m, &x, ActivationFilter::NONZERO).unwrap();
        assert!(r.y.iter().zip(&golden).all(|(a, b)| a.to_bits() == b.to_bits()));
    }
});
