//! A GGUF writer (version 3, default alignment), for tests and fuzz seeds that need small files.

use crate::gguf::{GgmlType, MetaValue, DEFAULT_ALIGNMENT, MAGIC};

/// A tensor to write with [`write_gguf`]: name, dims (contiguous first), type, raw block bytes.
pub struct RawTensor {
    /// Name.
    pub name: String,
    /// Dimensions, contiguous first.
    pub dims: Vec<u64>,
    /// Element type.
    pub dtype: GgmlType,
    /// The data, already in the type's block layout.
    pub data: Vec<u8>,
}

/// Writes a GGUF version 3 file (default alignment 32) of the given metadata and tensors.
pub fn write_gguf(metadata: &[(String, MetaValue)], tensors: &[RawTensor]) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }
    fn value(out: &mut Vec<u8>, v: &MetaValue) {
        match v {
            MetaValue::U8(x) => out.push(*x),
            MetaValue::I8(x) => out.push(*x as u8),
            MetaValue::U16(x) => out.extend(x.to_le_bytes()),
            MetaValue::I16(x) => out.extend(x.to_le_bytes()),
            MetaValue::U32(x) => out.extend(x.to_le_bytes()),
            MetaValue::I32(x) => out.extend(x.to_le_bytes()),
            MetaValue::F32(x) => out.extend(x.to_le_bytes()),
            MetaValue::Bool(x) => out.push(*x as u8),
            MetaValue::String(s) => string(out, s),
            MetaValue::Array(items) => {
                out.extend(items.first().map_or(0, MetaValue::type_code).to_le_bytes());
                out.extend((items.len() as u64).to_le_bytes());
                items.iter().for_each(|i| value(out, i));
            }
            MetaValue::U64(x) => out.extend(x.to_le_bytes()),
            MetaValue::I64(x) => out.extend(x.to_le_bytes()),
            MetaValue::F64(x) => out.extend(x.to_le_bytes()),
        }
    }
    let mut out = Vec::new();
    out.extend(MAGIC);
    out.extend(3u32.to_le_bytes());
    out.extend((tensors.len() as u64).to_le_bytes());
    out.extend((metadata.len() as u64).to_le_bytes());
    for (k, v) in metadata {
        string(&mut out, k);
        out.extend(v.type_code().to_le_bytes());
        value(&mut out, v);
    }
    let align = |n: u64| n.div_ceil(DEFAULT_ALIGNMENT) * DEFAULT_ALIGNMENT;
    let mut offset = 0u64;
    for t in tensors {
        string(&mut out, &t.name);
        out.extend((t.dims.len() as u32).to_le_bytes());
        t.dims.iter().for_each(|d| out.extend(d.to_le_bytes()));
        out.extend(t.dtype.code().to_le_bytes());
        out.extend(offset.to_le_bytes());
        offset = align(offset + t.data.len() as u64);
    }
    out.resize(align(out.len() as u64) as usize, 0);
    for t in tensors {
        out.extend(&t.data);
        out.resize(align(out.len() as u64) as usize, 0);
    }
    out
}
