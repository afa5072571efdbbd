//! `a8w4`: the expert unit's numeric format and rules, bit for bit (EdgeXpert computes at A8W4).
//!
//! **Weights (W4).** A vector of `n` weights is quantized in groups of [`GROUP`] consecutive
//! values, each group with one FP16 scale `s = fp16(max|w| / 7)` and values
//! `q = clamp(round_half_even(w / s), -8, 7)` (signed INT4, two's complement); a group whose
//! scale is zero (or flushes to zero in FP16) stores zeros. Packed two values a byte, value `2i`
//! in the low nibble, `2i + 1` in the high one (a trailing high nibble is 0), then the scales, FP16
//! little-endian: [`vector_bytes`] bytes. An expert's channel `j` is its gate row, up row and down
//! column (each `hidden` long), stored in that order, contiguous: [`channel_bytes`]. Storing an
//! expert channel-major makes any subset of its channels a set of whole records, which is what
//! depth-aware coalescing loads.
//!
//! **Activations (A8).** A token's input `x` is quantized per token: `amax = max|x|`,
//! `q = clamp(round_half_even(x * (127 / amax)), -127, 127)` with scale `amax / 127` (all f32
//! operations; an `amax` below [`ACT_FLUSH`] gives zeros and scale 0, so `127 / amax` is finite).
//!
//! **The expert's computation** (the golden in `lacuna_golden::expert` composes these rules in
//! this order; the expert unit's model computes the same):
//! 1. gate and up: per group an exact INT32 sum of INT8 x INT4 products ([`group_dot`]), then in
//!    group order `acc += f32(sum) * f32(scale)` (f32, rounded each step), then `acc * s_x`;
//! 2. `h = silu(gate) * up`, with the hardware's [`silu`] (a 256-segment piecewise-linear
//!    sigmoid, within [`SILU_MAX_ERROR`] x |x| of the exact one);
//! 3. down: the token's gate weight folded in and rounded to FP16 once per channel,
//!    `a = fp16(w * h)` (saturating at +-65504), and for each output row `r`, channel by channel
//!    in load order, `y[r] += (f32(a) * f32(scale of r's group)) * f32(q[r])`. The down
//!    projection is FP16 x INT4 with FP32 accumulation, not A8: an INT8 scale for `h` would need
//!    every channel's `h` before the first down product, and a streamed expert cannot wait for
//!    its last channel (docs/microarchitecture.md, "expert unit").

use half::f16;

/// Consecutive weights that share one FP16 scale.
pub const GROUP: usize = 32;
/// The INT4 range.
pub const INT4_MIN: i8 = -8;
/// The INT4 range.
pub const INT4_MAX: i8 = 7;
/// The INT8 activation range is symmetric: `-127..=127` (-128 is never produced).
pub const INT8_MAX: i8 = 127;
/// A token whose largest magnitude is below this quantizes to zeros (scale 0): `127 / amax`
/// stays finite above it.
pub const ACT_FLUSH: f32 = 1e-30;

/// Bytes of `values` packed INT4 values.
pub const fn packed_bytes(values: usize) -> usize {
    values.div_ceil(2)
}

/// Scale groups of `values` weights.
pub const fn groups(values: usize) -> usize {
    values.div_ceil(GROUP)
}

/// Bytes of an A8W4 vector of `values` weights: the packed values, then one FP16 scale a group.
pub const fn vector_bytes(values: usize) -> u64 {
    (packed_bytes(values) + 2 * groups(values)) as u64
}

/// Bytes of one expert channel in A8W4 (gate row, up row, down column of `hidden` values each).
pub const fn channel_bytes(hidden: usize) -> u64 {
    3 * vector_bytes(hidden)
}

