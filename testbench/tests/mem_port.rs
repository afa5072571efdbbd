//! The memory port RTL (arbiter + response router), Verilated, against the cycle model's `Memory`
//! and `Arbiter` as `model::core`'s issue phase drives them (fixed priority: drain > act_load >
//! colptr_fetch > chunk_fetch; round robin on `archs/tiny_rr.toml`): every cycle the same
//! requester is chosen, the same request leaves, every response names the client that asked, and
//! the in-flight count equals the model's. Requesters ask at random; port r is
//! `MemRequester::ALL[r]`, and each request names one of its requester's clients.

use lacuna_model::memory::arbiter::Arbiter;
use lacuna_model::memory::{MemClient, Memory};
use lacuna_spec::{Arch, MemRequester};
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

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
    let n = MemRequester::ALL.len();
    let valid: Vec<PortId> = (0..n).map(|r| p(&format!("req_valid_{r}"))).collect();
    let addr: Vec<PortId> = (0..n).map(|r| p(&format!("req_addr_{r}"))).collect();
    let client: Vec<PortId> = (0..n).map(|r| p(&format!("req_client_{r}"))).collect();
    let ready: Vec<PortId> = (0..n).map(|r| p(&format!("req_ready_{r}"))).collect();
    let write_data: Vec<PortId> = (0..words).map(|w| p(&format!("write_data_{w}"))).collect();
    let req_data: Vec<PortId> = (0..words).map(|w| p(&format!("mem_req_data_{w}"))).collect();
    let (reset, mem_ready, mem_resp_valid) = (p("reset"), p("mem_ready"), p("mem_resp_valid"));
    let (req_valid, req_addr, req_write, outstanding) =
        (p("mem_req_valid"), p("mem_req_addr"), p("mem_req_write"), p("outstanding"));
    let (resp_client, granted_client) = (p("resp_client"), p("req_client_granted"));
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);

    let mut mem = Memory::new(&arch.memory);
    let mut arbiter = Arbiter::new(arch.memory.arbitration, n);
    // In flight: (completion, client).
    let mut flight: VecDeque<(u64, MemClient)> = VecDeque::new();
    let busy = rng.random_range(0.1..0.9);
    let mut routed = 0;
    for t in 0..5_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        mem.tick(t);
        let in_flight = mem.in_flight() as u64;
        let wants: Vec<bool> = (0..n).map(|_| rng.random_bool(busy)).collect();
        let addrs: Vec<u64> = (0..n).map(|_| rng.random_range(0..1u64 << 30)).collect();
        let clients: Vec<MemClient> =
            MemRequester::ALL.iter().map(|r| r.clients()[rng.random_range(0..r.clients().len())]).collect();
        let data: Vec<u64> = (0..words).map(|_| rng.random::<u32>() as u64).collect();
        // The issue phase: the arbiter's choice asks the memory; granted if it takes it.
        let granted = arbiter.choose(&wants);
        let accepted = granted.is_some_and(|r| mem.request(t, clients[r]).is_some());
        if accepted {
            arbiter.grant(&wants);
            flight.push_back((mem.last_completion(), clients[granted.unwrap()]));
        }
        for r in 0..n {
            rtl.set(valid[r], wants[r] as u64);
            rtl.set(addr[r], addrs[r]);
            rtl.set(client[r], clients[r].id());
        }
        for w in 0..words {
            rtl.set(write_data[w], data[w]);
        }
        rtl.set(mem_ready, accepted as u64);
        let answered = flight.front().is_some_and(|&(done, _)| done == t + 1);
        rtl.set(mem_resp_valid, answered as u64);
        rtl.cycle();

        assert_eq!(rtl.get(outstanding), in_flight, "{}", at("requests in flight"));
        assert_eq!(rtl.get(req_valid) == 1, granted.is_some(), "{}", at("a request leaves"));
        if let Some(r) = granted {
            let writes = MemRequester::ALL[r].writes();
            assert_eq!(rtl.get(req_addr), addrs[r], "{}", at("request address"));
            assert_eq!(rtl.get(granted_client), clients[r].id(), "{}", at("request client"));
            assert_eq!(rtl.get(req_write) == 1, writes, "{}", at("write"));
            if writes {
                let got: Vec<u64> = req_data.iter().map(|&d| rtl.get(d)).collect();
                assert_eq!(got, data, "{}", at("written data"));
            }
        }
        for r in 0..n {
            let name = MemRequester::ALL[r].block();
            assert_eq!(rtl.get(ready[r]) == 1, accepted && granted == Some(r), "{}", at(name));
        }
        if answered {
            let (_, to) = flight.pop_front().unwrap();
            assert_eq!(rtl.get(resp_client), to.id(), "{}", at("the response's client"));
            routed += 1;
        }
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
