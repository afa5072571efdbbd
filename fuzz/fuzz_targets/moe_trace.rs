//! Fuzzes the MoE trace reader (`moe_trace.json`, `lacuna_spec::moe_trace`): any bytes give a
//! checked trace or an error; never a panic, nor a hang (its checks are linear in the input: a
//! token routed to a million experts must be refused in one pass, not compared pair by pair). An
//! accepted trace writes back to JSON that reads to the same trace, and its byte counts never
//! overflow.
//!
//! Run by hand: `cd fuzz && cargo fuzz run moe_trace corpus/moe_trace seeds/moe_trace`.
#![no_main]

use lacuna_spec::moe_trace::MoeTrace;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = MoeTrace::read(data) {
        let again = MoeTrace::read(&serde_json::to_vec(&t).expect("a trace serializes")).expect("a written trace reads back");
        assert_eq!(again, t);
        for pass in t.policies.iter().flat_map(|p| &p.passes) {
            pass.blocks.iter().map(|b| t.block_bytes(b)).fold(0u64, |a, b| a.checked_add(b).expect("bytes fit"));
        }
    }
});
