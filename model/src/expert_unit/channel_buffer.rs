//! `channel_buffer`: the expert channels kept on chip between jobs (least recently used first
//! out), so that a later job of the same block finds a channel without loading it again.
//!
//! Contract: [`ChannelBuffer::lookup`] says whether a channel is held (and marks it used);
//! [`ChannelBuffer::insert`] keeps a fetched channel, evicting the least recently used ones
//! until it fits; a record larger than the buffer is not kept. Capacity is in bytes of A8W4
//! records (`lacuna_spec::a8w4::channel_bytes`).

use lacuna_spec::moe::ExpertId;
use std::collections::{BTreeMap, HashMap};

/// A channel: the block, the expert, the channel index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChannelKey {
    /// The mixture block (layer).
    pub block: u32,
    /// The expert.
    pub expert: ExpertId,
    /// The channel.
    pub channel: u32,
}

/// The buffer.
#[derive(Clone, Debug, Default)]
pub struct ChannelBuffer {
    capacity: u64,
    used: u64,
    clock: u64,
    last_use: HashMap<ChannelKey, (u64, u64)>,
    by_age: BTreeMap<u64, ChannelKey>,
}

impl ChannelBuffer {
    /// An empty buffer of `capacity` bytes.
    pub fn new(capacity: u64) -> ChannelBuffer {
        ChannelBuffer { capacity, ..Default::default() }
    }

    /// Whether `key` is held; a hit becomes the most recently used.
    pub fn lookup(&mut self, key: ChannelKey) -> bool {
        let Some(&(age, bytes)) = self.last_use.get(&key) else { return false };
        self.by_age.remove(&age);
        self.clock += 1;
        self.by_age.insert(self.clock, key);
        self.last_use.insert(key, (self.clock, bytes));
        true
    }

    /// Keeps `key` (`bytes` long), evicting the least recently used until it fits.
    pub fn insert(&mut self, key: ChannelKey, bytes: u64) {
        if bytes > self.capacity || self.lookup(key) {
            return;
        }
        while self.used + bytes > self.capacity {
            let (_, old) = self.by_age.pop_first().expect("used > 0 means something is held");
            self.used -= self.last_use.remove(&old).expect("indexed both ways").1;
        }
        self.clock += 1;
        self.by_age.insert(self.clock, key);
        self.last_use.insert(key, (self.clock, bytes));
        self.used += bytes;
    }

    /// Bytes held.
    pub fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: u32) -> ChannelKey {
        ChannelKey { block: 0, expert: ExpertId(0), channel: c }
    }

    #[test]
    fn the_least_recently_used_channel_is_evicted_first() {
        let mut b = ChannelBuffer::new(300);
        for c in 0..3 {
            b.insert(key(c), 100);
        }
        assert!(b.lookup(key(0)));
        b.insert(key(3), 100);
        assert!(!b.lookup(key(1)), "1 was the least recently used");
        assert!(b.lookup(key(0)) && b.lookup(key(2)) && b.lookup(key(3)));
        assert_eq!(b.used(), 300);
    }

    #[test]
    fn a_record_larger_than_the_buffer_is_not_kept_and_an_empty_buffer_keeps_nothing() {
        let mut b = ChannelBuffer::new(50);
        b.insert(key(0), 100);
        assert!(!b.lookup(key(0)));
        let mut none = ChannelBuffer::new(0);
        none.insert(key(0), 1);
        assert!(!none.lookup(key(0)));
    }
}
