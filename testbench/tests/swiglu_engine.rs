//! The SwiGLU engine (`lacuna_swiglu_engine_tiny`), Verilated, fed the dot engine's output stream
//! as the model's `dot_engine::Waves` times it (users paced to the wave's channels), against the
//! model's `swiglu::operand_at` cycle for cycle and `swiglu::apply` bit for bit: jobs of 1 to 4
//! groups a row, their experts back to back, each of 1 to `max_tokens` users with their own
//! weights, waves of 1 to `dot_units` channels asked with random gaps; every operand and `h` in its cycle, nothing else out, `idle`;
//! a user arriving one cycle before the previous one's last channel issues sets `overrun` (in
//! that cycle it does not); a non-finite gate sets `invalid` after its element. Synthetic
//! gate and up values over SiLU's whole table (and beyond its ends) and several binades.

use lacuna_model::expert_unit::dot_engine::Waves;
use lacuna_model::expert_unit::swiglu;
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

struct Ports {
    reset: PortId,
    clear: PortId,
    in_valid: Vec<PortId>,
    value: Vec<PortId>,
    in_user: PortId,
    in_up: PortId,
    in_weight: PortId,
    out_valid: PortId,
    out_unit: PortId,
    out_user: PortId,
    h: PortId,
    a: PortId,
    idle: PortId,
    invalid: PortId,
    overrun: PortId,
}

fn engine(arch: &Arch) -> (Verilated, Ports) {
    let rtl = Verilated::new(&format!("lacuna_swiglu_engine_{}", arch.name))
        .expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let units = arch.expert_unit.dot_units as usize;
    let each = |n: &str, k: usize| (0..k).map(|i| p(&format!("{n}_{i}"))).collect::<Vec<_>>();
    let io = Ports {
        reset: p("reset"),
        clear: p("clear"),
        in_valid: each("in_valid", units),
        value: each("value", units),
        in_user: p("in_user"),
        in_up: p("in_up"),
        in_weight: p("in_weight"),
        out_valid: p("out_valid"),
        out_unit: p("out_unit"),
        out_user: p("out_user"),
        h: p("h"),
        a: p("a"),
        idle: p("idle"),
        invalid: p("invalid"),
        overrun: p("overrun"),
    };
    (rtl, io)
}

/// A gate value: mostly within SiLU's table [-16, 16), some beyond its ends, over binades.
fn gate_value(rng: &mut ChaCha8Rng) -> f32 {
    match rng.random_range(0..4) {
        0 => rng.random_range(-24.0f32..24.0),
        1 => rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-12..2)),
        _ => rng.random_range(-16.0f32..16.0),
    }
}

fn up_value(rng: &mut ChaCha8Rng) -> f32 {
    rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-8..4))
}

/// What the stream drives in a cycle: per unit a value, the user and the row.
#[derive(Clone, Debug)]
struct Drive {
    values: Vec<Option<f32>>,
    user: usize,
    up: bool,
    weight: f32,
}

/// An operand the engine must give: (unit, user, h bits, a bits).
type Expected = (usize, usize, u32, u16);

