//! The token quantizer (`lacuna_quantizer_tiny`: two FP32 lanes, the token scale, two quantizer
//! lanes; and `lacuna_quantizer_tiny_f8`, eight lanes: two feeds of four lanes' maxima a token),
//! Verilated, against the model's `token_quant::schedule` cycle for cycle and the spec's
//! `Int8Vector::quantize` bit for bit: 400 random jobs (1 to `max_tokens` tokens of 1 to
//! `max_hidden` values, started at random cycles, one quantizer for all), tokens over 40 binades
//! and the edge patterns (zeros, amax below and at `ACT_FLUSH`, amax 127 with ties, values near
//! `f32::MAX`, subnormals) repeated to the job's length: every read of the model's (scan and
//! quantization) named on the read port in its cycle, lanes past the token's end given garbage
//! (they must be ignored), every scale and every chunk's INT8 values in the model's cycles and
//! nothing in any other, `idle` exactly from the model's end; a token with an Inf or NaN sets
//! `invalid` until `clear`. **Synthetic** values.

use lacuna_model::expert_unit::token_quant::{schedule, QuantTiming};
use lacuna_spec::a8w4::{Int8Vector, ACT_FLUSH};
use lacuna_spec::expert_unit::QUANT_LATENCY;
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;

struct Ports {
    reset: PortId,
    clear: PortId,
    start: PortId,
    tokens: PortId,
    hidden: PortId,
    ready: PortId,
    rd_slot: PortId,
    rd_chunk: PortId,
    rd_value: Vec<PortId>,
    scale_valid: PortId,
    scale_slot: PortId,
    scale: PortId,
    out_valid: PortId,
    out_slot: PortId,
    out_chunk: PortId,
    out_q: Vec<PortId>,
    idle: PortId,
    invalid: PortId,
}

fn quantizer(arch: &Arch) -> (Verilated, Ports) {
    let rtl =
        Verilated::new(&format!("lacuna_quantizer_{}", arch.name)).expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let lanes = arch.expert_unit.fp32_lanes as usize;
    let each = |n: &str| (0..lanes).map(|i| p(&format!("{n}_{i}"))).collect::<Vec<_>>();
    let io = Ports {
        reset: p("reset"),
        clear: p("clear"),
        start: p("start"),
        tokens: p("tokens"),
        hidden: p("hidden"),
        ready: p("ready"),
        rd_slot: p("rd_slot"),
        rd_chunk: p("rd_chunk"),
        rd_value: each("rd_value"),
        scale_valid: p("scale_valid"),
        scale_slot: p("scale_slot"),
        scale: p("scale"),
        out_valid: p("out_valid"),
        out_slot: p("out_slot"),
        out_chunk: p("out_chunk"),
        out_q: each("out_q"),
        idle: p("idle"),
        invalid: p("invalid"),
    };
    (rtl, io)
}

/// A token of `len` values: random over a few binades, or an edge pattern repeated.
fn token(rng: &mut ChaCha8Rng, len: usize) -> Vec<f32> {
    let below = f32::from_bits(ACT_FLUSH.to_bits() - 1);
    let pattern: Vec<f32> = match rng.random_range(0..10) {
        0 => vec![0.0, -0.0],
        1 => vec![ACT_FLUSH * 0.5, -below, 0.0],
        2 => vec![ACT_FLUSH, -ACT_FLUSH * 0.25],
        // amax 127: inv is exactly 1 and every value k + 0.5 is a tie (even wins).
        3 => (-10..10).map(|k| k as f32 + 0.5).chain([127.0, -126.5, 126.5, 0.49999997, -0.5]).collect(),
        4 => vec![3.0e38, -3.4e38, 1.0, -1.0e-38],
        5 => vec![f32::from_bits(1), -f32::from_bits(0x007f_ffff), f32::from_bits(0x0000_1234)],
        _ => {
            let e = rng.random_range(-20..20);
            return (0..len)
                .map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(e + rng.random_range(-6..=0)))
                .collect();
        }
    };
    let offset = rng.random_range(0..pattern.len());
    (0..len).map(|i| pattern[(i + offset) % pattern.len()]).collect()
}

