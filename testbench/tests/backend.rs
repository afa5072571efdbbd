//! The back end (route + accumulator lanes) RTL, Verilated, against the cycle model's `Route` and
//! `Accumulator`, driven as `model::core` drives them: the same cycle for every token taken and
//! every drain started, and bit-identical registers at every drain, on random slices (masked
//! entries, hot rows, lane imbalance) and end-of-panel markers.

use lacuna_model::core::accumulator::Accumulator;
use lacuna_model::core::route::Route;
use lacuna_model::core::slice::{Products, Token};
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A token the multiplier offers: entry slots (row, product) or None where masked, or a marker.
enum Offer {
    Slice(Vec<Option<(u32, f32)>>),
    Marker(u32),
}

fn random_offer(rng: &mut ChaCha8Rng, arch: &Arch, hot: &[u32], panel: u32) -> Offer {
    // Markers rarer on archs whose drain is long (one register row per cycle).
    if rng.random_bool((1.0 / arch.core.acc_regs_per_lane as f64).min(0.04)) {
        return Offer::Marker(panel);
    }
    let tile = arch.tile_rows();
    let density = rng.random_range(0.0..1.0);
    let slots = (0..arch.chunk_entries())
        .map(|_| {
            rng.random_bool(density).then(|| {
                let row =
                    if rng.random_bool(0.5) { hot[rng.random_range(0..hot.len())] } else { rng.random_range(0..tile) };
                let w = half::f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000));
                let x = half::f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000));
                (row, f32::from(w) * f32::from(x))
            })
        })
        .collect();
    Offer::Slice(slots)
}

fn backend_matches_the_model(preset: &str, seed: u64, cycles: u64) {
    let arch = Arch::preset(preset).unwrap();
    let c = &arch.core;
    let (lanes, regs, entries) = (c.lanes as usize, c.acc_regs_per_lane, arch.chunk_entries() as usize);
    let mut rtl = Verilated::new(&format!("lacuna_backend_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, in_marker, in_panel) = (p("reset"), p("in_valid"), p("in_marker"), p("in_panel"));
    let (drain_idle, issue_enable, read_enable, read_index) =
        (p("drain_idle"), p("issue_enable"), p("read_enable"), p("read_index"));
    let (in_ready, start_drain, drain_panel, invalid) =
        (p("in_ready"), p("start_drain"), p("drain_panel"), p("invalid"));
    let entry_valid: Vec<PortId> = (0..entries).map(|e| p(&format!("in_entry_valid_{e}"))).collect();
    let entry_row: Vec<PortId> = (0..entries).map(|e| p(&format!("in_row_{e}"))).collect();
    let entry_product: Vec<PortId> = (0..entries).map(|e| p(&format!("in_product_{e}"))).collect();
    let read_value: Vec<PortId> = (0..lanes).map(|l| p(&format!("read_value_{l}"))).collect();

    let mut route = Route::new(c.lanes);
    let mut acc = Accumulator::new(c.lanes, regs, c.acc_write_ports, c.acc_add_latency, c.lane_queue_depth);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let hot: Vec<u32> = (0..4).map(|_| rng.random_range(0..arch.tile_rows())).collect();

    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);

    let mut reading: Option<u32> = None;
    let mut panel = 0u32;
    let mut offer: Option<Offer> = None;
    let (mut slices, mut drains) = (0u32, 0u32);
    let mut buf = vec![0.0f32; lanes];
    for t in 0..cycles {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        // drain (harness): one register row per cycle; the last one resumes issue.
        rtl.set(issue_enable, reading.is_none() as u64);
        let mut read_now = None;
        match reading {
            Some(r) => {
                rtl.set(read_enable, 1);
                rtl.set(read_index, r as u64);
                acc.read_out(r, &mut buf);
                read_now = Some(r);
                reading = if r + 1 == regs {
                    acc.resume(t + 1);
                    None
                } else {
                    Some(r + 1)
                };
            }
            None => rtl.set(read_enable, 0),
        }
        let idle = reading.is_none();
        rtl.set(drain_idle, idle as u64);

        // route, then a new token when the route is empty (model::core's order).
        let (_, started) = route.step(t, &mut acc, idle);
        if offer.is_none() && rng.random_bool(0.8) {
            offer = Some(random_offer(&mut rng, &arch, &hot, panel));
        }
        let ready_model = route.is_empty();
        rtl.set(in_valid, offer.is_some() as u64);
        match &offer {
            Some(Offer::Marker(p)) => {
                rtl.set(in_marker, 1);
                rtl.set(in_panel, *p as u64);
            }
            Some(Offer::Slice(slots)) => {
                rtl.set(in_marker, 0);
                for (e, slot) in slots.iter().enumerate() {
                    rtl.set(entry_valid[e], slot.is_some() as u64);
                    let (row, product) = slot.unwrap_or((0, 0.0));
                    rtl.set(entry_row[e], row as u64);
                    rtl.set(entry_product[e], product.to_bits() as u64);
                }
            }
            None => {}
        }
        rtl.cycle();

        assert_eq!(rtl.get(in_ready) == 1, ready_model, "{}", at("in_ready"));
        assert_eq!(rtl.get(start_drain) == 1, started.is_some(), "{}", at("start_drain"));
        assert_eq!(rtl.get(invalid), 0, "{}", at("invalid"));
        if let Some(p) = started {
            assert_eq!(rtl.get(drain_panel), p as u64, "{}", at("drain_panel"));
            acc.hold();
            reading = Some(0);
            drains += 1;
        }
        if let Some(r) = read_now {
            for l in 0..lanes {
                let got = rtl.get(read_value[l]) as u32;
                assert_eq!(got, buf[l].to_bits(), "{}", at(&format!("lane {l} register {r} read by drain")));
            }
        }
        if ready_model {
            if let Some(o) = offer.take() {
                let token = match o {
                    Offer::Marker(p) => {
                        panel = p + 1;
                        Token::EndPanel(p)
                    }
                    Offer::Slice(slots) => {
                        slices += 1;
                        Token::Work(Products { panel, entries: slots.into_iter().flatten().collect() })
                    }
                };
                route.accept(token);
            }
        }
    }
    assert!(slices > (cycles / 10) as u32 && drains >= 2, "{slices} slices, {drains} drains");
    assert!(acc.stalls.hazard > 0, "no hazard stall");
}

#[test]
fn the_tiny_back_end_takes_tokens_drains_and_sums_as_the_model_does() {
    for seed in 0..10 {
        backend_matches_the_model("tiny", seed, 4_000);
    }
}

#[test]
fn the_edge_back_end_takes_tokens_drains_and_sums_as_the_model_does() {
    for seed in 0..3 {
        backend_matches_the_model("edge", seed, 20_000);
    }
}
