//! The kernels' indexing, checked without a GPU: a step-by-step Rust mirror of `kernels.cu`'s
//! `decode_column` (32 lanes, one 8-entry word a lane, the warp's prefix sum, the carry between
//! warp steps; the kernel only issues the loads of several steps early) over the flat layout of
//! `layout.rs`, in the golden kernel's order, must give the bits
//! of `lacuna_golden::column_order`. A wrong word base, mask or carry in the layout or in the
//! decoding shows here, before any GPU runs it.

use half::f16;
use lacuna_gpu::layout::{activation_key, FlatMatrix};
use lacuna_spec::{ActivationFilter, Activations, DenseMatrix, RlcMatrix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `decode_column` for one warp, lanes in a loop; `add(row, product)`.
fn decode_column(vals: &[u16], runs: &[u8], s: u32, e: u32, rows: u32, xf: f32, mut add: impl FnMut(u32, f32)) {
    let word = |w: u64| -> ([u16; 8], u32) {
        let b = (w * 8) as usize;
        let mut v = [0u16; 8];
        v.copy_from_slice(&vals[b..b + 8]);
        let r = u32::from_le_bytes(runs[b / 2..b / 2 + 4].try_into().unwrap());
        (v, r)
    };
    let mut carry: i32 = -1;
    let mut w0 = (s >> 3) as u64;
    while w0 * 8 < e as u64 {
        let mut totals = [0i32; 32];
        let mut pres = [[0i32; 8]; 32];
        let mut loaded = [([0u16; 8], 0u32); 32];
        for lane in 0..32u64 {
            let w = w0 + lane;
            if w * 8 < e as u64 {
                loaded[lane as usize] = word(w);
            }
            let r = loaded[lane as usize].1;
            let mut total = 0;
            for j in 0..8u64 {
                let idx = w * 8 + j;
                let valid = idx >= s as u64 && idx < e as u64;
                total += if valid { ((r >> (4 * j)) & 15) as i32 + 1 } else { 0 };
                pres[lane as usize][j as usize] = total;
            }
            totals[lane as usize] = total;
        }
        let mut incl = totals;
        for lane in 1..32 {
            incl[lane] += incl[lane - 1];
        }
        for lane in 0..32u64 {
            let w = w0 + lane;
            let base = carry + incl[lane as usize] - totals[lane as usize];
            for j in 0..8u64 {
                let idx = w * 8 + j;
                let vb = loaded[lane as usize].0[j as usize];
                if idx >= s as u64 && idx < e as u64 && vb & 0x7fff != 0 {
                    let row = base + pres[lane as usize][j as usize];
                    if (row as u32) < rows {
                        add(row as u32, f16::from_bits(vb).to_f32() * xf);
                    }
                }
            }
        }
        carry += incl[31];
        w0 += 32;
    }
}

/// `lacuna_spmspv_golden`: each panel's warp, columns in increasing k.
fn golden_kernel(f: &FlatMatrix, x: &[f16], key: u32) -> Vec<f32> {
    let mut y = vec![0.0f32; f.rows as usize];
    let cols = f.cols as usize;
    for (p, pd) in f.panels.iter().enumerate() {
        let base = pd.entry_base as usize;
        let vals = &f.values[base..];
        let runs = &f.runs[base / 2..];
        let cp = &f.colptr[p * (cols + 1)..(p + 1) * (cols + 1)];
        for k in 0..cols {
            let xb = x[k].to_bits() as u32;
            let mag = xb & 0x7fff;
            if mag == 0 || mag < key {
                continue;
            }
            let xf = x[k].to_f32();
            decode_column(vals, runs, cp[k], cp[k + 1], pd.rows, xf, |row, prod| {
                let r = pd.row_start as usize + row as usize;
                y[r] += prod;
            });
        }
    }
    y
}

fn random_case(seed: u64) -> (RlcMatrix, Vec<f16>, ActivationFilter) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let rows = rng.random_range(1..3000usize);
    let cols = rng.random_range(1..80usize);
    let density = [0.02, 0.3, 0.7, 1.0][rng.random_range(0..4)];
    let mut d = DenseMatrix::zeros(rows, cols);
    for r in 0..rows {
        for k in 0..cols {
            if rng.random_bool(density) {
                // Real-valued FP16, so that the order of additions shows in the bits.
                d.set(r, k, f16::from_f32(rng.random_range(-2.0f32..2.0)));
            }
        }
    }
    let panel_rows = [16u32, 100, 1024, 4096][rng.random_range(0..4)];
    let m = RlcMatrix::encode(&d, Some(panel_rows)).unwrap();
    let x: Vec<f16> = (0..cols)
        .map(|_| if rng.random_bool(0.3) { f16::ZERO } else { f16::from_f32(rng.random_range(-3.0f32..3.0)) })
        .collect();
    let filter = ActivationFilter { threshold: f16::from_f32([0.0, 0.5, 1.5][rng.random_range(0..3)]) };
    (m, x, filter)
}

#[test]
fn the_golden_kernels_decoding_over_the_flat_layout_gives_the_golden_bits() {
    for seed in 0..60 {
        let (m, x, filter) = random_case(seed);
        let golden = lacuna_golden::column_order(&m, &Activations::new(x.clone()).unwrap(), filter).unwrap();
        let emulated = golden_kernel(&FlatMatrix::new(&m), &x, activation_key(filter));
        let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&emulated), bits(&golden), "seed {seed}: {}x{}, panels of {}", m.rows(), m.cols(), m.panel_rows());
    }
}

#[test]
fn long_columns_cross_several_warp_steps_and_words_shared_by_two_columns() {
    // A dense 3000-row column is 3000 entries (375 words, 12 warp steps); its neighbours start
    // and end inside words it shares with them.
    let mut d = DenseMatrix::zeros(3000, 3);
    for r in 0..3000 {
        d.set(r, 1, f16::from_f32(1.0 + (r % 7) as f32 * 0.125));
        if r % 3 == 0 && r < 2990 {
            d.set(r, 0, f16::from_f32(0.5));
            d.set(r, 2, f16::from_f32(-0.25));
        }
    }
    let m = RlcMatrix::encode(&d, Some(4096)).unwrap();
    assert!(m.panels()[0].colptr()[1] % 8 != 0, "column 1 should start inside a word");
    let x = vec![f16::from_f32(1.5), f16::from_f32(0.75), f16::from_f32(-2.0)];
    let golden = lacuna_golden::column_order(&m, &Activations::new(x.clone()).unwrap(), ActivationFilter::NONZERO).unwrap();
    let emulated = golden_kernel(&FlatMatrix::new(&m), &x, 0);
    assert_eq!(emulated, golden);
}
