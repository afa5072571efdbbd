//! The expert unit's compute pipeline (`lacuna_expert_pipe_tiny`: the dot engine, the SwiGLU
//! engine, the two operand banks and the down engine wired together) and the datapath in front of
//! it (`lacuna_expert_datapath_tiny` and `_tiny_f8`: the quantizer and the token store added, fed
//! FP32 tokens; `tiny_f8` is `tiny` with 8 FP32 lanes, so that a token's lanes' maxima take two
//! feeds and a group four chunks), Verilated, against the model's `pipe::Pipe` (after
//! `token_quant::schedule` for the datapath) cycle for cycle and the golden bit for bit: random
//! uncalibrated jobs of `tiny` (hidden sizes 1 to `max_hidden`, 1 to `max_tokens` tokens routed
//! to 0 to 3 of up to 6 experts, each expert's users in a random order, its channels all or a
//! random subset, cut into waves of up to `dot_units` channels; three blocks in four with
//! unrouted means, whose passes follow the waves), one Verilated block for all of them (`clear`
//! between jobs). Each wave and means pass is asked for at a random cycle (at once, or up to 200
//! or 300 cycles after the previous ask) and held until taken; checked: every wave's, channel
//! pass's and means pass's take in the model's cycle, the records the block names (`dot_rec`
//! while a wave issues, `down_rec` and `down_mean` while a pass issues, in a staging ring of
//! `fetch_ahead_channels` records), `idle` in every cycle, and every output row of every token a
//! pass wrote equal to `lacuna_golden::expert::expert_job`'s (a token with no pass in a job keeps
//! the previous job's rows: the golden's are zeros, asserted).
//! **Synthetic** Gaussian weights and tokens (`expert_cases`), real-valued so that the order of
//! the additions matters.

use lacuna_model::expert_unit::pipe::{mean_passes, Pipe, WaveAsk};
use lacuna_model::expert_unit::token_quant::schedule;
use lacuna_spec::a8w4::{groups, ExpertChannel, Int8Vector, GROUP};
use lacuna_spec::expert_job::{ExpertBlock, ExpertJob};
use lacuna_spec::Arch;
use lacuna_testbench::expert_cases::{random_block, random_job, w_words, x_words};
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
    rec_base: PortId,
    user_slot: Vec<PortId>,
    user_weight: Vec<PortId>,
    ready: PortId,
    mean_start: PortId,
    mean_tokens: PortId,
    mean_expert: PortId,
    mean_ready: PortId,
    group: PortId,
    up: PortId,
    front: Front,
    dot_rec: PortId,
    w: Vec<PortId>,
    scale: Vec<PortId>,
    pass_taken: PortId,
    down_rec: PortId,
    down_mean: PortId,
    col_block: PortId,
    col_q: Vec<PortId>,
    col_scale: Vec<PortId>,
    idle: PortId,
    rd_slot: PortId,
    rd_block: PortId,
    rd_value: Vec<PortId>,
    invalid: PortId,
    overrun: PortId,
}

/// What feeds the dot engine: the harness (the pipe alone), or the quantizer's token store (the
/// datapath, which the harness feeds FP32 tokens).
enum Front {
    Pipe {
        groups: PortId,
        rows: PortId,
        x_slot: PortId,
        x: PortId,
        token_scale: PortId,
    },
    Datapath {
        tok_start: PortId,
        tokens: PortId,
        hidden: PortId,
        tok_slot: PortId,
        tok_chunk: PortId,
        tok_value: Vec<PortId>,
    },
}

