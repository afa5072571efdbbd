//! The dot engine (`lacuna_dot_engine_tiny`: four dot units in lock step), Verilated, against
//! the model's `dot_engine::Waves` cycle for cycle and the spec's `row_dot` bit for bit: random
//! waves (1 to `dot_units` channels, users paced to the channels where they outnumber a user's
//! elements, 1 to `max_tokens` users in any slots, hidden sizes 1 to
//! `max_hidden` with short last groups), asked for at random cycles (before, at and after the
//! previous wave's end), every element's activation and weight read checked in its cycle, every
//! row value and its cycle, the idle units silent, `idle` when the last value is out. Synthetic
//! real-valued data over several binades, quantized as the unit quantizes (A8W4).

use lacuna_model::expert_unit::dot_engine::{WaveTiming, Waves};
use lacuna_spec::a8w4::{groups, row_dot, Int4Vector, Int8Vector};
use lacuna_spec::Arch;
use lacuna_testbench::expert_cases::{w_words, x_words};
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

struct Ports {
    reset: PortId,
    clear: PortId,
    start: PortId,
    units: PortId,
    users: PortId,
    groups: PortId,
    user_slot: Vec<PortId>,
    ready: PortId,
    x_slot: PortId,
    group: PortId,
    up: PortId,
    x: PortId,
    token_scale: PortId,
    w: Vec<PortId>,
    scale: Vec<PortId>,
    out_valid: Vec<PortId>,
    value: Vec<PortId>,
    out_user: PortId,
    out_up: PortId,
    idle: PortId,
    invalid: PortId,
}

fn engine(arch: &Arch) -> (Verilated, Ports) {
    let rtl =
        Verilated::new(&format!("lacuna_dot_engine_{}", arch.name)).expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (units, tokens) = (arch.expert_unit.dot_units as usize, arch.expert_unit.max_tokens as usize);
    let each = |n: &str, k: usize| (0..k).map(|i| p(&format!("{n}_{i}"))).collect::<Vec<_>>();
    let io = Ports {
        reset: p("reset"),
        clear: p("clear"),
        start: p("start"),
        units: p("units"),
        users: p("users"),
        groups: p("groups"),
        user_slot: each("user_slot", tokens),
        ready: p("ready"),
        x_slot: p("x_slot"),
        group: p("group"),
        up: p("up"),
        x: p("x"),
        token_scale: p("token_scale"),
        w: each("w", units),
        scale: each("scale", units),
        out_valid: each("out_valid", units),
        value: each("value", units),
        out_user: p("out_user"),
        out_up: p("out_up"),
        idle: p("idle"),
        invalid: p("invalid"),
    };
    (rtl, io)
}

/// A real-valued vector over several binades (synthetic).
fn values(rng: &mut ChaCha8Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(rng.random_range(-6..3))).collect()
}

/// One wave: its channels' gate and up rows (one channel a unit) and its users' slots.
struct Wave {
    rows: Vec<[Int4Vector; 2]>,
    slots: Vec<usize>,
    hidden: usize,
    /// Cycles after the previous wave was asked for that this one is asked for.
    ask_after: u64,
}

/// A value the engine must give: (cycle, unit, user, up, value bits).
type Due = (u64, usize, usize, bool, u32);

