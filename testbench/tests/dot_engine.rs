//! The dot engine's RTL blocks, Verilated, against the A8W4 rules of `lacuna_spec::a8w4`, bit
//! for bit and cycle for cycle: `group_dot` (the exact sum of a group's 32 INT8 x INT4 products,
//! two pipeline stages) and `group_scale` (that sum times the group's FP16 scale, one FP32
//! rounding); and both composed into rule 1's gate/up row on quantized rows of the hidden sizes
//! of real models (synthetic values: no checkpoint is needed for integer arithmetic that is
//! exact, and the f32 steps see every exponent through the random scales).

use half::f16;
use lacuna_rtl::expert_unit::dot_engine::group_dot::{LATENCY, WORDS};
use lacuna_spec::a8w4::{group_dot, groups, row_dot, Int4Vector, Int8Vector, GROUP, INT8_MAX};
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// One group as the unit's ports take it: 32 activations and the 16 bytes of packed weights.
#[derive(Clone, Debug)]
struct Group {
    x: [i8; GROUP],
    packed: [u8; GROUP / 2],
}

impl Group {
    /// The spec's sum: the packed bytes read as an A8W4 vector (scale 1), then `group_dot`.
    fn expected(&self) -> i32 {
        let mut record = self.packed.to_vec();
        record.extend_from_slice(&f16::ONE.to_le_bytes());
        let (w, rest) = Int4Vector::read(&record, GROUP).expect("a whole group's record reads");
        assert!(rest.is_empty());
        group_dot(&self.x, &w, 0)
    }

    fn random(rng: &mut ChaCha8Rng) -> Group {
        Group {
            x: std::array::from_fn(|_| rng.random_range(-INT8_MAX..=INT8_MAX)),
            packed: std::array::from_fn(|_| rng.random()),
        }
    }

    /// Every lane the same activation and weight.
    fn uniform(x: i8, w: i8) -> Group {
        let nibble = (w as u8) & 0xf;
        Group { x: [x; GROUP], packed: [nibble | nibble << 4; GROUP / 2] }
    }

    /// Lane `lane` alone: activation `x`, weight `w`; every other lane zero.
    fn single(lane: usize, x: i8, w: i8) -> Group {
        let mut g = Group { x: [0; GROUP], packed: [0; GROUP / 2] };
        g.x[lane] = x;
        g.packed[lane / 2] = ((w as u8) & 0xf) << (4 * (lane % 2));
        g
    }
}

struct DotPorts {
    reset: PortId,
    in_valid: PortId,
    x: Vec<PortId>,
    w: Vec<PortId>,
    out_valid: PortId,
    sum: PortId,
}

fn dot_unit() -> (Verilated, DotPorts) {
    let rtl = Verilated::new("lacuna_group_dot").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let io = DotPorts {
        reset: p("reset"),
        in_valid: p("in_valid"),
        x: (0..WORDS).map(|k| p(&format!("x_{k}"))).collect(),
        w: (0..WORDS).map(|k| p(&format!("w_{k}"))).collect(),
        out_valid: p("out_valid"),
        sum: p("sum"),
    };
    (rtl, io)
}

/// Streams `groups` through the unit, each `Some` presented in its cycle (`None`: an idle
/// cycle with random data on the inputs); checks every cycle that a sum comes out exactly
/// `LATENCY` cycles after its group went in, equal to the spec's, and nothing else comes out.
/// Returns the sums in order.
fn stream(groups: &[Option<Group>], rng: &mut ChaCha8Rng) -> Vec<i32> {
    let (mut rtl, io) = dot_unit();
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    let mut in_flight: VecDeque<Option<(usize, i32)>> = VecDeque::new();
    let mut sums = Vec::new();
    let idle = LATENCY as usize;
    for (cycle, g) in groups.iter().map(Some).chain(std::iter::repeat_n(None, idle)).enumerate() {
        let presented = g.and_then(|g| g.as_ref());
        let data = presented.cloned().unwrap_or_else(|| Group::random(rng));
        rtl.set(io.in_valid, presented.is_some() as u64);
        for k in 0..WORDS {
            let x = u32::from_le_bytes(std::array::from_fn(|b| data.x[4 * k + b] as u8));
            rtl.set(io.x[k], x as u64);
            rtl.set(io.w[k], u16::from_le_bytes([data.packed[2 * k], data.packed[2 * k + 1]]) as u64);
        }
        rtl.cycle();
        in_flight.push_back(presented.map(|g| (cycle, g.expected())));
        let due = if in_flight.len() > idle { in_flight.pop_front().unwrap() } else { None };
        let valid = rtl.get(io.out_valid) != 0;
        assert_eq!(valid, due.is_some(), "cycle {cycle}: out_valid {valid}, expected a sum: {due:?}");
        if let Some((at, want)) = due {
            let got = rtl.get(io.sum) as u16 as i16 as i32;
            assert_eq!(got, want, "cycle {cycle}: the group presented at cycle {at}: rtl {got}, spec {want}");
            sums.push(got);
        }
    }
    sums
}

