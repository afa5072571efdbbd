//! The column-pointer fetch RTL, Verilated, against the cycle model's `ColptrFetch` and `Memory`
//! in `model::core`'s order: the same activation-queue head taken, the same request every cycle,
//! the same column-queue head, the same malformed pointer pair flagged in the same cycle. The
//! harness plays act_scan (tokens arriving at random), chunk_fetch (popping at random) and a
//! higher-priority memory client; a response is presented the cycle before it completes. After a
//! fault the core halts the block, as the model stops stepping it.

use half::f16;
use lacuna_model::core::act_scan::ActiveColumn;
use lacuna_model::core::colptr_fetch::ColptrFetch;
use lacuna_model::core::slice::Token;
use lacuna_model::memory::{MemClient, Memory, Requester};
use lacuna_model::PanelData;
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

/// A random job's pointer arrays: per panel (entries, colptr), and where they lie in memory.
struct Pointers {
    entries: Vec<u64>,
    colptr: Vec<Vec<u32>>,
    base: Vec<u64>,
    image: Vec<u8>,
}

fn random_pointers(rng: &mut ChaCha8Rng, burst: u64, panels: usize, k_len: usize, malformed: bool) -> Pointers {
    let mut p = Pointers { entries: vec![], colptr: vec![], base: vec![], image: vec![] };
    let mut at = burst * rng.random_range(0..4u64);
    for _ in 0..panels {
        // Columns of 0..=40 entries, many empty.
        let mut colptr = vec![0u32];
        for _ in 0..k_len {
            let n = if rng.random_bool(0.3) { 0 } else { rng.random_range(0..=40) };
            colptr.push(colptr.last().unwrap() + n);
        }
        let entries = *colptr.last().unwrap() as u64;
        if malformed {
            let k = rng.random_range(0..colptr.len());
            colptr[k] = if rng.random_bool(0.5) { entries as u32 + rng.random_range(1..5) } else { 0 };
        }
        p.base.push(at);
        p.image.resize(at as usize, 0);
        p.image.extend(colptr.iter().flat_map(|v| v.to_le_bytes()));
        at = (at + 4 * colptr.len() as u64).div_ceil(burst) * burst + burst * rng.random_range(0..3u64);
        p.entries.push(entries);
        p.colptr.push(colptr);
    }
    p.image.resize(at as usize + burst as usize, 0);
    p
}