/// Runs `waves` on the engine (each asked `ask_after` cycles after the previous one, `start` held
/// until taken) with the token store `tokens`; checks each take, each element's reads, each
/// value against the model and the spec; returns the values checked and the waves whose users
/// were paced (more channels than elements a user).
fn run_waves(arch: &Arch, tokens: &[Int8Vector], waves: &[Wave], rng: &mut ChaCha8Rng) -> (usize, usize) {
    let (mut rtl, io) = engine(arch);
    let n_units = arch.expert_unit.dot_units as usize;
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    rtl.set(io.clear, 1);
    rtl.cycle();
    rtl.set(io.clear, 0);
    let mut model = Waves::new();
    // The cycle count starts here (the engine's cycle 0).
    let mut cycle = 0u64;
    let mut next = 0usize;
    let mut asked_at = 0u64;
    // The elements still to issue: (cycle, wave, user, group, up).
    let mut elements: VecDeque<(u64, usize, usize, usize, bool)> = VecDeque::new();
    let mut due: VecDeque<Due> = VecDeque::new();
    let mut checked = 0;
    let mut paced = 0;
    let mut last_value = 0u64;
    loop {
        if next == waves.len() && elements.is_empty() && due.is_empty() && cycle > last_value + 2 {
            break;
        }
        assert!(cycle < 1_000_000, "the engine did not finish");
        // Ask for the next wave from its cycle on.
        let asking = next < waves.len() && cycle >= asked_at + waves[next].ask_after;
        rtl.set(io.start, asking as u64);
        if asking {
            let w = &waves[next];
            rtl.set(io.units, w.rows.len() as u64);
            rtl.set(io.users, w.slots.len() as u64);
            rtl.set(io.groups, groups(w.hidden) as u64);
            for (t, &port) in io.user_slot.iter().enumerate() {
                rtl.set(port, w.slots.get(t).copied().unwrap_or_else(|| rng.random_range(0..tokens.len())) as u64);
            }
        }
        rtl.eval();
        let ready = rtl.get(io.ready) != 0;
        if asking && ready {
            let w = &waves[next];
            let asked = asked_at + w.ask_after;
            let groups = groups(w.hidden) as u64;
            let t: WaveTiming = model.wave(asked, w.slots.len() as u64, groups, w.rows.len() as u64);
            assert_eq!(
                t.taken, cycle,
                "wave {next} (asked in cycle {asked}): taken by the RTL in {cycle}, by the model in {}",
                t.taken
            );
            paced += (t.pace > 2 * groups) as usize;
            for i in 0..w.slots.len() {
                for g in 0..groups as usize {
                    for up in [false, true] {
                        let k = (2 * g + up as usize) as u64;
                        elements.push_back((t.element_at(i as u64, k), next, i, g, up));
                    }
                }
                for up in [false, true] {
                    for (u, rows) in w.rows.iter().enumerate() {
                        let want = row_dot(&tokens[w.slots[i]], &rows[up as usize]).to_bits();
                        due.push_back((t.value_at(i as u64, up), u, i, up, want));
                    }
                }
            }
            asked_at = asked;
            next += 1;
        }
        // The element issuing now: its reads answered from the stores.
        let issuing = elements.front().is_some_and(|e| e.0 == cycle);
        match elements.front() {
            Some(&(at, wi, i, g, up)) if at == cycle => {
                elements.pop_front();
                let w = &waves[wi];
                let slot = w.slots[i];
                let what = format!("cycle {cycle}, wave {wi}, user {i}, group {g}, up {up}");
                assert_eq!(rtl.get(io.x_slot) as usize, slot, "{what}: x_slot");
                assert_eq!(rtl.get(io.group) as usize, g, "{what}: group");
                assert_eq!(rtl.get(io.up) != 0, up, "{what}: up");
                rtl.set_words(io.x, &x_words(&tokens[slot], g));
                rtl.set(io.token_scale, tokens[slot].scale.to_bits() as u64);
                for u in 0..n_units {
                    match w.rows.get(u) {
                        Some(rows) => {
                            let row = &rows[up as usize];
                            rtl.set_words(io.w[u], &w_words(row, g, rng.random()));
                            rtl.set(io.scale[u], row.scale(g).to_bits() as u64);
                        }
                        // An idle unit: anything (a NaN scale included) must not come out.
                        None => {
                            rtl.set_words(io.w[u], &std::array::from_fn::<u32, 4, _>(|_| rng.random()));
                            rtl.set(io.scale[u], 0x7e00);
                        }
                    }
                }
            }
            Some(&(at, ..)) => assert!(at > cycle, "an element of cycle {at} was not issued"),
            None => {
                // No element: random inputs.
                rtl.set_words(io.x, &std::array::from_fn::<u32, 8, _>(|_| rng.random()));
                for u in 0..n_units {
                    rtl.set(io.scale[u], rng.random::<u16>() as u64);
                }
            }
        }
        rtl.cycle();
        // The values of this cycle.
        let mut expected = vec![None; n_units];
        while due.front().is_some_and(|d| d.0 == cycle) {
            let d = due.pop_front().unwrap();
            expected[d.1] = Some(d);
        }
        assert!(due.front().is_none_or(|d| d.0 > cycle), "a value of cycle {} was missed", due[0].0);
        for (u, expected) in expected.iter().enumerate() {
            let valid = rtl.get(io.out_valid[u]) != 0;
            assert_eq!(valid, expected.is_some(), "cycle {cycle}, unit {u}: out_valid, expected {expected:?}");
            if let Some((_, _, i, up, want)) = *expected {
                let got = rtl.get(io.value[u]) as u32;
                assert_eq!(
                    (rtl.get(io.out_user) as usize, rtl.get(io.out_up) != 0),
                    (i, up),
                    "cycle {cycle}: user, row"
                );
                assert_eq!(
                    got,
                    want,
                    "cycle {cycle}, unit {u}, user {i}, up {up}: rtl {}, spec {}",
                    f32::from_bits(got),
                    f32::from_bits(want)
                );
                checked += 1;
                last_value = cycle;
            }
        }
        let quiet = elements.is_empty()
            && due.is_empty()
            && model.ready_at() <= cycle
            && (next == waves.len() || cycle < asked_at + waves[next].ask_after);
        if quiet && cycle > last_value {
            assert!(rtl.get(io.idle) != 0, "cycle {cycle}: nothing in flight, idle low");
        }
        // An element issuing, or one issued whose value is still to come.
        let in_flight = due.front().is_some_and(|d| d.0 <= cycle + lacuna_spec::expert_unit::DOT_LATENCY);
        if issuing || in_flight {
            assert!(rtl.get(io.idle) == 0, "cycle {cycle}: values to come, idle high");
        }
        assert_eq!(rtl.get(io.invalid), 0, "cycle {cycle}: invalid without a non-finite scale");
        cycle += 1;
    }
    (checked, paced)
}

