//! The datapath's FP units, Verilated, against Rust's `f32` arithmetic bit for bit.
//!
//! `fp16_mul`: every finite FP16 value times a set of edge-case operands (zeros of both signs,
//! the smallest and largest subnormals and normals, one, the largest finite value), and millions
//! of random pairs. `fp32_add`: edge cases pairwise (zeros, subnormals, the largest finite
//! values: overflow to Inf, ties), random bit patterns, random pairs with close exponents
//! (cancellation, carries), and sums of exact FP16 products, the values the accumulator sees.

use half::f16;
use lacuna_testbench::verilated;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const FP16_EDGES: [u16; 20] = [
    0x0000, 0x8000, // zeros
    0x0001, 0x8001, 0x03ff, 0x83ff, 0x0200, // subnormals: smallest, largest, middle
    0x0400, 0x8400, // smallest normals
    0x3c00, 0xbc00, 0x3c01, 0x3bff, // one and its neighbours
    0x7bff, 0xfbff, // largest finite
    0x7c00, 0xfc00, 0x7e00, 0xfe01, // Inf and NaN: invalid
    0x5640,
];

fn check_mul(a: &[u16], b: &[u16]) {
    let rtl = verilated::fp16_mul(a, b).expect("this test needs the RTL built (Verilator)");
    for i in 0..a.len() {
        let (x, y) = (f16::from_bits(a[i]), f16::from_bits(b[i]));
        let finite = x.is_finite() && y.is_finite();
        assert_eq!(rtl.invalid[i], !finite, "fp16_mul invalid for {:#06x} * {:#06x}", a[i], b[i]);
        if finite {
            let want = (f32::from(x) * f32::from(y)).to_bits();
            assert_eq!(
                rtl.bits[i], want,
                "fp16_mul {:#06x} * {:#06x} ({x} * {y}): rtl {:#010x}, f32 {want:#010x}",
                a[i], b[i], rtl.bits[i]
            );
        }
    }
}

fn check_add(a: &[u32], b: &[u32]) {
    let rtl = verilated::fp32_add(a, b).expect("this test needs the RTL built (Verilator)");
    for i in 0..a.len() {
        let (x, y) = (f32::from_bits(a[i]), f32::from_bits(b[i]));
        // The sum of a non-finite operand is unspecified (see rtl::fp32_add).
        if x.is_finite() && y.is_finite() {
            let want = (x + y).to_bits();
            assert_eq!(
                rtl[i], want,
                "fp32_add {:#010x} + {:#010x} ({x:e} + {y:e}): rtl {:#010x}, f32 {want:#010x}",
                a[i], b[i], rtl[i]
            );
        }
    }
}

#[test]
fn every_fp16_value_times_every_edge_case_is_the_exact_f32_product() {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in 0..=u16::MAX {
        for &y in &FP16_EDGES {
            a.push(x);
            b.push(y);
            a.push(y);
            b.push(x);
        }
    }
    assert!(a.len() > 2_500_000);
    check_mul(&a, &b);
}

#[test]
fn four_million_random_fp16_pairs_multiply_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d756c);
    let a: Vec<u16> = (0..4_000_000).map(|_| rng.random()).collect();
    let b: Vec<u16> = (0..4_000_000).map(|_| rng.random()).collect();
    check_mul(&a, &b);
}

/// FP32 edge cases: zeros, subnormals, normals around one, the largest finite, Inf, NaN.
fn fp32_edges() -> Vec<u32> {
    let mut v = vec![
        0x0000_0000,
        0x8000_0000, // zeros
        0x0000_0001,
        0x8000_0001,
        0x0000_0002,
        0x007f_ffff,
        0x807f_ffff,
        0x0040_0000, // subnormals
        0x0080_0000,
        0x8080_0000,
        0x0080_0001,
        0x0100_0000, // smallest normals
        0x3f80_0000,
        0xbf80_0000,
        0x3f80_0001,
        0x3f7f_ffff,
        0x3380_0000,
        0x3400_0000, // one, ulps
        0x4b80_0000,
        0x4b7f_ffff,
        0xcb80_0001, // 2^24 region: ties and carries
        0x7f7f_ffff,
        0xff7f_ffff,
        0x7f7f_fffe,
        0x7f00_0000,
        0x7e80_0000, // largest: overflow
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0001, // Inf, NaN: invalid
        0x2780_0000,
        0x2f80_0000, // 2^-48, 2^-32: the FP16 product range
    ];
    let n = v.len();
    for i in 0..n {
        v.push(v[i] ^ 0x8000_0000);
    }
    v
}