/// The pipe (`lacuna_expert_pipe_<arch>`) or the datapath (`lacuna_expert_datapath_<arch>`).
fn dut(arch: &Arch, datapath: bool) -> (Verilated, Ports) {
    let block = if datapath { "expert_datapath" } else { "expert_pipe" };
    let rtl =
        Verilated::new(&format!("lacuna_{block}_{}", arch.name)).expect("this test needs the RTL built (Verilator)");
    let p = |n: &str| rtl.port(n).unwrap();
    let e = &arch.expert_unit;
    let (units, tokens, lanes) = (e.dot_units as usize, e.max_tokens as usize, e.down_lanes as usize);
    let each = |n: &str, k: usize| (0..k).map(|i| p(&format!("{n}_{i}"))).collect::<Vec<_>>();
    let front = match datapath {
        false => Front::Pipe {
            groups: p("groups"),
            rows: p("rows"),
            x_slot: p("x_slot"),
            x: p("x"),
            token_scale: p("token_scale"),
        },
        true => Front::Datapath {
            tok_start: p("tok_start"),
            tokens: p("tokens"),
            hidden: p("hidden"),
            tok_slot: p("tok_slot"),
            tok_chunk: p("tok_chunk"),
            tok_value: each("tok_value", e.fp32_lanes as usize),
        },
    };
    let (group, up, out) = if datapath { ("dot_group", "dot_up", "out") } else { ("group", "up", "rd") };
    let io = Ports {
        reset: p("reset"),
        clear: p("clear"),
        start: p("start"),
        units: p("units"),
        users: p("users"),
        rec_base: p("rec_base"),
        user_slot: each("user_slot", tokens),
        user_weight: each("user_weight", tokens),
        ready: p("ready"),
        mean_start: p("mean_start"),
        mean_tokens: p("mean_tokens"),
        mean_expert: p("mean_expert"),
        mean_ready: p("mean_ready"),
        group: p(group),
        up: p(up),
        front,
        dot_rec: p("dot_rec"),
        w: each("w", units),
        scale: each("scale", units),
        pass_taken: p("pass_taken"),
        down_rec: p("down_rec"),
        down_mean: p("down_mean"),
        col_block: p("col_block"),
        col_q: each("col_q", lanes),
        col_scale: each("col_scale", lanes),
        idle: p("idle"),
        rd_slot: p(&format!("{out}_slot")),
        rd_block: p(&format!("{out}_block")),
        rd_value: each(&format!("{out}_value"), lanes),
        invalid: p("invalid"),
        overrun: p("overrun"),
    };
    (rtl, io)
}

/// A wave of a job: its expert's channels (at most `dot_units`), its users (token, weight), its
/// first staging record, and when it is asked for (cycles after the previous wave's ask).
struct Wave {
    expert: usize,
    channels: Vec<usize>,
    users: Vec<(usize, f32)>,
    rec_base: u64,
    gap: u64,
}

/// The job's waves in the unit's order (experts ascending, channels ascending), records taken
/// from the staging ring from `*record` on.
fn waves_of(job: &ExpertJob, block: &ExpertBlock, arch: &Arch, record: &mut u64, rng: &mut ChaCha8Rng) -> Vec<Wave> {
    let (units, ring) = (arch.expert_unit.dot_units as usize, arch.expert_unit.fetch_ahead_channels as u64);
    let mut waves = Vec::new();
    for e in job.experts() {
        let users: Vec<(usize, f32)> = job.users_of(e);
        if users.is_empty() {
            continue;
        }
        // The sequencer may list an expert's users in any order.
        let mut users = users;
        for i in (1..users.len()).rev() {
            users.swap(i, rng.random_range(0..=i));
        }
        for chunk in job.channels_of(e, block.expert_ffn()).chunks(units) {
            let gap = if rng.random_bool(0.5) { 0 } else { rng.random_range(1..200) };
            waves.push(Wave {
                expert: e.0 as usize,
                channels: chunk.to_vec(),
                users: users.clone(),
                rec_base: *record,
                gap,
            });
            *record = (*record + chunk.len() as u64) % ring;
        }
    }
    waves
}

/// What a job exercised.
#[derive(Default)]
struct Counts {
    waves: usize,
    passes: usize,
    rows: usize,
    bank_waits: usize,
    mean_passes: usize,
}

