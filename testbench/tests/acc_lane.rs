//! The accumulator lane RTL, Verilated, against the cycle model's accumulator with one lane:
//! cycle by cycle the same FIFO acceptance and the same `quiet`, and bit-identical registers at
//! every drain, on random streams that make hazards, full FIFOs and port limits common.

use lacuna_model::core::accumulator::Accumulator;
use lacuna_spec::Arch;
use lacuna_testbench::model::Verilated;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Ports {
    issue_enable: lacuna_testbench::model::PortId,
    push_count: lacuna_testbench::model::PortId,
    push_target: Vec<lacuna_testbench::model::PortId>,
    push_product: Vec<lacuna_testbench::model::PortId>,
    free: lacuna_testbench::model::PortId,
    quiet: lacuna_testbench::model::PortId,
    invalid: lacuna_testbench::model::PortId,
    read_enable: lacuna_testbench::model::PortId,
    read_index: lacuna_testbench::model::PortId,
    read_value: lacuna_testbench::model::PortId,
    reset: lacuna_testbench::model::PortId,
}

fn ports(v: &Verilated, max_push: usize) -> Ports {
    let p = |n: &str| v.port(n).unwrap();
    Ports {
        issue_enable: p("issue_enable"),
        push_count: p("push_count"),
        push_target: (0..max_push).map(|k| p(&format!("push_target_{k}"))).collect(),
        push_product: (0..max_push).map(|k| p(&format!("push_product_{k}"))).collect(),
        free: p("free"),
        quiet: p("quiet"),
        invalid: p("invalid"),
        read_enable: p("read_enable"),
        read_index: p("read_index"),
        read_value: p("read_value"),
        reset: p("reset"),
    }
}

/// Runs `cycles` cycles of a random stream on the lane of `preset`; panics at the first
/// difference with the cycle and the signal.
fn lane_matches_the_model(preset: &str, seed: u64, cycles: u64) {
    let arch = Arch::preset(preset).unwrap();
    let c = &arch.core;
    let (regs, depth) = (c.acc_regs_per_lane, c.lane_queue_depth);
    let max_push = depth.min(arch.chunk_entries()) as usize;
    let mut rtl = Verilated::new(&format!("lacuna_acc_lane_{preset}")).unwrap();
    let io = ports(&rtl, max_push);
    let mut model = Accumulator::new(1, regs, c.acc_write_ports, c.acc_add_latency, depth);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);

    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);

    // Hot registers make hazards common; a few cold ones keep the rest of the file exercised.
    let hot: Vec<u32> = (0..3).map(|_| rng.random_range(0..regs)).collect();
    let mut pending: Vec<(u32, f32)> = Vec::new();
    let mut reading: Option<u32> = None;
    let mut pushed = 0u64;
    let mut drains = 0u32;
    let mut gap_until = 0u64;
    for t in 0..cycles {
        // Drain first (as in model::core): read one register, the last one resumes issue.
        rtl.set(io.issue_enable, reading.is_none() as u64);
        let mut read_now = None;
        if let Some(r) = reading {
            rtl.set(io.read_enable, 1);
            rtl.set(io.read_index, r as u64);
            let mut out = [0.0f32];
            model.read_out(r, &mut out);
            read_now = Some((r, out[0]));
            reading = if r + 1 == regs {
                model.resume(t + 1);
                None
            } else {
                Some(r + 1)
            };
        } else {
            rtl.set(io.read_enable, 0);
        }

        // Offer new work, or start a drain when the lane is quiet.
        let quiet_before = model.quiet(t);
        let quiet_model = quiet_before && pending.is_empty();
        let mut offered = 0;
        // Bursts with gaps, so that the lane runs dry and drains now and then.
        if t >= gap_until && rng.random_bool(0.02) {
            gap_until = t + rng.random_range(5..40);
        }
        if reading.is_none() && read_now.is_none() && quiet_model && rng.random_bool(0.3) {
            model.hold();
            reading = Some(0);
            drains += 1;
        } else {
            while t >= gap_until && pending.len() < max_push && rng.random_bool(0.7) {
                let row =
                    if rng.random_bool(0.7) { hot[rng.random_range(0..hot.len())] } else { rng.random_range(0..regs) };
                let w = half::f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000));
                let x = half::f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000));
                pending.push((row, f32::from(w) * f32::from(x)));
            }
            offered = pending.len();
        }
        let before = pending.len();
        let mut offer = pending.clone();
        if offered > 0 {
            model.offer(&mut offer, t);
        }
        let accepted = before - offer.len();

        // The RTL: read `free` this cycle, push that many.
        rtl.set(io.push_count, 0);
        rtl.eval();
        let free = rtl.get(io.free) as usize;
        let quiet_rtl = rtl.get(io.quiet) == 1;
        let take = free.min(offered);
        rtl.set(io.push_count, take as u64);
        for (k, &(row, p)) in pending.iter().take(take).enumerate() {
            rtl.set(io.push_target[k], row as u64);
            rtl.set(io.push_product[k], p.to_bits() as u64);
        }
        rtl.cycle();
        assert_eq!(rtl.get(io.invalid), 0, "{preset} seed {seed} cycle {t}: invalid");
        assert_eq!(take, accepted, "{preset} seed {seed} cycle {t}: entries accepted (rtl free {free})");
        assert_eq!(quiet_rtl, quiet_before, "{preset} seed {seed} cycle {t}: quiet");
        if let Some((r, want)) = read_now {
            let got = rtl.get(io.read_value) as u32;
            assert_eq!(got, want.to_bits(), "{preset} seed {seed} cycle {t}: register {r} read by drain");
        }
        pending.drain(..take);
        pushed += take as u64;
    }
    // The stream must have reached what the test is about.
    assert!(pushed > cycles / 8, "the stream kept the lane busy ({pushed} entries in {cycles} cycles)");
    assert!(drains >= 2, "{drains} drains");
    assert!(model.stalls.hazard > 0, "no hazard stall");
}

#[test]
fn the_tiny_lane_accepts_issues_and_sums_as_the_model_does() {
    for seed in 0..20 {
        lane_matches_the_model("tiny", seed, 3_000);
    }
}

#[test]
fn the_edge_lane_accepts_issues_and_sums_as_the_model_does() {
    for seed in 0..4 {
        lane_matches_the_model("edge", seed, 5_000);
    }
}