#[test]
fn group_dot_sums_twenty_thousand_random_groups_exactly_two_cycles_after_each_arrives() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x67646f74);
    // Back-to-back runs and gaps: a sum must come out exactly once, in its own cycle.
    let groups: Vec<Option<Group>> =
        (0..20_000).map(|_| rng.random_bool(0.8).then(|| Group::random(&mut rng))).collect();
    let sums = stream(&groups, &mut rng);
    assert_eq!(sums.len(), groups.iter().flatten().count());
}

#[test]
fn group_dot_reaches_both_ends_of_its_range_and_maps_every_lane_to_its_byte_and_nibble() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut cases = vec![
        Group::uniform(INT8_MAX, -8),  // -32,512: the most negative sum
        Group::uniform(-INT8_MAX, -8), // +32,512: the most positive
        Group::uniform(INT8_MAX, 7),
        Group::uniform(-INT8_MAX, 7),
        Group::uniform(0, -8),
        Group::uniform(-1, -1),
        Group::uniform(1, 0),
    ];
    // Each lane alone with a value whose sign and magnitude show a wrong byte or nibble.
    for lane in 0..GROUP {
        for (x, w) in [(-INT8_MAX, -8), (INT8_MAX, 7), (-3, 5), (100, -1)] {
            cases.push(Group::single(lane, x, w));
        }
    }
    let sums = stream(&cases.iter().cloned().map(Some).collect::<Vec<_>>(), &mut rng);
    assert_eq!(&sums[..4], &[-32_512, 32_512, 32 * 127 * 7, -32 * 127 * 7]);
}

struct ScalePorts {
    sum: PortId,
    scale: PortId,
    product: PortId,
    invalid: PortId,
}

fn scale_unit() -> (Verilated, ScalePorts) {
    let rtl = Verilated::new("lacuna_group_scale").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let io = ScalePorts { sum: p("sum"), scale: p("scale"), product: p("product"), invalid: p("invalid") };
    (rtl, io)
}

/// `group_scale` on every pair, against the golden's `f32(sum) * f32(scale)` bit for bit.
fn check_scale(pairs: impl Iterator<Item = (i16, u16)>) -> usize {
    let (mut rtl, io) = scale_unit();
    let mut n = 0;
    for (sum, scale) in pairs {
        rtl.set(io.sum, sum as u16 as u64);
        rtl.set(io.scale, scale as u64);
        rtl.eval();
        let s = f16::from_bits(scale);
        let invalid = rtl.get(io.invalid) != 0;
        assert_eq!(invalid, !s.is_finite(), "invalid for scale {scale:#06x}");
        if s.is_finite() {
            let want = (sum as f32 * s.to_f32()).to_bits();
            let got = rtl.get(io.product) as u32;
            assert_eq!(got, want, "{sum} x {s} ({scale:#06x}): rtl {got:#010x}, f32 {want:#010x}");
        }
        n += 1;
    }
    n
}

#[test]
fn group_scale_rounds_edge_sums_times_every_fp16_scale_as_f32_does() {
    // The range's ends, small values, powers of two and their neighbours, and values with many
    // significant bits (they round: ties and sticky bits).
    let sums: [i16; 24] = [
        0, 1, -1, 2, 3, -3, 255, -256, 1023, 2047, 4097, -4097, 12_345, -12_345, 16_383, 16_384, 21_845, -21_845,
        32_512, -32_512, 32_767, -32_767, -32_768, 30_001,
    ];
    let pairs = (0..=u16::MAX).flat_map(|scale| sums.iter().map(move |&s| (s, scale)));
    assert_eq!(check_scale(pairs), 65_536 * sums.len());
}