/// Why a value cannot be quantized or a record read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum A8w4Error {
    /// A weight or activation is NaN or infinite.
    #[error("value {index} is not finite")]
    NotFinite {
        /// Its index.
        index: usize,
    },
    /// A group's largest weight needs a scale above FP16's largest finite value.
    #[error("group {group}'s largest weight ({amax}) needs a scale above FP16's range")]
    ScaleOverflow {
        /// The group.
        group: usize,
        /// Its largest magnitude.
        amax: f32,
    },
    /// A record is shorter than its length says.
    #[error("a record of {values} values needs {needed} bytes, got {got}")]
    Truncated {
        /// Values it holds.
        values: usize,
        /// Bytes it needs.
        needed: u64,
        /// Bytes there were.
        got: usize,
    },
    /// A stored scale is negative, NaN or infinite, or a trailing nibble is not 0.
    #[error("{0}")]
    Malformed(String),
}

/// `n` weights in A8W4's W4 form: INT4 values packed two a byte and an FP16 scale a group.
#[derive(Clone, Debug, PartialEq)]
pub struct Int4Vector {
    len: usize,
    packed: Vec<u8>,
    scales: Vec<f16>,
}

impl Int4Vector {
    /// Quantizes `w` under the module's rule; refuses a non-finite weight or a scale FP16 cannot
    /// hold.
    pub fn quantize(w: &[f32]) -> Result<Int4Vector, A8w4Error> {
        if let Some(index) = w.iter().position(|v| !v.is_finite()) {
            return Err(A8w4Error::NotFinite { index });
        }
        let mut packed = vec![0u8; packed_bytes(w.len())];
        let mut scales = Vec::with_capacity(groups(w.len()));
        for (g, chunk) in w.chunks(GROUP).enumerate() {
            let amax = chunk.iter().fold(0f32, |m, v| m.max(v.abs()));
            let scale = f16::from_f32(amax / 7.0);
            if scale.is_infinite() {
                return Err(A8w4Error::ScaleOverflow { group: g, amax });
            }
            scales.push(scale);
            let s = scale.to_f32();
            for (i, &v) in chunk.iter().enumerate() {
                let q =
                    if s == 0.0 { 0 } else { (v / s).round_ties_even().clamp(INT4_MIN as f32, INT4_MAX as f32) as i8 };
                let at = g * GROUP + i;
                packed[at / 2] |= ((q as u8) & 0xf) << (4 * (at % 2));
            }
        }
        Ok(Int4Vector { len: w.len(), packed, scales })
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The INT4 value at `i`.
    pub fn value(&self, i: usize) -> i8 {
        let nibble = (self.packed[i / 2] >> (4 * (i % 2))) & 0xf;
        ((nibble << 4) as i8) >> 4
    }

    /// The scale of group `g`.
    pub fn scale(&self, g: usize) -> f16 {
        self.scales[g]
    }

    /// The packed bytes.
    pub fn packed(&self) -> &[u8] {
        &self.packed
    }

    /// The weights it stands for, `q * scale` (exact in f32).
    pub fn dequantized(&self) -> Vec<f32> {
        (0..self.len).map(|i| self.value(i) as f32 * self.scales[i / GROUP].to_f32()).collect()
    }

    /// Appends its [`vector_bytes`] bytes: the packed values, then the scales.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.packed);
        for s in &self.scales {
            out.extend_from_slice(&s.to_bits().to_le_bytes());
        }
    }

    /// Reads a vector of `len` values from the front of `bytes`; returns it and the bytes after.
    /// A scale must be finite and non-negative (the writer's are), a trailing nibble 0.
    pub fn read(bytes: &[u8], len: usize) -> Result<(Int4Vector, &[u8]), A8w4Error> {
        let needed = vector_bytes(len);
        if (bytes.len() as u64) < needed {
            return Err(A8w4Error::Truncated { values: len, needed, got: bytes.len() });
        }
        let (packed, rest) = bytes.split_at(packed_bytes(len));
        let (scale_bytes, rest) = rest.split_at(2 * groups(len));
        if len % 2 == 1 && packed[len / 2] >> 4 != 0 {
            return Err(A8w4Error::Malformed("the trailing high nibble of an odd-length vector is not 0".into()));
        }
        let mut scales = Vec::with_capacity(groups(len));
        for (g, b) in scale_bytes.chunks_exact(2).enumerate() {
            let s = f16::from_bits(u16::from_le_bytes([b[0], b[1]]));
            if !s.is_finite() || s.is_sign_negative() {
                return Err(A8w4Error::Malformed(format!("scale {g} is {s}: scales are finite and non-negative")));
            }
            scales.push(s);
        }
        Ok((Int4Vector { len, packed: packed.to_vec(), scales }, rest))
    }
}

