//! SwiGLU's RTL blocks, Verilated, against `lacuna_spec::a8w4` bit for bit: `down_operand`
//! (`fp16(w h)`, saturating): every FP16 value reached exactly, every midpoint between two
//! neighbouring FP16 values and the FP32 values either side of it (ties to even, the subnormal
//! range and the normal boundary included), saturation around 65504 and FP32 overflow, signed
//! zeros, non-finite operands, and random products over the whole range and random bit
//! patterns.

use half::f16;
use lacuna_spec::a8w4::down_operand;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Operand {
    rtl: Verilated,
    w: PortId,
    h: PortId,
    a: PortId,
}

impl Operand {
    fn new() -> Operand {
        let rtl = Verilated::new("lacuna_down_operand").expect("this test needs the RTL built (Verilator)");
        let p = |n: &str| rtl.port(n).unwrap();
        let (w, h, a) = (p("w"), p("h"), p("a"));
        Operand { rtl, w, h, a }
    }

    /// Checks `fp16(w h)` against the spec, any operands.
    fn check(&mut self, w: f32, h: f32) {
        self.rtl.set(self.w, w.to_bits() as u64);
        self.rtl.set(self.h, h.to_bits() as u64);
        self.rtl.eval();
        let (got, want) = (self.rtl.get(self.a) as u16, down_operand(w, h).to_bits());
        assert_eq!(got, want, "fp16({w:e} x {h:e} = {:e}): rtl {got:#06x}, spec {want:#06x}", w * h);
    }
}

#[test]
fn every_fp16_value_every_midpoint_and_its_neighbours_round_as_the_spec_does() {
    let mut unit = Operand::new();
    let finite: Vec<f32> = (0..=u16::MAX).map(f16::from_bits).filter(|v| v.is_finite()).map(f32::from).collect();
    assert_eq!(finite.len(), 63_488);
    for &v in &finite {
        unit.check(1.0, v);
        unit.check(-1.0, v);
    }
    let mut positive: Vec<f32> = finite.iter().copied().filter(|v| *v >= 0.0 && v.to_bits() >> 31 == 0).collect();
    positive.sort_by(f32::total_cmp);
    // Midpoints of neighbours (exact in f32: one more bit), ties to even, and one f32 ulp either
    // side; 0.5 x the value keeps the product the same (the exponent moves, not the bits).
    for pair in positive.windows(2) {
        let mid = ((pair[0] as f64 + pair[1] as f64) / 2.0) as f32;
        for x in [mid, f32::from_bits(mid.to_bits() - 1), f32::from_bits(mid.to_bits() + 1)] {
            unit.check(1.0, x);
            unit.check(-0.5, 2.0 * x);
        }
    }
    // Below half the smallest subnormal (2^-25), at it (a tie: to zero) and above.
    for x in [2f32.powi(-26), 2f32.powi(-25), f32::from_bits(2f32.powi(-25).to_bits() + 1), 1e-30, 1e-38, 0.0, -0.0] {
        unit.check(1.0, x);
        unit.check(-1.0, x);
    }
}

#[test]
fn products_at_and_beyond_the_fp16_range_saturate_and_signed_zeros_keep_their_sign() {
    let mut unit = Operand::new();
    for x in [65504.0f32, 65519.0, 65519.996, 65520.0, 65536.0, 1e9, f32::MAX, 3e38] {
        unit.check(1.0, x);
        unit.check(-1.0, x);
    }
    // FP32 overflow to Inf in the product itself saturates too.
    unit.check(1e30, 1e30);
    unit.check(-1e30, 1e30);
    unit.check(0.0, -5.0);
    unit.check(-0.0, -5.0);
    // Non-finite operands: Inf times non-zero saturates, Inf times zero and NaN are NaN.
    for bits in [0x7f80_0000u32, 0xff80_0000, 0x7fc0_0000, 0xffc0_0001, 0x7f80_0001] {
        for other in [1.0f32, -3.0, 0.0, -0.0, f32::INFINITY, 1e-40] {
            unit.check(f32::from_bits(bits), other);
            unit.check(other, f32::from_bits(bits));
        }
    }
}

#[test]
fn two_million_random_gate_weights_times_activations_round_as_the_spec_does() {
    let mut unit = Operand::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x737767);
    for _ in 0..2_000_000 {
        // Gate weights in (0, 1]; h over every binade from far below FP16's range to beyond it.
        let w: f32 = rng.random_range(1e-3f32..=1.0);
        let h = rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-40..24));
        unit.check(w, h);
    }
    for _ in 0..500_000 {
        unit.check(f32::from_bits(rng.random()), f32::from_bits(rng.random()));
    }
}

/// One element of the lane: gate, up, gate weight.
type Element = (f32, f32, f32);