#[test]
fn fp32_edge_cases_pairwise_add_as_f32_does() {
    let edges = fp32_edges();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &edges {
        for &y in &edges {
            a.push(x);
            b.push(y);
        }
    }
    check_add(&a, &b);
}

#[test]
fn four_million_random_fp32_bit_patterns_add_as_f32_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x616464);
    let a: Vec<u32> = (0..4_000_000).map(|_| rng.random()).collect();
    let b: Vec<u32> = (0..4_000_000).map(|_| rng.random()).collect();
    check_add(&a, &b);
}

#[test]
fn four_million_close_exponent_pairs_cancel_and_carry_as_f32_does() {
    // Same or neighbouring exponents, either sign: the cancellation and carry paths, including
    // subnormal results (exponents near 0) and overflow (exponents near 254).
    let mut rng = ChaCha8Rng::seed_from_u64(0x636c6f7365);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..4_000_000 {
        let x: u32 = rng.random();
        let exp = (x >> 23) & 0xff;
        let delta: i32 = rng.random_range(-3..=3);
        let exp_y = (exp as i32 + delta).clamp(0, 254) as u32;
        let frac_y: u32 = if rng.random_bool(0.25) { x & 0x7f_ffff } else { rng.random::<u32>() & 0x7f_ffff };
        let sign_y: u32 = rng.random::<u32>() & 0x8000_0000;
        a.push(x);
        b.push(sign_y | exp_y << 23 | frac_y);
    }
    check_add(&a, &b);
}

#[test]
fn running_sums_of_exact_fp16_products_accumulate_as_f32_does() {
    // What the accumulator sees: a register plus an exact FP16 x FP16 product, over long chains.
    let mut rng = ChaCha8Rng::seed_from_u64(0x73756d);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..2_000 {
        let mut acc = 0.0f32;
        for _ in 0..500 {
            let w = f16::from_bits(rng.random::<u16>() & 0x7fff ^ (rng.random::<u16>() & 0x8000));
            let x = f16::from_bits(rng.random());
            if !(w.is_finite() && x.is_finite()) {
                continue;
            }
            let p = f32::from(w) * f32::from(x);
            a.push(acc.to_bits());
            b.push(p.to_bits());
            acc += p;
            if !acc.is_finite() {
                acc = 0.0;
            }
        }
    }
    check_add(&a, &b);
}

#[test]
fn mismatched_operand_lengths_are_an_error() {
    let err = verilated::fp32_add(&[1, 2], &[3]).unwrap_err();
    assert!(err.to_string().contains("differ in length"), "{err}");
}

/// `fp32_mul` (the generic Verilated model, one evaluation a pair) against Rust's `f32` product.
fn check_mul32(pairs: impl Iterator<Item = (u32, u32)>) -> usize {
    let mut rtl =
        lacuna_testbench::model::Verilated::new("lacuna_fp32_mul").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (pa, pb, product, invalid) = (p("a"), p("b"), p("product"), p("invalid"));
    let mut n = 0;
    for (a, b) in pairs {
        rtl.set(pa, a as u64);
        rtl.set(pb, b as u64);
        rtl.eval();
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let finite = x.is_finite() && y.is_finite();
        assert_eq!(rtl.get(invalid) != 0, !finite, "fp32_mul invalid for {a:#010x} * {b:#010x}");
        if finite {
            let (got, want) = (rtl.get(product) as u32, (x * y).to_bits());
            assert_eq!(got, want, "fp32_mul {a:#010x} * {b:#010x} ({x:e} * {y:e}): rtl {got:#010x}, f32 {want:#010x}");
        }
        n += 1;
    }
    n
}

#[test]
fn fp32_edge_cases_pairwise_multiply_as_f32_does() {
    let edges = fp32_edges();
    let n = edges.len();
    assert_eq!(check_mul32(edges.iter().flat_map(|&x| edges.iter().map(move |&y| (x, y)))), n * n);
}

