//! Fuzzes the arch file parser: any text gives an `Arch` that passes validation or an error,
//! never a panic; an accepted arch round-trips through TOML to an equal value and hash.
//!
//! Run by hand: `cd fuzz && cargo fuzz run arch_toml` (seed it with `spec/presets/*.toml`).
#![no_main]

use lacuna_spec::Arch;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(arch) = Arch::from_toml_str(text, "fuzz") {
        let back = Arch::from_toml_str(&arch.to_toml(), "round trip").expect("a valid arch round-trips");
        assert_eq!(back, arch);
        assert_eq!(back.hash(), arch.hash());
        // Derived widths never overflow for a validated arch.
        let _ = (arch.tile_rows(), arch.chunk_entries(), arch.max_cols(), arch.row_index_bits());
    }
});
