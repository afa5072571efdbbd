//! The token quantization's RTL blocks, Verilated, against `lacuna_spec::a8w4::Int8Vector::
//! quantize` bit for bit: `lacuna_token_scale` (a token's amax, `127 / amax` and `amax / 127`,
//! the flush rule, tokens back to back, its `in_ready` when tokens are shorter than the
//! divisions) and `lacuna_quant_lane` (`clamp(round_ties_even(x * inv))`, one value a cycle),
//! chained as the unit chains them, on edge-case tokens and random ones; and the lane alone on
//! every tie and saturation case and random operand pairs.

use lacuna_rtl::expert_unit::token_quant::{quant_lane, token_scale};
use lacuna_spec::a8w4::{Int8Vector, ACT_FLUSH, INT8_MAX};
use lacuna_testbench::model::Verilated;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One token's results from `lacuna_token_scale`: (inv bits, scale bits, invalid, cycle of ready).
type Scales = (u32, u32, bool, usize);

/// Streams `tokens` through `lacuna_token_scale`, one value a cycle where `in_ready` allows
/// (an idle cycle now and then when `gaps`); returns each token's results in order and the
/// cycle of each token's `last` (the cycle it was taken).
fn scale_tokens(tokens: &[Vec<f32>], gaps: bool, rng: &mut ChaCha8Rng) -> (Vec<Scales>, Vec<usize>, usize) {
    let mut rtl = Verilated::new("lacuna_token_scale").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, x, last, in_ready) = (p("reset"), p("in_valid"), p("x"), p("last"), p("in_ready"));
    let (ready, inv, scale, invalid) = (p("ready"), p("inv"), p("scale"), p("invalid"));
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    let values: Vec<(f32, bool)> =
        tokens.iter().flat_map(|t| t.iter().enumerate().map(move |(i, &v)| (v, i + 1 == t.len()))).collect();
    let (mut next, mut cycle, mut stalls) = (0, 0, 0);
    let (mut out, mut lasts) = (Vec::new(), Vec::new());
    while out.len() < tokens.len() {
        assert!(cycle < values.len() * 2 + tokens.len() * 40 + 100, "token_scale stopped answering");
        let present = next < values.len() && !(gaps && rng.random_range(0..8) == 0);
        let (v, is_last) = if present { values[next] } else { (rng.random(), rng.random()) };
        rtl.set(in_valid, present as u64);
        rtl.set(x, v.to_bits() as u64);
        rtl.set(last, is_last as u64);
        rtl.cycle();
        if present && rtl.get(in_ready) != 0 {
            next += 1;
            if is_last {
                lasts.push(cycle);
            }
        } else if present {
            stalls += 1;
        }
        if rtl.get(ready) != 0 {
            out.push((rtl.get(inv) as u32, rtl.get(scale) as u32, rtl.get(invalid) != 0, cycle));
        }
        cycle += 1;
    }
    (out, lasts, stalls)
}

/// Streams `(x, inv)` pairs through `lacuna_quant_lane` (`None`: an idle cycle with random
/// inputs); returns each value's (q, invalid), checking that each comes out exactly `LATENCY`
/// cycles after it went in and that nothing else comes out.
fn quantize_values(pairs: &[Option<(f32, f32)>], rng: &mut ChaCha8Rng) -> Vec<(i8, bool)> {
    use std::collections::VecDeque;
    let mut rtl = Verilated::new("lacuna_quant_lane").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, x, inv) = (p("reset"), p("in_valid"), p("x"), p("inv"));
    let (out_valid, q, invalid) = (p("out_valid"), p("q"), p("invalid"));
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    let latency = quant_lane::LATENCY as usize;
    let mut in_flight: VecDeque<bool> = VecDeque::new();
    let mut out = Vec::new();
    for (cycle, e) in pairs.iter().copied().chain(std::iter::repeat_n(None, latency)).enumerate() {
        let (a, b) = e.unwrap_or_else(|| (rng.random(), rng.random()));
        rtl.set(in_valid, e.is_some() as u64);
        rtl.set(x, a.to_bits() as u64);
        rtl.set(inv, b.to_bits() as u64);
        rtl.cycle();
        in_flight.push_back(e.is_some());
        let due = in_flight.len() > latency && in_flight.pop_front().unwrap();
        assert_eq!(rtl.get(out_valid) != 0, due, "cycle {cycle}: out_valid");
        if due {
            out.push((rtl.get(q) as u8 as i8, rtl.get(invalid) != 0));
        }
    }
    out
}

