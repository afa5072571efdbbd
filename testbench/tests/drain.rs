//! The drain RTL, Verilated, against the cycle model's `Drain` and `Memory` in `model::core`'s
//! order: the same register row read in the same cycle (or held back by a full write buffer), the
//! same panel end, the same write (address and data) offered every cycle, the same writes pending.
//! The harness plays the back end (lane values from a hash of panel, row and lane), route (starting
//! the next panel at random once drain is idle) and lower-priority clients that fill the memory's
//! slots when drain has nothing to write.

use lacuna_model::core::accumulator::Accumulator;
use lacuna_model::core::drain::Drain;
use lacuna_model::memory::{MemClient, Memory, Requester};
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The value lane `l` holds in register `r` when panel `p` drains.
fn lane_value(p: u64, r: u64, l: u64) -> u64 {
    let mut h = (p << 40) ^ (r << 20) ^ l ^ 0x9e37_79b9_7f4a_7c15;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (h ^ (h >> 31)) & 0xffff_ffff
}

/// Returns the writes compared and the cycles drain waited on a full write buffer.
fn drain_matches_the_model(preset: &str, seed: u64) -> (u64, u64) {
    let arch = Arch::preset(preset).unwrap();
    let c = &arch.core;
    let lanes = c.lanes as u64;
    let burst = arch.memory.request_bytes as u64;
    let words = burst as usize / 4;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Panels of the tile's rows (or fewer, keeping 4 * panel_rows a multiple of the burst).
    let panel_rows = if rng.random_bool(0.5) {
        arch.tile_rows() as u64
    } else {
        (burst / 4) * rng.random_range(1..=(arch.tile_rows() as u64 * 4 / burst))
    };
    let panels = rng.random_range(1..=6u64);
    let m = (panels - 1) * panel_rows + rng.random_range(1..=panel_rows);
    let y_base = burst * rng.random_range(0..64u64);
    let busy = rng.random_range(0.0..1.0);
    let start_rate = rng.random_range(0.05..1.0);

    let mut rtl = Verilated::new(&format!("lacuna_drain_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, start, panel_rows_p, m_p, y_base_p, req_ready) =
        (p("reset"), p("start"), p("panel_rows"), p("m"), p("y_base"), p("req_ready"));
    let (reading, read_enable, read_index, idle, done_panel, req_valid, req_addr, pending) = (
        p("reading"),
        p("read_enable"),
        p("read_index"),
        p("idle"),
        p("done_panel"),
        p("req_valid"),
        p("req_addr"),
        p("pending"),
    );
    let read_value: Vec<PortId> = (0..lanes).map(|l| p(&format!("read_value_{l}"))).collect();
    let req_data: Vec<PortId> = (0..words).map(|w| p(&format!("req_data_{w}"))).collect();
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    rtl.set(panel_rows_p, panel_rows);
    rtl.set(m_p, m);
    rtl.set(y_base_p, y_base);

    let mut mem = Memory::new(&arch.memory);
    let mut drain = Drain::new(c.lanes, arch.drain_buffer_bursts() as usize);
    let mut acc = Accumulator::new(c.lanes, c.acc_regs_per_lane, c.acc_write_ports, c.acc_add_latency, 2);
    let mut y = vec![0.0f32; m as usize];
    let (mut started, mut drained, mut writes, mut bursts, mut stalls) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for t in 0..400_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        mem.tick(t);
        let was_reading = !drain.idle();
        let row = drain.row();
        let panel = drained;
        let read = drain.step(&mut acc, &mut y, (panel * panel_rows) as usize, y_base, burst);
        stalls += (was_reading && !read) as u64;
        let ended = read && drain.idle();
        if ended {
            drained += 1;
        }
        let now_idle = drain.idle();
        let starting = now_idle && started < panels && rng.random_bool(start_rate);
        if starting {
            let rows = panel_rows.min(m - started * panel_rows);
            drain.start(started as u32, rows as u32);
            started += 1;
        }
        let offered = drain.next_write();
        let accepted = drain.issue(t, &mut mem);
        bursts += accepted as u64;
        if offered.is_none() && rng.random_bool(busy) {
            let _ = mem.request(t, MemClient::Values);
        }

        rtl.set(start, starting as u64);
        for l in 0..lanes {
            let v = row.map_or(0, |r| lane_value(panel, r as u64, l));
            rtl.set(read_value[l as usize], v);
        }
        rtl.set(req_ready, accepted as u64);
        rtl.cycle();

        assert_eq!(rtl.get(reading) == 1, was_reading, "{}", at("reading"));
        assert_eq!(rtl.get(read_enable) == 1, read, "{}", at("a register row read"));
        if read {
            assert_eq!(rtl.get(read_index), row.unwrap() as u64, "{}", at("register row"));
        }
        assert_eq!(rtl.get(done_panel) == 1, ended, "{}", at("panel read out"));
        assert_eq!(rtl.get(idle) == 1, now_idle, "{}", at("idle after the step"));
        assert_eq!(rtl.get(req_valid) == 1, offered.is_some(), "{}", at("a write offered"));
        if let Some(a) = offered {
            assert_eq!(rtl.get(req_addr), a, "{}", at("write address"));
            for (w, &port) in req_data.iter().enumerate() {
                let g = (a - y_base) / 4 + w as u64;
                if g < m {
                    let (q, pnl) = (g % panel_rows, g / panel_rows);
                    let want = lane_value(pnl, q / lanes, q % lanes);
                    assert_eq!(rtl.get(port), want, "{}", at(&format!("word {w} (row {g}) of the write")));
                }
            }
            writes += 1;
        }
        assert_eq!(rtl.get(pending) == 1, drain.writes_pending(), "{}", at("writes pending"));
        if drained == panels && !drain.writes_pending() {
            assert_eq!(bursts, (4 * m).div_ceil(burst), "{}", at("every burst of y written once"));
            return (writes, stalls);
        }
    }
    panic!("{preset} seed {seed}: drain did not finish");
}

#[test]
fn the_tiny_drain_reads_stalls_and_writes_as_the_model_does() {
    let runs: Vec<(u64, u64)> = (0..100).map(|seed| drain_matches_the_model("tiny", seed)).collect();
    let writes: u64 = runs.iter().map(|r| r.0).sum();
    let stalls: u64 = runs.iter().map(|r| r.1).sum();
    assert!(writes > 1_000, "only {writes} writes compared");
    // The narrow tiny port (2 in flight) fills the write buffer in some runs.
    assert!(stalls > 0, "the write buffer never filled");
}

#[test]
fn the_edge_drain_reads_stalls_and_writes_as_the_model_does() {
    let writes: u64 = (0..12).map(|seed| drain_matches_the_model("edge", seed).0).sum();
    assert!(writes > 1_000, "only {writes} writes compared");
}
