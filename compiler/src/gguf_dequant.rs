//! GGUF block dequantization, exactly as ggml computes it (F32, F16, BF16, Q4_0, Q4_1, Q5_0,
//! Q5_1, Q8_0, Q4_K, Q6_K), for [`crate::gguf::GgufFile::dequantize`].

use crate::ggml_type::GgmlType;
use half::{bf16, f16};

/// Dequantizes whole blocks of `dtype` from `raw` into `out` (sizes matching, checked by callers).
pub(crate) fn dequantize_into(dtype: GgmlType, raw: &[u8], out: &mut [f32]) {
    use rayon::prelude::*;
    let Some((per_block, block_bytes)) = dtype.block() else { return };
    // Blocks are independent: dequantize them in parallel, a run of blocks per task.
    const BLOCKS_PER_TASK: usize = 1024;
    out.par_chunks_mut(per_block * BLOCKS_PER_TASK).zip(raw.par_chunks(block_bytes * BLOCKS_PER_TASK)).for_each(
        |(y, x)| {
            for (y, x) in y.chunks_exact_mut(per_block).zip(x.chunks_exact(block_bytes)) {
                dequantize_block(dtype, x, y);
            }
        },
    );
}

fn f16_at(x: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([x[at], x[at + 1]]).to_f32()
}

/// One block, as ggml's `dequantize_row_*` computes it (same operations, same order, in f32).
fn dequantize_block(dtype: GgmlType, x: &[u8], y: &mut [f32]) {
    match dtype {
        GgmlType::F32 => y[0] = f32::from_le_bytes([x[0], x[1], x[2], x[3]]),
        GgmlType::F16 => y[0] = f16_at(x, 0),
        GgmlType::BF16 => y[0] = bf16::from_le_bytes([x[0], x[1]]).to_f32(),
        GgmlType::Q4_0 => {
            let d = f16_at(x, 0);
            for j in 0..16 {
                y[j] = ((x[2 + j] & 0x0f) as i32 - 8) as f32 * d;
                y[j + 16] = ((x[2 + j] >> 4) as i32 - 8) as f32 * d;
            }
        }
        GgmlType::Q4_1 => {
            let (d, m) = (f16_at(x, 0), f16_at(x, 2));
            for j in 0..16 {
                y[j] = (x[4 + j] & 0x0f) as f32 * d + m;
                y[j + 16] = (x[4 + j] >> 4) as f32 * d + m;
            }
        }
        // 5-bit: the fifth bits of the 32 weights packed in a little-endian u32 after the scale
        // (and min): bit j for element j, bit j + 16 for element j + 16.
        GgmlType::Q5_0 => {
            let d = f16_at(x, 0);
            let qh = u32::from_le_bytes([x[2], x[3], x[4], x[5]]);
            for j in 0..16 {
                let (h0, h1) = (((qh >> j) << 4) as u8 & 0x10, (qh >> (j + 12)) as u8 & 0x10);
                y[j] = (((x[6 + j] & 0x0f) | h0) as i32 - 16) as f32 * d;
                y[j + 16] = (((x[6 + j] >> 4) | h1) as i32 - 16) as f32 * d;
            }
        }
        GgmlType::Q5_1 => {
            let (d, m) = (f16_at(x, 0), f16_at(x, 2));
            let qh = u32::from_le_bytes([x[4], x[5], x[6], x[7]]);
            for j in 0..16 {
                let (h0, h1) = (((qh >> j) << 4) as u8 & 0x10, (qh >> (j + 12)) as u8 & 0x10);
                y[j] = ((x[8 + j] & 0x0f) | h0) as f32 * d + m;
                y[j + 16] = ((x[8 + j] >> 4) | h1) as f32 * d + m;
            }
        }
        GgmlType::Q8_0 => {
            let d = f16_at(x, 0);
            for j in 0..32 {
                y[j] = (x[2 + j] as i8) as f32 * d;
            }
        }
        GgmlType::Q4_K => {
            let (d, dmin) = (f16_at(x, 0), f16_at(x, 2));
            let scales = &x[4..16];
            let qs = &x[16..144];
            for (g, (q, y)) in qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
                let (sc1, m1) = scale_min_k4(2 * g, scales);
                let (sc2, m2) = scale_min_k4(2 * g + 1, scales);
                let (d1, m1) = (d * sc1 as f32, dmin * m1 as f32);
                let (d2, m2) = (d * sc2 as f32, dmin * m2 as f32);
                for l in 0..32 {
                    y[l] = d1 * (q[l] & 0x0f) as f32 - m1;
                    y[l + 32] = d2 * (q[l] >> 4) as f32 - m2;
                }
            }
        }
        GgmlType::Q6_K => {
            let (ql, qh, sc) = (&x[0..128], &x[128..192], &x[192..208]);
            let d = f16_at(x, 208);
            for n in 0..2 {
                let (ql, qh, sc, y) = (&ql[64 * n..], &qh[32 * n..], &sc[8 * n..], &mut y[128 * n..]);
                for l in 0..32 {
                    let is = l / 16;
                    let q1 = ((ql[l] & 0x0f) | ((qh[l] & 3) << 4)) as i32 - 32;
                    let q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
                    let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
                    let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
                    y[l] = d * (sc[is] as i8) as f32 * q1 as f32;
                    y[l + 32] = d * (sc[is + 2] as i8) as f32 * q2 as f32;
                    y[l + 64] = d * (sc[is + 4] as i8) as f32 * q3 as f32;
                    y[l + 96] = d * (sc[is + 6] as i8) as f32 * q4 as f32;
                }
            }
        }
        GgmlType::Other(_) => {}
    }
}

/// The 6-bit scale and min of sub-block `j` of a Q4_K block (ggml's `get_scale_min_k4`).
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}