/// Streams `elements` through `lacuna_swiglu_lane` (`None`: an idle cycle with random inputs);
/// checks every cycle that each element's `h` and `a` come out exactly `LATENCY` cycles after
/// it went in, equal to the model's `swiglu::apply` bit for bit, and nothing else comes out; an
/// element with a non-finite operand comes out flagged `invalid` in its own cycle (its `h` and
/// `a` unspecified), every other one not.
fn stream_lane(elements: &[Option<Element>], rng: &mut ChaCha8Rng) -> usize {
    use lacuna_model::expert_unit::swiglu::apply;
    use lacuna_rtl::expert_unit::swiglu::lane::LATENCY;
    use std::collections::VecDeque;
    let mut rtl = Verilated::new("lacuna_swiglu_lane").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, gate, up, weight) = (p("reset"), p("in_valid"), p("gate"), p("up"), p("weight"));
    let (out_valid, h, a, invalid) = (p("out_valid"), p("h"), p("a"), p("invalid"));
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    let mut in_flight: VecDeque<Option<(usize, Element)>> = VecDeque::new();
    let mut checked = 0;
    let idle = LATENCY as usize;
    for (cycle, e) in elements.iter().copied().chain(std::iter::repeat_n(None, idle)).enumerate() {
        let (g, u, w) = e.unwrap_or_else(|| (rng.random(), rng.random(), rng.random()));
        rtl.set(in_valid, e.is_some() as u64);
        rtl.set(gate, g.to_bits() as u64);
        rtl.set(up, u.to_bits() as u64);
        rtl.set(weight, w.to_bits() as u64);
        rtl.cycle();
        in_flight.push_back(e.map(|e| (cycle, e)));
        let due = if in_flight.len() > idle { in_flight.pop_front().unwrap() } else { None };
        assert_eq!(rtl.get(out_valid) != 0, due.is_some(), "cycle {cycle}: out_valid, expected {due:?}");
        if let Some((at, (g, u, w))) = due {
            let finite = g.is_finite() && u.is_finite() && w.is_finite();
            assert_eq!(rtl.get(invalid) != 0, !finite, "cycle {cycle}: invalid for {g:e}, {u:e}, {w:e}");
            if !finite {
                checked += 1;
                continue;
            }
            let (want_h, want_a) = apply(g, u, w);
            let (got_h, got_a) = (rtl.get(h) as u32, rtl.get(a) as u16);
            assert_eq!(
                (got_h, got_a),
                (want_h.to_bits(), want_a.to_bits()),
                "cycle {cycle}, element of cycle {at}: silu({g:e}) x {u:e}, w {w:e}: rtl h {:e} a {}, model h {want_h:e} a {want_a}",
                f32::from_bits(got_h),
                f16::from_bits(got_a)
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn a_swiglu_lane_matches_the_model_on_every_segment_its_ends_and_random_values_with_its_latency() {
    use lacuna_spec::a8w4::{SIGMOID_LO, SIGMOID_SEGMENTS};
    let mut rng = ChaCha8Rng::seed_from_u64(0x6c616e65);
    let mut elements = Vec::new();
    // Each segment's left end and one FP32 ulp either side (the segment index's rounding), and
    // a point inside it; the table's ends; zeros.
    for i in 0..=SIGMOID_SEGMENTS {
        let x = SIGMOID_LO + i as f32 / 8.0;
        for g in [x, x.next_down(), x.next_up(), x + rng.random_range(0.0..0.125)] {
            elements.push(Some((g, rng.random_range(-4.0..4.0), rng.random_range(0.01..1.0))));
        }
    }
    for g in [-16.0f32, -16.000002, -15.999999, 15.999999, 16.0, 16.000002, -1e30, 1e30, 0.0, -0.0, 1e-40, -1e-40] {
        elements.push(Some((g, 1.5, 0.25)));
    }
    // h beyond FP16 (saturating a) and beyond FP32 (h = +-Inf: a saturates as the spec's);
    // zero and negative gate weights.
    for (g, u, w) in [
        (10.0f32, 1e6f32, 0.5f32),
        (10.0, -1e38, 0.5),
        (3.0e30, 3.0e30, 0.25),
        (2.0, 3.0, 0.0),
        (2.0, 3.0, -0.0),
        (-3.0, 2.0, -0.7),
    ] {
        elements.push(Some((g, u, w)));
    }
    // Random values in and around the table, over several binades, with idle cycles between;
    // now and then a non-finite operand (gate, up or weight), which the flag must mark in its
    // own cycle only (it travels the lane's invalid delay lines from the first stage to the last).
    let specials = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN];
    for _ in 0..30_000 {
        let e = rng.random_bool(0.85).then(|| {
            let g = rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-12..6));
            let u = rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-12..12));
            let mut e = [g, u, rng.random_range(1e-3f32..=1.0)];
            if rng.random_bool(0.02) {
                e[rng.random_range(0..3)] = specials[rng.random_range(0..3)];
            }
            (e[0], e[1], e[2])
        });
        elements.push(e);
    }
    assert!(
        elements.iter().flatten().filter(|(g, u, w)| !(g.is_finite() && u.is_finite() && w.is_finite())).count() > 300
    );
    let n = elements.iter().flatten().count();
    assert_eq!(stream_lane(&elements, &mut rng), n);
}
