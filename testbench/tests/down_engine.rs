//! The down engine's lane product in RTL, Verilated, against rule 3 of `lacuna_spec::a8w4`
//! (`down_product`: `(f32(a) * f32(scale)) * f32(q)`) bit for bit: every finite FP16 operand
//! with every INT4 weight at edge-case scales, random triples, and the non-finite operands
//! flagged; then a whole down column added into an output row in load order through the RTL
//! product and the RTL FP32 adder, equal to the model's `down_engine::accumulate`; then the
//! pipelined lane (`lacuna_down_lane`) streaming channels into the rows of several tokens held in
//! a register file beside it, read `ACC_AT` and written `LATENCY` cycles after each element, with
//! idle cycles, rows back to back at `ROW_REUSE` and non-finite operands flagged in their cycle.

use half::f16;
use lacuna_model::expert_unit::down_engine;
use lacuna_spec::a8w4::{down_product, Int4Vector, GROUP, INT4_MAX, INT4_MIN};
use lacuna_testbench::model::{PortId, Verilated};
use lacuna_testbench::verilated;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Lane {
    rtl: Verilated,
    a: PortId,
    scale: PortId,
    q: PortId,
    product: PortId,
    invalid: PortId,
}

impl Lane {
    fn new() -> Lane {
        let rtl = Verilated::new("lacuna_down_product").expect("this test needs the RTL built (Verilator)");
        let p = |n: &str| rtl.port(n).unwrap();
        let (a, scale, q, product, invalid) = (p("a"), p("scale"), p("q"), p("product"), p("invalid"));
        Lane { rtl, a, scale, q, product, invalid }
    }

    /// The RTL's (product bits, invalid) for one triple.
    fn run(&mut self, a: u16, scale: u16, q: i8) -> (u32, bool) {
        self.rtl.set(self.a, a as u64);
        self.rtl.set(self.scale, scale as u64);
        self.rtl.set(self.q, (q as u8 & 0xf) as u64);
        self.rtl.eval();
        (self.rtl.get(self.product) as u32, self.rtl.get(self.invalid) != 0)
    }

    /// Checks one triple against the spec; returns whether it was a finite (compared) one.
    fn check(&mut self, a: u16, scale: u16, q: i8) -> bool {
        let (got, invalid) = self.run(a, scale, q);
        let (x, s) = (f16::from_bits(a), f16::from_bits(scale));
        let finite = x.is_finite() && s.is_finite();
        assert_eq!(invalid, !finite, "invalid for {a:#06x} x {scale:#06x}");
        if finite {
            let want = down_product(x, s, q).to_bits();
            assert_eq!(got, want, "({x} x {s}) x {q}: rtl {got:#010x}, spec {want:#010x}");
        }
        finite
    }
}

const INT4: std::ops::RangeInclusive<i8> = INT4_MIN..=INT4_MAX;

#[test]
fn every_fp16_operand_times_every_int4_weight_at_edge_scales_is_the_specs_product() {
    let mut lane = Lane::new();
    // One, the smallest subnormal and normal, the largest finite, a negative scale, a zero, a
    // scale with every fraction bit set (its products round).
    let scales: [u16; 7] = [0x3c00, 0x0001, 0x0400, 0x7bff, 0xb555, 0x0000, 0x3fff];
    let mut compared = 0;
    for &scale in &scales {
        for a in 0..=u16::MAX {
            for q in INT4 {
                compared += lane.check(a, scale, q) as usize;
            }
        }
    }
    // Every finite FP16 operand (63,488 of 65,536 patterns) with each scale and weight.
    assert_eq!(compared, 63_488 * scales.len() * 16);
}

#[test]
fn two_million_random_triples_and_every_non_finite_operand_agree_with_the_spec() {
    let mut lane = Lane::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x646f776e);
    for _ in 0..2_000_000 {
        lane.check(rng.random(), rng.random(), rng.random_range(INT4));
    }
    for bits in [0x7c00u16, 0xfc00, 0x7e00, 0xfe01] {
        assert!(!lane.check(bits, 0x3c00, 3) && !lane.check(0x3c00, bits, -8));
    }
}