/// One expert channel: the gate row, the up row and the down column, each `hidden` long.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertChannel {
    /// Row `j` of the gate projection.
    pub gate: Int4Vector,
    /// Row `j` of the up projection.
    pub up: Int4Vector,
    /// Column `j` of the down projection (its groups run along the output rows).
    pub down: Int4Vector,
}

impl ExpertChannel {
    /// Quantizes a channel from its f32 gate row, up row and down column.
    pub fn quantize(gate: &[f32], up: &[f32], down: &[f32]) -> Result<ExpertChannel, A8w4Error> {
        Ok(ExpertChannel {
            gate: Int4Vector::quantize(gate)?,
            up: Int4Vector::quantize(up)?,
            down: Int4Vector::quantize(down)?,
        })
    }

    /// Its [`channel_bytes`] bytes, as the expert unit fetches them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(channel_bytes(self.gate.len()) as usize);
        for v in [&self.gate, &self.up, &self.down] {
            v.write(&mut out);
        }
        out
    }

    /// Reads a channel of `hidden`-long vectors; `bytes` must be exactly [`channel_bytes`] long.
    pub fn from_bytes(bytes: &[u8], hidden: usize) -> Result<ExpertChannel, A8w4Error> {
        let (gate, rest) = Int4Vector::read(bytes, hidden)?;
        let (up, rest) = Int4Vector::read(rest, hidden)?;
        let (down, rest) = Int4Vector::read(rest, hidden)?;
        if !rest.is_empty() {
            return Err(A8w4Error::Malformed(format!("{} bytes after the channel's down column", rest.len())));
        }
        Ok(ExpertChannel { gate, up, down })
    }
}

/// A token's activations in A8: INT8 values and one f32 scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Int8Vector {
    /// The values, in `-127..=127`.
    pub values: Vec<i8>,
    /// `amax / 127`.
    pub scale: f32,
}

impl Int8Vector {
    /// Quantizes `x` under the module's rule; refuses a non-finite value.
    pub fn quantize(x: &[f32]) -> Result<Int8Vector, A8w4Error> {
        if let Some(index) = x.iter().position(|v| !v.is_finite()) {
            return Err(A8w4Error::NotFinite { index });
        }
        let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        if amax < ACT_FLUSH {
            return Ok(Int8Vector { values: vec![0; x.len()], scale: 0.0 });
        }
        let inv = INT8_MAX as f32 / amax;
        let values =
            x.iter().map(|&v| (v * inv).round_ties_even().clamp(-(INT8_MAX as f32), INT8_MAX as f32) as i8).collect();
        Ok(Int8Vector { values, scale: amax / INT8_MAX as f32 })
    }
}

/// The exact INT32 sum of group `g`'s INT8 x INT4 products (at most 32 x 127 x 8 in magnitude).
pub fn group_dot(x: &[i8], w: &Int4Vector, g: usize) -> i32 {
    let end = ((g + 1) * GROUP).min(w.len());
    (g * GROUP..end).map(|i| x[i] as i32 * w.value(i) as i32).sum()
}

/// A gate or up row times a token: the group sums scaled and added in group order in f32, then
/// times the token's scale (rule 1).
pub fn row_dot(x: &Int8Vector, w: &Int4Vector) -> f32 {
    let mut acc = 0f32;
    for g in 0..groups(w.len()) {
        acc += group_dot(&x.values, w, g) as f32 * w.scale(g).to_f32();
    }
    acc * x.scale
}

