//! The kernels' indexing, checked without a GPU: a Rust mirror of `kernels.cu`'s
//! `decode_column`, with the kernel's own 32-bit arithmetic (32 lanes, one 8-entry word a lane,
//! the keep bits [lo, hi) of a word, `word_runs`' bytewise prefix sums, the warp's prefix sum, the
//! carry between warp steps, the one bounds check a word, padding entries added like any other),
//! over the flat layout of `layout.rs`, in the golden kernel's order, must give the bits of
//! `lacuna_golden::column_order`. Only the grouping of LOOKAHEAD steps (which changes when loads
//! are issued, not what is computed) is left out. A wrong word base, mask, prefix or carry shows
//! here, before any GPU runs it.

use half::f16;
use lacuna_gpu::layout::{activation_key, FlatMatrix};
use lacuna_spec::{ActivationFilter, Activations, DenseMatrix, RlcMatrix};

mod common;

/// `word_runs`: byte b of `even` = the runs of the word's entries 0..=2b in [lo, hi) summed, of
/// `odd` = entries 0..=2b+1.
fn word_runs(r: u32, lo: u32, hi: u32) -> (u32, u32) {
    let from = if lo >= 8 { 0 } else { u32::MAX << (4 * lo) };
    let below = if hi >= 8 { u32::MAX } else { !(u32::MAX << (4 * hi)) };
    let m = r & from & below;
    let pe = (m & 0x0f0f_0f0f).wrapping_mul(0x0101_0101);
    let po = ((m >> 4) & 0x0f0f_0f0f).wrapping_mul(0x0101_0101);
    (pe.wrapping_add(po << 8), pe.wrapping_add(po))
}

/// `decode_column` for one warp, lanes in a loop: `acc[row] = fma(w, xf, acc[row])`.
fn decode_column(vals: &[u16], runs: &[u8], s: u32, e: u32, rows: u32, xf: f32, acc: &mut [f32]) {
    let wend = (e + 7) >> 3;
    let mut carry: i32 = -1;
    let mut w0 = s >> 3;
    while w0 < wend {
        let (mut incl, mut steps) = ([0i32; 32], [0i32; 32]);
        let mut lanes = [([0u16; 8], 0u32, 0u32, 0u32, (0u32, 0u32)); 32];
        for lane in 0..32u32 {
            let w = w0 + lane;
            let (mut v, mut r) = ([0u16; 8], 0u32);
            if w < wend {
                let b = w as usize * 8;
                v.copy_from_slice(&vals[b..b + 8]);
                r = u32::from_le_bytes(runs[b / 2..b / 2 + 4].try_into().unwrap());
            }
            let first = w.wrapping_mul(8);
            let lo = if s > first { (s - first).min(8) } else { 0 };
            let hi = if e > first { (e - first).min(8) } else { 0 };
            let wr = word_runs(r, lo, hi);
            steps[lane as usize] = (wr.1 >> 24) as i32 + hi.saturating_sub(lo) as i32;
            lanes[lane as usize] = (v, r, lo, hi, wr);
        }
        let mut sum = 0;
        for lane in 0..32 {
            sum += steps[lane];
            incl[lane] = sum;
        }
        for lane in 0..32 {
            let (v, _, lo, hi, (even, odd)) = lanes[lane];
            let excl = carry + incl[lane] - steps[lane];
            let last = excl + (odd >> 24) as i32 + hi.saturating_sub(lo) as i32;
            let keep = if last < rows as i32 { (0xffu32 << lo) & !(0xffu32 << hi) } else { 0 };
            let row0 = excl + 1 - lo as i32;
            for j in 0..8u32 {
                let pre = ((if j & 1 == 1 { odd } else { even }) >> (8 * (j >> 1))) & 0xff;
                let row = row0 + j as i32 + pre as i32;
                if keep & (1 << j) != 0 {
                    let w = f16::from_bits(v[j as usize]).to_f32();
                    acc[row as usize] = w.mul_add(xf, acc[row as usize]);
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
            let acc = &mut y[pd.row_start as usize..(pd.row_start + pd.rows) as usize];
            decode_column(vals, runs, cp[k], cp[k + 1], pd.rows, xf, acc);
        }
    }
    y
}

#[test]
fn the_golden_kernels_decoding_over_the_flat_layout_gives_the_golden_bits() {
    for seed in 0..60 {
        let (_, m, x, filter) = common::random_case(seed, 3000, 80);
        let golden = lacuna_golden::column_order(&m, &Activations::new(x.clone()).unwrap(), filter).unwrap();
        let emulated = golden_kernel(&FlatMatrix::new(&m), &x, activation_key(filter));
        let bits = |y: &[f32]| y.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&emulated),
            bits(&golden),
            "seed {seed}: {}x{}, panels of {}",
            m.rows(),
            m.cols(),
            m.panel_rows()
        );
    }
}

#[test]
fn word_runs_gives_the_prefix_sums_of_the_kept_runs_for_every_range_of_a_word() {
    let mut r: u32 = 0x9e37_79b9;
    for _ in 0..2000 {
        r = r.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        for lo in 0..=8 {
            for hi in 0..=8 {
                let (even, odd) = word_runs(r, lo, hi);
                let mut sum = 0;
                for j in 0..8 {
                    if (lo..hi).contains(&j) {
                        sum += (r >> (4 * j)) & 15;
                    }
                    let byte = ((if j & 1 == 1 { odd } else { even }) >> (8 * (j >> 1))) & 0xff;
                    assert_eq!(byte, sum, "runs {r:#010x}, entries [{lo}, {hi}), entry {j}");
                }
            }
        }
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
    let golden =
        lacuna_golden::column_order(&m, &Activations::new(x.clone()).unwrap(), ActivationFilter::NONZERO).unwrap();
    let emulated = golden_kernel(&FlatMatrix::new(&m), &x, 0);
    assert_eq!(emulated, golden);
}
