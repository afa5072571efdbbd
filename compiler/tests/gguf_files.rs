//! Bad GGUF files get a clear error, never a panic: truncations at every length, flipped bytes,
//! a wrong magic or version, a tensor of an unsupported type, a tensor past the end.

use lacuna_compiler::gguf::{write_gguf, GgmlType, GgufError, GgufFile, MetaValue, RawTensor};
use proptest::prelude::*;

/// A small valid file: metadata of several types and three tensors (F32, Q4_1, Q8_0).
fn sample() -> Vec<u8> {
    let meta = vec![
        ("general.architecture".to_string(), MetaValue::String("llama".into())),
        ("llama.block_count".to_string(), MetaValue::U32(1)),
        ("llama.rope.freq_base".to_string(), MetaValue::F32(1e4)),
        (
            "tokenizer.ggml.tokens".to_string(),
            MetaValue::Array(vec![MetaValue::String("a".into()), MetaValue::String("b".into())]),
        ),
    ];
    let tensors = vec![
        RawTensor {
            name: "norm".into(),
            dims: vec![4],
            dtype: GgmlType::F32,
            data: [1f32, 2., 3., 4.].iter().flat_map(|v| v.to_le_bytes()).collect(),
        },
        RawTensor { name: "w".into(), dims: vec![32, 2], dtype: GgmlType::Q4_1, data: vec![0x11; 40] },
        RawTensor { name: "e".into(), dims: vec![32, 1], dtype: GgmlType::Q8_0, data: vec![0x01; 34] },
    ];
    write_gguf(&meta, &tensors)
}

fn message(r: Result<GgufFile, GgufError>) -> String {
    r.expect_err("the file must be refused").to_string()
}

#[test]
fn a_valid_file_round_trips_through_the_writer() {
    let f = GgufFile::parse(sample(), "ok.gguf").unwrap();
    assert_eq!(f.version, 3);
    assert_eq!(f.require_u64("llama.block_count").unwrap(), 1);
    assert_eq!(f.require_strings("tokenizer.ggml.tokens").unwrap(), ["a", "b"]);
    assert_eq!(f.dequantize("norm").unwrap(), [1., 2., 3., 4.]);
    assert_eq!(f.dequantize("w").unwrap().len(), 64);
}

#[test]
fn every_truncation_is_refused_with_an_error() {
    let bytes = sample();
    for len in 0..bytes.len() {
        // The last tensor's padding is not data: cutting it off still leaves a whole file.
        let r = GgufFile::parse(bytes[..len].to_vec(), "cut.gguf");
        if len < bytes.len() - 30 {
            assert!(r.is_err(), "a file cut to {len} of {} bytes was accepted", bytes.len());
        }
    }
    assert!(message(GgufFile::parse(bytes[..100].to_vec(), "cut.gguf")).contains("truncated"));
}

#[test]
fn a_wrong_magic_or_version_is_named() {
    let mut bytes = sample();
    bytes[0] = b'X';
    assert!(message(GgufFile::parse(bytes, "x.gguf")).contains("magic"));
    let mut bytes = sample();
    bytes[4] = 1;
    assert!(message(GgufFile::parse(bytes, "x.gguf")).contains("version 1 is not supported"));
}

#[test]
fn an_unsupported_tensor_type_is_named_when_read() {
    // Q5_K: 256 weights in 176 bytes, which this reader does not dequantize.
    let t = RawTensor { name: "q5k".into(), dims: vec![256], dtype: GgmlType::Other(13), data: vec![0; 176] };
    let f = GgufFile::parse(write_gguf(&[], &[t]), "q5k.gguf").unwrap();
    let e = f.dequantize("q5k").unwrap_err().to_string();
    assert!(e.contains("Q5_K") && e.contains("not supported"), "{e}");
}

#[test]
fn a_count_larger_than_the_file_is_refused_before_allocating() {
    let mut bytes = sample();
    bytes[8..16].copy_from_slice(&u64::MAX.to_le_bytes()); // tensor count
    assert!(message(GgufFile::parse(bytes, "x.gguf")).contains("tensor count"));
    let mut bytes = sample();
    // The first key's length.
    bytes[24..32].copy_from_slice(&(1u64 << 60).to_le_bytes());
    assert!(message(GgufFile::parse(bytes, "x.gguf")).contains("more than the"));
}

#[test]
fn a_missing_file_names_its_path() {
    let e = GgufFile::open(std::path::Path::new("/nonexistent/model.gguf")).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/model.gguf"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn corrupted_bytes_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6)) {
        let mut bytes = sample();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        if let Ok(f) = GgufFile::parse(bytes, "fuzz.gguf") {
            for t in f.tensors.clone() {
                let _ = f.dequantize(&t.name);
            }
        }
    }
}

#[test]
fn a_tensor_offset_near_the_largest_integer_is_refused() {
    // Found by the fuzzer: the error's own byte offset overflowed.
    let t = RawTensor { name: "w".into(), dims: vec![4], dtype: GgmlType::F32, data: vec![0; 16] };
    let mut bytes = write_gguf(&[], &[t]);
    // The tensor entry ends with its 8-byte offset, just before the data section's padding.
    let entry_end = 24 + 8 + 1 + 4 + 8 + 4 + 8;
    bytes[entry_end - 8..entry_end].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
    assert!(message(GgufFile::parse(bytes, "x.gguf")).contains("runs past the end"));
}

#[test]
fn a_tokenizer_with_another_pre_tokenizer_is_refused_not_split_wrongly() {
    let strings = |v: &[&str]| MetaValue::Array(v.iter().map(|s| MetaValue::String(s.to_string())).collect());
    let file = |pre: Option<&str>| {
        let mut meta = vec![
            ("tokenizer.ggml.model".to_string(), MetaValue::String("gpt2".into())),
            ("tokenizer.ggml.tokens".to_string(), strings(&["a", "b", "ab"])),
            ("tokenizer.ggml.merges".to_string(), strings(&["a b"])),
        ];
        if let Some(p) = pre {
            meta.push(("tokenizer.ggml.pre".to_string(), MetaValue::String(p.into())));
        }
        GgufFile::parse(write_gguf(&meta, &[]), "t.gguf").unwrap()
    };
    use lacuna_compiler::tokenizer::{TokenId, Tokenizer};
    for ok in [None, Some("smollm")] {
        assert_eq!(Tokenizer::from_gguf(&file(ok)).unwrap().encode("ab"), [TokenId(2)]);
    }
    let e = Tokenizer::from_gguf(&file(Some("llama-bpe"))).unwrap_err().to_string();
    assert!(e.contains("tokenizer.ggml.pre is \"llama-bpe\""), "{e}");
}

#[test]
fn a_file_of_many_tensor_entries_is_checked_in_linear_time() {
    // Once: a 6.4 MB file of 160,000 entries took 98 s to refuse (names compared pairwise).
    let mut tensors: Vec<RawTensor> = (0..160_000)
        .map(|i| RawTensor { name: format!("t{i}"), dims: vec![1], dtype: GgmlType::F32, data: vec![0; 4] })
        .collect();
    tensors.push(RawTensor { name: "t7".into(), dims: vec![1], dtype: GgmlType::F32, data: vec![0; 4] });
    let bytes = write_gguf(&[], &tensors);
    let start = std::time::Instant::now();
    let e = message(GgufFile::parse(bytes, "many.gguf"));
    assert!(e.contains("tensor t7 appears twice"), "{e}");
    // Pairwise, this is 1.3e10 comparisons: minutes even optimised. Linear: well under a second.
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}
