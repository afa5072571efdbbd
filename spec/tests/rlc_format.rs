//! RLC-CSC encoding rules, the worked example of the format document, and round-trip properties.

use half::f16;
use lacuna_spec::rlc::{run_at, RlcCsc, RlcError, RlcMatrix};
use lacuna_spec::{read_rlc, write_rlc, DenseMatrix};
use proptest::prelude::*;

fn column(rows: usize, nonzeros: &[(usize, f32)]) -> DenseMatrix {
    let mut d = DenseMatrix::zeros(rows, 1);
    for &(r, v) in nonzeros {
        d.set(r, 0, f16::from_f32(v));
    }
    d
}

fn runs_of(m: &RlcCsc) -> Vec<u8> {
    (0..m.entries() as usize).map(|i| m.run(i)).collect()
}

#[test]
fn the_worked_example_encodes_as_the_format_document_says() {
    // Nonzeros a at row 2 and b at row 23: val = [a, 0, b], dlt = [2, 15, 4].
    let (a, b) = (1.5f32, -0.25f32);
    let m = RlcCsc::encode(&column(24, &[(2, a), (23, b)])).unwrap();
    assert_eq!(m.entries(), 3);
    assert_eq!(&m.values()[..3], &[f16::from_f32(a), f16::ZERO, f16::from_f32(b)]);
    assert_eq!(runs_of(&m), vec![2, 15, 4]);
    // Nibbles: entry 0 in bits [3:0] of byte 0, entry 1 in bits [7:4], entry 2 in byte 1.
    assert_eq!(m.runs()[0], 0xf2);
    assert_eq!(m.runs()[1], 0x04);
    // Padded to 8 entries; the padding decodes nowhere.
    assert_eq!(m.padded_len(), 8);
    let rows: Vec<u32> = m.column(0).map(|e| e.row).collect();
    assert_eq!(rows, vec![2, 18, 23], "the padding entry decodes to row 18");
    assert_eq!(m.padding_entries(), 1);
    assert_eq!(m.nnz(), 2);
}

#[test]
fn padding_after_the_last_nonzero_is_dropped() {
    let m = RlcCsc::encode(&column(100, &[(0, 1.0)])).unwrap();
    assert_eq!(m.entries(), 1);
    let empty = RlcCsc::encode(&column(100, &[])).unwrap();
    assert_eq!(empty.entries(), 0);
    assert_eq!(empty.padded_len(), 0);
}

#[test]
fn runs_of_fourteen_fifteen_and_sixteen_zeros_encode_with_the_fewest_paddings() {
    // (gap of zeros before the nonzero, expected runs)
    let cases: [(usize, &[u8]); 7] = [
        (14, &[14]),
        (15, &[15]),
        (16, &[15, 0]),
        (30, &[15, 14]),
        (31, &[15, 15]),
        (32, &[15, 15, 0]),
        (47, &[15, 15, 15]),
    ];
    for (gap, expected) in cases {
        let m = RlcCsc::encode(&column(gap + 1, &[(gap, 2.0)])).unwrap();
        assert_eq!(runs_of(&m), expected, "gap {gap}");
        assert_eq!(m.column(0).last().unwrap().row as usize, gap);
    }
}

#[test]
fn odd_trailing_padding_never_leaves_a_stale_nibble() {
    // Column 0 ends after an odd number of entries; column 1's first run must not be added to
    // a stale nibble (the bug of the reference encoder).
    let mut d = DenseMatrix::zeros(40, 2);
    d.set(3, 0, f16::ONE); // col 0: one entry, run 3; trailing padding dropped
    d.set(9, 1, f16::ONE); // col 1: run 9, lands in the high nibble of byte 0
    let m = RlcCsc::encode(&d).unwrap();
    assert_eq!(m.runs()[0], 0x93);
    assert_eq!(m.decode(), d);
}

#[test]
fn negative_zero_weights_are_zeros() {
    let mut d = column(4, &[(1, 1.0)]);
    d.set(2, 0, f16::NEG_ZERO);
    let m = RlcCsc::encode(&d).unwrap();
    assert_eq!(m.nnz(), 1);
    assert_eq!(m.decode().get(2, 0).to_bits(), 0);
}

#[test]
fn non_finite_weights_are_refused_with_their_position() {
    let d = column(4, &[(2, f32::INFINITY)]);
    let err = RlcCsc::encode(&d).unwrap_err();
    assert!(matches!(err, RlcError::NonFiniteWeight { row: 2, col: 0, .. }), "{err}");
}

#[test]
fn storage_is_twenty_bits_per_entry_plus_a_pointer_per_column() {
    let mut d = DenseMatrix::zeros(16, 4);
    for r in 0..16 {
        d.set(r, 1, f16::ONE);
    }
    let m = RlcMatrix::encode(&d, None).unwrap();
    let s = m.stats();
    assert_eq!(s.stored_entries, 16);
    assert_eq!(s.bytes, 16 * 2 + 8 + 5 * 4);
    assert_eq!(s.dense_fp16_bytes, 16 * 4 * 2);
}