/// The sigmoid's segments: `SIGMOID_SEGMENTS` of width 1/8 over `[-16, 16)`.
pub const SIGMOID_SEGMENTS: usize = 256;
/// The sigmoid table's lower end; below it the sigmoid is 0, at or above `-SIGMOID_LO` it is 1.
pub const SIGMOID_LO: f32 = -16.0;
/// How far [`silu`] may be from `x * sigmoid(x)`, relative to `|x|`: the piecewise-linear
/// sigmoid's error (at most `h^2/8 max|sigmoid''|` = 1.9e-4 with `h` = 1/8), rounding included.
pub const SILU_MAX_ERROR: f32 = 2.5e-4;

/// The sigmoid table: per segment the value at its left end and its slope, f32 (a ROM in RTL).
pub fn sigmoid_table() -> &'static [(f32, f32); SIGMOID_SEGMENTS] {
    static TABLE: std::sync::OnceLock<[(f32, f32); SIGMOID_SEGMENTS]> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
        let step = 1.0 / 8.0;
        std::array::from_fn(|i| {
            let x0 = SIGMOID_LO as f64 + i as f64 * step;
            (sig(x0) as f32, ((sig(x0 + step) - sig(x0)) / step) as f32)
        })
    })
}

/// The hardware's SiLU: `x * sigmoid(x)`, the sigmoid piecewise linear from [`sigmoid_table`]:
/// segment `i = floor((x + 16) * 8)` (clamped to the table), `sigmoid = y_i + (x - x_i) * slope_i`,
/// each operation an f32 rounding; 0 below the table, `x` at or above it, NaN for NaN.
pub fn silu(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x < SIGMOID_LO {
        return 0.0;
    }
    if x >= -SIGMOID_LO {
        return x;
    }
    let i = (((x - SIGMOID_LO) * 8.0) as usize).min(SIGMOID_SEGMENTS - 1);
    let (y, slope) = sigmoid_table()[i];
    let x0 = SIGMOID_LO + i as f32 / 8.0;
    x * (y + (x - x0) * slope)
}

/// The down projection's operand of one channel: `fp16(w * h)`, saturating at +-65504 (rule 3).
pub fn down_operand(gate_weight: f32, h: f32) -> f16 {
    let v = gate_weight * h;
    if v.is_nan() {
        return f16::NAN;
    }
    f16::from_f32(v.clamp(-f16::MAX.to_f32(), f16::MAX.to_f32()))
}

