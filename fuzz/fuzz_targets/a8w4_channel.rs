//! Fuzzes the A8W4 channel-record reader (`lacuna_spec::a8w4::ExpertChannel::from_bytes`): the
//! first two bytes give the hidden size (little-endian), the rest is the record. Any bytes give a
//! channel or an error; never a panic, and memory bounded by the input (the reader checks the
//! length a hidden size needs before it copies anything). An accepted record writes back to the
//! same bytes.
//!
//! Run by hand: `cd fuzz && cargo fuzz run a8w4_channel corpus/a8w4_channel seeds/a8w4_channel`.
#![no_main]

use lacuna_spec::a8w4::ExpertChannel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, record)) = data.split_first_chunk::<2>() else { return };
    let hidden = u16::from_le_bytes(*head) as usize;
    if let Ok(channel) = ExpertChannel::from_bytes(record, hidden) {
        assert_eq!(channel.to_bytes(), record, "an accepted record writes back to itself");
        assert_eq!(channel.gate.len(), hidden);
    }
});