#[test]
fn group_scale_matches_f32_on_two_million_random_pairs() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7363616c);
    let pairs: Vec<(i16, u16)> = (0..2_000_000).map(|_| (rng.random(), rng.random())).collect();
    assert_eq!(check_scale(pairs.into_iter()), 2_000_000);
}

/// Rule 1 on the RTL: each group's sum from `group_dot`, times its scale by `group_scale`, added
/// in group order in f32 (the accumulation the unit's FP32 adder does), times the token's scale.
fn row_on_rtl(x: &Int8Vector, w: &Int4Vector, rng: &mut ChaCha8Rng) -> f32 {
    let hidden = w.len();
    let mut padded = x.values.clone();
    padded.resize(groups(hidden) * GROUP, 0);
    let mut packed = w.packed().to_vec();
    packed.resize(groups(hidden) * GROUP / 2, 0);
    let gs: Vec<Option<Group>> = (0..groups(hidden))
        .map(|g| {
            Some(Group {
                x: padded[g * GROUP..(g + 1) * GROUP].try_into().unwrap(),
                packed: packed[g * GROUP / 2..(g + 1) * GROUP / 2].try_into().unwrap(),
            })
        })
        .collect();
    let sums = stream(&gs, rng);
    let (mut scale, io) = scale_unit();
    let mut acc = 0f32;
    for (g, &sum) in sums.iter().enumerate() {
        scale.set(io.sum, sum as i16 as u16 as u64);
        scale.set(io.scale, w.scale(g).to_bits() as u64);
        scale.eval();
        acc += f32::from_bits(scale.get(io.product) as u32);
    }
    acc * x.scale
}

#[test]
fn gate_and_up_rows_of_real_model_widths_through_both_blocks_equal_the_specs_row_dot() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x726f77);
    // SmolLM2-135M's hidden size (576, 18 whole groups), a short last group (40 = 32 + 8), and
    // a larger width; weights and activations spread over several binades, as real ones are.
    for hidden in [576, 40, 1536] {
        for _ in 0..8 {
            let draw = |rng: &mut ChaCha8Rng| {
                let v: f32 = rng.random_range(-1.0..1.0);
                v * v * v * 2f32.powi(rng.random_range(-6..3))
            };
            let w: Vec<f32> = (0..hidden).map(|_| draw(&mut rng)).collect();
            let x: Vec<f32> = (0..hidden).map(|_| draw(&mut rng) * 8.0).collect();
            let (w, x) = (Int4Vector::quantize(&w).unwrap(), Int8Vector::quantize(&x).unwrap());
            let rtl = row_on_rtl(&x, &w, &mut rng);
            let spec = row_dot(&x, &w);
            assert_eq!(rtl.to_bits(), spec.to_bits(), "hidden {hidden}: rtl {rtl}, spec {spec}");
        }
    }
}

/// A row as `dot_unit` takes it: its groups, their scales (FP16 bits), the token's scale, and
/// the expected value (`None`: `invalid` expected).
#[derive(Clone)]
struct Row {
    groups: Vec<Group>,
    scales: Vec<u16>,
    token_scale: f32,
    want: Option<u32>,
}

impl Row {
    /// A quantized row and token, with the spec's `row_dot` as the expected value.
    fn quantized(x: &Int8Vector, w: &Int4Vector) -> Row {
        let n = groups(w.len());
        let mut padded = x.values.clone();
        padded.resize(n * GROUP, 0);
        let mut packed = w.packed().to_vec();
        packed.resize(n * GROUP / 2, 0);
        Row {
            groups: (0..n)
                .map(|g| Group {
                    x: padded[g * GROUP..(g + 1) * GROUP].try_into().unwrap(),
                    packed: packed[g * GROUP / 2..(g + 1) * GROUP / 2].try_into().unwrap(),
                })
                .collect(),
            scales: (0..n).map(|g| w.scale(g).to_bits()).collect(),
            token_scale: x.scale,
            want: Some(row_dot(x, w).to_bits()),
        }
    }
}