#[test]
fn four_million_random_fp32_bit_patterns_multiply_as_f32_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d756c3332);
    let pairs: Vec<(u32, u32)> = (0..4_000_000).map(|_| (rng.random(), rng.random())).collect();
    assert_eq!(check_mul32(pairs.into_iter()), 4_000_000);
}

#[test]
fn products_at_the_ends_of_the_range_round_into_subnormals_and_overflow_as_f32_does() {
    // Exponent fields summing near 127 - 24 .. 127 (results at and below the smallest normal,
    // ties to the smallest subnormals), near 127 + 254 (overflow, and rounding up into Inf), and
    // subnormal operands times large ones (the normalizer's 24-bit and partial shifts).
    let mut rng = ChaCha8Rng::seed_from_u64(0x65646765);
    let field = |rng: &mut ChaCha8Rng, e: i32| {
        let frac = if rng.random_bool(0.2) { 0 } else { rng.random::<u32>() & 0x7f_ffff };
        (rng.random::<u32>() & 0x8000_0000) | (e.clamp(0, 254) as u32) << 23 | frac
    };
    let mut pairs = Vec::new();
    for _ in 0..1_000_000 {
        let ea: i32 = rng.random_range(0..=254);
        let low = rng.random_range(100..=128) - ea;
        let high = rng.random_range(378..=384) - ea;
        pairs.push((field(&mut rng, ea), field(&mut rng, low)));
        pairs.push((field(&mut rng, ea), field(&mut rng, high)));
        let large = rng.random_range(100..=254);
        pairs.push((rng.random::<u32>() & 0x807f_ffff, field(&mut rng, large)));
    }
    assert_eq!(check_mul32(pairs.into_iter()), 3_000_000);
}

#[test]
fn exact_half_ulp_ties_of_normal_products_round_to_even_as_f32_does() {
    // (1 + i 2^-12)(1 + j 2^-12) = 1 + (i + j) 2^-12 + i j 2^-24: for odd i j the last term is
    // exactly half an ulp of the result (which lies in [1, 1.13)), a tie whose kept LSB is odd
    // or even by i + j; the same at other exponents and signs.
    let mut pairs = Vec::new();
    for i in 1..=255u32 {
        for j in 1..=255u32 {
            let (a, b) = (0x3f80_0000 | i << 11, 0x3f80_0000 | j << 11);
            pairs.push((a, b));
            // Negative, exponents 2^5 and 2^-9: the same ties in another binade.
            pairs.push(((a & 0x007f_ffff) | 0x8000_0000 | 132 << 23, (b & 0x007f_ffff) | 118 << 23));
        }
    }
    let ties = pairs.iter().filter(|&&(a, b)| {
        let exact = f32::from_bits(a) as f64 * f32::from_bits(b) as f64;
        let rounded = (f32::from_bits(a) * f32::from_bits(b)) as f64;
        let ulp = (f32::from_bits((rounded as f32).to_bits() + 1) as f64 - rounded).abs();
        ((exact - rounded).abs() * 2.0 - ulp).abs() < ulp * 1e-9
    });
    assert!(ties.count() > 10_000, "the pairs must include many exact ties");
    assert_eq!(check_mul32(pairs.into_iter()), 2 * 255 * 255);
}

/// Pairs through the pipelined adder (`lacuna_fp32_add_pipe`, the accumulator's), a new pair
/// every cycle: each sum must leave `EMITTED_LATENCY` cycles later, bit for bit `f32`'s, so no
/// stage mixes one pair's fields with a neighbour's. Non-finite operands are skipped, as in
/// `check_add`. Returns the pairs checked.
fn check_add_pipelined(pairs: &[(u32, u32)]) -> usize {
    use lacuna_rtl::fp32_add::pipe::EMITTED_LATENCY;
    use lacuna_testbench::model::Verilated;
    let mut m = Verilated::new("lacuna_fp32_add_pipe").expect("this test needs the RTL built (Verilator)");
    let (a, b, sum, reset) =
        (m.port("a").unwrap(), m.port("b").unwrap(), m.port("sum").unwrap(), m.port("reset").unwrap());
    m.set(reset, 1);
    m.cycle();
    m.set(reset, 0);
    let mut checked = 0;
    for t in 0..pairs.len() + EMITTED_LATENCY {
        let (x, y) = pairs.get(t).copied().unwrap_or((0, 0));
        m.set(a, x as u64);
        m.set(b, y as u64);
        m.eval();
        if t >= EMITTED_LATENCY {
            let (x, y) = pairs[t - EMITTED_LATENCY];
            let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
            if fx.is_finite() && fy.is_finite() {
                let want = (fx + fy).to_bits();
                let got = m.get(sum) as u32;
                assert_eq!(
                    got, want,
                    "pipelined fp32_add {x:#010x} + {y:#010x} (cycle {t}): rtl {got:#010x}, f32 {want:#010x}"
                );
                checked += 1;
            }
        }
        m.cycle();
    }
    checked
}