/// Runs one job of `tokens` from a `clear`, started `delay` cycles after it; returns the chunks
/// checked and whether `invalid` was set.
fn run_job(
    rtl: &mut Verilated,
    io: &Ports,
    lanes: usize,
    tokens: &[Vec<f32>],
    delay: u64,
    rng: &mut ChaCha8Rng,
) -> (usize, bool) {
    let hidden = tokens[0].len();
    rtl.set(io.clear, 1);
    rtl.cycle();
    rtl.set(io.clear, 0);
    for _ in 0..delay {
        rtl.eval();
        assert!(rtl.get(io.idle) != 0 && rtl.get(io.ready) != 0, "idle before the job");
        rtl.cycle();
    }
    let q: QuantTiming = schedule(0, tokens.len(), hidden, lanes as u32);
    let quantized: Vec<Option<Int8Vector>> = tokens.iter().map(|t| Int8Vector::quantize(t).ok()).collect();
    // The reads the model expects, by cycle: (token, chunk).
    let mut reads: BTreeMap<u64, (usize, u64)> = BTreeMap::new();
    for (k, (&s, &r)) in q.scan.iter().zip(&q.quant).enumerate() {
        for c in 0..q.chunks {
            assert!(reads.insert(s + c, (k, c)).is_none() && reads.insert(r + c, (k, c)).is_none());
        }
    }
    let outs: BTreeMap<u64, (usize, u64)> = q
        .quant
        .iter()
        .enumerate()
        .flat_map(|(k, &r)| (0..q.chunks).map(move |c| (r + c + QUANT_LATENCY, (k, c))))
        .collect();
    let scales: BTreeMap<u64, usize> = q.ready.iter().enumerate().map(|(k, &r)| (r, k)).collect();
    let mut checked = 0;
    for cycle in 0..=q.done {
        let at = |what: &str| format!("hidden {hidden}, {} tokens, cycle {cycle}: {what}", tokens.len());
        // A start while a job runs is ignored.
        rtl.set(io.start, (cycle == 0 || (cycle < q.done && rng.random_bool(0.02))) as u64);
        rtl.set(io.tokens, tokens.len() as u64);
        rtl.set(io.hidden, hidden as u64);
        rtl.eval();
        assert_eq!(rtl.get(io.idle) != 0, cycle == 0 || cycle == q.done, "{}", at("idle"));
        let read = reads.get(&cycle).copied();
        if let Some((k, c)) = read {
            assert_eq!((rtl.get(io.rd_slot) as usize, rtl.get(io.rd_chunk)), (k, c), "{}", at("the read"));
        }
        for (l, &port) in io.rd_value.iter().enumerate() {
            let i = (read.map_or(0, |r| r.1) as usize) * lanes + l;
            let v = match read {
                Some((k, _)) if i < hidden => tokens[k][i].to_bits(),
                // Past the token's end, or no read: anything.
                _ => rng.random(),
            };
            rtl.set(port, v as u64);
        }
        rtl.cycle();
        match scales.get(&cycle) {
            Some(&k) => {
                assert!(rtl.get(io.scale_valid) != 0, "{}", at(&format!("token {k}'s scale")));
                assert_eq!(rtl.get(io.scale_slot) as usize, k, "{}", at("scale_slot"));
                if let Some(x) = &quantized[k] {
                    assert_eq!(rtl.get(io.scale) as u32, x.scale.to_bits(), "{}", at(&format!("token {k}'s scale")));
                }
            }
            None => assert_eq!(rtl.get(io.scale_valid), 0, "{}", at("a scale out of turn")),
        }
        match outs.get(&cycle) {
            Some(&(k, c)) => {
                assert!(rtl.get(io.out_valid) != 0, "{}", at(&format!("token {k} chunk {c}'s values")));
                assert_eq!(
                    (rtl.get(io.out_slot) as usize, rtl.get(io.out_chunk)),
                    (k, c),
                    "{}",
                    at("out_slot, out_chunk")
                );
                if let Some(x) = &quantized[k] {
                    for (l, &port) in io.out_q.iter().enumerate() {
                        let i = c as usize * lanes + l;
                        let want = x.values.get(i).copied().unwrap_or(0);
                        assert_eq!(rtl.get(port) as u8 as i8, want, "{}", at(&format!("token {k} value {i}")));
                    }
                    checked += 1;
                }
            }
            None => assert_eq!(rtl.get(io.out_valid), 0, "{}", at("values out of turn")),
        }
    }
    rtl.eval();
    let invalid = rtl.get(io.invalid) != 0;
    assert_eq!(invalid, quantized.iter().any(|x| x.is_none()), "invalid");
    (checked, invalid)
}

#[test]
fn the_quantizer_reads_scales_and_quantizes_in_the_models_cycles_bit_for_bit_with_the_spec() {
    random_jobs(&Arch::preset("tiny").unwrap());
    random_jobs(&lacuna_testbench::expert_cases::tiny_f8());
}

/// 400 random jobs on `arch`'s quantizer.
fn random_jobs(arch: &Arch) {
    let arch = arch.clone();
    let lanes = arch.expert_unit.fp32_lanes as usize;
    let (mut rtl, io) = quantizer(&arch);
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    let mut rng = ChaCha8Rng::seed_from_u64(0x9a47);
    let (mut chunks, mut flagged, mut waited) = (0, 0, 0);
    for j in 0..400 {
        // Short tokens, so that the dividers are the bottleneck, in a third of the jobs.
        let hidden = match j % 3 {
            0 => rng.random_range(1..=16),
            _ => rng.random_range(1..=arch.expert_unit.max_hidden as usize),
        };
        let n = rng.random_range(1..=arch.expert_unit.max_tokens as usize);
        let mut tokens: Vec<Vec<f32>> = (0..n).map(|_| token(&mut rng, hidden)).collect();
        if j % 25 == 7 {
            let (k, i) = (rng.random_range(0..n), rng.random_range(0..hidden));
            tokens[k][i] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY][j % 3];
        }
        let q = schedule(0, n, hidden, lanes as u32);
        waited += q.last_fed.iter().zip(&q.scan).filter(|(&l, &s)| l > s + q.chunks).count();
        let (c, bad) = run_job(&mut rtl, &io, lanes, &tokens, rng.random_range(0..4), &mut rng);
        chunks += c;
        flagged += bad as usize;
    }
    eprintln!("400 jobs: {chunks} chunks bit for bit, {flagged} jobs flagged invalid, {waited} tokens waited for the dividers");
    assert!(chunks > 5_000 && flagged >= 10 && waited > 30, "the jobs must exercise the dividers' wait and invalid");
}
