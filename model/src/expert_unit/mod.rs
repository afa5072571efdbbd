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
//! pipeline rule: the token quantization first (3 FP32 operations a value); then channel by
//! channel in the job's order (experts ascending, channels ascending) fetch -> dot -> swiglu ->
//! down, each stage taking a channel when the previous stage has finished it and it has
//! finished the channel before; the fetch of a channel waits until the down engine has finished
//! the channel `fetch_ahead_channels` before it (the staging buffer); a channel held by the
//! channel buffer arrives the cycle after its slot frees. An expert's calibration terms and the
//! unrouted means take the down lanes after the expert's (the job's) last channel.
//! The router's top-k is the policy's (the job carries each token's experts): this unit does not
//! yet compute routing or channel saliency itself.

pub mod calibration;
pub mod channel_buffer;
pub mod channel_fetch;
pub mod dot_engine;
pub mod down_engine;
pub mod swiglu;

use crate::memory::{MemClient, Memory};
use channel_buffer::{ChannelBuffer, ChannelKey};
use channel_fetch::{AddressMap, ChannelFetch};
use lacuna_spec::a8w4::{channel_bytes, Int8Vector};
use lacuna_spec::expert_job::{ExpertBlock, ExpertJob};
use lacuna_spec::expert_unit::ExpertUnitParams;
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
    /// Bursts' bytes of channel records read.
    pub channel_bytes: u64,
    /// Bursts' bytes of statistics (calibration, unrouted means) read.
    pub stats_bytes: u64,
    /// INT8 x INT4 group operations (32 products and their INT32 sum each).
    pub dot_group_ops: u64,
    /// FP32 lane operations (quantization, SwiGLU, calibration).
    pub fp32_ops: u64,
    /// Down-lane operations (a product added, or a calibration or mean term added).
    pub down_ops: u64,
    /// Cycles the down engine was busy.
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

    /// Runs `job` of mixture block `layer` from cycle `start` on `mem`.
    pub fn run(
        &mut self,
        job: &ExpertJob,
        block: &ExpertBlock,
        layer: u32,
        mem: &mut Memory,
        start: u64,
    ) -> Result<ExpertRun, String> {
        job.check(block, &self.params)?;
        let p = &self.params;
        let (hidden, ffn) = (block.hidden, block.expert_ffn());
        let map = AddressMap { experts: block.experts.len() as u64, expert_ffn: ffn as u64, hidden: hidden as u64 };
        let record = channel_bytes(hidden);
        let before = mem.bytes;
        let mut c = ExpertCounters { jobs: 1, tokens: job.tokens.len() as u64, ..Default::default() };

        let quant = 3 * (job.tokens.len() * hidden) as u64;
        c.fp32_ops += quant;
        let ready = start + quant.div_ceil(p.fp32_lanes as u64);
        let xq: Vec<Int8Vector> =
            job.tokens.iter().map(|x| Int8Vector::quantize(x).expect("a checked job's tokens are finite")).collect();
        let mut y = vec![vec![0f32; hidden]; job.tokens.len()];

        let mut fetch = ChannelFetch::new(start);
        let means_ready = match block.unrouted_means {
            Some(_) => fetch.fetch(mem, MemClient::ExpertStats, map.means(layer as u64), map.means_bytes(), start),
            None => start,
        };
        let (mut dot_free, mut swiglu_free, mut down_free) = (ready, ready, ready);
        let mut down_done: VecDeque<u64> = VecDeque::new();
        // A job ends when every burst it asked for has arrived, used or not.
        let mut last_arrival = means_ready;
        let ahead = p.fetch_ahead_channels as usize;
        for e in job.experts() {
            let users: Vec<(usize, f32)> = job
                .routing
                .iter()
                .enumerate()
                .filter_map(|(t, r)| r.experts.iter().position(|&x| x == e).map(|k| (t, r.weights[k])))
                .collect();
            let channels = job.channels_of(e, ffn);
            let cal = job.calibrated && !users.is_empty();
            let stats = block.calibration.as_ref().map(|s| &s[e.0 as usize]);
            let stats_ready = if cal {
                let addr = map.calibration(layer as u64, e.0 as u64);
                fetch.fetch(mem, MemClient::ExpertStats, addr, map.calibration_bytes(), start)
            } else {
                start
            };
            last_arrival = last_arrival.max(stats_ready);
            let mut a_l1 = vec![0f32; users.len()];
            let mut nu_l1 = 0f32;
            let mut m = vec![0f32; if cal { hidden } else { 0 }];
            let xs: Vec<&Int8Vector> = users.iter().map(|&(t, _)| &xq[t]).collect();
            for &j in &channels {
                c.channels += 1;
                let key = ChannelKey { block: layer, expert: e, channel: j as u32 };
                let slot = if down_done.len() >= ahead { down_done[down_done.len() - ahead] } else { start };
                let arrive = if self.buffer.lookup(key) {
                    c.buffer_hits += 1;
                    slot.max(start) + 1
                } else {
                    let addr = map.channel(layer as u64, e.0 as u64, j as u64);
                    let done = fetch.fetch(mem, MemClient::ExpertChannels, addr, record, slot);
                    self.buffer.insert(key, record);
                    done
                };
                last_arrival = last_arrival.max(arrive);
                if users.is_empty() {
                    down_done.push_back(arrive);
                    continue;
                }
                let dot_end = arrive.max(dot_free) + dot_engine::cycles(hidden, users.len(), p.dot_units);
                dot_free = dot_end;
                let swiglu_end = dot_end.max(swiglu_free) + swiglu::cycles(users.len(), p.fp32_lanes);
                swiglu_free = swiglu_end;
                let vectors = users.len() + cal as usize;
                let down_start = swiglu_end.max(down_free);
                let down_cycles = down_engine::cycles(hidden, vectors, p.down_lanes);
                down_free = down_start + down_cycles;
                c.down_busy += down_cycles;
                down_done.push_back(down_free);
                c.dot_group_ops += dot_engine::group_ops(hidden, users.len());
                c.fp32_ops += swiglu::OPS * users.len() as u64;
                c.down_ops += (hidden * vectors) as u64;

                let ch = &block.experts[e.0 as usize][j];
                for (i, (g, u)) in dot_engine::gate_up(ch, &xs).into_iter().enumerate() {
                    let (t, w) = users[i];
                    let (h, a) = swiglu::apply(g, u, w);
                    down_engine::accumulate(&mut y[t], a, &ch.down);
                    a_l1[i] += h.abs();
                }
                if let (true, Some(s)) = (cal, stats) {
                    nu_l1 += s.mean_abs[j].to_f32();
                    down_engine::accumulate(&mut m, s.mean[j], &ch.down);
                }
            }
            if let (true, Some(s)) = (cal, stats) {
                let tail = down_engine::cycles(hidden, users.len(), p.down_lanes);
                down_free = down_free.max(stats_ready) + tail;
                c.down_busy += tail;
                c.down_ops += (hidden * users.len()) as u64;
                c.fp32_ops += 2 * users.len() as u64;
                for (i, &(t, w)) in users.iter().enumerate() {
                    calibration::apply(&mut y[t], w, calibration::kappa(a_l1[i], nu_l1), &s.mean_out, &m);
                }
            }
        }
        if let Some(means) = &block.unrouted_means {
            let mut terms = 0;
            for (y, r) in y.iter_mut().zip(&job.routing) {
                for (e, mean) in means.iter().enumerate() {
                    if !r.experts.iter().any(|x| x.0 as usize == e) {
                        y.iter_mut().zip(mean).for_each(|(y, m)| *y += m.to_f32());
                        terms += 1;
                    }
                }
            }
            let tail = down_engine::cycles(hidden, terms, p.down_lanes);
            down_free = down_free.max(means_ready) + tail;
            c.down_busy += tail;
            c.down_ops += (hidden * terms) as u64;
        }
        let end = down_free.max(dot_free).max(swiglu_free).max(last_arrival);
        c.cycles = end - start;
        c.channel_bytes = mem.bytes.expert_channels - before.expert_channels;
        c.stats_bytes = mem.bytes.expert_stats - before.expert_stats;
        self.counters.add(&c);
        Ok(ExpertRun { y, end, counters: c })
    }
}

impl ExpertCounters {
    /// Adds another's counts.
    pub fn add(&mut self, o: &ExpertCounters) {
        self.jobs += o.jobs;
        self.cycles += o.cycles;
        self.tokens += o.tokens;
        self.channels += o.channels;
        self.buffer_hits += o.buffer_hits;
        self.channel_bytes += o.channel_bytes;
        self.stats_bytes += o.stats_bytes;
        self.dot_group_ops += o.dot_group_ops;
        self.fp32_ops += o.fp32_ops;
        self.down_ops += o.down_ops;
        self.down_busy += o.down_busy;
    }
}