#[test]
fn the_pipelined_adder_adds_a_new_pair_every_cycle_as_f32_does() {
    let edges = fp32_edges();
    let mut pairs: Vec<(u32, u32)> = edges.iter().flat_map(|&x| edges.iter().map(move |&y| (x, y))).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0x70697065);
    for _ in 0..1_000_000 {
        let x: u32 = rng.random();
        // Half of them close in exponent: cancellation and carries, the deep paths.
        let y = match rng.random_bool(0.5) {
            true => (x & 0xff80_0000) ^ (rng.random::<u32>() & 0x8180_0000) | (rng.random::<u32>() & 0x7f_ffff),
            false => rng.random(),
        };
        pairs.push((x, y));
    }
    assert!(check_add_pipelined(&pairs) > 900_000);
}

/// Pairs through the multiplier with registers between its thirds (`lacuna_fp32_mul_pipe`, the
/// expert unit's lanes), a new pair every cycle: each product must leave `LATENCY` cycles later,
/// bit for bit `f32`'s, with `invalid` for a non-finite operand, so no register mixes one
/// pair's words with a neighbour's. Returns the pairs checked.
fn check_mul_pipelined(pairs: &[(u32, u32)]) -> usize {
    use lacuna_rtl::fp32_mul::LATENCY;
    use lacuna_testbench::model::Verilated;
    let latency = LATENCY as usize;
    let mut m = Verilated::new("lacuna_fp32_mul_pipe").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| m.port(n).unwrap();
    let (a, b, product, invalid, reset) = (p("a"), p("b"), p("product"), p("invalid"), p("reset"));
    m.set(reset, 1);
    m.cycle();
    m.set(reset, 0);
    let mut checked = 0;
    for t in 0..pairs.len() + latency {
        let (x, y) = pairs.get(t).copied().unwrap_or((0, 0));
        m.set(a, x as u64);
        m.set(b, y as u64);
        m.eval();
        if t >= latency {
            let (x, y) = pairs[t - latency];
            let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
            let finite = fx.is_finite() && fy.is_finite();
            assert_eq!(m.get(invalid) != 0, !finite, "pipelined fp32_mul invalid for {x:#010x} * {y:#010x}");
            if finite {
                let (got, want) = (m.get(product) as u32, (fx * fy).to_bits());
                assert_eq!(
                    got, want,
                    "pipelined fp32_mul {x:#010x} * {y:#010x} (cycle {t}): rtl {got:#010x}, f32 {want:#010x}"
                );
            }
            checked += 1;
        }
        m.cycle();
    }
    checked
}

#[test]
fn the_pipelined_multiplier_multiplies_a_new_pair_every_cycle_as_f32_does() {
    let edges = fp32_edges();
    let mut pairs: Vec<(u32, u32)> = edges.iter().flat_map(|&x| edges.iter().map(move |&y| (x, y))).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0x6d70697065);
    pairs.extend((0..500_000).map(|_| (rng.random::<u32>(), rng.random::<u32>())));
    let n = pairs.len();
    assert_eq!(check_mul_pipelined(&pairs), n);
}