/// Streams `rows` through `lacuna_dot_unit`: row r in slot r % 2, the two slots' groups
/// interleaved (each cycle the slot not served last goes first when its previous group is
/// `SLOT_SPACING` cycles old), an idle cycle with probability `gap`; checks every cycle that
/// each row's value comes out exactly `LATENCY` cycles after its last group went in, equal to
/// the expected bits (or flagged), and nothing else comes out. Returns the idle cycles before
/// the last group.
fn stream_rows(rows: &[Row], gap: f64, rng: &mut ChaCha8Rng) -> usize {
    use lacuna_rtl::expert_unit::dot_engine::dot_unit::{LATENCY as ROW_LATENCY, SLOT_SPACING};
    let mut rtl = Verilated::new("lacuna_dot_unit").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, slot_port, first, last, scale, token) =
        (p("reset"), p("in_valid"), p("slot"), p("first"), p("last"), p("scale"), p("token_scale"));
    let x: Vec<PortId> = (0..WORDS).map(|k| p(&format!("x_{k}"))).collect();
    let w: Vec<PortId> = (0..WORDS).map(|k| p(&format!("w_{k}"))).collect();
    let (out_valid, value, invalid) = (p("out_valid"), p("value"), p("invalid"));
    // The cycles: (slot, row, group) presented, or idle.
    let mut queues: [VecDeque<usize>; 2] = [VecDeque::new(), VecDeque::new()];
    for r in 0..rows.len() {
        queues[r % 2].push_back(r);
    }
    let (mut next_group, mut last_issue, mut prefer) = ([0usize; 2], [None::<usize>; 2], 0usize);
    let mut schedule: Vec<Option<(usize, usize, usize)>> = Vec::new();
    let mut idle = 0;
    while !queues[0].is_empty() || !queues[1].is_empty() {
        let cycle = schedule.len();
        let ready =
            |s: usize| !queues[s].is_empty() && last_issue[s].is_none_or(|c: usize| cycle - c >= SLOT_SPACING as usize);
        let pick = [prefer, 1 - prefer].into_iter().find(|&s| ready(s));
        match pick {
            Some(s) if !rng.random_bool(gap) => {
                let r = queues[s][0];
                schedule.push(Some((s, r, next_group[s])));
                last_issue[s] = Some(cycle);
                next_group[s] += 1;
                if next_group[s] == rows[r].groups.len() {
                    queues[s].pop_front();
                    next_group[s] = 0;
                }
                prefer = 1 - s;
            }
            _ => {
                schedule.push(None);
                idle += 1;
            }
        }
    }
    schedule.extend(std::iter::repeat_n(None, ROW_LATENCY as usize + 1));
    let mut due: VecDeque<(usize, usize)> = VecDeque::new(); // (cycle, row)
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    let mut done = 0;
    for (cycle, entry) in schedule.iter().enumerate() {
        let data = entry.map(|(_, r, g)| rows[r].groups[g].clone()).unwrap_or_else(|| Group::random(rng));
        rtl.set(in_valid, entry.is_some() as u64);
        if let Some((s, r, g)) = *entry {
            rtl.set(slot_port, s as u64);
            rtl.set(first, (g == 0) as u64);
            rtl.set(last, (g + 1 == rows[r].groups.len()) as u64);
            rtl.set(scale, rows[r].scales[g] as u64);
            rtl.set(token, rows[r].token_scale.to_bits() as u64);
            if g + 1 == rows[r].groups.len() {
                due.push_back((cycle + ROW_LATENCY as usize, r));
            }
        } else {
            // Idle cycles carry random slots, flags and scales: the unit must ignore them.
            rtl.set(slot_port, rng.random_range(0..2));
            rtl.set(first, rng.random_range(0..2));
            rtl.set(last, rng.random_range(0..2));
            rtl.set(scale, rng.random::<u16>() as u64);
            rtl.set(token, rng.random::<u32>() as u64);
        }
        for k in 0..WORDS {
            rtl.set(x[k], u32::from_le_bytes(std::array::from_fn(|b| data.x[4 * k + b] as u8)) as u64);
            rtl.set(w[k], u16::from_le_bytes([data.packed[2 * k], data.packed[2 * k + 1]]) as u64);
        }
        rtl.cycle();
        let expected = due.front().filter(|(at, _)| *at == cycle).map(|&(_, r)| r);
        assert_eq!(rtl.get(out_valid) != 0, expected.is_some(), "cycle {cycle}: out_valid, expected row {expected:?}");
        if let Some(r) = expected {
            due.pop_front();
            match rows[r].want {
                Some(bits) => {
                    assert_eq!(rtl.get(invalid), 0, "row {r}: invalid");
                    let got = rtl.get(value) as u32;
                    assert_eq!(got, bits, "row {r}: rtl {}, spec {}", f32::from_bits(got), f32::from_bits(bits));
                }
                None => assert_eq!(rtl.get(invalid), 1, "row {r}: a non-finite scale must be flagged"),
            }
            done += 1;
        }
    }
    assert_eq!(done, rows.len());
    idle
}

