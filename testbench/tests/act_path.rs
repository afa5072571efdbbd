//! The activation path (act_load + activation SRAM + act_scan) RTL, Verilated, against the cycle
//! model's `ActLoad`, `Memory` and `ActScan` in `model::core`'s order: the same request every
//! cycle, the same bytes loaded, and the same queue head and `done` every cycle. The memory is the
//! model's (latency, bandwidth, outstanding limit), with a higher-priority client taking the port
//! at random cycles; a response is presented to the RTL the cycle before it completes.

use half::f16;
use lacuna_model::core::act_load::ActLoad;
use lacuna_model::core::act_scan::ActScan;
use lacuna_model::core::slice::Token;
use lacuna_model::memory::{MemClient, Memory, Requester};
use lacuna_spec::{ActivationFilter, Arch};
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

fn act_path_matches_the_model(preset: &str, seed: u64) {
    let arch = Arch::preset(preset).unwrap();
    let c = &arch.core;
    let burst = arch.memory.request_bytes as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let k_len = rng.random_range(0..=(arch.sram.activation_bytes / 2).min(400) as usize);
    let panels = rng.random_range(1..4u32);
    let sparsity = rng.random_range(0.0..1.0);
    let x: Vec<f16> = (0..k_len)
        .map(|_| {
            if rng.random_bool(sparsity) {
                f16::ZERO
            } else {
                f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000))
            }
        })
        .collect();
    let filter = ActivationFilter { threshold: f16::from_f32(rng.random_range(0.0..0.5)) };
    let x_base = burst * rng.random_range(0..8u64);
    // The memory image of x, padded to whole bursts.
    let mut bytes: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    bytes.resize(bytes.len().div_ceil(burst as usize) * burst as usize, 0);

    let mut rtl = Verilated::new(&format!("lacuna_act_path_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, x_base_p, cols, panels_p, threshold) =
        (p("reset"), p("x_base"), p("cols"), p("panels"), p("threshold"));
    let (req_ready, resp_valid, pop, req_valid, req_addr, loaded_p) =
        (p("req_ready"), p("resp_valid"), p("pop"), p("req_valid"), p("req_addr"), p("loaded"));
    let (head_valid, head_marker, head_panel, head_k, head_x, done) =
        (p("head_valid"), p("head_marker"), p("head_panel"), p("head_k"), p("head_x"), p("done"));
    let resp_data: Vec<PortId> = (0..burst as usize / 4).map(|w| p(&format!("resp_data_{w}"))).collect();
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    rtl.set(x_base_p, x_base);
    rtl.set(cols, k_len as u64);
    rtl.set(panels_p, panels as u64);
    rtl.set(threshold, filter.threshold.to_bits() as u64);

    let mut mem = Memory::new(&arch.memory);
    let mut load = ActLoad::new(x_base, 2 * k_len as u64);
    let mut scan = ActScan::new(c.scan_width, c.activation_queue_depth, panels);
    // RTL responses: (completion cycle, burst offset in x), in order.
    let mut responses: VecDeque<(u64, u64)> = VecDeque::new();
    let mut next_offset = 0u64;
    for t in 0..500_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        mem.tick(t);
        // The model: pop (colptr_fetch), scan, then the issue phase (another client first, at random).
        let popping = rng.random_bool(0.6);
        let head = scan.queue.front().cloned();
        let was_done = scan.done();
        if popping {
            scan.queue.pop_front();
        }
        let loaded = load.loaded(t);
        scan.step(&x, loaded, filter);
        if rng.random_bool(0.2) {
            let _ = mem.request(t, MemClient::Outputs);
        }
        let wants = next_offset < 2 * k_len as u64;
        let accepted = load.issue(t, &mut mem);
        if accepted {
            let done = mem.last_completion();
            responses.push_back((done, next_offset));
            next_offset += burst;
        }

        // The RTL, with the same grant and the response due next cycle.
        rtl.set(pop, popping as u64);
        rtl.set(req_ready, accepted as u64);
        let due = responses.front().is_some_and(|&(done, _)| done == t + 1);
        rtl.set(resp_valid, due as u64);
        if due {
            let (_, offset) = responses.pop_front().unwrap();
            for (w, &port) in resp_data.iter().enumerate() {
                let at = offset as usize + 4 * w;
                rtl.set(port, u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64);
            }
        }
        rtl.cycle();
        assert_eq!(rtl.get(req_valid) == 1, wants, "{}", at("act_load wants a burst"));
        if wants {
            assert_eq!(rtl.get(req_addr), x_base + next_offset - accepted as u64 * burst, "{}", at("request address"));
        }
        assert_eq!(rtl.get(loaded_p), loaded, "{}", at("bytes loaded"));
        assert_eq!(rtl.get(done) == 1, was_done, "{}", at("done"));
        match head {
            None => assert_eq!(rtl.get(head_valid), 0, "{}", at("queue empty")),
            Some(Token::EndPanel(p)) => {
                assert_eq!((rtl.get(head_valid), rtl.get(head_marker)), (1, 1), "{}", at("marker at the head"));
                assert_eq!(rtl.get(head_panel), p as u64, "{}", at("marker panel"));
            }
            Some(Token::Work(a)) => {
                assert_eq!((rtl.get(head_valid), rtl.get(head_marker)), (1, 0), "{}", at("column at the head"));
                let got = (rtl.get(head_panel), rtl.get(head_k), rtl.get(head_x));
                assert_eq!(got, (a.panel as u64, a.k as u64, a.x.to_bits() as u64), "{}", at("head"));
            }
        }
        if scan.done() && scan.queue.is_empty() && responses.is_empty() {
            return;
        }
    }
    panic!("{preset} seed {seed}: the activation path did not finish");
}

#[test]
fn the_tiny_activation_path_loads_and_scans_as_the_model_does() {
    for seed in 0..150 {
        act_path_matches_the_model("tiny", seed);
    }
}

#[test]
fn the_edge_activation_path_loads_and_scans_as_the_model_does() {
    for seed in 0..60 {
        act_path_matches_the_model("edge", seed);
    }
}
