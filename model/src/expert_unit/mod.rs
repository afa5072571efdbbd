//! `expert_unit`: the EdgeXpert expert unit beside the Sparse SIMT core: it runs a mixture block
//! of one pass (a draft tree's tokens, or a chunk of a prompt) at A8W4, loading only the expert
//! channels the job lists, through the shared memory port.
//!
//! Blocks, one file each (docs/microarchitecture.md, "expert unit"): [`channel_fetch`] (channel
//! records and statistics as bursts), [`channel_buffer`] (channels kept across jobs, LRU),
//! [`dot_engine`] (gate and up, INT8 x INT4 into INT32, scaled in FP32), [`swiglu`] (SiLU x up,
//! the FP16 down operand), [`down_engine`] (FP16 x INT4 into FP32 outputs), [`calibration`]
//! (the skipped channels' mean contribution); the unrouted experts' means are added last.
//!
//! Contract: [`ExpertUnit::run`] refuses a job [`ExpertJob::check`] refuses; otherwise its
//! outputs are bit-identical to `lacuna_golden::expert::expert_job`, and its cycles follow the
//! pipeline rule: the token quantization first ([`token_quant`], as the RTL's quantizer); then, in the job's
//! order (experts ascending, channels ascending), fetch -> dot -> swiglu -> down. The fetch of a
//! channel waits until the down engine has finished the channel `fetch_ahead_channels` before it
//! (the staging buffer; a listed channel no token uses frees its slot on arrival); a channel held
//! by the channel buffer arrives the cycle after its slot frees. The dot stage is the RTL's
//! (`dot_engine::Waves`): an expert's channels in waves of up to `dot_units`, a wave asked once
//! all its records are staged and the down engine has taken the last pass of the wave before the
//! previous one (SwiGLU writes a wave's down operands into one of two banks), its values out
//! `DOT_LATENCY` cycles after their last groups, each user `max(2 x groups, channels)` cycles.
//! SwiGLU is the RTL's stream (`swiglu::operand_at`): a user's channels one a cycle on one lane
//! once its up values are out; a channel's operands are all in after its wave's last user's.
//! Statistics have their own buffer; a calibrated expert's down stage waits for them. The down
//! stage is the RTL's (`down_engine::Issue`): a channel's pass is asked for when SwiGLU has
//! finished the channel (and its statistics are in), taken once the previous pass issued its
//! last block, and issues `vectors x ceil(hidden / down_lanes)` row blocks, stalling where a
//! block would return to a row within the lane's reuse distance; the channel's staging slot
//! frees after its last block. An expert's calibration terms (kappa on the FP32 lanes, then the
//! terms on calibration lanes beside the down lanes, same store and cycles, once the mean row is
//! written) and the unrouted means (a pass per expert over the tokens not routed to it) are
//! passes after the expert's (the job's) last channel. The
//! job ends when the down lanes have written their last row, the other stages are done and every
//! burst it asked for has arrived.
//! The router's top-k is the policy's (the job carries each token's experts): this unit does not
//! yet compute routing or channel saliency itself.

pub mod calibration;
pub mod channel_buffer;
pub mod channel_fetch;
pub mod dot_engine;
pub mod down_engine;
pub mod pipe;
pub mod swiglu;
pub mod token_quant;

use crate::memory::{MemClient, Memory};
use channel_buffer::{ChannelBuffer, ChannelKey};
use channel_fetch::{AddressMap, ChannelFetch};
use lacuna_spec::a8w4::{channel_bytes, Int8Vector};
use lacuna_spec::expert_job::{check_routing_and_loads, loaded_channels, ExpertBlock, ExpertJob};
use lacuna_spec::expert_unit::ExpertUnitParams;
use lacuna_spec::moe::ExpertId;
use lacuna_spec::moe_trace::{ExpertLoad, Routing};
use std::collections::VecDeque;

