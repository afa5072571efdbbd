//! Each kind of malformed `.rlc` file is refused with its own error, never a panic.

use half::f16;
use lacuna_spec::rlc::RlcError;
use lacuna_spec::rlc_file::{HEADER_BYTES, PANEL_HEADER_BYTES};
use lacuna_spec::{read_rlc, write_rlc, DenseMatrix, RlcFileError, RlcMatrix};

/// 40x3: column 0 holds rows 2 and 23 (runs 2, 15, 4), column 1 is empty, column 2 holds row 39
/// (runs 15, 15, 7). Six stored entries, padded to eight.
fn sample() -> Vec<u8> {
    let mut d = DenseMatrix::zeros(40, 3);
    d.set(2, 0, f16::from_f32(1.0));
    d.set(23, 0, f16::from_f32(2.0));
    d.set(39, 2, f16::from_f32(3.0));
    write_rlc(&RlcMatrix::encode(&d, None).unwrap())
}

const VALUES: usize = HEADER_BYTES + PANEL_HEADER_BYTES; // 8 values x 2 bytes
const RUNS: usize = VALUES + 16; // 4 bytes
const COLPTR: usize = RUNS + 4; // 4 pointers x 4 bytes

/// Recomputes the trailer so that the structural checks (not the checksum) see the change.
fn fix_crc(bytes: &mut [u8]) {
    let n = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..n]);
    bytes[n..].copy_from_slice(&crc.to_le_bytes());
}

fn corrupt(edit: impl FnOnce(&mut Vec<u8>)) -> RlcFileError {
    let mut bytes = sample();
    edit(&mut bytes);
    fix_crc(&mut bytes);
    read_rlc(&bytes).expect_err("the corrupted file must be refused")
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn the_sample_file_is_valid_and_laid_out_as_documented() {
    let bytes = sample();
    assert_eq!(bytes.len(), COLPTR + 16 + 4);
    assert_eq!(&bytes[RUNS..RUNS + 4], &[0xf2, 0xf4, 0x7f, 0x00]);
    let m = read_rlc(&bytes).unwrap();
    assert_eq!(m.panels()[0].colptr(), &[0, 3, 3, 6]);
}

#[test]
fn a_truncated_file_is_reported_as_truncated() {
    let bytes = sample();
    for len in [0, 7, 20, HEADER_BYTES, VALUES + 3, bytes.len() - 1] {
        let err = read_rlc(&bytes[..len]).unwrap_err();
        assert!(matches!(err, RlcFileError::Truncated { .. }), "len {len}: {err}");
    }
}

#[test]
fn another_file_type_is_reported_by_its_magic() {
    let err = read_rlc(b"\x93NUMPY\x01\x00 this is not an rlc file at all, no......").unwrap_err();
    assert!(matches!(err, RlcFileError::BadMagic { .. }), "{err}");
}

#[test]
fn an_unknown_version_or_value_format_is_refused() {
    let err = corrupt(|b| b[8] = 2);
    assert!(matches!(err, RlcFileError::UnsupportedVersion(2)), "{err}");
    let err = corrupt(|b| b[10] = 9);
    assert!(matches!(err, RlcFileError::UnsupportedValueFormat(9)), "{err}");
}

#[test]
fn a_flipped_bit_is_caught_by_the_checksum() {
    let mut bytes = sample();
    bytes[VALUES + 1] ^= 0x10;
    let err = read_rlc(&bytes).unwrap_err();
    assert!(matches!(err, RlcFileError::Checksum { .. }), "{err}");
}

#[test]
fn bytes_after_the_trailer_are_refused() {
    let mut bytes = sample();
    bytes.extend_from_slice(&[0, 0]);
    let err = read_rlc(&bytes).unwrap_err();
    assert!(matches!(err, RlcFileError::TrailingBytes(2)), "{err}");
}

#[test]
fn a_run_past_the_end_of_its_column_is_refused() {
    // Column 2's last entry: run 7 -> 15 decodes to row 47 of a 40-row column.
    let err = corrupt(|b| b[RUNS + 2] = 0xff);
    assert!(
        matches!(err, RlcFileError::Panel { panel: 0, source: RlcError::RunOverrunsColumn { col: 2, row: 47, .. } }),
        "{err}"
    );
}

#[test]
fn non_monotone_column_pointers_are_refused() {
    let err = corrupt(|b| put_u32(b, COLPTR + 8, 1)); // colptr = [0, 3, 1, 6]
    assert!(
        matches!(err, RlcFileError::Panel { source: RlcError::ColptrNotMonotone { col: 1, start: 3, end: 1 }, .. }),
        "{err}"
    );
    let err = corrupt(|b| put_u32(b, COLPTR, 1));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::ColptrStart(1), .. }), "{err}");
}