/// The pass issuing in the down engine: a wave's channel, or an expert's unrouted mean.
#[derive(Clone, Copy, Debug)]
enum Issuing {
    Channel(usize, usize),
    Mean(usize),
}

/// Runs `job` on the pipeline from a `clear`, checking it against the model and the golden.
fn run_job(
    rtl: &mut Verilated,
    io: &Ports,
    arch: &Arch,
    block: &ExpertBlock,
    job: &ExpertJob,
    waves: &[Wave],
    rng: &mut ChaCha8Rng,
    name: &str,
) -> Counts {
    let e = &arch.expert_unit;
    let (n_units, tokens, lanes, ring) =
        (e.dot_units as usize, e.max_tokens as usize, e.down_lanes as usize, e.fetch_ahead_channels as u64);
    let hidden = block.hidden;
    let (g, blocks) = (groups(hidden) as u64, hidden.div_ceil(lanes) as u32);
    let xq: Vec<Int8Vector> = job.tokens.iter().map(|x| Int8Vector::quantize(x).unwrap()).collect();
    let channel = |w: &Wave, u: usize| -> &ExpertChannel { &block.experts[w.expert][w.channels[u]] };
    rtl.set(io.clear, 1);
    if let Front::Pipe { rows, .. } = io.front {
        rtl.set(rows, hidden as u64);
    }
    rtl.cycle();
    rtl.set(io.clear, 0);
    // The datapath quantizes the tokens first (taken in cycle 0): no wave or pass before they
    // are written.
    let f = e.fp32_lanes as usize;
    let quant = schedule(0, job.tokens.len(), hidden, f as u32);
    // The first cycle a wave may be taken (the tokens written).
    let first = match io.front {
        Front::Pipe { .. } => 0,
        Front::Datapath { .. } => quant.done,
    };
    let mut model = Pipe::new(first);
    // The unrouted means' passes, asked once the last wave is taken (a random gap later), one
    // after another.
    let means = match block.unrouted_means {
        Some(_) => mean_passes(&job.routing, block.experts.len()),
        None => Vec::new(),
    };
    let (mut next_mean, mut mean_asked) = (0usize, None::<u64>);
    if waves.is_empty() {
        mean_asked = Some(rng.random_range(0..50));
    }
    let mut counts = Counts::default();
    let (mut cycle, mut next, mut asked_at) = (0u64, 0usize, 0u64);
    // The passes the model expects: (cycle taken, wave, channel), in order.
    let mut passes: VecDeque<(u64, usize, usize)> = VecDeque::new();
    // The wave issuing in the dot engine and the pass issuing in the down engine (the last taken
    // before this cycle).
    let (mut dot_wave, mut down_pass): (Option<usize>, Option<Issuing>) = (None, None);
    let (mut drained, mut dot_last) = (0u64, 0u64);
    loop {
        let at = |what: &str| format!("{name} (hidden {hidden}), cycle {cycle}: {what}");
        let asking = next < waves.len() && cycle >= asked_at + waves[next].gap;
        rtl.set(io.start, asking as u64);
        if asking {
            let w = &waves[next];
            rtl.set(io.units, w.channels.len() as u64);
            rtl.set(io.users, w.users.len() as u64);
            if let Front::Pipe { groups, .. } = io.front {
                rtl.set(groups, g);
            }
            rtl.set(io.rec_base, w.rec_base);
            for t in 0..tokens {
                let (slot, weight) = match w.users.get(t) {
                    Some(&(s, wt)) => (s as u64, wt.to_bits() as u64),
                    None => (rng.random_range(0..tokens) as u64, rng.random::<u32>() as u64),
                };
                rtl.set(io.user_slot[t], slot);
                rtl.set(io.user_weight[t], weight);
            }
        }
        let asking_mean = next == waves.len() && next_mean < means.len() && mean_asked.is_some_and(|a| cycle >= a);
        rtl.set(io.mean_start, asking_mean as u64);
        if asking_mean {
            let (e, slots) = &means[next_mean];
            rtl.set(io.mean_tokens, slots.len() as u64);
            rtl.set(io.mean_expert, *e as u64);
            for t in 0..tokens {
                let slot = slots.get(t).map_or_else(|| rng.random_range(0..tokens) as u64, |&s| s as u64);
                rtl.set(io.user_slot[t], slot);
            }
        }
        if let Front::Datapath { tok_start, tokens: n, hidden: h, .. } = io.front {
            rtl.set(tok_start, (cycle == 0) as u64);
            rtl.set(n, job.tokens.len() as u64);
            rtl.set(h, hidden as u64);
        }
        rtl.eval();
        // The quantizer's reads (the datapath): the FP32 tokens, garbage past their end.
        if let Front::Datapath { tok_slot, tok_chunk, ref tok_value, .. } = io.front {
            let (t, c) = (rtl.get(tok_slot) as usize, rtl.get(tok_chunk) as usize);
            for (l, &port) in tok_value.iter().enumerate() {
                let v = job.tokens.get(t).and_then(|x| x.get(c * f + l)).map_or_else(|| rng.random(), |v| v.to_bits());
                rtl.set(port, v as u64);
            }
        }
        // The dot engine's reads, for the wave issuing: the token store's (the pipe alone) and
        // the staging records'.
        let group = rtl.get(io.group) as usize;
        let up = rtl.get(io.up) != 0;
        let token = match io.front {
            Front::Pipe { x_slot, x, token_scale, .. } => match xq.get(rtl.get(x_slot) as usize) {
                Some(v) if dot_wave.is_some() && group < g as usize => {
                    rtl.set_words(x, &x_words(v, group));
                    rtl.set(token_scale, v.scale.to_bits() as u64);
                    true
                }
                _ => {
                    rtl.set_words(x, &std::array::from_fn::<u32, 8, _>(|_| rng.random()));
                    rtl.set(token_scale, 0x7fc0_0000);
                    false
                }
            },
            Front::Datapath { .. } => dot_wave.is_some() && group < g as usize,
        };
        if token {
            let w = &waves[dot_wave.unwrap()];
            assert_eq!(rtl.get(io.dot_rec), w.rec_base, "{}", at("dot_rec"));
            for u in 0..n_units {
                if u < w.channels.len() {
                    let row = if up { &channel(w, u).up } else { &channel(w, u).gate };
                    rtl.set_words(io.w[u], &w_words(row, group, rng.random()));
                    rtl.set(io.scale[u], row.scale(group).to_bits() as u64);
                } else {
                    // A unit without a channel: anything (a NaN scale included) is ignored.
                    rtl.set_words(io.w[u], &std::array::from_fn::<u32, 4, _>(|_| rng.random()));
                    rtl.set(io.scale[u], 0x7e00);
                }
            }
        }
        // The down engine's reads, for the pass issuing.
        let b = rtl.get(io.col_block) as usize;
        for l in 0..lanes {
            let r = b * lanes + l;
            let (q, s) = match down_pass {
                Some(Issuing::Channel(wi, u)) if r < hidden => {
                    let w = &waves[wi];
                    assert_eq!(rtl.get(io.down_mean), 0, "{}", at("down_mean of a channel's pass"));
                    assert_eq!(rtl.get(io.down_rec), (w.rec_base + u as u64) % ring, "{}", at("down_rec"));
                    let c = &channel(w, u).down;
                    ((c.value(r) as u8 & 0xf) as u64, c.scale(r / GROUP).to_bits() as u64)
                }
                // A means pass: the mean vector as the scales, the weights ignored.
                Some(Issuing::Mean(e)) if r < hidden => {
                    assert_eq!(rtl.get(io.down_mean), 1, "{}", at("down_mean of a means pass"));
                    assert_eq!(rtl.get(io.down_rec), e as u64, "{}", at("down_rec of a means pass"));
                    let mean = &block.unrouted_means.as_ref().unwrap()[e];
                    (rng.random_range(0..16), mean[r].to_bits() as u64)
                }
                _ => (rng.random_range(0..16), rng.random::<u16>() as u64),
            };
            rtl.set(io.col_q[l], q);
            rtl.set(io.col_scale[l], s);
        }
        let ready = rtl.get(io.ready) != 0;
        let mean_ready = rtl.get(io.mean_ready) != 0;
        let pass_taken = rtl.get(io.pass_taken) != 0;
        let idle = rtl.get(io.idle) != 0;
        // Idle exactly when every pass of the waves taken before this cycle is taken and written.
        let quantizing = matches!(io.front, Front::Datapath { .. }) && cycle > 0 && cycle < quant.done;
        let quiet = passes.is_empty() && cycle >= drained && !quantizing;
        assert_eq!(
            idle,
            quiet,
            "{}",
            at(&format!("idle (waves {}/{}, means {next_mean}/{}, drained {drained})", next, waves.len(), means.len()))
        );
        rtl.cycle();
        let mut taken_wave = None;
        if asking && ready {
            let w = &waves[next];
            let asked = asked_at + w.gap;
            let slots: Vec<u32> = w.users.iter().map(|&(t, _)| t as u32).collect();
            let run = model.wave(&WaveAsk {
                asked,
                units: w.channels.len() as u64,
                groups: g,
                blocks,
                slots: &slots,
                users: slots.len() as u64,
                hold: 0,
            });
            assert_eq!(
                run.dot.taken,
                cycle,
                "{}",
                at(&format!("wave {next} (asked {asked}): the model takes it in {}", run.dot.taken))
            );
            // Taken later than the dot engine alone would: it waited for its operand bank.
            counts.bank_waits += (run.dot.taken > asked.max(dot_last).max(first)) as usize;
            dot_last = run.dot.last;
            passes.extend(run.passes.iter().enumerate().map(|(u, p)| (p.taken, next, u)));
            drained = model.drained_at();
            asked_at = asked;
            taken_wave = Some(next);
            next += 1;
            counts.waves += 1;
            if next == waves.len() {
                mean_asked = Some(if rng.random_bool(0.5) { cycle } else { cycle + rng.random_range(1..300) });
            }
        } else if asking {
            assert!(cycle < asked_at + waves[next].gap + 100_000, "{}", at("a wave was never taken"));
        }
        let mut mean_taken = None;
        if asking_mean && mean_ready {
            let asked = mean_asked.unwrap();
            let p = model.pass(asked, &means[next_mean].1, blocks);
            assert_eq!(
                p.taken,
                cycle,
                "{}",
                at(&format!("means pass {next_mean} (asked {asked}): the model takes it in {}", p.taken))
            );
            drained = model.drained_at();
            mean_taken = Some(means[next_mean].0);
            next_mean += 1;
            counts.mean_passes += 1;
        }
        let due = passes.front().is_some_and(|p| p.0 == cycle);
        assert_eq!(pass_taken, due, "{}", at(&format!("pass taken: expected {:?}", passes.front())));
        if due {
            let (_, wi, u) = passes.pop_front().unwrap();
            down_pass = Some(Issuing::Channel(wi, u));
            counts.passes += 1;
        }
        if let Some(e) = mean_taken {
            down_pass = Some(Issuing::Mean(e));
        }
        if taken_wave.is_some() {
            dot_wave = taken_wave;
        }
        let quantized = !matches!(io.front, Front::Datapath { .. }) || cycle >= quant.done;
        if next == waves.len() && next_mean == means.len() && passes.is_empty() && cycle >= drained && quantized {
            break;
        }
        cycle += 1;
    }
    assert_eq!(rtl.get(io.invalid), 0, "{name}: invalid");
    assert_eq!(rtl.get(io.overrun), 0, "{name}: overrun");
    // Every token a pass wrote, against the golden.
    let golden = lacuna_golden::expert::expert_job(job, block);
    let mut written = vec![false; job.tokens.len()];
    for w in waves {
        for &(t, _) in &w.users {
            written[t] = true;
        }
    }
    for (_, slots) in &means {
        for &t in slots {
            written[t as usize] = true;
        }
    }
    for (t, y) in golden.iter().enumerate() {
        if !written[t] {
            assert!(y.iter().all(|&v| v == 0.0), "{name}: token {t} has no pass but a non-zero golden output");
            continue;
        }
        rtl.set(io.rd_slot, t as u64);
        for b in 0..blocks as usize {
            rtl.set(io.rd_block, b as u64);
            rtl.eval();
            for l in 0..lanes {
                let r = b * lanes + l;
                if r < hidden {
                    let got = rtl.get(io.rd_value[l]) as u32;
                    assert_eq!(
                        got,
                        y[r].to_bits(),
                        "{name}: token {t} row {r}: rtl {}, golden {}",
                        f32::from_bits(got),
                        y[r]
                    );
                    counts.rows += 1;
                }
            }
        }
    }
    counts
}

