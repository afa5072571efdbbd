//! Fuzzes the merge of sweep shards (`lacuna merge`, `lacuna_model::sweep::merge`): the input is
//! split at its first 0xff byte into two shard files; any text gives the joined points or an error
//! naming the file and line, never a panic, and the work stays linear in the input whatever the
//! points claim (a claimed total of 2^64 - 1 once made merge allocate the list of missing points).
//!
//! Run by hand: `cd fuzz && cargo fuzz run merge corpus/merge seeds/merge` (seeds: `seeds/merge/`).
#![no_main]

use lacuna_model::sweep::merge;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0xff).unwrap_or(data.len());
    let (a, b) = (&data[..cut], data.get(cut + 1..).unwrap_or(&[]));
    let (Ok(a), Ok(b)) = (std::str::from_utf8(a), std::str::from_utf8(b)) else { return };
    if let Ok(m) = merge([("a", a), ("b", b)]) {
        assert!(m.points.keys().all(|&i| i < m.total));
        assert_eq!(m.missing(), m.total - m.points.len());
        if let Some(first) = m.first_missing() {
            assert!(!m.points.contains_key(&first));
        }
    }
});