#[test]
fn the_swiglu_engine_gives_each_channels_operand_in_the_models_cycle_equal_to_the_models_swiglu() {
    let arch = Arch::preset("tiny").unwrap();
    let (n_units, n_tokens) = (arch.expert_unit.dot_units as usize, arch.expert_unit.max_tokens as usize);
    assert!(n_units >= 3, "pacing needs more channels than a one-group user's two elements");
    let mut rng = ChaCha8Rng::seed_from_u64(0x7377676c);
    let (mut rtl, io) = engine(&arch);
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    rtl.set(io.clear, 1);
    rtl.cycle();
    rtl.set(io.clear, 0);
    // The whole run laid out by the model: the drives by cycle and the outputs. Jobs of one
    // hidden size (one `groups`), a job's experts back to back, each its users and weights; a job
    // starts once the previous one is out.
    let mut drives: BTreeMap<u64, Drive> = BTreeMap::new();
    let mut outputs: BTreeMap<u64, Expected> = BTreeMap::new();
    let mut dots = Waves::new();
    let mut now = 2u64;
    let mut waves_run = 0;
    for expert in 0..200 {
        if expert % 8 == 0 {
            now = outputs.keys().next_back().map_or(now, |&c| c + 1).max(now);
            dots = Waves::new();
        }
        let groups = [1u64, 1, 2, 3, 4][(expert / 8) % 5];
        let users = rng.random_range(1..=n_tokens);
        let weights: Vec<f32> = (0..users).map(|_| rng.random_range(0.0f32..1.0)).collect();
        for _wave in 0..rng.random_range(1..4) {
            let units = rng.random_range(1..=n_units);
            let asked = now + [0, 0, 1, 5, 30][rng.random_range(0..5)];
            let t = dots.wave(asked, users as u64, groups, units as u64);
            for i in 0..users {
                let gate: Vec<f32> = (0..units).map(|_| gate_value(&mut rng)).collect();
                let up: Vec<f32> = (0..units).map(|_| up_value(&mut rng)).collect();
                for (row, vals) in [(false, &gate), (true, &up)] {
                    let at = t.value_at(i as u64, row);
                    let mut values = vec![None; n_units];
                    for (u, &v) in vals.iter().enumerate() {
                        values[u] = Some(v);
                    }
                    let drive = Drive { values, user: i, up: row, weight: weights[i] };
                    assert!(drives.insert(at, drive).is_none(), "one drive a cycle");
                }
                for u in 0..units {
                    let (h, a) = swiglu::apply(gate[u], up[u], weights[i]);
                    let at = swiglu::operand_at(&t, u as u64, i as u64);
                    assert!(outputs.insert(at, (u, i, h.to_bits(), a.to_bits())).is_none(), "one operand a cycle");
                }
            }
            now = t.last;
            waves_run += 1;
        }
    }
    let end = outputs.keys().next_back().copied().unwrap() + 3;
    let mut checked = 0;
    for cycle in 0..end {
        let drive = drives.get(&cycle);
        for u in 0..n_units {
            let v = drive.and_then(|d| d.values[u]);
            rtl.set(io.in_valid[u], v.is_some() as u64);
            rtl.set(io.value[u], v.map_or(rng.random::<u32>(), f32::to_bits) as u64);
        }
        rtl.set(io.in_user, drive.map_or(rng.random_range(0..n_tokens), |d| d.user) as u64);
        rtl.set(io.in_up, drive.map_or(rng.random_range(0..2), |d| d.up as usize) as u64);
        // The weight counts with the up values only: anything with the gate values.
        let weight = drive.filter(|d| d.up).map_or(rng.random::<u32>(), |d| d.weight.to_bits());
        rtl.set(io.in_weight, weight as u64);
        rtl.cycle();
        let want = outputs.get(&cycle);
        assert_eq!(rtl.get(io.out_valid) != 0, want.is_some(), "cycle {cycle}: out_valid, expected {want:?}");
        if let Some(&(u, i, h, a)) = want {
            let got = (rtl.get(io.out_unit) as usize, rtl.get(io.out_user) as usize);
            assert_eq!(got, (u, i), "cycle {cycle}: unit, user");
            let (gh, ga) = (rtl.get(io.h) as u32, rtl.get(io.a) as u16);
            assert_eq!(
                (gh, ga),
                (h, a),
                "cycle {cycle}, unit {u}, user {i}: h {} a {:#06x}, model h {} a {a:#06x}",
                f32::from_bits(gh),
                ga,
                f32::from_bits(h)
            );
            checked += 1;
        }
        // An element issued (out within 24 cycles) keeps it busy; none coming out now and none
        // pending (the next out beyond every pending element's reach), it is idle.
        let next_out = outputs.range(cycle + 1..).next().map(|(&c, _)| c);
        let idle = rtl.get(io.idle) != 0;
        if next_out.is_some_and(|o| o <= cycle + 24) {
            assert!(!idle, "cycle {cycle}: an element in the lane, idle high");
        }
        if want.is_none() && next_out.is_none_or(|o| o > cycle + 25 + n_units as u64) {
            assert!(idle, "cycle {cycle}: nothing pending, idle low");
        }
        assert_eq!(rtl.get(io.overrun), 0, "cycle {cycle}: overrun on a paced stream");
        assert_eq!(rtl.get(io.invalid), 0, "cycle {cycle}: invalid on finite values");
    }
    assert_ne!(rtl.get(io.idle), 0, "idle at the end");
    eprintln!("{waves_run} waves, {checked} operands checked");
    assert!(waves_run >= 300 && checked >= 2_000, "{waves_run} waves, {checked} operands");
}