/// Returns whether the job faulted.
fn colptr_fetch_matches_the_model(preset: &str, seed: u64) -> bool {
    let arch = Arch::preset(preset).unwrap();
    let burst = arch.memory.request_bytes as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let panels = rng.random_range(1..4usize);
    let k_len = rng.random_range(1..=120usize);
    let malformed = rng.random_bool(0.3);
    let ptr = random_pointers(&mut rng, burst, panels, k_len, malformed);
    let values: Vec<Vec<f16>> = ptr.entries.iter().map(|&e| vec![f16::ONE; e as usize]).collect();
    let runs: Vec<Vec<u8>> = ptr.entries.iter().map(|&e| vec![0; e.div_ceil(2) as usize]).collect();
    let data: Vec<PanelData> = (0..panels)
        .map(|p| PanelData { rows: 64, values: &values[p], runs: &runs[p], colptr: &ptr.colptr[p] })
        .collect();
    // act_scan's output: per panel, active columns in order, then the marker.
    let density = rng.random_range(0.05..1.0);
    let mut tokens: VecDeque<Token<ActiveColumn>> = VecDeque::new();
    for p in 0..panels as u32 {
        for k in 0..k_len as u32 {
            if rng.random_bool(density) {
                tokens.push_back(Token::Work(ActiveColumn { panel: p, k, x: f16::from_bits(rng.random()) }));
            }
        }
        tokens.push_back(Token::EndPanel(p));
    }

    let mut rtl = Verilated::new(&format!("lacuna_colptr_fetch_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, in_marker, in_panel, in_k, in_x, in_colptr, in_entries) = (
        p("reset"),
        p("in_valid"),
        p("in_marker"),
        p("in_panel"),
        p("in_k"),
        p("in_x"),
        p("in_colptr"),
        p("in_entries"),
    );
    let (out_pop, halt, req_ready, resp_valid, in_pop, req_valid, req_addr) =
        (p("out_pop"), p("halt"), p("req_ready"), p("resp_valid"), p("in_pop"), p("req_valid"), p("req_addr"));
    let (error, error_start, error_end, idle, empty) =
        (p("error"), p("error_start"), p("error_end"), p("idle"), p("empty"));
    let (error_panel, error_k) = (p("error_panel"), p("error_k"));
    let (head_valid, head_marker, head_panel, head_k, head_x, head_start, head_end) =
        (p("head_valid"), p("head_marker"), p("head_panel"), p("head_k"), p("head_x"), p("head_start"), p("head_end"));
    let resp_data: Vec<PortId> = (0..burst as usize / 4).map(|w| p(&format!("resp_data_{w}"))).collect();
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);

    let mut mem = Memory::new(&arch.memory);
    let mut fetch = ColptrFetch::new(arch.core.column_queue_depth, lacuna_spec::job::JobKind::Spmspv);
    let mut input: VecDeque<Token<ActiveColumn>> = VecDeque::new();
    let mut responses: VecDeque<(u64, u64)> = VecDeque::new();
    let mut faulted = false;
    for t in 0..200_000u64 {
        let at = |what: &str| format!("{preset} seed {seed} cycle {t}: {what}");
        mem.tick(t);
        // act_scan's queue fills at random, up to 3 ahead.
        if input.len() < 3 && rng.random_bool(0.5) {
            if let Some(tok) = tokens.pop_front() {
                input.push_back(tok);
            }
        }
        let head = fetch.queue.front().cloned();
        let popping = !faulted && rng.random_bool(0.5);
        if popping {
            fetch.queue.pop_front();
        }
        // What the RTL sees of the activation queue this cycle.
        let (valid, marker, panel, k, x) = match input.front() {
            None => (0, 0, 0, 0, 0),
            Some(Token::EndPanel(p)) => (1, 1, *p as u64, 0, 0),
            Some(Token::Work(c)) => (1, 0, c.panel as u64, c.k as u64, c.x.to_bits() as u64),
        };
        let before = input.len();
        let mut bad = None;
        if !faulted {
            bad = fetch.step(t, &mut input, &data, |p| ptr.base[p as usize], &mem).1;
        }
        let popped = input.len() < before;
        if rng.random_bool(0.2) {
            let _ = mem.request(t, MemClient::Outputs);
        }
        let halted = faulted || bad.is_some();
        let wanted = if halted { None } else { fetch.wanted() };
        let accepted = !halted && fetch.issue(t, &mut mem);
        if accepted {
            responses.push_back((mem.last_completion(), wanted.unwrap().1));
        }

        rtl.set(in_valid, valid);
        rtl.set(in_marker, marker);
        rtl.set(in_panel, panel);
        rtl.set(in_k, k);
        rtl.set(in_x, x);
        rtl.set(in_colptr, ptr.base[panel as usize]);
        rtl.set(in_entries, ptr.entries[panel as usize]);
        rtl.set(out_pop, popping as u64);
        rtl.set(halt, faulted as u64);
        rtl.set(req_ready, accepted as u64);
        let due = responses.front().is_some_and(|&(done, _)| done == t + 1);
        rtl.set(resp_valid, due as u64);
        if due {
            let (_, addr) = responses.pop_front().unwrap();
            for (w, &port) in resp_data.iter().enumerate() {
                let a = addr as usize + 4 * w;
                rtl.set(port, u32::from_le_bytes(ptr.image[a..a + 4].try_into().unwrap()) as u64);
            }
        }
        rtl.cycle();
        match head {
            None => assert_eq!(rtl.get(head_valid), 0, "{}", at("column queue empty")),
            Some(Token::EndPanel(p)) => {
                assert_eq!((rtl.get(head_valid), rtl.get(head_marker)), (1, 1), "{}", at("marker at the head"));
                assert_eq!(rtl.get(head_panel), p as u64, "{}", at("marker panel"));
            }
            Some(Token::Work(c)) => {
                assert_eq!((rtl.get(head_valid), rtl.get(head_marker)), (1, 0), "{}", at("column at the head"));
                let got =
                    (rtl.get(head_panel), rtl.get(head_k), rtl.get(head_x), rtl.get(head_start), rtl.get(head_end));
                let want = (c.panel as u64, c.k as u64, c.x.to_bits() as u64, c.start, c.end);
                assert_eq!(got, want, "{}", at("head column"));
            }
        }
        assert_eq!(rtl.get(in_pop) == 1, popped, "{}", at("activation queue head taken"));
        assert_eq!(rtl.get(req_valid) == 1, wanted.is_some(), "{}", at("pointer burst wanted"));
        if let Some((_, addr)) = wanted {
            assert_eq!(rtl.get(req_addr), addr, "{}", at("request address"));
        }
        assert_eq!(rtl.get(error) == 1, bad.is_some(), "{}", at("malformed pointers flagged"));
        if let Some(b) = bad {
            assert_eq!((rtl.get(error_start), rtl.get(error_end)), (b.start, b.end), "{}", at("malformed pair"));
            let got = (rtl.get(error_panel), rtl.get(error_k));
            assert_eq!(got, (b.panel as u64, b.k as u64), "{}", at("malformed column"));
            faulted = true;
        }
        if !faulted {
            assert_eq!(rtl.get(idle) == 1, fetch.idle(), "{}", at("idle"));
            assert_eq!(rtl.get(empty) == 1, fetch.queue.is_empty(), "{}", at("column queue empty after the cycle"));
        }
        let finished = if faulted {
            responses.is_empty()
        } else {
            tokens.is_empty() && input.is_empty() && fetch.idle() && fetch.queue.is_empty()
        };
        if finished {
            assert!(malformed || !faulted, "{}", at("a well-formed job faulted"));
            return faulted;
        }
    }
    panic!("{preset} seed {seed}: the column-pointer fetch did not finish");
}

#[test]
fn the_tiny_column_pointer_fetch_takes_checks_and_queues_as_the_model_does() {
    let faulted = (0..200).filter(|&seed| colptr_fetch_matches_the_model("tiny", seed)).count();
    // About 30 % of the jobs are malformed; most of them reach the bad pointer.
    assert!(faulted >= 20, "only {faulted} of 200 jobs faulted");
}

#[test]
fn the_edge_column_pointer_fetch_takes_checks_and_queues_as_the_model_does() {
    let faulted = (0..100).filter(|&seed| colptr_fetch_matches_the_model("edge", seed)).count();
    assert!(faulted >= 10, "only {faulted} of 100 jobs faulted");
}
