//! `--mem-trace FILE`: the memory requests of a run in Ramulator 2's `LoadStoreTrace` format, so
//! that a cycle-accurate DRAM simulator can replay lacuna's traffic instead of our memory model.
//!
//! Format (Ramulator 2, `src/frontend/impl/memory_trace/loadstore_trace.cpp`): one request per
//! line, `LD 0xADDR` for a read and `ST 0xADDR` for a write, in the order the memory port accepted
//! them; each is one burst of `memory.request_bytes` at a burst-aligned byte address. The format
//! has no timestamps: Ramulator issues the requests as fast as its frontend allows (the cycle of
//! each, as our model issued it, is in `--timeline`).

use lacuna_model::memory::{MemClient, MemRequest};
use std::fmt::Write as _;

/// The requests as a `LoadStoreTrace` file.
pub fn load_store_trace(requests: &[MemRequest]) -> String {
    let mut out = String::with_capacity(requests.len() * 16);
    for r in requests {
        let op = if r.kind == MemClient::Outputs { "ST" } else { "LD" };
        writeln!(out, "{op} 0x{:x}", r.addr).expect("writing to a String");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_loads_and_output_writes_are_stores_in_issue_order() {
        let req = |cycle, kind, addr| MemRequest { cycle, kind, addr, done: cycle + 10 };
        let text = load_store_trace(&[
            req(0, MemClient::Activations, 0),
            req(1, MemClient::Values, 0x1040),
            req(5, MemClient::Outputs, 0x2000),
        ]);
        assert_eq!(text, "LD 0x0\nLD 0x1040\nST 0x2000\n");
    }
}
