//! The chunk fetch and fetch buffer RTL, Verilated, against the cycle model's `ChunkFetch` and
//! `Memory` in `model::core`'s order: the same column-queue head taken, the same request (address
//! and stream) every cycle, the same buffer head offered to the decoder in the same cycle, with
//! the chunk's values and run lengths as the memory holds them. The harness plays colptr_fetch
//! (columns arriving at random), the decoder (taking a ready head at random) and higher-priority
//! memory clients; a response is presented the cycle before it completes. A quarter of the seeds
//! are gemv jobs (`dense`: no run bursts, runs read as 0).

use half::f16;
use lacuna_model::core::chunk_fetch::ChunkFetch;
use lacuna_model::core::slice::{Column, Token};
use lacuna_model::memory::{MemClient, Memory, Requester};
use lacuna_spec::job::{JobLayout, PanelLengths};
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// A random job's column stream (what colptr_fetch queues) and its memory image.
struct Columns {
    tokens: VecDeque<Token<Column>>,
    layout: JobLayout,
    image: Vec<u8>,
}

fn random_columns(rng: &mut ChaCha8Rng, arch: &Arch, dense: bool) -> Columns {
    let chunk = arch.chunk_entries() as u64;
    let panels = rng.random_range(1..4usize);
    let k_len = rng.random_range(1..=60u32);
    let density = rng.random_range(0.1..1.0);
    let mut tokens = VecDeque::new();
    let mut lengths = vec![];
    for p in 0..panels as u32 {
        // Columns from a few entries (several per chunk) to several chunks long.
        let long = rng.random_bool(0.3);
        let mut at = 0u64;
        for k in 0..k_len {
            let n = if long { rng.random_range(0..=3 * chunk) } else { rng.random_range(0..=chunk / 2) };
            if n > 0 && rng.random_bool(density) {
                let x = f16::from_bits(rng.random());
                tokens.push_back(Token::Work(Column { panel: p, k, x, start: at, end: at + n }));
            }
            at += n;
        }
        tokens.push_back(Token::EndPanel(p));
        let entries = at.div_ceil(8) * 8;
        let run_bytes = if dense { 0 } else { entries / 2 };
        lengths.push(PanelLengths { values: entries, run_bytes, colptr: k_len as u64 + 1 });
    }
    let layout = JobLayout::from_lengths(arch, 16, 16, lengths);
    let image: Vec<u8> = (0..layout.bytes + arch.memory.request_bytes as u64).map(|_| rng.random()).collect();
    Columns { tokens, layout, image }
}

