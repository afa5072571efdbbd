//! Every counter, the fault and the output bits of 1,200 small seeded jobs (many malformed), on
//! three arches, pinned by a digest per job in `tests/golden/counters.txt`. A change to the model
//! that moves any cycle or counter fails here with the first job that moved; if the change is
//! meant (and the RTL follows it), refresh the file with `LACUNA_BLESS=1 cargo test -p
//! lacuna-model --test golden_counters`, never by hand.

use half::f16;
use lacuna_model::{simulate_with, Job, PanelData};
use lacuna_spec::{ActivationFilter, Arch};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/counters.txt");
const JOBS: usize = 1200;

/// `tiny`; `tiny` with two write ports and two-entry FIFOs; a single lane.
fn arches() -> Vec<Arch> {
    let mut a = Arch::preset("tiny").unwrap();
    let mut out = vec![a.clone()];
    a.name = "tiny-p2-q2".into();
    a.core.acc_write_ports = 2;
    a.core.lane_queue_depth = 2;
    out.push(a.clone());
    a.name = "tiny-one-lane".into();
    a.core.lanes = 1;
    a.core.acc_write_ports = 1;
    a.core.entries_per_lane = 8;
    a.core.acc_regs_per_lane = 32;
    out.push(a);
    for a in &out {
        a.validate().unwrap();
    }
    out
}

/// The outcome of job `i` as one line: its digest, then the counters for a reader.
fn outcome(i: usize, arch: &Arch) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
    let rows = rng.random_range(1..=arch.tile_rows());
    let n = rng.random_range(0..48usize);
    let values: Vec<f16> = (0..n).map(|_| f16::from_f32(rng.random_range(-4i32..=4) as f32 * 0.5)).collect();
    // Mostly short runs (a valid-looking stream), sometimes any byte (runs past the column).
    let runs: Vec<u8> = (0..n.div_ceil(2))
        .map(|_| if rng.random_ratio(1, 5) { rng.random() } else { rng.random_range(0..0x33) })
        .collect();
    let k = rng.random_range(1..=8usize);
    let mut colptr = vec![0u32];
    for _ in 0..k {
        let last = *colptr.last().unwrap();
        // Mostly increasing pointers within the arrays, sometimes anything (a bad pointer).
        let next = if rng.random_ratio(1, 12) {
            rng.random_range(0..64)
        } else {
            (last + rng.random_range(0..9)).min(n as u32)
        };
        colptr.push(next);
    }
    let x: Vec<f16> = (0..k).map(|_| f16::from_f32(rng.random_range(-2i32..=2) as f32)).collect();
    let job = Job {
        kind: lacuna_spec::job::JobKind::Spmspv,
        rows,
        panel_rows: rows,
        panels: vec![PanelData { rows, values: &values, runs: &runs, colptr: &colptr }],
        x: &x,
        filter: ActivationFilter::NONZERO,
    };
    // Bulk skipping changes nothing (the RTL co-simulation found a fault case where it did).
    if let (Ok(fast), Ok(slow)) = (simulate_with(arch, &job, true), simulate_with(arch, &job, false)) {
        assert_eq!(fast.counters, slow.counters, "job {i}: bulk skipping changed the counters");
    }
    let text = match simulate_with(arch, &job, true) {
        Ok(r) => {
            let bits: Vec<u32> = r.y.iter().map(|v| v.to_bits()).collect();
            // The expert unit's byte counters (added after the file was written) are zero for a
            // core job and are left out of the text, so the file did not have to move.
            assert_eq!((r.counters.bytes.expert_channels, r.counters.bytes.expert_stats), (0, 0));
            let text = format!("{:?} {:?} {:?}", r.counters, r.fault, bits);
            text.replace(", expert_channels: 0, expert_stats: 0", "")
        }
        Err(e) => format!("error: {e}"),
    };
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{i} {} {hex} {text}", arch.name)
}

#[test]
fn the_counters_of_twelve_hundred_seeded_jobs_match_the_golden_file() {
    let arches = arches();
    let lines: Vec<String> = (0..JOBS).map(|i| outcome(i, &arches[i % arches.len()])).collect();
    // The file keeps the digest only (the full text would be megabytes).
    let digests: Vec<String> = lines.iter().map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" ")).collect();
    if std::env::var("LACUNA_BLESS").as_deref() == Ok("1") {
        std::fs::write(GOLDEN, digests.join("\n") + "\n").unwrap();
        return;
    }
    let golden = std::fs::read_to_string(GOLDEN).expect("tests/golden/counters.txt (LACUNA_BLESS=1 writes it)");
    let golden: Vec<&str> = golden.lines().collect();
    assert_eq!(golden.len(), JOBS, "the golden file has {} jobs, the test {JOBS}", golden.len());
    for (i, (got, want)) in digests.iter().zip(&golden).enumerate() {
        assert_eq!(got, want, "job {i} moved; it now gives: {}", lines[i]);
    }
}