/// Drives users of `units` channels (value 1.0, weight 0.5) whose up values come `gap` cycles
/// apart (gate the cycle before), `gate` as user 1's first gate; returns (overrun, the cycle
/// `invalid` was first seen) after they drain.
fn run_users(units: usize, gap: u64, gate: f32) -> (bool, Option<u64>) {
    let arch = Arch::preset("tiny").unwrap();
    let (mut rtl, io) = engine(&arch);
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    let n_units = arch.expert_unit.dot_units as usize;
    let ups: Vec<u64> = (0..3).map(|k| 1 + k * gap).collect();
    let mut invalid_at = None;
    for cycle in 0..ups[2] + 40 {
        let user = ups.iter().position(|&v| v == cycle || v == cycle + 1);
        let up = ups.contains(&cycle);
        for u in 0..n_units {
            let value = if user == Some(1) && !up && u == 0 { gate } else { 1.0 };
            rtl.set(io.in_valid[u], (user.is_some() && u < units) as u64);
            rtl.set(io.value[u], value.to_bits() as u64);
        }
        rtl.set(io.in_user, user.unwrap_or(0) as u64);
        rtl.set(io.in_up, up as u64);
        rtl.set(io.in_weight, 0.5f32.to_bits() as u64);
        rtl.cycle();
        if invalid_at.is_none() && rtl.get(io.invalid) != 0 {
            invalid_at = Some(cycle);
        }
    }
    let overrun = rtl.get(io.overrun) != 0;
    rtl.set(io.clear, 1);
    rtl.cycle();
    rtl.set(io.clear, 0);
    rtl.cycle();
    assert_eq!((rtl.get(io.overrun), rtl.get(io.invalid)), (0, 0), "clear resets both flags");
    (overrun, invalid_at)
}

#[test]
fn users_as_far_apart_as_their_channels_never_overrun_one_cycle_closer_they_do() {
    let units = Arch::preset("tiny").unwrap().expert_unit.dot_units as usize;
    for n in 1..=units {
        // The next up values in the previous user's last issue: allowed (a user is at least two
        // cycles, its gate then its up values).
        let gap = (n as u64).max(2);
        assert_eq!(run_users(n, gap, 1.0), (false, None), "{n} channels, users {gap} cycles apart");
        if n >= 3 {
            assert!(run_users(n, n as u64 - 1, 1.0).0, "{n} channels, users {} cycles apart", n - 1);
        }
    }
}

#[test]
fn a_non_finite_gate_sets_invalid_the_cycle_after_its_element_comes_out_until_clear() {
    let units = Arch::preset("tiny").unwrap().expert_unit.dot_units as usize;
    // User 1's up values at cycle 1 + gap; its channel 0 element out OUT_AFTER_UP later.
    let gap = units as u64;
    let out = 1 + gap + lacuna_rtl::expert_unit::swiglu::engine::OUT_AFTER_UP;
    for gate in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert_eq!(run_users(units, gap, gate), (false, Some(out + 1)), "gate {gate}");
    }
}