/// What the unit did, summed over its jobs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExpertCounters {
    /// Jobs run.
    pub jobs: u64,
    /// Cycles from each job's start to its end, summed.
    pub cycles: u64,
    /// Tokens of the jobs.
    pub tokens: u64,
    /// Channels the jobs listed.
    pub channels: u64,
    /// Of them, found in the channel buffer (not loaded).
    pub buffer_hits: u64,
    /// Bytes of the channels found in the buffer (read from it instead of DRAM).
    pub buffer_bytes: u64,
    /// Bursts' bytes of channel records read.
    pub channel_bytes: u64,
    /// Bursts' bytes of statistics (calibration, unrouted means) read.
    pub stats_bytes: u64,
    /// INT8 x INT4 group operations (32 products and their INT32 sum each).
    pub dot_group_ops: u64,
    /// Cycles the dot engine issued an element (its wave's units busy; a wave of fewer
    /// channels than units leaves the others idle).
    pub dot_busy: u64,
    /// FP32 lane operations (quantization, SwiGLU, calibration).
    pub fp32_ops: u64,
    /// Down-lane operations (a product added, or a calibration or mean term added).
    pub down_ops: u64,
    /// Cycles the down engine issued a row block (its lanes busy; the last block of a pass may
    /// fill only some of them).
    pub down_busy: u64,
}

/// One job's outputs and timing.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertRun {
    /// Each token's output.
    pub y: Vec<Vec<f32>>,
    /// The cycle the job ended (its last output added).
    pub end: u64,
    /// This job's counters.
    pub counters: ExpertCounters,
}

/// The unit: its parameters, its channel buffer, its counters.
#[derive(Clone, Debug)]
pub struct ExpertUnit {
    params: ExpertUnitParams,
    buffer: ChannelBuffer,
    /// Counters over every job so far.
    pub counters: ExpertCounters,
}

impl ExpertUnit {
    /// A unit with an empty channel buffer.
    pub fn new(params: &ExpertUnitParams) -> ExpertUnit {
        ExpertUnit {
            params: params.clone(),
            buffer: ChannelBuffer::new(params.channel_buffer_bytes as u64),
            counters: ExpertCounters::default(),
        }
    }

    /// Runs `job` of mixture block `layer` from cycle `start` on `mem`: its outputs and timing
    /// (refused when the unit's parameters are out of range, as `Arch` validation refuses them).
    pub fn run(
        &mut self,
        job: &ExpertJob,
        block: &ExpertBlock,
        layer: u32,
        mem: &mut Memory,
        start: u64,
    ) -> Result<ExpertRun, String> {
        self.params.check()?;
        job.check(block, &self.params)?;
        let shape = JobShape {
            hidden: block.hidden,
            experts: block.experts.len(),
            expert_ffn: block.expert_ffn(),
            tokens: job.tokens.len(),
            routing: &job.routing,
            loads: &job.loads,
            calibrated: job.calibrated,
            unrouted_means: block.unrouted_means.is_some(),
        };
        let (end, counters) = self.schedule(&shape, layer, mem, start);
        Ok(ExpertRun { y: compute(job, block), end, counters })
    }

    /// The timing of a job of this shape (no data: the MoE trace's passes), after checking it.
    pub fn time(
        &mut self,
        shape: &JobShape,
        layer: u32,
        mem: &mut Memory,
        start: u64,
    ) -> Result<(u64, ExpertCounters), String> {
        self.params.check()?;
        shape.check(&self.params)?;
        Ok(self.schedule(shape, layer, mem, start))
    }