/// Edge-case tokens, then random ones of `1..=max_len` values over several binades.
fn tokens(rng: &mut ChaCha8Rng, random: usize, max_len: usize) -> Vec<Vec<f32>> {
    let below = f32::from_bits(ACT_FLUSH.to_bits() - 1);
    let mut t = vec![
        vec![0.0; 7],
        vec![-0.0],
        vec![ACT_FLUSH * 0.5, -below, 0.0],
        vec![ACT_FLUSH, -ACT_FLUSH * 0.25],
        vec![-ACT_FLUSH],
        // amax 127: inv is exactly 1 and every value k + 0.5 is a tie (even wins).
        (-10..10).map(|k| k as f32 + 0.5).chain([127.0, -126.5, 126.5, 0.49999997, -0.5]).collect(),
        vec![3.0e38, -3.4e38, 1.0, -1.0e-38],
        vec![f32::from_bits(1), -f32::from_bits(0x007f_ffff), f32::from_bits(0x0000_1234)],
        vec![-5.0, 2.5, 1.25],
        vec![1.0e-6; 40],
    ];
    for _ in 0..random {
        let len = rng.random_range(1..=max_len);
        let e = rng.random_range(-20..20);
        t.push(
            (0..len)
                .map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(e + rng.random_range(-6..=0)))
                .collect(),
        );
    }
    t
}

/// Checks one token's scales against the spec's quantization.
fn check_scales(token: &[f32], got: Scales, at: usize) {
    let want = Int8Vector::quantize(token).unwrap();
    let amax = token.iter().fold(0f32, |m, v| m.max(v.abs()));
    let want_inv = if amax < ACT_FLUSH { 0.0 } else { INT8_MAX as f32 / amax };
    assert!(!got.2, "token {at}: flagged invalid");
    assert_eq!(
        (got.0, got.1),
        (want_inv.to_bits(), want.scale.to_bits()),
        "token {at} (amax {amax:e}): rtl inv {:e} scale {:e}, spec {want_inv:e} {:e}",
        f32::from_bits(got.0),
        f32::from_bits(got.1),
        want.scale
    );
}

#[test]
fn tokens_through_the_scale_unit_and_a_quantizer_lane_are_the_specs_int8_vectors() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x71756e74);
    let tokens = tokens(&mut rng, 300, 160);
    let (scales, lasts, _) = scale_tokens(&tokens, true, &mut rng);
    assert_eq!(scales.len(), tokens.len());
    for (i, (t, s)) in tokens.iter().zip(&scales).enumerate() {
        check_scales(t, *s, i);
        assert!(s.3 > lasts[i], "token {i}: ready before its last");
    }
    // Every value with its token's inv through one lane, idle cycles between tokens.
    let mut pairs = Vec::new();
    for (t, s) in tokens.iter().zip(&scales) {
        pairs.extend(t.iter().map(|&v| Some((v, f32::from_bits(s.0)))));
        pairs.push(None);
    }
    let q = quantize_values(&pairs, &mut rng);
    let mut at = 0;
    for (i, t) in tokens.iter().enumerate() {
        let want = Int8Vector::quantize(t).unwrap();
        for (j, &v) in want.values.iter().enumerate() {
            assert_eq!(q[at], (v, false), "token {i}, value {j} ({:e})", t[j]);
            at += 1;
        }
    }
}