/// Pairs through the iterative divider (`lacuna_fp32_div`), one after another: each quotient
/// must come `LATENCY` cycles after its start, with `busy` in between (a `start` then is
/// ignored), bit for bit Rust's
/// `a / b`, and `invalid` exactly for a non-finite operand or a zero divisor. Returns the pairs
/// checked and how many quotients were subnormal and how many overflowed.
fn check_div(pairs: impl Iterator<Item = (u32, u32)>) -> (usize, usize, usize) {
    use lacuna_rtl::fp32_div::LATENCY;
    use lacuna_testbench::model::Verilated;
    let mut m = Verilated::new("lacuna_fp32_div").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| m.port(n).unwrap();
    let (a, b, start, reset) = (p("a"), p("b"), p("start"), p("reset"));
    let (busy, done, quotient, invalid) = (p("busy"), p("done"), p("quotient"), p("invalid"));
    m.set(reset, 1);
    m.cycle();
    m.set(reset, 0);
    let (mut n, mut subnormal, mut overflow) = (0, 0, 0);
    for (x, y) in pairs {
        m.set(a, x as u64);
        m.set(b, y as u64);
        m.set(start, 1);
        m.cycle();
        // The operands change while it works, and every other division sees `start` held high
        // while busy: the unit must have taken its operands at its start and ignore the rest.
        m.set(start, (n % 2) as u64);
        m.set(a, !x as u64);
        m.set(b, !y as u64);
        // (`cycle` reads the outputs of the cycle it runs, before its clock edge.)
        for t in 1..LATENCY {
            m.cycle();
            assert!(m.get(busy) == 1 && m.get(done) == 0, "{x:#010x} / {y:#010x}: cycle {t} of {LATENCY}");
        }
        m.set(start, 0);
        m.cycle();
        assert!(m.get(done) == 1 && m.get(busy) == 0, "{x:#010x} / {y:#010x}: no quotient after {LATENCY} cycles");
        let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
        let valid = fx.is_finite() && fy.is_finite() && fy != 0.0;
        assert_eq!(m.get(invalid) != 0, !valid, "fp32_div invalid for {x:#010x} / {y:#010x}");
        if valid {
            let (got, want) = (m.get(quotient) as u32, (fx / fy).to_bits());
            assert_eq!(
                got, want,
                "fp32_div {x:#010x} / {y:#010x} ({fx:e} / {fy:e}): rtl {got:#010x}, f32 {want:#010x}"
            );
            subnormal += (want & 0x7f80_0000 == 0 && want & 0x7f_ffff != 0) as usize;
            overflow += (want & 0x7fff_ffff == 0x7f80_0000) as usize;
        }
        n += 1;
    }
    (n, subnormal, overflow)
}

#[test]
fn the_divider_divides_edge_cases_random_patterns_and_quotients_at_both_ends_of_the_range_as_f32_does() {
    let edges = fp32_edges();
    let mut pairs: Vec<(u32, u32)> = edges.iter().flat_map(|&x| edges.iter().map(move |&y| (x, y))).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0x646976);
    pairs.extend((0..400_000).map(|_| (rng.random::<u32>(), rng.random::<u32>())));
    // Exponent fields whose difference puts the quotient below the normal range (subnormal
    // results, their ties, underflow to zero) or above it (overflow to Inf, rounding into it).
    for _ in 0..200_000 {
        let ea: i32 = rng.random_range(0..=254);
        let eb = match rng.random_bool(0.5) {
            true => ea + 127 + rng.random_range(-30..30),
            false => ea - 128 + rng.random_range(-30..30),
        }
        .clamp(0, 254);
        let field = |rng: &mut ChaCha8Rng, e: i32| (rng.random::<u32>() & 0x807f_ffff) | (e as u32) << 23;
        pairs.push((field(&mut rng, ea), field(&mut rng, eb)));
    }
    // The token quantization's divisions: 127 / amax and amax / 127 over the activations' range.
    for _ in 0..50_000 {
        let amax = f32::from_bits((rng.random::<u32>() & 0x7f_ffff) | rng.random_range(100..160u32) << 23);
        pairs.push((127f32.to_bits(), amax.to_bits()));
        pairs.push((amax.to_bits(), 127f32.to_bits()));
    }
    let total = pairs.len();
    let (n, subnormal, overflow) = check_div(pairs.into_iter());
    assert_eq!(n, total);
    assert!(subnormal > 10_000 && overflow > 10_000, "{subnormal} subnormal and {overflow} overflowing quotients");
}