    fn schedule(&mut self, s: &JobShape, layer: u32, mem: &mut Memory, start: u64) -> (u64, ExpertCounters) {
        let p = self.params.clone();
        let hidden = s.hidden;
        let map = AddressMap { experts: s.experts as u64, expert_ffn: s.expert_ffn as u64, hidden: hidden as u64 };
        let before = mem.bytes;
        let mut c = ExpertCounters { jobs: 1, tokens: s.tokens as u64, ..Default::default() };

        // The tokens quantized first ([`token_quant`]); the channels start once they are written.
        c.fp32_ops += token_quant::OPS_PER_VALUE * (s.tokens * hidden) as u64;
        let ready = token_quant::schedule(start, s.tokens, hidden, p.fp32_lanes).done;
        let mut fetch = ChannelFetch::new(start);
        let means_ready = match s.unrouted_means {
            true => fetch.fetch(mem, MemClient::ExpertStats, map.means(layer as u64), map.means_bytes(), start),
            false => start,
        };
        // The dot engine, SwiGLU, the operand banks and the down engine, wave by wave
        // ([`pipe`]); the down lanes also take the calibration terms and the unrouted means.
        let mut pipe = pipe::Pipe::new(ready);
        let blocks = hidden.div_ceil(p.down_lanes as usize) as u32;
        let groups = lacuna_spec::a8w4::groups(hidden) as u64;
        // The calibration's mean row is the row set after the tokens'.
        let mean_slot = p.max_tokens;
        let mut down_done: VecDeque<u64> = VecDeque::new();
        // A job ends when every burst it asked for has arrived, used or not.
        let mut last_arrival = means_ready;
        for e in s.experts_touched() {
            let user_slots: Vec<u32> =
                (0..s.tokens).filter(|&t| s.routing[t].experts.contains(&e)).map(|t| t as u32).collect();
            let users = user_slots.len();
            let channels = s.channels_of(e);
            let cal = s.calibrated && users > 0;
            // Statistics have a buffer of their own (no staging slot); a calibrated expert's
            // down products need its channels' means, so its down stage waits for them.
            let stats_ready = match cal {
                true => {
                    let addr = map.calibration(layer as u64, e.0 as u64);
                    fetch.fetch(mem, MemClient::ExpertStats, addr, map.calibration_bytes(), start)
                }
                false => start,
            };
            last_arrival = last_arrival.max(stats_ready);
            let mut slots = user_slots.clone();
            if cal {
                slots.push(mean_slot);
            }
            // The dot engine takes the expert's channels in waves of up to `dot_units` (one a
            // unit, in lock step: [`dot_engine`]); a wave's records must all be staged.
            for wave in channels.chunks(p.dot_units as usize) {
                let mut staged = ready;
                let first = down_done.len();
                for (m, &j) in wave.iter().enumerate() {
                    c.channels += 1;
                    let key = ChannelKey { block: layer, expert: e, channel: j as u32 };
                    let arrive = self.arrival(key, first + m, &mut fetch, mem, &map, &down_done, start, &mut c);
                    last_arrival = last_arrival.max(arrive);
                    staged = staged.max(arrive);
                    if users == 0 {
                        // Listed but used by no token: its slot frees as it arrives.
                        down_done.push_back(arrive);
                    }
                }
                if users == 0 {
                    continue;
                }
                let run = pipe.wave(&pipe::WaveAsk {
                    asked: staged,
                    units: wave.len() as u64,
                    groups,
                    blocks,
                    slots: &slots,
                    users: users as u64,
                    hold: stats_ready,
                });
                c.dot_busy += 2 * groups * users as u64;
                for pass in &run.passes {
                    c.down_busy += (slots.len() as u32 * blocks) as u64;
                    // The staging slot frees once the column's last block is read.
                    down_done.push_back(pass.last + 1);
                    c.dot_group_ops += dot_engine::group_ops(hidden, users);
                    c.fp32_ops += swiglu::ops(cal) * users as u64;
                    c.down_ops += (hidden * slots.len()) as u64;
                }
            }
            if cal {
                // kappa and w kappa per token on the FP32 lanes once SwiGLU's sums and the
                // statistics are in; then (c - m) scaled and added, a pass on calibration lanes
                // beside the down lanes (the same row store and cycles, so the same issue rule),
                // once the mean row m is written: after the down lanes drained.
                let scalars = calibration::FP32_OPS * users as u64;
                let kappa_ready = pipe.swiglu_end().max(stats_ready) + scalars.div_ceil(p.fp32_lanes as u64);
                pipe.pass(pipe.drained_at().max(kappa_ready), &user_slots, blocks);
                c.down_busy += (users as u32 * blocks) as u64;
                c.down_ops += (hidden * users) as u64;
                c.fp32_ops += scalars;
            }
        }
        if s.unrouted_means {
            // Per expert, a pass over the tokens not routed to it: its mean vector as the
            // column (scales, with weights 1) times an operand of 1 (`pipe::mean_passes`), once
            // the means and the last channel's operands are in; a token's means so come in
            // expert order, after its experts' channels, as the golden adds them.
            for (_, slots) in pipe::mean_passes(s.routing, s.experts) {
                pipe.pass(means_ready.max(pipe.swiglu_end()), &slots, blocks);
                c.down_busy += (slots.len() as u32 * blocks) as u64;
                c.down_ops += (hidden * slots.len()) as u64;
            }
        }
        let end = pipe.drained_at().max(pipe.swiglu_end()).max(last_arrival);
        c.cycles = end - start;
        c.channel_bytes = mem.bytes.expert_channels - before.expert_channels;
        c.stats_bytes = mem.bytes.expert_stats - before.expert_stats;
        self.counters.add(&c);
        (end, c)
    }
}