#[test]
fn a_last_pointer_that_disagrees_with_the_stored_count_is_refused() {
    let err = corrupt(|b| put_u32(b, COLPTR + 12, 5));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::TailNotZero { .. }, .. }), "{err}");
    let err = corrupt(|b| put_u32(b, COLPTR + 12, 12));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::CountMismatch { .. }, .. }), "{err}");
}

#[test]
fn counts_in_the_headers_that_disagree_with_the_arrays_are_refused() {
    let err = corrupt(|b| b[40] = 7); // total nnz
    assert!(matches!(err, RlcFileError::CountMismatch { header: 7, counted: 3, .. }), "{err}");
    let err = corrupt(|b| b[32] = 9); // total stored entries
    assert!(matches!(err, RlcFileError::CountMismatch { header: 9, counted: 6, .. }), "{err}");
    let err = corrupt(|b| b[HEADER_BYTES + 8] = 2); // panel nnz
    assert!(matches!(err, RlcFileError::CountMismatch { header: 2, counted: 3, .. }), "{err}");
}

#[test]
fn a_panel_count_that_does_not_tile_the_rows_is_refused() {
    let err = corrupt(|b| put_u32(b, 24, 2));
    assert!(matches!(err, RlcFileError::BadHeader(_)), "{err}");
    let err = corrupt(|b| put_u32(b, 20, 0));
    assert!(matches!(err, RlcFileError::BadHeader(_)), "{err}");
    let err = corrupt(|b| put_u32(b, 12, 0));
    assert!(matches!(err, RlcFileError::BadHeader(_)), "{err}");
}

#[test]
fn a_huge_entry_count_is_truncation_not_an_allocation() {
    let err = corrupt(|b| b[HEADER_BYTES..HEADER_BYTES + 8].copy_from_slice(&(u32::MAX as u64).to_le_bytes()));
    assert!(matches!(err, RlcFileError::Truncated { .. }), "{err}");
    let err = corrupt(|b| b[HEADER_BYTES..HEADER_BYTES + 8].copy_from_slice(&u64::MAX.to_le_bytes()));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::TooManyEntries(_), .. }), "{err}");
}

#[test]
fn non_finite_values_are_refused() {
    let err = corrupt(|b| b[VALUES..VALUES + 2].copy_from_slice(&0x7c00u16.to_le_bytes()));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::NonFiniteValue { entry: 0, .. }, .. }), "{err}");
}

#[test]
fn zeros_that_are_not_canonical_padding_are_refused() {
    // Entry 0 (run 2) set to zero: a zero with a run other than 15.
    let err = corrupt(|b| b[VALUES..VALUES + 2].copy_from_slice(&[0, 0]));
    assert!(
        matches!(err, RlcFileError::Panel { source: RlcError::NonCanonicalZero { entry: 0, run: 2, .. }, .. }),
        "{err}"
    );
    // The padding entry (entry 1) as -0.0.
    let err = corrupt(|b| b[VALUES + 2..VALUES + 4].copy_from_slice(&0x8000u16.to_le_bytes()));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::NonCanonicalZero { entry: 1, .. }, .. }), "{err}");
}

#[test]
fn a_column_ending_in_padding_is_refused() {
    // Column 0 = entries 0..3; make it 0..2 so it ends on the padding entry; column 1 takes entry 2.
    let err = corrupt(|b| put_u32(b, COLPTR + 4, 2));
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::TrailingPadding { col: 0, .. }, .. }), "{err}");
}

#[test]
fn a_nonzero_padding_tail_is_refused() {
    let err = corrupt(|b| b[VALUES + 14] = 1); // entry 7, past colptr[K] = 6
    assert!(matches!(err, RlcFileError::Panel { source: RlcError::TailNotZero { entry: 7, .. }, .. }), "{err}");
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A deterministic sweep of single-byte edits over the whole file, with the checksum fixed.
    let base = sample();
    for at in 0..base.len() - 4 {
        for v in [0u8, 1, 0x0f, 0x7f, 0x80, 0xff] {
            let mut b = base.clone();
            b[at] = v;
            fix_crc(&mut b);
            if let Ok(m) = read_rlc(&b) {
                // Whatever is accepted is canonical: it writes back byte for byte.
                assert_eq!(write_rlc(&m), b, "edit at {at} to {v:#x}");
            }
        }
    }
}