#[test]
fn a_token_is_ready_31_cycles_after_its_last_and_short_tokens_wait_for_the_dividers_in_order() {
    use token_scale::READY_AFTER_LAST;
    let mut rng = ChaCha8Rng::seed_from_u64(0x7368);
    // One token alone: its ready comes exactly READY_AFTER_LAST cycles after its last.
    let one = vec![vec![0.75f32, -2.0, 1.5]];
    let (s, lasts, stalls) = scale_tokens(&one, false, &mut rng);
    assert_eq!((s[0].3 - lasts[0], stalls), (READY_AFTER_LAST as usize, 0));
    check_scales(&one[0], s[0], 0);
    // Tokens of 1 to 40 values back to back: the short ones stall the stream (in_ready low),
    // none is lost or reordered, and the results are one per token, in order.
    let short: Vec<Vec<f32>> =
        (0..120).map(|_| (0..rng.random_range(1..=40)).map(|_| rng.random_range(-3.0f32..3.0)).collect()).collect();
    let (s, _, stalls) = scale_tokens(&short, false, &mut rng);
    assert!(stalls > 0, "tokens shorter than the divisions must wait");
    for (i, (t, s)) in short.iter().zip(&s).enumerate() {
        check_scales(t, *s, i);
    }
    // Long enough tokens never wait.
    let long: Vec<Vec<f32>> = (0..20).map(|_| vec![rng.random_range(0.5f32..1.0); READY_AFTER_LAST as usize]).collect();
    assert_eq!(scale_tokens(&long, false, &mut rng).2, 0);
}

#[test]
fn a_token_with_an_inf_or_nan_is_flagged_and_the_next_token_is_not() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e616e);
    let tokens = vec![
        vec![1.0, f32::NAN, 2.0],
        vec![1.0, 2.0],
        vec![f32::INFINITY],
        vec![-0.5],
        vec![f32::NEG_INFINITY, 1e-35],
        vec![0.0, 0.0],
    ];
    let (s, _, _) = scale_tokens(&tokens, false, &mut rng);
    for (i, t) in tokens.iter().enumerate() {
        let bad = t.iter().any(|v| !v.is_finite());
        assert_eq!(s[i].2, bad, "token {i}: invalid");
        if !bad {
            check_scales(t, s[i], i);
        }
    }
}

#[test]
fn the_quantizer_lane_rounds_ties_to_even_saturates_and_flags_non_finite_operands() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x696e7438);
    let mut pairs: Vec<(f32, f32)> = Vec::new();
    // Every quarter from -140 to 140 times 1 (ties at every half), and the values either side.
    for k in -560..=560 {
        let v = k as f32 / 4.0;
        pairs.extend([(v, 1.0), (f32::from_bits(v.to_bits() + 1), 1.0), (v, f32::from_bits(1.0f32.to_bits() - 1))]);
    }
    // Products below 0.5, at it, and far out of range; signed zeros; subnormals.
    for v in [0.0f32, -0.0, 0.5, -0.5, 0.25, 1e-30, -1e-40, 127.5, -127.5, 128.0, 1e20, -3e38] {
        pairs.extend([(v, 1.0), (v, -1.0), (v, 1e10)]);
    }
    for _ in 0..200_000 {
        let x = rng.random_range(-1.0f32..1.0) * 2f32.powi(rng.random_range(-30..30));
        let inv = rng.random_range(0.0f32..2.0) * 2f32.powi(rng.random_range(-30..30));
        pairs.push((x, inv));
    }
    let stream: Vec<Option<(f32, f32)>> = pairs
        .iter()
        .flat_map(|&p| [Some(p)].into_iter().chain((rng.random_range(0..6) == 0).then_some(None)))
        .collect();
    let out = quantize_values(&stream, &mut rng);
    for (&(x, inv), &(q, invalid)) in pairs.iter().zip(&out) {
        let want = (x * inv).round_ties_even().clamp(-(INT8_MAX as f32), INT8_MAX as f32) as i8;
        assert_eq!((q, invalid), (want, false), "{x:e} x {inv:e} = {:e}", x * inv);
    }
    // Inf and NaN operands are flagged.
    let bad = [(f32::INFINITY, 1.0), (1.0, f32::NAN), (f32::NAN, 0.0), (2.0, f32::NEG_INFINITY)];
    let out = quantize_values(&bad.map(Some), &mut rng);
    assert!(out.iter().all(|&(_, invalid)| invalid));
}
