//! The activation scan RTL, Verilated, against the cycle model's `ActScan`: cycle by cycle the
//! same queue head and the same `done`, with x arriving in the SRAM burst by burst and the pointer
//! fetch popping at random, over several panels, thresholds and K not a multiple of the width.

use half::f16;
use lacuna_model::core::act_scan::ActScan;
use lacuna_model::core::slice::Token;
use lacuna_spec::{ActivationFilter, Arch};
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn scan_matches_the_model(preset: &str, seed: u64) {
    let arch = Arch::preset(preset).unwrap();
    let c = &arch.core;
    let width = c.scan_width as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let k_len = rng.random_range(0..=(arch.sram.activation_bytes / 2).min(300) as usize);
    let panels = rng.random_range(1..4u32);
    let sparsity = rng.random_range(0.0..1.0);
    let threshold = if rng.random_bool(0.5) { f16::ZERO } else { f16::from_f32(rng.random_range(0.0..2.0)) };
    let x: Vec<f16> = (0..k_len)
        .map(|_| {
            if rng.random_bool(0.1) {
                // Exactly at the threshold, either sign: active.
                f16::from_bits(threshold.to_bits() | (rng.random::<u16>() & 0x8000))
            } else if rng.random_bool(sparsity) {
                if rng.random_bool(0.5) {
                    f16::ZERO
                } else {
                    f16::NEG_ZERO
                }
            } else {
                f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000))
            }
        })
        .collect();
    let filter = ActivationFilter { threshold };

    let mut rtl = Verilated::new(&format!("lacuna_act_scan_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, cols, panels_p, threshold_p, loaded_p, read_index, pop) =
        (p("reset"), p("cols"), p("panels"), p("threshold"), p("loaded"), p("read_index"), p("pop"));
    let (head_valid, head_marker, head_panel, head_k, head_x, done) =
        (p("head_valid"), p("head_marker"), p("head_panel"), p("head_k"), p("head_x"), p("done"));
    let read_x: Vec<PortId> = (0..width).map(|i| p(&format!("read_x_{i}"))).collect();
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    rtl.set(cols, k_len as u64);
    rtl.set(panels_p, panels as u64);
    rtl.set(threshold_p, threshold.to_bits() as u64);

    let mut scan = ActScan::new(c.scan_width, c.activation_queue_depth, panels);
    let burst = arch.memory.request_bytes as u64;
    let mut loaded = 0u64;
    let mut popped = 0usize;
    for t in 0..200_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        // x arrives a burst now and then (act_load); the pointer fetch pops first.
        if rng.random_bool(0.3) {
            loaded = (loaded + burst).min(2 * k_len as u64);
        }
        let popping = rng.random_bool(0.6);
        rtl.set(loaded_p, loaded);
        rtl.set(pop, popping as u64);
        rtl.eval();
        let k = rtl.get(read_index) as usize;
        for (i, &port) in read_x.iter().enumerate() {
            rtl.set(port, x.get(k + i).map_or(0, |v| v.to_bits() as u64));
        }
        rtl.cycle();
        match scan.queue.front() {
            None => assert_eq!(rtl.get(head_valid), 0, "{}", at("queue empty")),
            Some(head) => {
                assert_eq!(rtl.get(head_valid), 1, "{}", at("queue not empty"));
                match head {
                    Token::EndPanel(p) => {
                        assert_eq!(rtl.get(head_marker), 1, "{}", at("head is a marker"));
                        assert_eq!(rtl.get(head_panel), *p as u64, "{}", at("marker panel"));
                    }
                    Token::Work(a) => {
                        assert_eq!(rtl.get(head_marker), 0, "{}", at("head is a column"));
                        let got = (rtl.get(head_panel), rtl.get(head_k), rtl.get(head_x));
                        assert_eq!(got, (a.panel as u64, a.k as u64, a.x.to_bits() as u64), "{}", at("head"));
                    }
                }
            }
        }
        assert_eq!(rtl.get(done) == 1, scan.done(), "{}", at("done"));
        if popping && scan.queue.pop_front().is_some() {
            popped += 1;
        }
        scan.step(&x, loaded, filter);
        if scan.done() && scan.queue.is_empty() {
            let active = x.iter().filter(|&&v| filter.is_active(v)).count();
            assert_eq!(popped, panels as usize * (active + 1), "every active column and marker passed");
            return;
        }
    }
    panic!("{preset} seed {seed}: the scan did not finish");
}

#[test]
fn the_tiny_scan_queues_the_active_columns_as_the_model_does() {
    for seed in 0..200 {
        scan_matches_the_model("tiny", seed);
    }
}

#[test]
fn the_edge_scan_queues_the_active_columns_as_the_model_does() {
    for seed in 0..100 {
        scan_matches_the_model("edge", seed);
    }
}
