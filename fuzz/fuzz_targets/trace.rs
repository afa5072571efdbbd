//! Fuzzes the decode-trace reader (`.lctr`): any bytes give a trace whose steps match its header,
//! or an error; never a panic, a hang or an allocation the input cannot back (a 124 KB header once
//! took 1.15 GB). A trace that is accepted writes back to a file that reads to the same trace.
//!
//! Run by hand: `cd fuzz && cargo fuzz run trace corpus/trace seeds/trace -- -rss_limit_mb=512` (seeds: `seeds/trace/`).
#![no_main]

use lacuna_spec::trace::{read_trace, write_trace};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = read_trace(data) {
        assert_eq!(t.steps.len(), t.header.tokens.len());
        for step in &t.steps {
            assert_eq!(step.len(), t.header.inputs.len());
            for (x, input) in step.iter().zip(&t.header.inputs) {
                assert_eq!(x.len(), input.len);
            }
        }
        let again = read_trace(&write_trace(&t)).expect("a written trace reads back");
        assert_eq!(again.header, t.header);
    }
});