/// A sparse matrix whose zero runs cover the interesting lengths: each column is a sequence of
/// gaps drawn from a set that includes 14, 15, 16, 30, 31, 32 and long runs.
fn sparse_matrix() -> impl Strategy<Value = DenseMatrix> {
    let gap = prop_oneof![
        Just(0usize),
        Just(14),
        Just(15),
        Just(16),
        Just(30),
        Just(31),
        Just(32),
        0usize..100,
        100usize..300
    ];
    let value = prop_oneof![
        (-60000.0f32..60000.0),
        (-1.0f32..1.0),
        Just(6.0e-8f32), // an FP16 subnormal
    ]
    .prop_filter("nonzero in FP16", |v| f16::from_f32(*v).to_bits() & 0x7fff != 0);
    (1usize..=300, 1usize..=12).prop_flat_map(move |(rows, cols)| {
        proptest::collection::vec(proptest::collection::vec((gap.clone(), value.clone()), 0..8), cols).prop_map(
            move |columns| {
                let mut d = DenseMatrix::zeros(rows, columns.len());
                for (k, col) in columns.iter().enumerate() {
                    let mut r = 0usize;
                    for &(g, v) in col {
                        r += g;
                        if r >= rows {
                            break;
                        }
                        d.set(r, k, f16::from_f32(v));
                        r += 1;
                    }
                }
                d
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn encoding_then_decoding_is_the_identity(d in sparse_matrix()) {
        let m = RlcCsc::encode(&d).unwrap();
        prop_assert_eq!(m.decode(), d.clone());
        prop_assert_eq!(m.nnz() as usize, d.nnz());
    }

    #[test]
    fn every_encoding_is_canonical_and_survives_from_parts(d in sparse_matrix()) {
        let m = RlcCsc::encode(&d).unwrap();
        let again = RlcCsc::from_parts(m.rows(), m.cols(), m.values().to_vec(), m.runs().to_vec(), m.colptr().to_vec()).unwrap();
        prop_assert_eq!(&again, &m);
        prop_assert_eq!(RlcCsc::encode(&m.decode()).unwrap(), m.clone());
        // The encoding rule: padding only where 16 zeros would otherwise pass unmarked.
        for k in 0..m.cols() as usize {
            for e in m.column(k) {
                prop_assert!(e.run <= 15);
                if e.is_padding() { prop_assert_eq!(e.run, 15); }
            }
        }
    }

    #[test]
    fn panels_decode_to_the_same_matrix(d in sparse_matrix(), panel_rows in 1u32..64) {
        let m = RlcMatrix::encode(&d, Some(panel_rows)).unwrap();
        prop_assert_eq!(m.panels().len(), d.rows().div_ceil(panel_rows as usize));
        prop_assert_eq!(m.decode(), d.clone());
        prop_assert_eq!(m.stats().nnz as usize, d.nnz());
    }

    #[test]
    fn a_written_file_reads_back_to_the_same_matrix(d in sparse_matrix(), panel_rows in 1u32..400) {
        let m = RlcMatrix::encode(&d, Some(panel_rows)).unwrap();
        let bytes = write_rlc(&m);
        let back = read_rlc(&bytes).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(write_rlc(&back), bytes);
    }
}

#[test]
fn all_zero_matrices_single_rows_and_single_columns_round_trip() {
    for (rows, cols) in [(1, 1), (1, 50), (50, 1), (33, 7)] {
        let d = DenseMatrix::zeros(rows, cols);
        let m = RlcMatrix::encode(&d, None).unwrap();
        assert_eq!(m.stats().stored_entries, 0);
        assert_eq!(m.decode(), d);
        let mut dense = DenseMatrix::zeros(rows, cols);
        for v in dense.data_mut() {
            *v = f16::from_f32(-3.0);
        }
        let m = RlcMatrix::encode(&dense, Some(16)).unwrap();
        assert_eq!(m.stats().padding_entries, 0);
        assert_eq!(m.decode(), dense);
        assert_eq!(read_rlc(&write_rlc(&m)).unwrap(), m);
    }
}

#[test]
fn run_lengths_read_as_a_little_endian_word_give_the_same_nibbles() {
    // Entry 8w+i is bits [4i+3:4i] of little-endian 32-bit word w.
    let mut d = DenseMatrix::zeros(200, 1);
    for r in (0..200).step_by(7) {
        d.set(r, 0, f16::ONE);
    }
    let m = RlcCsc::encode(&d).unwrap();
    for (w, word) in m.runs().chunks_exact(4).enumerate() {
        let word = u32::from_le_bytes(word.try_into().unwrap());
        for i in 0..8 {
            assert_eq!(((word >> (4 * i)) & 0xf) as u8, run_at(m.runs(), 8 * w + i));
        }
    }
}