#[test]
fn a_down_column_added_into_an_output_row_through_the_rtl_equals_the_models_accumulation() {
    let mut lane = Lane::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x636f6c);
    // Rows of SmolLM2-135M's hidden size (576) and a short last group; synthetic values over
    // several binades, the down operands of a streamed expert, channel by channel in load order.
    for hidden in [576usize, 40] {
        let mut y_model = vec![0f32; hidden];
        let mut y_rtl = vec![0u32; hidden];
        for _channel in 0..24 {
            let column: Vec<f32> = (0..hidden)
                .map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(rng.random_range(-8..2)))
                .collect();
            let column = Int4Vector::quantize(&column).unwrap();
            let a = f16::from_f32(rng.random_range(-4.0f32..4.0) * 2f32.powi(rng.random_range(-10..6)));
            down_engine::accumulate(&mut y_model, a, &column);
            let (mut products, mut sums) = (Vec::new(), Vec::new());
            for r in 0..hidden {
                let (p, invalid) = lane.run(a.to_bits(), column.scale(r / GROUP).to_bits(), column.value(r));
                assert!(!invalid);
                products.push(p);
                sums.push(y_rtl[r]);
            }
            y_rtl = verilated::fp32_add(&sums, &products).unwrap();
        }
        for r in 0..hidden {
            assert_eq!(
                y_rtl[r],
                y_model[r].to_bits(),
                "hidden {hidden}, row {r}: rtl {}, model {}",
                f32::from_bits(y_rtl[r]),
                y_model[r]
            );
        }
    }
}

/// One element of the pipelined lane: (row of the store, a, scale, q).
type Element = (usize, u16, u16, i8);

/// Streams `elements` (`None`: an idle cycle with random inputs) through `lacuna_down_lane`
/// into a row store of `rows` FP32 values beside it: each element's `acc` is the store's row read
/// in cycle t + `ACC_AT`, its `sum` written at the end of cycle t + `LATENCY`, when `out_valid`
/// must be high (and low in every other cycle); an element with a non-finite operand must come
/// out `invalid` and is not written. Returns the store and the elements checked.
fn stream_down_lane(rows: usize, elements: &[Option<Element>], rng: &mut ChaCha8Rng) -> (Vec<f32>, usize) {
    use lacuna_rtl::expert_unit::down_engine::lane::{ACC_AT, LATENCY};
    use std::collections::VecDeque;
    let mut rtl = Verilated::new("lacuna_down_lane").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, a, scale, q, acc) = (p("reset"), p("in_valid"), p("a"), p("scale"), p("q"), p("acc"));
    let (out_valid, sum, invalid) = (p("out_valid"), p("sum"), p("invalid"));
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    let mut store = vec![0f32; rows];
    let mut in_flight: VecDeque<Option<Element>> = VecDeque::new();
    let mut checked = 0;
    let (acc_at, latency) = (ACC_AT as usize, LATENCY as usize);
    for (cycle, e) in elements.iter().copied().chain(std::iter::repeat_n(None, latency)).enumerate() {
        let (_, ea, es, eq) = e.unwrap_or_else(|| (0, rng.random(), rng.random(), rng.random_range(INT4)));
        rtl.set(in_valid, e.is_some() as u64);
        rtl.set(a, ea as u64);
        rtl.set(scale, es as u64);
        rtl.set(q, (eq as u8 & 0xf) as u64);
        in_flight.push_back(e);
        // The element of ACC_AT cycles ago reads its row now (random bits when there is none).
        let reading = in_flight.len().checked_sub(acc_at + 1).and_then(|i| in_flight[i]);
        rtl.set(acc, reading.map_or(rng.random::<u32>(), |(row, ..)| store[row].to_bits()) as u64);
        rtl.cycle();
        let due = if in_flight.len() > latency { in_flight.pop_front().unwrap() } else { None };
        assert_eq!(rtl.get(out_valid) != 0, due.is_some(), "cycle {cycle}: out_valid, expected {due:?}");
        if let Some((row, ea, es, eq)) = due {
            let (x, s) = (f16::from_bits(ea), f16::from_bits(es));
            let finite = x.is_finite() && s.is_finite();
            assert_eq!(rtl.get(invalid) != 0, !finite, "cycle {cycle}: invalid for {ea:#06x} x {es:#06x}");
            checked += 1;
            if finite {
                let want = store[row] + down_product(x, s, eq);
                let got = rtl.get(sum) as u32;
                assert_eq!(got, want.to_bits(), "cycle {cycle}, row {row}: {} + ({x} x {s}) x {eq}", store[row]);
                store[row] = want;
            }
        }
    }
    (store, checked)
}