/// One down product: `(f32(a) * f32(scale)) * f32(q)` (the first product is exact in f32).
pub fn down_product(a: f16, scale: f16, q: i8) -> f32 {
    (a.to_f32() * scale.to_f32()) * q as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_scale_is_its_largest_weight_over_seven_and_values_round_to_int4() {
        let w: Vec<f32> = (0..40).map(|i| (i as f32 - 20.0) * 0.1).collect();
        let q = Int4Vector::quantize(&w).unwrap();
        assert_eq!(q.scale(0).to_f32(), f16::from_f32(2.0 / 7.0).to_f32());
        for i in 0..40 {
            assert!((INT4_MIN..=INT4_MAX).contains(&q.value(i)));
            let err = (q.dequantized()[i] - w[i]).abs();
            assert!(err <= q.scale(i / GROUP).to_f32() * 0.5 + 1e-6, "{i}: {err}");
        }
        assert_eq!(q.value(0), -7, "-2.0 / (2/7)");
    }

    #[test]
    fn packing_puts_the_even_value_in_the_low_nibble() {
        let q = Int4Vector::quantize(&[7.0, -7.0, 1.0]).unwrap();
        assert_eq!(q.packed(), &[0x97, 0x01]);
        let mut bytes = Vec::new();
        q.write(&mut bytes);
        assert_eq!(bytes.len() as u64, vector_bytes(3));
        assert_eq!(Int4Vector::read(&bytes, 3).unwrap().0, q);
    }

    #[test]
    fn a_channel_reads_back_from_its_bytes_and_bad_records_are_refused() {
        let row: Vec<f32> = (0..70).map(|i| ((i * 37 % 23) as f32 - 11.0) / 7.0).collect();
        let ch = ExpertChannel::quantize(&row, &row[..].iter().map(|v| -v).collect::<Vec<_>>(), &row).unwrap();
        let bytes = ch.to_bytes();
        assert_eq!(bytes.len() as u64, channel_bytes(70));
        assert_eq!(ExpertChannel::from_bytes(&bytes, 70).unwrap(), ch);
        assert!(matches!(ExpertChannel::from_bytes(&bytes[..bytes.len() - 1], 70), Err(A8w4Error::Truncated { .. })));
        let mut long = bytes.clone();
        long.push(0);
        assert!(ExpertChannel::from_bytes(&long, 70).is_err());
        let mut neg = bytes.clone();
        neg[35 + 1] = 0xbc; // the first scale's high byte: a negative FP16
        assert!(matches!(ExpertChannel::from_bytes(&neg, 70), Err(A8w4Error::Malformed(_))), "{neg:?}");
    }

    #[test]
    fn non_finite_values_and_scales_beyond_fp16_are_refused() {
        assert_eq!(Int4Vector::quantize(&[1.0, f32::NAN]), Err(A8w4Error::NotFinite { index: 1 }));
        assert!(matches!(Int4Vector::quantize(&[1e6]), Err(A8w4Error::ScaleOverflow { group: 0, .. })));
        assert_eq!(Int8Vector::quantize(&[f32::INFINITY]), Err(A8w4Error::NotFinite { index: 0 }));
    }

    #[test]
    fn activations_quantize_to_the_symmetric_int8_range_and_zero_stays_zero() {
        let a = Int8Vector::quantize(&[1.0, -0.5, 0.25, -1.0]).unwrap();
        assert_eq!(a.values, vec![127, -64, 32, -127], "-63.5 and 31.75 round half to even / nearest");
        assert_eq!(a.scale, 1.0 / 127.0);
        assert_eq!(Int8Vector::quantize(&[0.0, 1e-40]).unwrap(), Int8Vector { values: vec![0, 0], scale: 0.0 });
        // Tiny but above the flush: the values keep their ratios (127 / amax is finite).
        let tiny = Int8Vector::quantize(&[2e-30, -1e-30]).unwrap();
        assert_eq!(tiny.values, vec![127, -64]);
        assert!(tiny.scale > 0.0);
    }

    #[test]
    fn the_piecewise_linear_silu_is_within_its_stated_error() {
        let mut worst = 0f32;
        for i in -40_000..40_000 {
            let x = i as f32 / 1000.0;
            if x == 0.0 {
                assert_eq!(silu(x), 0.0);
                continue;
            }
            let exact = (x as f64 / (1.0 + (-(x as f64)).exp())) as f32;
            let err = (silu(x) - exact).abs() / x.abs();
            worst = worst.max(err);
        }
        assert!(worst <= SILU_MAX_ERROR, "{worst}");
        assert!(worst > SILU_MAX_ERROR / 4.0, "the bound is not loose by more than 4x: {worst}");
        assert_eq!(silu(-20.0), 0.0);
        assert_eq!(silu(20.0), 20.0);
        assert!(silu(f32::NAN).is_nan());
    }

    #[test]
    fn a_row_dot_sums_exact_group_products_then_scales() {
        let w = Int4Vector::quantize(&[7.0; 64]).unwrap();
        let x = Int8Vector::quantize(&[1.0; 64]).unwrap();
        assert_eq!(group_dot(&x.values, &w, 0), 32 * 127 * 7);
        assert_eq!(row_dot(&x, &w), (2.0 * 32.0 * 127.0 * 7.0) * 1.0 * (1.0 / 127.0));
    }

    #[test]
    fn the_down_operand_saturates_at_fp16s_largest_value() {
        assert_eq!(down_operand(1.0, 1e9), f16::MAX);
        assert_eq!(down_operand(0.5, -1e9), f16::MIN);
        assert_eq!(down_operand(0.5, 3.0), f16::from_f32(1.5));
    }
}
