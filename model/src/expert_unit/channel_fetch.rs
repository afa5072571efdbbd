//! `channel_fetch`: the expert unit's loads through the shared memory port: channel records
//! (A8W4, `MemClient::ExpertChannels`) and statistics (FP16, `MemClient::ExpertStats`), as
//! aligned bursts in the order the job needs them.
//!
//! Contract: [`ChannelFetch::fetch`] issues the bursts covering `[addr, addr + bytes)` one per
//! cycle at the earliest cycle the port accepts each, never before `not_before`, and returns the
//! cycle the last one completes. A burst shared with the previous record (records are not burst
//! aligned) is not asked for twice. The address map ([`AddressMap`]) places each block's experts
//! channel-major, so a record is contiguous.

use crate::memory::{MemClient, Memory};
use lacuna_spec::a8w4::channel_bytes;

/// Where a block's expert channels and statistics live in memory.
#[derive(Clone, Copy, Debug)]
pub struct AddressMap {
    /// Experts per block.
    pub experts: u64,
    /// Channels per expert.
    pub expert_ffn: u64,
    /// The hidden size.
    pub hidden: u64,
}

/// Statistics live above every block's channels.
const STATS_BASE: u64 = 1 << 44;
const ALIGN: u64 = 4096;

impl AddressMap {
    fn block_channels(&self) -> u64 {
        (self.experts * self.expert_ffn * channel_bytes(self.hidden as usize)).div_ceil(ALIGN) * ALIGN
    }

    /// Bytes of one expert's calibration statistics (`c`, then `mu` and `nu`).
    pub fn calibration_bytes(&self) -> u64 {
        2 * self.hidden + 4 * self.expert_ffn
    }

    /// Bytes of a block's unrouted means (every expert's).
    pub fn means_bytes(&self) -> u64 {
        2 * self.hidden * self.experts
    }

    fn block_stats(&self) -> u64 {
        (self.experts * self.calibration_bytes() + self.means_bytes()).div_ceil(ALIGN) * ALIGN
    }

    /// Channel `j` of expert `e` of block `layer`.
    pub fn channel(&self, layer: u64, e: u64, j: u64) -> u64 {
        layer * self.block_channels() + (e * self.expert_ffn + j) * channel_bytes(self.hidden as usize)
    }

    /// Expert `e`'s calibration statistics in block `layer`.
    pub fn calibration(&self, layer: u64, e: u64) -> u64 {
        STATS_BASE + layer * self.block_stats() + e * self.calibration_bytes()
    }

    /// Block `layer`'s unrouted means.
    pub fn means(&self, layer: u64) -> u64 {
        STATS_BASE + layer * self.block_stats() + self.experts * self.calibration_bytes()
    }
}

/// The fetch block's state: the next cycle it may issue, the last burst it asked for.
#[derive(Clone, Debug, Default)]
pub struct ChannelFetch {
    now: u64,
    last: Option<(u64, u64)>,
}

impl ChannelFetch {
    /// A fetch that may issue from cycle `start`.
    pub fn new(start: u64) -> ChannelFetch {
        ChannelFetch { now: start, last: None }
    }

    /// Fetches `bytes` (> 0) at `addr`, no earlier than `not_before`; returns when the last
    /// burst completes.
    pub fn fetch(&mut self, mem: &mut Memory, client: MemClient, addr: u64, bytes: u64, not_before: u64) -> u64 {
        self.now = self.now.max(not_before);
        let (first, last) = (mem.burst_of(addr), mem.burst_of(addr + bytes - 1));
        let mut done = not_before;
        let mut b = first;
        while b <= last {
            if let Some((prev, prev_done)) = self.last {
                if prev == b {
                    done = done.max(prev_done);
                    b += mem.burst();
                    continue;
                }
            }
            loop {
                mem.tick(self.now);
                if let Some(d) = mem.request_at(self.now, client, b) {
                    self.now += 1;
                    self.last = Some((b, d));
                    done = done.max(d);
                    break;
                }
                self.now = mem.next_free().map_or(self.now + 1, |f| f.max(self.now + 1));
            }
            b += mem.burst();
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lacuna_spec::Arch;

    #[test]
    fn adjacent_records_share_their_boundary_burst_once() {
        let arch = Arch::default();
        let mut mem = Memory::new(&arch.memory);
        let mut f = ChannelFetch::new(0);
        // Two 96-byte records back to back over 64-byte bursts: bursts 0, 64 then 128 only.
        f.fetch(&mut mem, MemClient::ExpertChannels, 0, 96, 0);
        f.fetch(&mut mem, MemClient::ExpertChannels, 96, 96, 0);
        assert_eq!(mem.bytes.expert_channels, 3 * 64);
        assert_eq!(mem.bytes.requests, 3);
    }

    #[test]
    fn a_fetch_waits_for_its_earliest_cycle_and_streams_at_the_bus_rate() {
        let arch = Arch::default();
        let mut mem = Memory::new(&arch.memory);
        let mut f = ChannelFetch::new(0);
        let done = f.fetch(&mut mem, MemClient::ExpertChannels, 0, 640, 50);
        let m = &arch.memory;
        let beats = (m.request_bytes / m.bytes_per_cycle) as u64;
        assert_eq!(done, 50 + m.latency_cycles as u64 + 10 * beats, "ten bursts from cycle 50");
    }
}