#[test]
fn the_pipelined_down_lane_adds_channels_into_the_rows_of_several_tokens_as_the_model_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6c616e64);
    // Three tokens' rows of a 96-row block (three groups), 16 channels in load order: per
    // channel, token by token, row by row (the down engine's order: each row comes back
    // 288 cycles later); idle cycles now and then. Synthetic, real-valued over several binades.
    let (hidden, tokens) = (96usize, 3usize);
    let mut y_model = vec![vec![0f32; hidden]; tokens];
    let mut elements = Vec::new();
    for _channel in 0..16 {
        let column: Vec<f32> =
            (0..hidden).map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(rng.random_range(-8..2))).collect();
        let column = Int4Vector::quantize(&column).unwrap();
        for (t, y) in y_model.iter_mut().enumerate() {
            let a = f16::from_f32(rng.random_range(-4.0f32..4.0) * 2f32.powi(rng.random_range(-10..6)));
            down_engine::accumulate(y, a, &column);
            for r in 0..hidden {
                elements.push(Some((t * hidden + r, a.to_bits(), column.scale(r / GROUP).to_bits(), column.value(r))));
                if rng.random_range(0..10) == 0 {
                    elements.push(None);
                }
            }
        }
    }
    let (store, checked) = stream_down_lane(hidden * tokens, &elements, &mut rng);
    assert_eq!(checked, 16 * tokens * hidden);
    for (t, y) in y_model.iter().enumerate() {
        for r in 0..hidden {
            assert_eq!(store[t * hidden + r].to_bits(), y[r].to_bits(), "token {t}, row {r}");
        }
    }
}

