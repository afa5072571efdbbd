//! The decode path (three-stage RLC decoder + multiplier) RTL, Verilated, against the cycle
//! model's `RlcDecoder` and `multiply`, driven as `model::core` drives them: the same cycle for
//! every slice taken from the fetch buffer and every token handed to route, the same rows and
//! bit-identical products, and the same cycle and row for a run that overruns its panel.

use half::f16;
use lacuna_model::core::multiplier::multiply;
use lacuna_model::core::rlc_decoder::RlcDecoder;
use lacuna_model::core::slice::{Column, Products, Slice, Token};
use lacuna_model::PanelData;
use lacuna_spec::Arch;
use lacuna_testbench::model::{PortId, Verilated};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One panel's raw arrays (runs unpacked, one nibble per entry) and its columns' entry ranges.
struct RawPanel {
    rows: u32,
    values: Vec<f16>,
    runs: Vec<u8>,
    packed: Vec<u8>,
    columns: Vec<(u64, u64)>,
}

fn random_panel(rng: &mut ChaCha8Rng, arch: &Arch, malformed: bool) -> RawPanel {
    let c = arch.chunk_entries() as usize;
    // A malformed stream gets a short panel, so that its long runs do leave it.
    let rows = rng.random_range(1..=if malformed { arch.tile_rows().min(48) } else { arch.tile_rows() });
    let (mut values, mut runs, mut columns) = (Vec::new(), Vec::new(), Vec::new());
    for col in 0..rng.random_range(1..6) {
        let start = values.len() as u64;
        let len = rng.random_range(0..=(rows as usize / 2).min(3 * c));
        let mut row = -1i64;
        for _ in 0..len {
            let mut run = rng.random_range(0..=1u8);
            if malformed && col == 2 && rng.random_bool(0.3) {
                run = 15;
            }
            if !malformed && row + run as i64 + 1 >= rows as i64 {
                break;
            }
            row += run as i64 + 1;
            runs.push(run);
            let v = if rng.random_bool(0.1) {
                f16::ZERO
            } else {
                f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000))
            };
            values.push(v);
        }
        columns.push((start, values.len() as u64));
    }
    while values.len() % c != 0 || values.is_empty() {
        values.push(f16::ZERO);
        runs.push(0);
    }
    let packed = runs.chunks(2).map(|p| p[0] | p.get(1).copied().unwrap_or(0) << 4).collect();
    RawPanel { rows, values, runs, packed, columns }
}

/// The fetch buffer's contents: slices cut as chunk_fetch cuts them, then a marker per panel.
fn slices(panels: &[RawPanel], rng: &mut ChaCha8Rng, c: u64) -> Vec<Token<Slice>> {
    let mut out = Vec::new();
    for (p, panel) in panels.iter().enumerate() {
        for (k, &(start, end)) in panel.columns.iter().enumerate() {
            if end == start {
                continue;
            }
            let x = f16::from_bits(rng.random_range(0..0x7c00u16) | (rng.random::<u16>() & 0x8000));
            let column = Column { panel: p as u32, k: k as u32, x, start, end };
            let mut j = start / c;
            while j * c < end {
                let (lo, hi) = (start.max(j * c), end.min((j + 1) * c));
                out.push(Token::Work(Slice { column, chunk: j, lo, hi, first: lo == start }));
                j += 1;
            }
        }
        out.push(Token::EndPanel(p as u32));
    }
    out
}