/// `count` random waves over one token store of hidden size `hidden`.
fn random_waves(arch: &Arch, rng: &mut ChaCha8Rng, hidden: usize, count: usize) -> Vec<Wave> {
    let u = &arch.expert_unit;
    (0..count)
        .map(|_| {
            let rows = (0..rng.random_range(1..=u.dot_units as usize))
                .map(|_| {
                    [
                        Int4Vector::quantize(&values(rng, hidden)).unwrap(),
                        Int4Vector::quantize(&values(rng, hidden)).unwrap(),
                    ]
                })
                .collect();
            let users = rng.random_range(1..=u.max_tokens as usize);
            let slots = (0..users).map(|_| rng.random_range(0..u.max_tokens as usize)).collect();
            // Asked for at once, a little later, or long after (the previous one then idle).
            let ask_after = match rng.random_range(0..4) {
                0 => 0,
                1 => rng.random_range(1..8),
                2 => rng.random_range(8..40),
                _ => rng.random_range(40..120),
            };
            Wave { rows, slots, hidden, ask_after }
        })
        .collect()
}

#[test]
fn the_dot_engine_issues_as_the_model_and_every_row_is_the_specs_row_dot_over_random_waves() {
    let arch = Arch::preset("tiny").unwrap();
    let u = &arch.expert_unit;
    assert!(u.dot_units >= 3, "lock step and pacing need at least three units to be tested");
    let mut rng = ChaCha8Rng::seed_from_u64(0x646f7477);
    let (mut checked, mut paced) = (0, 0);
    let mut waves_run = 0;
    // Hidden sizes: one value, a short single group, whole groups, a short last group, the most.
    for (k, hidden) in [1usize, 7, 32, 64, 77, 100, u.max_hidden as usize].into_iter().cycle().take(49).enumerate() {
        let tokens: Vec<Int8Vector> =
            (0..u.max_tokens).map(|_| Int8Vector::quantize(&values(&mut rng, hidden)).unwrap()).collect();
        let waves = random_waves(&arch, &mut rng, hidden, 10 + k % 7);
        waves_run += waves.len();
        let (c, p) = run_waves(&arch, &tokens, &waves, &mut rng);
        checked += c;
        paced += p;
    }
    eprintln!("{waves_run} waves ({paced} paced), {checked} row values checked");
    assert!(waves_run >= 500 && checked >= 4_000 && paced >= 50, "{waves_run} waves ({paced} paced), {checked} values");
}

#[test]
fn a_non_finite_scale_or_token_scale_sets_the_engines_invalid_flag_after_its_row_until_clear() {
    use lacuna_spec::expert_unit::DOT_LATENCY;
    let arch = Arch::preset("tiny").unwrap();
    let (mut rtl, io) = engine(&arch);
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    let one = 1f32.to_bits() as u64;
    // (unit with the bad scale, on the up row (else gate), the token scale bad instead).
    let cases: [(usize, bool, Option<u64>, u64); 4] = [
        (0, true, Some(0x7e00), 0),
        (1, true, Some(0xfc00), 0),
        (1, false, Some(0x7c00), 0),
        (0, false, None, f32::NAN.to_bits() as u64),
    ];
    for (unit, on_up, bad_scale, bad_token) in cases {
        let what = format!("unit {unit}, up {on_up}, scale {bad_scale:?}, token scale {bad_token:#x}");
        // A wave of both units, one user, one group, taken in cycle 0: gate issues in 1, up in 2.
        rtl.set(io.units, 2);
        rtl.set(io.users, 1);
        rtl.set(io.groups, 1);
        rtl.set(io.user_slot[0], 0);
        rtl.set(io.start, 1);
        let mut flagged_at = None;
        for cycle in 0..20u64 {
            let element_up = cycle == 2;
            let issuing = cycle == 1 || cycle == 2;
            for u in 0..2 {
                let bad = issuing && u == unit && element_up == on_up;
                rtl.set(io.scale[u], bad_scale.filter(|_| bad).unwrap_or(0x3c00));
            }
            let token_bad = issuing && bad_token != 0 && element_up == on_up;
            rtl.set(io.token_scale, if token_bad { bad_token } else { one });
            rtl.cycle();
            rtl.set(io.start, 0);
            if flagged_at.is_none() && rtl.get(io.invalid) != 0 {
                flagged_at = Some(cycle);
            }
        }
        // The row's value comes out DOT_LATENCY cycles after its (last) group; the flag the cycle after.
        let row_at = if on_up { 2 } else { 1 };
        assert_eq!(flagged_at, Some(row_at + DOT_LATENCY + 1), "{what}: invalid set when the row comes out");
        assert_ne!(rtl.get(io.invalid), 0, "{what}: invalid is sticky");
        rtl.set(io.clear, 1);
        rtl.cycle();
        rtl.set(io.clear, 0);
        rtl.cycle();
        assert_eq!(rtl.get(io.invalid), 0, "{what}: clear resets invalid");
    }
}
