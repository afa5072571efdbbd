//! Weight files: every supported element type and layout reads to the same FP16 matrix, and every
//! malformed or unsupported file gives its own clear error.

use half::{bf16, f16};
use lacuna_compiler::input::{load_npy, load_safetensors, InputError};
use lacuna_compiler::load_dense;

/// A version-1.0 `.npy` file with the given dtype descriptor, order and raw data.
fn npy(descr: &str, fortran: bool, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

const VALUES: [f32; 6] = [1.0, 0.0, -2.5, 0.0, 0.0, 65504.0]; // 2 x 3, row-major

fn expected() -> Vec<f16> {
    VALUES.iter().map(|&v| f16::from_f32(v)).collect()
}

#[test]
fn fp16_fp32_and_fp64_npy_files_read_to_the_same_matrix() {
    let f2: Vec<u8> = VALUES.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect();
    let f4: Vec<u8> = VALUES.iter().flat_map(|&v| v.to_le_bytes()).collect();
    let f8: Vec<u8> = VALUES.iter().flat_map(|&v| (v as f64).to_le_bytes()).collect();
    let f4be: Vec<u8> = VALUES.iter().flat_map(|&v| v.to_be_bytes()).collect();
    for (descr, data) in [("<f2", f2), ("<f4", f4), ("<f8", f8), (">f4", f4be)] {
        let m = load_npy(&npy(descr, false, &[2, 3], &data), "t.npy").unwrap();
        assert_eq!((m.rows(), m.cols()), (2, 3), "{descr}");
        assert_eq!(m.data(), expected().as_slice(), "{descr}");
    }
}

#[test]
fn a_fortran_ordered_npy_file_is_transposed_on_read() {
    // Column-major storage of the same 2 x 3 matrix.
    let col_major = [VALUES[0], VALUES[3], VALUES[1], VALUES[4], VALUES[2], VALUES[5]];
    let data: Vec<u8> = col_major.iter().flat_map(|v| v.to_le_bytes()).collect();
    let m = load_npy(&npy("<f4", true, &[2, 3], &data), "t.npy").unwrap();
    assert_eq!(m.data(), expected().as_slice());
}

#[test]
fn a_value_that_overflows_fp16_is_refused_with_its_position() {
    let data: Vec<u8> = [1.0f32, 70000.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let err = load_npy(&npy("<f4", false, &[1, 2], &data), "t.npy").unwrap_err();
    assert!(matches!(err, InputError::BadValue { row: 0, col: 1, .. }), "{err}");
    assert!(err.to_string().contains("overflows FP16"), "{err}");
    let data: Vec<u8> = [f32::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
    let err = load_npy(&npy("<f4", false, &[1, 1], &data), "t.npy").unwrap_err();
    assert!(err.to_string().contains("not finite"), "{err}");
}

#[test]
fn npy_files_that_are_not_float_matrices_are_refused() {
    let err = load_npy(&npy("<f4", false, &[3], &[0; 12]), "t.npy").unwrap_err();
    assert!(matches!(err, InputError::NotAMatrix { .. }), "{err}");
    let err = load_npy(&npy("<i4", false, &[1, 3], &[0; 12]), "t.npy").unwrap_err();
    assert!(matches!(err, InputError::UnsupportedType { .. }), "{err}");
    let err = load_npy(&npy("<f4", false, &[2, 3], &[0; 10]), "t.npy").unwrap_err();
    assert!(matches!(err, InputError::Malformed { .. }), "{err}");
    let err = load_npy(b"not a numpy file", "t.npy").unwrap_err();
    assert!(matches!(err, InputError::Malformed { .. }), "{err}");
}

fn safetensors_file(tensors: &[(&str, safetensors::Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let views: Vec<(String, safetensors::tensor::TensorView)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.to_string(), safetensors::tensor::TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize(views, None).unwrap()
}

#[test]
fn f16_bf16_and_f32_safetensors_read_to_the_same_matrix() {
    use safetensors::Dtype;
    let f16b: Vec<u8> = VALUES.iter().flat_map(|&v| f16::from_f32(v).to_le_bytes()).collect();
    let bf16b: Vec<u8> =
        [1.0f32, 0.0, -2.5, 0.0, 0.0, 4096.0].iter().flat_map(|&v| bf16::from_f32(v).to_le_bytes()).collect();
    let f32b: Vec<u8> = VALUES.iter().flat_map(|v| v.to_le_bytes()).collect();
    let file = safetensors_file(&[
        ("a.weight", Dtype::F16, vec![2, 3], f16b),
        ("b.weight", Dtype::BF16, vec![2, 3], bf16b),
        ("c.weight", Dtype::F32, vec![2, 3], f32b),
        ("c.bias", Dtype::F32, vec![2], vec![0; 8]),
    ]);
    for name in ["a.weight", "c.weight"] {
        let m = load_safetensors(&file, "t.safetensors", Some(name)).unwrap();
        assert_eq!(m.data(), expected().as_slice(), "{name}");
    }
    let m = load_safetensors(&file, "t.safetensors", Some("b.weight")).unwrap();
    assert_eq!(m.get(1, 2).to_f32(), 4096.0);
    // Several 2-D tensors: the name must be given, and the error lists them.
    let err = load_safetensors(&file, "t.safetensors", None).unwrap_err().to_string();
    assert!(err.contains("--tensor") && err.contains("a.weight, b.weight, c.weight"), "{err}");
    let err = load_safetensors(&file, "t.safetensors", Some("nope")).unwrap_err().to_string();
    assert!(err.contains("no tensor named `nope`"), "{err}");
    let err = load_safetensors(&file, "t.safetensors", Some("c.bias")).unwrap_err();
    assert!(matches!(err, InputError::NotAMatrix { .. }), "{err}");
}

#[test]
fn a_safetensors_file_with_one_matrix_needs_no_tensor_name() {
    let f32b: Vec<u8> = VALUES.iter().flat_map(|v| v.to_le_bytes()).collect();
    let file = safetensors_file(&[("w", safetensors::Dtype::F32, vec![2, 3], f32b)]);
    let m = load_safetensors(&file, "t.safetensors", None).unwrap();
    assert_eq!(m.data(), expected().as_slice());
}

#[test]
fn a_truncated_safetensors_file_is_refused() {
    let f32b: Vec<u8> = VALUES.iter().flat_map(|v| v.to_le_bytes()).collect();
    let file = safetensors_file(&[("w", safetensors::Dtype::F32, vec![2, 3], f32b)]);
    let err = load_safetensors(&file[..file.len() - 5], "t.safetensors", None).unwrap_err();
    assert!(matches!(err, InputError::Malformed { .. }), "{err}");
}

#[test]
fn unknown_extensions_and_missing_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w.bin");
    std::fs::write(&p, b"x").unwrap();
    assert!(matches!(load_dense(&p, None).unwrap_err(), InputError::UnknownKind(_)));
    let missing = dir.path().join("missing.npy");
    assert!(matches!(load_dense(&missing, None).unwrap_err(), InputError::Io { .. }));
}

#[test]
fn a_header_or_shape_larger_than_the_file_is_refused_without_allocating_it() {
    // Found by the weight_files fuzz target: a version-2 header that claims 3 GB of header.
    let mut bytes = b"\x93NUMPY\x02\x00".to_vec();
    bytes.extend_from_slice(&3_000_000_000u32.to_le_bytes());
    bytes.extend_from_slice(b"{'descr': '<f4'}");
    let err = load_npy(&bytes, "t.npy").unwrap_err();
    assert!(err.to_string().contains("bad header"), "{err}");
    // A shape of 2^31 x 2^31 floats backed by 8 bytes.
    let err = load_npy(&npy("<f4", false, &[1 << 31, 1 << 31], &[0; 8]), "t.npy").unwrap_err();
    assert!(err.to_string().contains("data bytes"), "{err}");
}

#[test]
fn a_header_with_deeply_nested_brackets_is_refused_quickly() {
    // Found by the weight_files fuzz target: npyz's header parser is exponential on nesting.
    let header = format!("{{'descr': '<f8', {}'fortran_order': False, 'shape': (1, 1), }}", "{".repeat(60));
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 8]);
    let start = std::time::Instant::now();
    let err = load_npy(&bytes, "t.npy").unwrap_err();
    assert!(err.to_string().contains("nest"), "{err}");
    assert!(start.elapsed().as_secs() < 1, "must not hang");
}