/// Runs one random job; returns whether it ended in an overrun.
fn decode_path_matches_the_model(preset: &str, seed: u64) -> bool {
    let arch = Arch::preset(preset).unwrap();
    let c = arch.chunk_entries() as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let malformed = rng.random_bool(0.3);
    let raw: Vec<RawPanel> = (0..rng.random_range(1..4)).map(|_| random_panel(&mut rng, &arch, malformed)).collect();
    let panels: Vec<PanelData> =
        raw.iter().map(|r| PanelData { rows: r.rows, values: &r.values, runs: &r.packed, colptr: &[] }).collect();
    let mut queue: std::collections::VecDeque<Token<Slice>> = slices(&raw, &mut rng, c as u64).into();

    let mut rtl = Verilated::new(&format!("lacuna_decode_path_{preset}")).unwrap();
    let p = |n: &str| rtl.port(n).unwrap();
    let (reset, in_valid, in_marker, in_panel, in_first) =
        (p("reset"), p("in_valid"), p("in_marker"), p("in_panel"), p("in_first"));
    let (in_lo, in_hi, in_x, in_rows, out_ready) = (p("in_lo"), p("in_hi"), p("in_x"), p("in_rows"), p("out_ready"));
    let (in_ready, overrun, overrun_row, out_valid) = (p("in_ready"), p("overrun"), p("overrun_row"), p("out_valid"));
    let (in_k, overrun_panel, overrun_k) = (p("in_k"), p("overrun_panel"), p("overrun_k"));
    let (out_marker, out_panel, invalid) = (p("out_marker"), p("out_panel"), p("invalid"));
    let in_value: Vec<PortId> = (0..c).map(|e| p(&format!("in_value_{e}"))).collect();
    let in_run: Vec<PortId> = (0..c).map(|e| p(&format!("in_run_{e}"))).collect();
    let out_entry_valid: Vec<PortId> = (0..c).map(|e| p(&format!("out_entry_valid_{e}"))).collect();
    let out_row: Vec<PortId> = (0..c).map(|e| p(&format!("out_row_{e}"))).collect();
    let out_product: Vec<PortId> = (0..c).map(|e| p(&format!("out_product_{e}"))).collect();
    rtl.set(reset, 1);
    rtl.cycle();
    rtl.set(reset, 0);

    let mut dec = RlcDecoder::new(false);
    let mut mul: Option<Token<Products>> = None;
    let (mut delivered, mut t) = (0usize, 0u64);
    let total = queue.len();
    loop {
        let now = t;
        let at = |what: &str| format!("{preset} seed {seed} cycle {now}: {what}");
        // The model, in model::core's order (the harness is route: it takes when it wants to).
        let route_takes = rng.random_bool(0.7);
        let handed = if route_takes { mul.take() } else { None };
        if mul.is_none() {
            if let Some(tok) = dec.stages[2].take() {
                mul = Some(multiply(tok));
            }
        }
        let (_, over) = dec.advance();
        let accepted = dec.stages[0].is_none() && over.is_none() && !queue.is_empty();
        if accepted {
            dec.accept(queue.front().cloned().unwrap(), &panels);
        }

        // The RTL: the fetch buffer's head, route's readiness.
        rtl.set(out_ready, route_takes as u64);
        rtl.set(in_valid, !queue.is_empty() as u64);
        if let Some(head) = queue.front() {
            match head {
                Token::EndPanel(p) => {
                    rtl.set(in_marker, 1);
                    rtl.set(in_panel, *p as u64);
                }
                Token::Work(s) => {
                    let base = (s.chunk * c as u64) as usize;
                    let r = &raw[s.column.panel as usize];
                    rtl.set(in_marker, 0);
                    rtl.set(in_panel, s.column.panel as u64);
                    rtl.set(in_k, s.column.k as u64);
                    rtl.set(in_first, s.first as u64);
                    rtl.set(in_lo, s.lo - base as u64);
                    rtl.set(in_hi, s.hi - base as u64);
                    rtl.set(in_x, s.column.x.to_bits() as u64);
                    rtl.set(in_rows, r.rows as u64);
                    for e in 0..c {
                        rtl.set(in_value[e], r.values[base + e].to_bits() as u64);
                        rtl.set(in_run[e], r.runs[base + e] as u64);
                    }
                }
            }
        }
        rtl.cycle();
        assert_eq!(
            rtl.get(in_ready) == 1 && !queue.is_empty(),
            accepted,
            "{}",
            at("slice taken from the fetch buffer")
        );
        assert_eq!(rtl.get(overrun) == 1, over.is_some(), "{}", at("overrun"));
        assert_eq!(rtl.get(invalid), 0, "{}", at("invalid"));
        let rtl_hands = rtl.get(out_valid) == 1 && route_takes;
        assert_eq!(rtl_hands, handed.is_some(), "{}", at("token handed to route"));
        if let Some(tok) = handed {
            match tok {
                Token::EndPanel(p) => {
                    assert_eq!(rtl.get(out_marker), 1, "{}", at("marker"));
                    assert_eq!(rtl.get(out_panel), p as u64, "{}", at("marker panel"));
                }
                Token::Work(products) => {
                    assert_eq!(rtl.get(out_marker), 0, "{}", at("slice"));
                    let got: Vec<(u32, u32)> = (0..c)
                        .filter(|&e| rtl.get(out_entry_valid[e]) == 1)
                        .map(|e| (rtl.get(out_row[e]) as u32, rtl.get(out_product[e]) as u32))
                        .collect();
                    let want: Vec<(u32, u32)> = products.entries.iter().map(|&(r, p)| (r, p.to_bits())).collect();
                    assert_eq!(got, want, "{}", at("rows and products"));
                }
            }
            delivered += 1;
        }
        if let Some((s, row)) = over {
            assert_eq!(rtl.get(overrun_row), row, "{}", at("overrun row"));
            let got = (rtl.get(overrun_panel), rtl.get(overrun_k));
            assert_eq!(got, (s.column.panel as u64, s.column.k as u64), "{}", at("overrun slice"));
            assert!(malformed, "{}", at("a well-formed stream overran"));
            return true; // the core stops here (a fault)
        }
        if accepted {
            queue.pop_front();
        }
        if delivered == total {
            return false;
        }
        t += 1;
        assert!(t < 100_000, "{}", at("no progress"));
    }
}

#[test]
fn the_tiny_decode_path_decodes_and_multiplies_as_the_model_does() {
    let overruns = (0..300).filter(|&seed| decode_path_matches_the_model("tiny", seed)).count();
    assert!((20..280).contains(&overruns), "{overruns} of 300 jobs overran");
}

#[test]
fn the_edge_decode_path_decodes_and_multiplies_as_the_model_does() {
    let overruns = (0..100).filter(|&seed| decode_path_matches_the_model("edge", seed)).count();
    assert!((5..95).contains(&overruns), "{overruns} of 100 jobs overran");
}