#[test]
fn a_dot_unit_gives_each_rows_row_dot_nine_cycles_after_its_last_group_two_rows_interleaved_and_with_gaps() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x756e6974);
    let draw = |rng: &mut ChaCha8Rng| {
        let v: f32 = rng.random_range(-1.0..1.0);
        v * v * v * 2f32.powi(rng.random_range(-6..3))
    };
    let mut rows = Vec::new();
    // Rows of real models' hidden sizes, a short last group, one-group rows (first = last).
    for hidden in [576usize, 40, 32, 20, 1536] {
        for _ in 0..6 {
            let w: Vec<f32> = (0..hidden).map(|_| draw(&mut rng)).collect();
            let x: Vec<f32> = (0..hidden).map(|_| draw(&mut rng) * 8.0).collect();
            rows.push(Row::quantized(&Int8Vector::quantize(&x).unwrap(), &Int4Vector::quantize(&w).unwrap()));
        }
    }
    // A zero token (scale 0) and a NaN group scale in the middle of a row (flagged).
    rows.push(Row::quantized(&Int8Vector::quantize(&[0.0; 64]).unwrap(), &Int4Vector::quantize(&[0.5; 64]).unwrap()));
    let mut bad =
        Row::quantized(&Int8Vector::quantize(&[1.0; 96]).unwrap(), &Int4Vector::quantize(&[0.25; 96]).unwrap());
    bad.scales[1] = 0x7e00;
    bad.want = None;
    rows.push(bad);
    rows.push(Row::quantized(&Int8Vector::quantize(&[-2.0; 64]).unwrap(), &Int4Vector::quantize(&[0.5; 64]).unwrap()));
    // A first group whose scaled sum is -0 (a zero sum times a negative scale): the accumulator
    // starts from +0 + (-0) = +0, as the golden's `0f32 +`; written as it is, it would be -0.
    // One group, so that nothing after it could turn a wrong -0 back into +0.
    let mut negative_zero =
        Row::quantized(&Int8Vector::quantize(&[0.0; 32]).unwrap(), &Int4Vector::quantize(&[0.5; 32]).unwrap());
    negative_zero.scales[0] = 0xb800; // -0.5
    negative_zero.token_scale = 1.0;
    negative_zero.want = Some(0.0f32.to_bits());
    rows.push(negative_zero);
    // A non-finite token scale (the final multiply's flag).
    let mut bad_token =
        Row::quantized(&Int8Vector::quantize(&[1.0; 64]).unwrap(), &Int4Vector::quantize(&[0.5; 64]).unwrap());
    bad_token.token_scale = f32::NAN;
    bad_token.want = None;
    rows.push(bad_token);
    // Pairs of equal length (a token's gate and up rows) keep the unit busy every cycle.
    let (pairs, rest) = rows.split_at(30);
    assert_eq!(stream_rows(pairs, 0.0, &mut rng), 0, "two interleaved rows of a length: a group every cycle");
    stream_rows(&rows, 0.0, &mut rng);
    stream_rows(&rows, 0.3, &mut rng);
    // One slot alone: a group every other cycle; and odd pairings (rows of different lengths).
    stream_rows(&rest[..1], 0.0, &mut rng);
    let mut shuffled: Vec<Row> = rows.clone();
    shuffled.rotate_left(3);
    stream_rows(&shuffled, 0.1, &mut rng);
}
