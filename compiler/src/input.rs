//! Dense weight matrices from `.npy` and `.safetensors` files.
//!
//! A weight matrix is a 2-D array of shape (M, K) = (outputs, inputs), the layout of a PyTorch
//! `nn.Linear.weight`. Accepted element types: FP16, FP32 and FP64 (`.npy`); F16, BF16 and F32
//! (`.safetensors`). Wider types are rounded to FP16 (round to nearest even); a value that
//! overflows FP16 (|v| > 65504 after rounding), or is NaN or infinite, is refused with its
//! position, never silently saturated. Fortran-ordered `.npy` arrays are transposed on read.
//!
//! Crates: `npyz` reads NumPy files (all dtypes and byte orders, C and Fortran order) and
//! `safetensors` is Hugging Face's own reader; both validate their headers.

use half::{bf16, f16};
use lacuna_spec::DenseMatrix;
use std::path::Path;

/// Why a weight file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not a valid file of its kind.
    #[error("{path}: not a valid {kind} file: {message}")]
    Malformed {
        /// The file.
        path: String,
        /// npy or safetensors.
        kind: &'static str,
        /// The parser's message.
        message: String,
    },
    /// The extension is neither `.npy` nor `.safetensors`.
    #[error("{0}: unsupported weight file (expected .npy or .safetensors)")]
    UnknownKind(String),
    /// The array is not 2-D.
    #[error("{path}: a weight matrix must be 2-D (M outputs x K inputs), got shape {shape:?}")]
    NotAMatrix {
        /// The file.
        path: String,
        /// The array's shape.
        shape: Vec<u64>,
    },
    /// The element type is not supported.
    #[error("{path}: element type {dtype} is not supported (expected FP16, BF16, FP32 or FP64)")]
    UnsupportedType {
        /// The file.
        path: String,
        /// The type as the file names it.
        dtype: String,
    },
    /// A value cannot be held in FP16.
    #[error("{path}: value {value} at row {row}, column {col} {why}")]
    BadValue {
        /// The file.
        path: String,
        /// Row.
        row: usize,
        /// Column.
        col: usize,
        /// The value.
        value: f64,
        /// "is not finite" or "overflows FP16 (largest 65504)".
        why: &'static str,
    },
    /// `--tensor` is missing or names nothing.
    #[error("{path}: {message}")]
    Tensor {
        /// The file.
        path: String,
        /// What is wrong, with the available names.
        message: String,
    },
}

/// Loads a dense weight matrix; `tensor` names the tensor inside a `.safetensors` file.
pub fn load_dense(path: &Path, tensor: Option<&str>) -> Result<DenseMatrix, InputError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| InputError::Io { path: name.clone(), source })?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("npy") => {
            if tensor.is_some() {
                return Err(InputError::Tensor {
                    path: name,
                    message: "--tensor applies to .safetensors files only".into(),
                });
            }
            load_npy(&bytes, &name)
        }
        Some("safetensors") => load_safetensors(&bytes, &name, tensor),
        _ => Err(InputError::UnknownKind(name)),
    }
}

fn to_fp16(values: impl Iterator<Item = f64>, rows: usize, cols: usize, path: &str) -> Result<DenseMatrix, InputError> {
    let mut data = Vec::with_capacity(rows * cols);
    for (i, v) in values.enumerate() {
        let h = f16::from_f64(v);
        if !v.is_finite() || !h.is_finite() {
            let why = if v.is_finite() { "overflows FP16 (largest 65504)" } else { "is not finite" };
            return Err(InputError::BadValue { path: path.into(), row: i / cols, col: i % cols, value: v, why });
        }
        data.push(h);
    }
    DenseMatrix::new(rows, cols, data).map_err(|e| InputError::Malformed {
        path: path.into(),
        kind: "weight",
        message: e.to_string(),
    })
}

/// Reads a `.npy` array of floats: its shape and its values in row-major (C) order.
fn read_npy(bytes: &[u8], path: &str) -> Result<(Vec<u64>, Vec<f64>), InputError> {
    let malformed =
        |e: std::io::Error| InputError::Malformed { path: path.into(), kind: "npy", message: e.to_string() };
    // npyz trusts the header length field for an allocation: check it against the file first
    // (a fuzzer found a 3 GB allocation asked for by a 60-byte file).
    let header_end = npy_header_end(bytes).ok_or_else(|| InputError::Malformed {
        path: path.into(),
        kind: "npy",
        message: "truncated or bad header (magic, version or header length)".into(),
    })?;
    // npyz's header parser (pest) takes exponential time on deeply nested brackets: a 218-byte
    // file found by fuzzing ran for minutes. Real headers nest at most a few levels (a dict
    // holding a shape tuple, or a structured dtype's list of tuples).
    if npy_nesting(&bytes[..header_end]) > NPY_MAX_NESTING {
        return Err(InputError::Malformed {
            path: path.into(),
            kind: "npy",
            message: format!("header brackets nest deeper than {NPY_MAX_NESTING} levels"),
        });
    }
    let npy = npyz::NpyFile::new(bytes).map_err(malformed)?;
    let shape = npy.shape().to_vec();
    if shape.iter().any(|&d| d == 0 || d > 1 << 31) {
        return Err(InputError::NotAMatrix { path: path.into(), shape });
    }
    let fortran = npy.order() == npyz::Order::Fortran;
    let dtype = npy.dtype();
    let npyz::DType::Plain(ts) = &dtype else {
        return Err(InputError::UnsupportedType { path: path.into(), dtype: format!("{dtype:?}") });
    };
    // Likewise the shape: the data must be exactly shape x element size bytes before any is read.
    let n: u64 = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).unwrap_or(u64::MAX);
    let data_len = (bytes.len() - header_end) as u64;
    if n.checked_mul(ts.size_field()) != Some(data_len) {
        return Err(InputError::Malformed {
            path: path.into(),
            kind: "npy",
            message: format!(
                "shape {shape:?} of {}-byte values needs {} data bytes, the file has {data_len}",
                ts.size_field(),
                n.saturating_mul(ts.size_field())
            ),
        });
    }
    let values: Vec<f64> = match (ts.type_char(), ts.size_field()) {
        (npyz::TypeChar::Float, 2) => {
            npy.into_vec::<f16>().map_err(malformed)?.into_iter().map(|v| v.to_f64()).collect()
        }
        (npyz::TypeChar::Float, 4) => npy.into_vec::<f32>().map_err(malformed)?.into_iter().map(f64::from).collect(),
        (npyz::TypeChar::Float, 8) => npy.into_vec::<f64>().map_err(malformed)?,
        _ => return Err(InputError::UnsupportedType { path: path.into(), dtype: ts.to_string() }),
    };
    if values.len() as u64 != n {
        return Err(InputError::Malformed {
            path: path.into(),
            kind: "npy",
            message: format!("shape {shape:?} but {} values", values.len()),
        });
    }
    if fortran && shape.len() == 2 {
        // Column-major: element (r, c) is at c * rows + r.
        let (rows, cols) = (shape[0] as usize, shape[1] as usize);
        let c_order = (0..rows * cols).map(|i| values[(i % cols) * rows + i / cols]).collect();
        return Ok((shape, c_order));
    }
    Ok((shape, values))
}