/// Returns the slice-cycles compared (a head slice offered, with its data).
fn chunk_fetch_matches_the_model(preset: &str, seed: u64) -> u64 {
    let arch = Arch::preset(preset).unwrap();
    let c = arch.chunk_entries() as usize;
    let burst = arch.memory.request_bytes as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dense = seed % 4 == 3;
    let mut job = random_columns(&mut rng, &arch, dense);

    let mut rtl = Verilated::new(&format!("lacuna_chunk_fetch_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, in_marker, in_panel, in_k, in_x, in_start, in_end, in_values, in_runs) = (
        p("reset"),
        p("in_valid"),
        p("in_marker"),
        p("in_panel"),
        p("in_k"),
        p("in_x"),
        p("in_start"),
        p("in_end"),
        p("in_values"),
        p("in_runs"),
    );
    let (pop, req_ready, resp_valid, resp_runs) = (p("pop"), p("req_ready"), p("resp_valid"), p("resp_runs"));
    let (in_pop, req_valid, req_addr, req_runs, idle, empty) =
        (p("in_pop"), p("req_valid"), p("req_addr"), p("req_runs"), p("idle"), p("empty"));
    let (head_valid, head_marker, head_panel, head_k, head_x, head_first, head_lo, head_hi) = (
        p("head_valid"),
        p("head_marker"),
        p("head_panel"),
        p("head_k"),
        p("head_x"),
        p("head_first"),
        p("head_lo"),
        p("head_hi"),
    );
    let head_value: Vec<PortId> = (0..c).map(|e| p(&format!("head_value_{e}"))).collect();
    let head_run: Vec<PortId> = (0..c).map(|e| p(&format!("head_run_{e}"))).collect();
    let resp_data: Vec<PortId> = (0..burst as usize / 4).map(|w| p(&format!("resp_data_{w}"))).collect();
    let dense_port = p("dense");
    rtl.set(dense_port, dense as u64);
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);

    let mut mem = Memory::new(&arch.memory);
    let mut fetch = ChunkFetch::new(c as u32, arch.core.fetch_buffer_chunks, dense);
    let mut input: VecDeque<Token<Column>> = VecDeque::new();
    // Responses in flight: (completion cycle, address, run burst).
    let mut responses: VecDeque<(u64, u64, bool)> = VecDeque::new();
    let depth = arch.core.column_queue_depth as usize;
    let mut slices = 0;
    for t in 0..300_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        mem.tick(t);
        if input.len() < depth && rng.random_bool(0.6) {
            if let Some(tok) = job.tokens.pop_front() {
                input.push_back(tok);
            }
        }
        // The decoder takes a ready head first.
        let head = fetch.buffer.front().filter(|&&(_, ready)| ready <= t).map(|(tok, _)| tok.clone());
        let popping = head.is_some() && rng.random_bool(0.5);
        if popping {
            fetch.buffer.pop_front();
        }
        let (valid, marker, panel, k, x, start, end) = match input.front() {
            None => (0, 0, 0, 0, 0, 0, 0),
            Some(Token::EndPanel(p)) => (1, 1, *p as u64, 0, 0, 0, 0),
            Some(Token::Work(col)) => {
                (1, 0, col.panel as u64, col.k as u64, col.x.to_bits() as u64, col.start, col.end)
            }
        };
        let before = input.len();
        fetch.step(t, &mut input, &job.layout.panels, &mem);
        let took = input.len() < before;
        // Drain, act_load and colptr_fetch come first in the issue phase.
        if rng.random_bool(0.25) {
            let _ = mem.request(t, MemClient::Colptr);
        }
        let wanted = fetch.wanted();
        let accepted = fetch.issue(t, &mut mem);
        if let (true, Some((kind, addr))) = (accepted, wanted) {
            responses.push_back((mem.last_completion(), addr, kind == MemClient::Runs));
        }

        rtl.set(in_valid, valid);
        rtl.set(in_marker, marker);
        rtl.set(in_panel, panel);
        rtl.set(in_k, k);
        rtl.set(in_x, x);
        rtl.set(in_start, start);
        rtl.set(in_end, end);
        rtl.set(in_values, job.layout.panels[panel as usize].values);
        rtl.set(in_runs, job.layout.panels[panel as usize].runs);
        rtl.set(pop, popping as u64);
        rtl.set(req_ready, accepted as u64);
        let due = responses.front().is_some_and(|&(done, _, _)| done == t + 1);
        rtl.set(resp_valid, due as u64);
        if due {
            let (_, addr, runs) = responses.pop_front().unwrap();
            rtl.set(resp_runs, runs as u64);
            for (w, &port) in resp_data.iter().enumerate() {
                let a = addr as usize + 4 * w;
                rtl.set(port, u32::from_le_bytes(job.image[a..a + 4].try_into().unwrap()) as u64);
            }
        }
        rtl.cycle();

        assert_eq!(rtl.get(head_valid) == 1, head.is_some(), "{}", at("a ready head offered"));
        match &head {
            None => {}
            Some(Token::EndPanel(p)) => {
                assert_eq!(rtl.get(head_marker), 1, "{}", at("marker at the head"));
                assert_eq!(rtl.get(head_panel), *p as u64, "{}", at("marker panel"));
            }
            Some(Token::Work(s)) => {
                slices += 1;
                let col = &s.column;
                let j0 = s.chunk * c as u64;
                let got = (
                    rtl.get(head_marker),
                    rtl.get(head_panel),
                    rtl.get(head_k),
                    rtl.get(head_x),
                    rtl.get(head_first),
                    rtl.get(head_lo),
                    rtl.get(head_hi),
                );
                let want =
                    (0, col.panel as u64, col.k as u64, col.x.to_bits() as u64, s.first as u64, s.lo - j0, s.hi - j0);
                assert_eq!(got, want, "{}", at("head slice"));
                let pl = job.layout.panels[col.panel as usize];
                for e in 0..c {
                    let v = pl.values as usize + 2 * (j0 as usize + e);
                    let value = u16::from_le_bytes([job.image[v], job.image[v + 1]]) as u64;
                    assert_eq!(rtl.get(head_value[e]), value, "{}", at(&format!("value of chunk entry {e}")));
                    // A gemv job's runs read as 0 (its panels have no run array).
                    let run = match dense {
                        true => 0,
                        false => (job.image[pl.runs as usize + (j0 as usize + e) / 2] >> (4 * (e % 2))) & 15,
                    };
                    assert_eq!(rtl.get(head_run[e]), run as u64, "{}", at(&format!("run of chunk entry {e}")));
                }
            }
        }
        assert_eq!(rtl.get(in_pop) == 1, took, "{}", at("column queue head taken"));
        assert_eq!(rtl.get(req_valid) == 1, wanted.is_some(), "{}", at("burst wanted"));
        if let Some((kind, addr)) = wanted {
            let got = (rtl.get(req_addr), rtl.get(req_runs) == 1);
            assert_eq!(got, (addr, kind == MemClient::Runs), "{}", at("request"));
        }
        assert_eq!(rtl.get(idle) == 1, fetch.idle(), "{}", at("idle"));
        assert_eq!(rtl.get(empty) == 1, fetch.buffer.is_empty(), "{}", at("buffer empty after the cycle"));
        if job.tokens.is_empty() && input.is_empty() && fetch.idle() && fetch.buffer.is_empty() {
            assert!(responses.is_empty(), "{}", at("responses left over"));
            return slices;
        }
    }
    panic!("{preset} seed {seed}: the chunk fetch did not finish");
}

#[test]
fn the_tiny_chunk_fetch_cuts_fetches_and_offers_slices_as_the_model_does() {
    let compared: u64 = (0..200).map(|seed| chunk_fetch_matches_the_model("tiny", seed)).sum();
    assert!(compared > 10_000, "only {compared} slice-cycles compared");
}

#[test]
fn the_edge_chunk_fetch_cuts_fetches_and_offers_slices_as_the_model_does() {
    let compared: u64 = (0..60).map(|seed| chunk_fetch_matches_the_model("edge", seed)).sum();
    assert!(compared > 3_000, "only {compared} slice-cycles compared");
}
