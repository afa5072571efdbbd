//! Fuzzes the `.rlc` reader: it must never panic, and whatever it accepts must be canonical
//! (written back byte for byte).
//!
//! Each input is tried twice: as it is, and with a correct CRC-32 trailer appended, so that the
//! fuzzer reaches the structural checks behind the checksum instead of stopping at it.
//!
//! Run by hand: `cargo install cargo-fuzz && cd fuzz && cargo fuzz run rlc_reader`
//! (seed the corpus with files from `lacuna encode` for a head start).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lacuna_spec::{read_rlc, write_rlc};

fn check(bytes: &[u8]) {
    if let Ok(m) = read_rlc(bytes) {
        assert_eq!(write_rlc(&m), bytes, "an accepted file must be canonical");
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut with_crc = data.to_vec();
    with_crc.extend_from_slice(&crc32fast::hash(data).to_le_bytes());
    check(&with_crc);
});
