//! `GgmlType`: the tensor element types of ggml (GGUF's tensor table), by number and name, and
//! the block layout each is stored in; read by the GGUF reader, the dequantizer and the writer.

/// A tensor element type, as ggml numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs, non_camel_case_types)]
pub enum GgmlType {
    F32,
    F16,
    BF16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q4_K,
    Q6_K,
    /// A type this reader does not dequantize (its ggml number).
    Other(u32),
}

impl GgmlType {
    pub(crate) fn from_code(code: u32) -> Self {
        match code {
            0 => GgmlType::F32,
            1 => GgmlType::F16,
            2 => GgmlType::Q4_0,
            3 => GgmlType::Q4_1,
            6 => GgmlType::Q5_0,
            7 => GgmlType::Q5_1,
            8 => GgmlType::Q8_0,
            12 => GgmlType::Q4_K,
            14 => GgmlType::Q6_K,
            30 => GgmlType::BF16,
            other => GgmlType::Other(other),
        }
    }

    /// ggml's number for the type.
    pub fn code(self) -> u32 {
        match self {
            GgmlType::F32 => 0,
            GgmlType::F16 => 1,
            GgmlType::Q4_0 => 2,
            GgmlType::Q4_1 => 3,
            GgmlType::Q5_0 => 6,
            GgmlType::Q5_1 => 7,
            GgmlType::Q8_0 => 8,
            GgmlType::Q4_K => 12,
            GgmlType::Q6_K => 14,
            GgmlType::BF16 => 30,
            GgmlType::Other(c) => c,
        }
    }

    /// ggml's name for the type.
    pub fn name(self) -> String {
        let known = match self {
            GgmlType::F32 => "F32",
            GgmlType::F16 => "F16",
            GgmlType::BF16 => "BF16",
            GgmlType::Q4_0 => "Q4_0",
            GgmlType::Q4_1 => "Q4_1",
            GgmlType::Q5_0 => "Q5_0",
            GgmlType::Q5_1 => "Q5_1",
            GgmlType::Q8_0 => "Q8_0",
            GgmlType::Q4_K => "Q4_K",
            GgmlType::Q6_K => "Q6_K",
            GgmlType::Other(c) => {
                let name = match c {
                    9 => "Q8_1",
                    10 => "Q2_K",
                    11 => "Q3_K",
                    13 => "Q5_K",
                    15 => "Q8_K",
                    _ => return format!("type #{c}"),
                };
                return name.into();
            }
        };
        known.into()
    }

    /// (elements per block, bytes per block), or `None` for an unsupported type.
    pub fn block(self) -> Option<(usize, usize)> {
        match self {
            GgmlType::F32 => Some((1, 4)),
            GgmlType::F16 | GgmlType::BF16 => Some((1, 2)),
            GgmlType::Q4_0 => Some((32, 18)),
            GgmlType::Q4_1 => Some((32, 20)),
            GgmlType::Q5_0 => Some((32, 22)),
            GgmlType::Q5_1 => Some((32, 24)),
            GgmlType::Q8_0 => Some((32, 34)),
            GgmlType::Q4_K => Some((256, 144)),
            GgmlType::Q6_K => Some((256, 210)),
            GgmlType::Other(_) => None,
        }
    }
}