#[test]
fn a_row_may_come_back_after_row_reuse_cycles_and_non_finite_operands_are_flagged_in_their_cycle() {
    use lacuna_rtl::expert_unit::down_engine::lane::ROW_REUSE;
    let mut rng = ChaCha8Rng::seed_from_u64(0x72657573);
    // ROW_REUSE rows round robin, back to back: each row's next element reads the value its
    // previous one wrote the cycle before; the stream's store must equal a plain f32 sum.
    let rows = ROW_REUSE as usize;
    let mut elements = Vec::new();
    let mut want = vec![0f32; rows];
    let fp16 = |rng: &mut ChaCha8Rng| {
        f16::from_f32(rng.random_range(-4.0f32..4.0) * 2f32.powi(rng.random_range(-12..8))).to_bits()
    };
    for i in 0..4_000 {
        let (a, s, q) = (fp16(&mut rng), fp16(&mut rng), rng.random_range(INT4));
        want[i % rows] += down_product(f16::from_bits(a), f16::from_bits(s), q);
        elements.push(Some((i % rows, a, s, q)));
        // Now and then an element with an Inf or NaN operand (its row is left as it was) and
        // an idle cycle: the rows' next elements come later than ROW_REUSE then, which is fine.
        if i % 97 == 0 {
            let bits = [0x7c00u16, 0xfc00, 0x7e00, 0xfe01][i % 4];
            elements.push(Some((i % rows, bits, s, q)));
            elements.push(Some(((i + 1) % rows, a, bits, q)));
            elements.push(None);
        }
    }
    let (store, checked) = stream_down_lane(rows, &elements, &mut rng);
    assert_eq!(checked, elements.iter().flatten().count());
    assert_eq!(
        store.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

/// One pass of the engine's test: its operands and its channel's column.
struct EnginePass {
    slots: Vec<u32>,
    a: Vec<f16>,
    first: Vec<bool>,
    column: Int4Vector,
}

/// Random jobs for `lacuna_down_engine_tiny`: a hidden size (many below 4 x 4 rows, so that
/// blocks of one slot come back within the lane's reuse distance), 1 to 4 tokens, and passes of
/// a random subset of the tokens (ascending), some with the calibration's mean row (slot 4) as
/// one more operand, restarted from +0 now and then (a new expert), and a fifth of them with
/// each token repeated 1 to 3 times (the unrouted means' pass); each slot's first pass in a job
/// starts from +0.
fn engine_jobs(rng: &mut ChaCha8Rng, jobs: usize, max_vectors: usize) -> Vec<(usize, Vec<EnginePass>)> {
    (0..jobs)
        .map(|_| {
            let hidden = match rng.random_range(0..4) {
                0 => rng.random_range(1..=4),
                1 => rng.random_range(5..=16),
                2 => rng.random_range(17..=128),
                _ => [1, 4, 5, 31, 32, 33, 64, 127, 128][rng.random_range(0..9)],
            };
            let tokens = rng.random_range(1..=4u32);
            let mut seen = [false; 5];
            let passes = (0..rng.random_range(1..=12))
                .map(|_| {
                    let mut slots: Vec<u32> = (0..tokens).filter(|_| rng.random_range(0..3) > 0).collect();
                    if slots.is_empty() {
                        slots.push(rng.random_range(0..tokens));
                    }
                    if rng.random_range(0..3) == 0 {
                        slots.push(4);
                    }
                    if rng.random_range(0..5) == 0 {
                        // The unrouted means' pass: each token once per expert it skipped, so a
                        // slot repeats within the pass (and stalls mid-pass on short rows).
                        // (At most the engine's operand registers: the unit splits a longer
                        // list into passes taken back to back, which the model times alike.)
                        slots = (0..tokens).flat_map(|t| std::iter::repeat_n(t, rng.random_range(1..=3))).collect();
                        slots.truncate(max_vectors);
                    }
                    let first = slots
                        .iter()
                        .map(|&s| {
                            let f = !seen[s as usize] || (s == 4 && rng.random_range(0..3) == 0);
                            seen[s as usize] = true;
                            f
                        })
                        .collect();
                    let a = slots
                        .iter()
                        .map(|_| f16::from_f32(rng.random_range(-4.0f32..4.0) * 2f32.powi(rng.random_range(-10..6))))
                        .collect();
                    let column: Vec<f32> = (0..hidden)
                        .map(|_| rng.random_range(-1.0f32..1.0).powi(3) * 2f32.powi(rng.random_range(-8..2)))
                        .collect();
                    EnginePass { slots, a, first, column: Int4Vector::quantize(&column).unwrap() }
                })
                .collect();
            (hidden, passes)
        })
        .collect()
}

#[test]
fn the_down_engine_issues_as_the_model_and_its_rows_equal_the_models_accumulation_over_random_jobs() {
    use lacuna_model::expert_unit::down_engine::{Issue, PassTiming};
    let arch = lacuna_spec::Arch::preset("tiny").unwrap();
    let lanes = arch.expert_unit.down_lanes as usize;
    let vectors = arch.expert_unit.max_tokens as usize + 1;
    let mut rtl = Verilated::new("lacuna_down_engine_tiny").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, clear, start, rows, nvec) = (p("reset"), p("clear"), p("start"), p("rows"), p("vectors"));
    let (ready, col_block, drained, rd_slot, rd_block, invalid) =
        (p("ready"), p("col_block"), p("drained"), p("rd_slot"), p("rd_block"), p("invalid"));
    let many = |n: &str, k: usize| (0..k).map(|i| p(&format!("{n}_{i}"))).collect::<Vec<_>>();
    let (op_slot, op_a, op_first) = (many("op_slot", vectors), many("op_a", vectors), many("op_first", vectors));
    let (col_q, col_scale, rd_value) = (many("col_q", lanes), many("col_scale", lanes), many("rd_value", lanes));
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    rtl.set(clear, 0);
    let mut rng = ChaCha8Rng::seed_from_u64(0x656e67);
    let mut issue = Issue::new();
    let mut cycle = 0u64;
    let mut y_model = vec![vec![0f32; 128]; vectors];
    let (mut elements, mut stalls, mut mid_pass_stalls) = (0usize, 0u64, 0u64);
    for (job, (hidden, passes)) in engine_jobs(&mut rng, 400, vectors).into_iter().enumerate() {
        let blocks = hidden.div_ceil(lanes) as u32;
        // (pass index, taken, element cycles): the passes taken so far in this job.
        let mut taken: Vec<(usize, u64, Vec<u64>)> = Vec::new();
        let mut next = 0;
        // The pass asked for and not yet taken: the model's engine after it, its timing, the
        // cycles of its elements.
        let mut asked: Option<(Issue, PassTiming, Vec<u64>)> = None;
        let mut gap = 0u64;
        loop {
            let at = |what: &str| format!("job {job} (hidden {hidden}), cycle {cycle}: {what}");
            // Ask for the next pass after a random gap; hold start until it is taken.
            if next < passes.len() && gap == 0 && asked.is_none() {
                let mut after = issue.clone();
                let (timing, cycles) = after.pass_elements(cycle, &passes[next].slots, blocks);
                asked = Some((after, timing, cycles));
            }
            gap = gap.saturating_sub(1);
            rtl.set(start, asked.is_some() as u64);
            if asked.is_some() {
                let pass = &passes[next];
                rtl.set(rows, hidden as u64);
                rtl.set(nvec, pass.slots.len() as u64);
                for v in 0..vectors {
                    let (s, a, f) = match v < pass.slots.len() {
                        true => (pass.slots[v] as u64, pass.a[v].to_bits() as u64, pass.first[v] as u64),
                        false => (rng.random_range(0..5), rng.random::<u16>() as u64, rng.random_range(0..2)),
                    };
                    rtl.set(op_slot[v], s);
                    rtl.set(op_a[v], a);
                    rtl.set(op_first[v], f);
                }
            }
            // The column of the pass issuing now (the last one taken before this cycle).
            rtl.eval();
            let block = rtl.get(col_block) as usize;
            let current = taken.iter().rev().find(|(_, t, _)| *t < cycle);
            for l in 0..lanes {
                let r = block * lanes + l;
                let (q, s) = match current {
                    Some((k, ..)) if r < hidden => {
                        let c = &passes[*k].column;
                        ((c.value(r) as u8 & 0xf) as u64, c.scale(r / GROUP).to_bits() as u64)
                    }
                    _ => (rng.random_range(0..16), rng.random::<u16>() as u64),
                };
                rtl.set(col_q[l], q);
                rtl.set(col_scale[l], s);
            }
            rtl.cycle();
            // The model's view of this cycle: the element issuing, whether a pass is active.
            let active = current.is_some_and(|(_, _, e)| cycle <= *e.last().unwrap());
            let issuing = current.and_then(|(_, _, e)| e.iter().position(|&t| t == cycle));
            let pass_end = current.is_some_and(|(_, _, e)| *e.last().unwrap() == cycle);
            assert_eq!(rtl.get(ready) != 0, !active || pass_end, "{}", at("ready"));
            if let Some(i) = issuing {
                assert_eq!(block, i % blocks as usize, "{}", at("col_block of the element issuing"));
                elements += 1;
            } else if active {
                stalls += 1;
                let (_, _, e) = current.unwrap();
                mid_pass_stalls += (e[0] < cycle) as u64;
            }
            let written = issue.last_issue().is_none_or(|l| cycle > l + lacuna_spec::expert_unit::DOWN_LATENCY);
            let want_drained = !active && written;
            assert_eq!(rtl.get(drained) != 0, want_drained, "{}", at("drained"));
            if asked.is_some() && rtl.get(ready) != 0 {
                let (after, timing, cycles) = asked.take().unwrap();
                assert_eq!(timing.taken, cycle, "{}", at("the pass was taken in another cycle than the model's"));
                issue = after;
                taken.push((next, cycle, cycles));
                next += 1;
                gap = [0, 0, 0, 1, 2, 7][rng.random_range(0..6)];
            }
            let all_taken_before = next == passes.len() && taken.last().is_some_and(|(_, t, _)| *t < cycle);
            cycle += 1;
            if all_taken_before && want_drained {
                break;
            }
        }
        // The model's rows, pass by pass in order; then the store, block by block.
        for pass in &passes {
            for (v, &slot) in pass.slots.iter().enumerate() {
                let y = &mut y_model[slot as usize][..hidden];
                if pass.first[v] {
                    y.fill(0.0);
                }
                down_engine::accumulate(y, pass.a[v], &pass.column);
            }
        }
        assert_eq!(rtl.get(invalid), 0);
        let used: std::collections::BTreeSet<u32> = passes.iter().flat_map(|p| p.slots.iter().copied()).collect();
        for &slot in &used {
            for b in 0..blocks as usize {
                rtl.set(rd_slot, slot as u64);
                rtl.set(rd_block, b as u64);
                rtl.eval();
                for l in 0..lanes {
                    let r = b * lanes + l;
                    if r < hidden {
                        let (got, want) = (rtl.get(rd_value[l]) as u32, y_model[slot as usize][r]);
                        assert_eq!(
                            got,
                            want.to_bits(),
                            "job {job}: slot {slot} row {r}: rtl {}, model {want}",
                            f32::from_bits(got)
                        );
                    }
                }
            }
        }
    }
    // The jobs reach the reuse distance (the model stalls an element, and the RTL's `ready`,
    // `col_block` and `drained` followed it cycle for cycle), within passes too, and keep the
    // lanes busy otherwise.
    assert!(stalls > 100 && mid_pass_stalls > 20, "{stalls} stalls, {mid_pass_stalls} within a pass");
    assert!(elements > 20 * stalls as usize, "{elements} elements, {stalls} stalls");
}

#[test]
fn an_inf_or_nan_operand_sets_the_engines_invalid_flag_until_clear() {
    let arch = lacuna_spec::Arch::preset("tiny").unwrap();
    let lanes = arch.expert_unit.down_lanes as usize;
    let mut rtl = Verilated::new("lacuna_down_engine_tiny").expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, clear, start, rows, nvec, drained, invalid) =
        (p("reset"), p("clear"), p("start"), p("rows"), p("vectors"), p("drained"), p("invalid"));
    let (slot0, a0, first0) = (p("op_slot_0"), p("op_a_0"), p("op_first_0"));
    let scales: Vec<PortId> = (0..lanes).map(|l| p(&format!("col_scale_{l}"))).collect();
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);
    // A pass of 8 rows with operand a (after a cycle of `clear` if asked); returns the flag once
    // drained.
    let run = |rtl: &mut Verilated, a: u16, scale: u16, clear_first: bool| {
        if clear_first {
            rtl.set(clear, 1);
            rtl.cycle();
            rtl.set(clear, 0);
        }
        rtl.set(start, 1);
        rtl.set(rows, 8);
        rtl.set(nvec, 1);
        rtl.set(slot0, 0);
        rtl.set(a0, a as u64);
        rtl.set(first0, 1);
        for &s in &scales {
            rtl.set(s, scale as u64);
        }
        rtl.cycle();
        rtl.set(start, 0);
        for _ in 0..20 {
            rtl.cycle();
        }
        assert_ne!(rtl.get(drained), 0);
        rtl.get(invalid) != 0
    };
    assert!(!run(&mut rtl, 0x3c00, 0x3c00, false), "finite operands");
    assert!(run(&mut rtl, 0x7e00, 0x3c00, false), "a NaN operand");
    assert!(run(&mut rtl, 0x3c00, 0x3c00, false), "sticky");
    assert!(!run(&mut rtl, 0x3c00, 0x3c00, true), "cleared");
    assert!(run(&mut rtl, 0x3c00, 0x7c00, false), "an Inf scale");
}
