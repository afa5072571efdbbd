//! The memory port RTL (arbiter + response router), Verilated, against the cycle model's `Memory`
//! and `Arbiter` as `model::core`'s issue phase drives them (fixed priority: drain > act_load >
//! colptr_fetch > chunk_fetch; round robin on `archs/tiny_rr.toml`): every cycle the same
//! requester is chosen, the same request leaves, every response goes to the client that asked,
//! and the in-flight count equals the model's. Clients ask at random.

use lacuna_model::memory::arbiter::Arbiter;
use lacuna_model::memory::{MemClient, Memory};
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// Clients in priority order.
const CLIENTS: [&str; 4] = ["drain", "act", "colptr", "chunk"];

fn arch(name: &str) -> Arch {
    match name {
        "tiny_rr" => Arch::load(concat!(env!("CARGO_MANIFEST_DIR"), "/archs/tiny_rr.toml")).unwrap(),
        preset => Arch::preset(preset).unwrap(),
    }
}

fn mem_port_matches_the_model(preset: &str, seed: u64) -> u64 {
    let arch = arch(preset);
    let words = arch.burst_words();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rtl = Verilated::new(&format!("lacuna_mem_port_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let valid: Vec<PortId> = CLIENTS.iter().map(|c| p(&format!("{c}_valid"))).collect();
    let addr: Vec<PortId> = CLIENTS.iter().map(|c| p(&format!("{c}_addr"))).collect();
    let ready: Vec<PortId> = CLIENTS.iter().map(|c| p(&format!("{c}_ready"))).collect();
    let drain_data: Vec<PortId> = (0..words).map(|w| p(&format!("drain_data_{w}"))).collect();
    let req_data: Vec<PortId> = (0..words).map(|w| p(&format!("mem_req_data_{w}"))).collect();
    let (reset, chunk_runs, mem_ready, mem_resp_valid) =
        (p("reset"), p("chunk_runs"), p("mem_ready"), p("mem_resp_valid"));
    let (req_valid, req_addr, req_write, outstanding) =
        (p("mem_req_valid"), p("mem_req_addr"), p("mem_req_write"), p("outstanding"));
    let resp: Vec<PortId> = ["act_resp", "colptr_resp", "chunk_resp"].iter().map(|n| p(n)).collect();
    let resp_runs = p("chunk_resp_runs");
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);

    let mut mem = Memory::new(&arch.memory);
    let mut arbiter = Arbiter::new(arch.memory.arbitration, CLIENTS.len());
    // In flight: (completion, client, run burst).
    let mut flight: VecDeque<(u64, usize, bool)> = VecDeque::new();
    let busy = rng.random_range(0.1..0.9);
    let mut routed = 0;
    for t in 0..5_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        mem.tick(t);
        let in_flight = mem.in_flight() as u64;
        let wants: Vec<bool> = (0..4).map(|_| rng.random_bool(busy)).collect();
        let addrs: Vec<u64> = (0..4).map(|_| rng.random_range(0..1u64 << 30)).collect();
        let runs = rng.random_bool(0.3);
        let data: Vec<u64> = (0..words).map(|_| rng.random::<u32>() as u64).collect();
        // The issue phase: the arbiter's choice asks the memory; granted if it takes it.
        let granted = arbiter.choose(&wants);
        let kinds = [MemClient::Outputs, MemClient::Activations, MemClient::Colptr, MemClient::Values];
        let accepted = granted.is_some_and(|c| mem.request(t, kinds[c]).is_some());
        if accepted {
            arbiter.grant(&wants);
            flight.push_back((mem.last_completion(), granted.unwrap(), runs));
        }
        for c in 0..4 {
            rtl.set(valid[c], wants[c] as u64);
            rtl.set(addr[c], addrs[c]);
        }
        for w in 0..words {
            rtl.set(drain_data[w], data[w]);
        }
        rtl.set(chunk_runs, runs as u64);
        rtl.set(mem_ready, accepted as u64);
        let answered = flight.front().is_some_and(|&(done, _, _)| done == t + 1);
        rtl.set(mem_resp_valid, answered as u64);
        rtl.cycle();

        assert_eq!(rtl.get(outstanding), in_flight, "{}", at("requests in flight"));
        assert_eq!(rtl.get(req_valid) == 1, granted.is_some(), "{}", at("a request leaves"));
        if let Some(c) = granted {
            assert_eq!(rtl.get(req_addr), addrs[c], "{}", at("request address"));
            assert_eq!(rtl.get(req_write) == 1, c == 0, "{}", at("write"));
            if c == 0 {
                let got: Vec<u64> = req_data.iter().map(|&d| rtl.get(d)).collect();
                assert_eq!(got, data, "{}", at("written data"));
            }
        }
        for c in 0..4 {
            assert_eq!(rtl.get(ready[c]) == 1, accepted && granted == Some(c), "{}", at(CLIENTS[c]));
        }
        let to = if answered { flight.pop_front().map(|(_, c, r)| (c, r)) } else { None };
        for (i, &port) in resp.iter().enumerate() {
            let want = to.is_some_and(|(c, _)| c == i + 1);
            assert_eq!(rtl.get(port) == 1, want, "{}", at(&format!("response to {}", CLIENTS[i + 1])));
        }
        if let Some((3, runs)) = to {
            assert_eq!(rtl.get(resp_runs) == 1, runs, "{}", at("run burst response"));
        }
        routed += to.is_some() as u64;
    }
    routed
}

#[test]
fn the_tiny_memory_port_grants_and_routes_as_the_model_issues() {
    let routed: u64 = (0..20).map(|seed| mem_port_matches_the_model("tiny", seed)).sum();
    assert!(routed > 20_000, "only {routed} responses routed");
}

#[test]
fn the_round_robin_memory_port_grants_and_routes_as_the_model_arbiter() {
    assert_eq!(arch("tiny_rr").memory.arbitration, lacuna_spec::Arbitration::RoundRobin);
    let routed: u64 = (0..20).map(|seed| mem_port_matches_the_model("tiny_rr", seed)).sum();
    assert!(routed > 20_000, "only {routed} responses routed");
}

#[test]
fn the_edge_memory_port_grants_and_routes_as_the_model_issues() {
    let routed: u64 = (0..10).map(|seed| mem_port_matches_the_model("edge", seed)).sum();
    assert!(routed > 20_000, "only {routed} responses routed");
}