impl ExpertUnit {
    /// The cycle channel `key`, the job's `position`-th, is staged: from the channel buffer the
    /// cycle after its staging slot frees, else fetched once the slot frees (the down engine has
    /// finished the channel `fetch_ahead_channels` before it, which `down_done` holds: a wave's
    /// channels are at most `dot_units`, which `ExpertUnitParams::check` holds to at most
    /// `fetch_ahead_channels`, so that one is in an earlier wave).
    #[allow(clippy::too_many_arguments)]
    fn arrival(
        &mut self,
        key: ChannelKey,
        position: usize,
        fetch: &mut ChannelFetch,
        mem: &mut Memory,
        map: &AddressMap,
        down_done: &VecDeque<u64>,
        start: u64,
        c: &mut ExpertCounters,
    ) -> u64 {
        let ahead = self.params.fetch_ahead_channels as usize;
        let record = channel_bytes(map.hidden as usize);
        let slot = match position.checked_sub(ahead) {
            Some(i) => down_done[i],
            None => start,
        };
        if self.buffer.lookup(key) {
            c.buffer_hits += 1;
            c.buffer_bytes += record;
            return slot.max(start) + 1;
        }
        let addr = map.channel(key.block as u64, key.expert.0 as u64, key.channel as u64);
        let done = fetch.fetch(mem, MemClient::ExpertChannels, addr, record, slot);
        self.buffer.insert(key, record);
        done
    }
}

/// What the timing of a job depends on: its sizes, routing and loads, not its values.
#[derive(Clone, Copy, Debug)]
pub struct JobShape<'a> {
    /// The hidden size.
    pub hidden: usize,
    /// The block's experts.
    pub experts: usize,
    /// Channels per expert.
    pub expert_ffn: usize,
    /// Tokens of the job.
    pub tokens: usize,
    /// Each token's experts.
    pub routing: &'a [Routing],
    /// The channels loaded.
    pub loads: &'a [ExpertLoad],
    /// Whether calibration is applied.
    pub calibrated: bool,
    /// Whether the block adds the unrouted experts' means.
    pub unrouted_means: bool,
}