/// Runs 1,000 random jobs on the pipe or the datapath of `arch`; returns what they exercised.
fn random_jobs(arch: &Arch, datapath: bool) -> Counts {
    let arch = arch.clone();
    let (mut rtl, io) = dut(&arch, datapath);
    rtl.set(io.reset, 1);
    rtl.cycle();
    rtl.set(io.reset, 0);
    let mut rng = ChaCha8Rng::seed_from_u64(0x919e + datapath as u64);
    let e = &arch.expert_unit;
    let mut record = 0u64;
    let mut total = Counts::default();
    let jobs = 1000;
    for j in 0..jobs {
        let hidden = match j % 4 {
            0 => e.max_hidden as usize,
            _ => rng.random_range(1..=e.max_hidden as usize),
        };
        let experts = rng.random_range(1..=6);
        let ffn = rng.random_range(1..=10);
        let tokens = rng.random_range(1..=e.max_tokens as usize);
        let k = rng.random_range(0..=experts.min(3));
        // Three jobs in four on a block with unrouted means (as every MoE derived from a dense
        // model has).
        let rb = random_block(1000 + j as u64, hidden, experts, ffn, false, j % 4 != 1);
        let job = random_job(2000 + j as u64, &rb.block, tokens, k, false);
        let waves = waves_of(&job, &rb.block, &arch, &mut record, &mut rng);
        let c = run_job(&mut rtl, &io, &arch, &rb.block, &job, &waves, &mut rng, &format!("job {j}"));
        total.waves += c.waves;
        total.passes += c.passes;
        total.rows += c.rows;
        total.bank_waits += c.bank_waits;
        total.mean_passes += c.mean_passes;
    }
    eprintln!(
        "{jobs} jobs: {} waves ({} waited for their operand bank), {} channel passes, {} means passes, {} output rows equal to the golden",
        total.waves, total.bank_waits, total.passes, total.mean_passes, total.rows
    );
    assert!(total.waves > 1500 && total.bank_waits > 200 && total.rows > 100_000, "the jobs must exercise the banks");
    assert!(total.mean_passes > 1000, "the jobs must exercise the means passes");
    total
}

#[test]
fn the_pipeline_takes_waves_and_passes_in_the_models_cycles_and_its_outputs_equal_the_golden() {
    random_jobs(&Arch::preset("tiny").unwrap(), false);
}

#[test]
fn the_datapath_quantizes_fp32_tokens_then_runs_the_pipeline_in_the_models_cycles_equal_to_the_golden() {
    random_jobs(&Arch::preset("tiny").unwrap(), true);
    random_jobs(&lacuna_testbench::expert_cases::tiny_f8(), true);
}