/// Where a `.npy` header ends, if the magic, version and header length fit the file.
fn npy_header_end(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return None;
    }
    let end = match bytes[6] {
        1 => 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize,
        2 | 3 if bytes.len() >= 12 => 12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        _ => return None,
    };
    // NumPy itself refuses headers over 10,000 bytes (numpy.lib.format, max_header_size): so do
    // we, since npyz's header parser is slow on long pathological dictionaries.
    (end <= bytes.len() && end <= 12 + NPY_MAX_HEADER).then_some(end)
}

/// The deepest bracket nesting accepted in a `.npy` header.
const NPY_MAX_NESTING: usize = 4;

/// The deepest nesting of `(`, `[` and `{` in a header (quotes are not special-cased: a bracket
/// inside a field name only makes the check stricter).
fn npy_nesting(header: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for &b in header {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The longest `.npy` header read, as in NumPy.
const NPY_MAX_HEADER: usize = 10_000;

/// Reads a 2-D `.npy` array.
pub fn load_npy(bytes: &[u8], path: &str) -> Result<DenseMatrix, InputError> {
    let (shape, values) = read_npy(bytes, path)?;
    if shape.len() != 2 {
        return Err(InputError::NotAMatrix { path: path.into(), shape });
    }
    to_fp16(values.into_iter(), shape[0] as usize, shape[1] as usize, path)
}

/// Reads an activation vector: a `.npy` array of K floats (shape (K,), (1, K) or (K, 1)),
/// rounded to FP16 with the same checks as weights.
pub fn load_activations(path: &Path) -> Result<Vec<f16>, InputError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| InputError::Io { path: name.clone(), source })?;
    let (shape, values) = read_npy(&bytes, &name)?;
    let is_vector = shape.len() == 1 || (shape.len() == 2 && (shape[0] == 1 || shape[1] == 1));
    if !is_vector {
        return Err(InputError::Malformed {
            path: name,
            kind: "activation",
            message: format!("an activation vector must have shape (K,), (1, K) or (K, 1), got {shape:?}"),
        });
    }
    let k = values.len();
    Ok(to_fp16(values.into_iter(), 1, k, &name)?.data().to_vec())
}

/// Reads one 2-D tensor of a `.safetensors` file (the only 2-D one when `tensor` is `None`).
pub fn load_safetensors(bytes: &[u8], path: &str, tensor: Option<&str>) -> Result<DenseMatrix, InputError> {
    let st = safetensors::SafeTensors::deserialize(bytes).map_err(|e| InputError::Malformed {
        path: path.into(),
        kind: "safetensors",
        message: e.to_string(),
    })?;
    let mut names: Vec<&str> = st.names();
    names.sort_unstable();
    let name = match tensor {
        Some(t) => t.to_string(),
        None => {
            let matrices: Vec<&str> =
                names.iter().copied().filter(|n| st.tensor(n).map(|t| t.shape().len() == 2).unwrap_or(false)).collect();
            match matrices.as_slice() {
                [one] => one.to_string(),
                _ => {
                    return Err(InputError::Tensor {
                        path: path.into(),
                        message: format!("choose a tensor with --tensor NAME; 2-D tensors: {}", matrices.join(", ")),
                    })
                }
            }
        }
    };
    let view = st.tensor(&name).map_err(|_| InputError::Tensor {
        path: path.into(),
        message: format!("no tensor named `{name}`; tensors: {}", names.join(", ")),
    })?;
    let shape: Vec<u64> = view.shape().iter().map(|&d| d as u64).collect();
    if shape.len() != 2 || shape.iter().any(|&d| d == 0 || d > 1 << 31) {
        return Err(InputError::NotAMatrix { path: path.into(), shape });
    }
    let (rows, cols) = (shape[0] as usize, shape[1] as usize);
    let data = view.data();
    use safetensors::Dtype;
    match view.dtype() {
        Dtype::F16 => {
            to_fp16(data.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f64()), rows, cols, path)
        }
        Dtype::BF16 => {
            to_fp16(data.chunks_exact(2).map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f64()), rows, cols, path)
        }
        Dtype::F32 => {
            to_fp16(data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64), rows, cols, path)
        }
        other => Err(InputError::UnsupportedType { path: path.into(), dtype: format!("{other:?}") }),
    }
}