impl JobShape<'_> {
    /// The limits of [`ExpertJob::check`] that do not need the values.
    pub fn check(&self, p: &ExpertUnitParams) -> Result<(), String> {
        if self.hidden == 0 || self.hidden > p.max_hidden as usize {
            return Err(format!("hidden size {} is not in 1..={}", self.hidden, p.max_hidden));
        }
        if self.tokens == 0 || self.tokens > p.max_tokens as usize || self.routing.len() != self.tokens {
            return Err(format!(
                "{} tokens ({} routings): a job has 1..={}",
                self.tokens,
                self.routing.len(),
                p.max_tokens
            ));
        }
        check_routing_and_loads(self.routing, self.loads, self.experts, self.expert_ffn)
    }

    fn experts_touched(&self) -> Vec<ExpertId> {
        let mut e: Vec<ExpertId> = self
            .routing
            .iter()
            .flat_map(|r| r.experts.iter().copied())
            .chain(self.loads.iter().map(|l| l.expert))
            .collect();
        e.sort();
        e.dedup();
        e
    }

    fn channels_of(&self, e: ExpertId) -> Vec<usize> {
        self.loads.iter().find(|l| l.expert == e).map_or(Vec::new(), |l| loaded_channels(l, self.expert_ffn))
    }
}

/// The outputs, computed block by block in the unit's order (channel-major: each channel's
/// gate/up for every token it serves, then its down column into their outputs).
fn compute(job: &ExpertJob, block: &ExpertBlock) -> Vec<Vec<f32>> {
    let ffn = block.expert_ffn();
    let xq: Vec<Int8Vector> =
        job.tokens.iter().map(|x| Int8Vector::quantize(x).expect("a checked job's tokens are finite")).collect();
    let mut y = vec![vec![0f32; block.hidden]; job.tokens.len()];
    for e in job.experts() {
        let users: Vec<(usize, f32)> = job.users_of(e);
        if users.is_empty() {
            continue;
        }
        let stats = block.calibration.as_ref().map(|s| &s[e.0 as usize]).filter(|_| job.calibrated);
        let xs: Vec<&Int8Vector> = users.iter().map(|&(t, _)| &xq[t]).collect();
        let mut a_l1 = vec![0f32; users.len()];
        let mut nu_l1 = 0f32;
        let mut m = vec![0f32; block.hidden];
        for j in job.channels_of(e, ffn) {
            let ch = &block.experts[e.0 as usize][j];
            for (i, (g, u)) in dot_engine::gate_up(ch, &xs).into_iter().enumerate() {
                let (t, w) = users[i];
                let (h, a) = swiglu::apply(g, u, w);
                down_engine::accumulate(&mut y[t], a, &ch.down);
                a_l1[i] += h.abs();
            }
            if let Some(s) = stats {
                nu_l1 += s.mean_abs[j].to_f32();
                down_engine::accumulate(&mut m, s.mean[j], &ch.down);
            }
        }
        if let Some(s) = stats {
            for (i, &(t, w)) in users.iter().enumerate() {
                calibration::apply(&mut y[t], w, calibration::kappa(a_l1[i], nu_l1), &s.mean_out, &m);
            }
        }
    }
    if let Some(means) = &block.unrouted_means {
        for (y, r) in y.iter_mut().zip(&job.routing) {
            for (e, mean) in means.iter().enumerate() {
                if !r.experts.iter().any(|x| x.0 as usize == e) {
                    y.iter_mut().zip(mean).for_each(|(y, m)| *y += m.to_f32());
                }
            }
        }
    }
    y
}

impl ExpertCounters {
    /// Adds another's counts.
    pub fn add(&mut self, o: &ExpertCounters) {
        self.jobs += o.jobs;
        self.cycles += o.cycles;
        self.tokens += o.tokens;
        self.channels += o.channels;
        self.buffer_hits += o.buffer_hits;
        self.buffer_bytes += o.buffer_bytes;
        self.channel_bytes += o.channel_bytes;
        self.stats_bytes += o.stats_bytes;
        self.dot_group_ops += o.dot_group_ops;
        self.dot_busy += o.dot_busy;
        self.fp32_ops += o.fp32_ops;
        self.down_ops += o.down_ops;
        self.down_busy += o.down_busy;
    }
}
