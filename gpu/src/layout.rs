//! Everything up to a launch, computed on the host without a GPU: the device buffers a matrix
//! becomes, the activation key, and the launch geometry of each kernel.
//!
//! The flat layout (read by `kernels.cu`): the panels' `values` (FP16 bits) back to back, then
//! their `runs` bytes back to back (each panel's arrays are padded to a multiple of 8 entries by
//! the format, so every panel starts on a 16-byte value word and a 4-byte run word); their
//! `colptr` arrays back to back, `K + 1` each and relative to the panel; and one [`PanelDesc`] per
//! panel. Nothing is re-encoded: the bytes are the `.rlc` panel arrays as they are.

use lacuna_spec::rlc::ENTRIES_PER_WORD;
use lacuna_spec::{ActivationFilter, RlcMatrix};

/// One panel as the kernels see it (`struct Panel` in `kernels.cu`: same fields, same order,
/// 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PanelDesc {
    /// The panel's first stored entry in the flat arrays (a multiple of 8).
    pub entry_base: u64,
    /// The first row of y the panel owns.
    pub row_start: u32,
    /// Its rows.
    pub rows: u32,
}

/// A matrix flattened for the device.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatMatrix {
    /// M.
    pub rows: u32,
    /// K.
    pub cols: u32,
    /// FP16 value bits of every panel, back to back.
    pub values: Vec<u16>,
    /// Packed run lengths of every panel, back to back (two per byte, low nibble first).
    pub runs: Vec<u8>,
    /// Column pointers, `K + 1` per panel, relative to the panel.
    pub colptr: Vec<u32>,
    /// The panel table.
    pub panels: Vec<PanelDesc>,
}

impl FlatMatrix {
    /// Flattens `m` (already validated: an `RlcMatrix` only holds canonical panels).
    pub fn new(m: &RlcMatrix) -> FlatMatrix {
        let total: usize = m.panels().iter().map(|p| p.values().len()).sum();
        let mut f = FlatMatrix {
            rows: m.rows(),
            cols: m.cols(),
            values: Vec::with_capacity(total),
            runs: Vec::with_capacity(total / 2),
            colptr: Vec::with_capacity(m.panels().len() * (m.cols() as usize + 1)),
            panels: Vec::with_capacity(m.panels().len()),
        };
        for (p, panel) in m.panels().iter().enumerate() {
            debug_assert_eq!(f.values.len() % ENTRIES_PER_WORD, 0);
            f.panels.push(PanelDesc {
                entry_base: f.values.len() as u64,
                row_start: m.panel_start(p) as u32,
                rows: panel.rows(),
            });
            f.values.extend(panel.values().iter().map(|v| v.to_bits()));
            f.runs.extend_from_slice(panel.runs());
            f.colptr.extend_from_slice(panel.colptr());
        }
        // A matrix whose panels are all empty still gets one word, so that no buffer is empty.
        if f.values.is_empty() {
            f.values.resize(ENTRIES_PER_WORD, 0);
            f.runs.resize(ENTRIES_PER_WORD / 2, 0);
        }
        f
    }

    /// The tallest panel (the fast kernel's shared-memory accumulators).
    pub fn max_panel_rows(&self) -> u32 {
        self.panels.iter().map(|p| p.rows).max().unwrap_or(0)
    }

    /// Refuses a panel the kernels cannot index with 32-bit integers.
    pub fn check_panel_sizes(&self) -> Result<(), GeometryError> {
        let ends = self.panels.iter().map(|p| p.entry_base).skip(1).chain([self.values.len() as u64]);
        for (panel, (p, end)) in self.panels.iter().zip(ends).enumerate() {
            let entries = end.saturating_sub(p.entry_base);
            if entries > (1 << 31) - 8 || p.rows > i32::MAX as u32 {
                return Err(GeometryError::PanelTooLarge { panel, entries });
            }
        }
        Ok(())
    }

    /// The panel table as bytes, in the layout of `struct Panel`.
    pub fn panel_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.panels.len() * std::mem::size_of::<PanelDesc>());
        for p in &self.panels {
            out.extend_from_slice(&p.entry_base.to_le_bytes());
            out.extend_from_slice(&p.row_start.to_le_bytes());
            out.extend_from_slice(&p.rows.to_le_bytes());
        }
        out
    }

    /// Bytes on the device.
    pub fn device_bytes(&self) -> u64 {
        (self.values.len() * 2 + self.runs.len() + self.colptr.len() * 4 + self.panel_bytes().len()) as u64
    }
}

/// The kernels' activation test as one integer: column k takes part iff
/// `(x_k & 0x7fff) != 0 && (x_k & 0x7fff) >= key`. For finite non-negative FP16 values the order
/// of the bits is the order of the values, so this is [`ActivationFilter::is_active`] for every
/// finite x: a threshold at or below zero keeps every nonzero activation (key 0); a NaN threshold
/// keeps none (key above every finite magnitude).
pub fn activation_key(filter: ActivationFilter) -> u32 {
    let t = filter.threshold;
    if t.is_nan() {
        0x8000
    } else if t.to_f32() <= 0.0 {
        0
    } else {
        (t.to_bits() & 0x7fff) as u32
    }
}

/// Warps per block of the golden kernel (one warp per panel).
pub const GOLDEN_WARPS: u32 = 4;

/// A launch: grid, block and dynamic shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Blocks (x, y).
    pub grid: (u32, u32),
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory in bytes.
    pub shared_bytes: u32,
}

/// The golden kernel's launch for `m`.
pub fn golden_launch(m: &FlatMatrix) -> Launch {
    let panels = m.panels.len() as u32;
    Launch { grid: (panels.div_ceil(GOLDEN_WARPS).max(1), 1), threads: GOLDEN_WARPS * 32, shared_bytes: 0 }
}

/// How the fast kernel's blocks put their partial sums together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Merge {
    /// `atomicAdd` into y, zeroed before.
    Atomic,
    /// Plain stores into a buffer of splits x M partial sums, then `lacuna_reduce_splits`.
    Reduce,
}

/// The fast kernel's tuning knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FastParams {
    /// Threads per block (a multiple of 32, at most 1024); each warp has accumulators of its own.
    pub threads: u32,
    /// Blocks aimed at per multiprocessor: the grid holds about `blocks_per_sm x SMs` blocks.
    pub blocks_per_sm: u32,
    /// How blocks merge their sums.
    pub merge: Merge,
}

impl FastParams {
    /// The default, before any tuning.
    pub const DEFAULT: FastParams = FastParams { threads: 256, blocks_per_sm: 2, merge: Merge::Atomic };

    /// The settings an autotuning pass tries (some may not fit a given matrix's panels: see
    /// [`FastGeometry::new`]).
    pub fn candidates() -> Vec<FastParams> {
        let mut out = Vec::new();
        for merge in [Merge::Atomic, Merge::Reduce] {
            for threads in [64, 128, 256, 512] {
                for blocks_per_sm in [2, 4, 8] {
                    out.push(FastParams { threads, blocks_per_sm, merge });
                }
            }
        }
        out
    }

    /// One warp a block: the setting whose accumulators fit where no other's do.
    pub const ONE_WARP: FastParams = FastParams { threads: 32, blocks_per_sm: 8, merge: Merge::Atomic };
}

/// The launch of `lacuna_reduce_splits` for M rows: one block of 1024 threads per 32 rows.
pub fn reduce_launch(rows: u32) -> Launch {
    Launch { grid: (rows.div_ceil(32).max(1), 1), threads: 1024, shared_bytes: 0 }
}

/// Why the fast kernel cannot run a matrix on a device.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GeometryError {
    /// The panel accumulators do not fit shared memory.
    #[error(
        "the fast kernel keeps a panel's accumulators in shared memory, one set a warp: {needed} bytes \
         for {warps} warps and panels of {rows} rows, but a block may have {limit}; use fewer threads \
         a block or encode with shorter row panels"
    )]
    PanelTooTall {
        /// Bytes needed.
        needed: u64,
        /// Warps per block.
        warps: u32,
        /// The tallest panel.
        rows: u32,
        /// The device's limit per block.
        limit: u32,
    },
    /// A panel with 2^31 stored entries or rows or more (the kernels index a panel with 32-bit
    /// signed integers).
    #[error("panel {panel} ({entries} stored entries) is too large: the GPU kernels take at most 2^31 - 8 entries and 2^31 - 1 rows a panel")]
    PanelTooLarge {
        /// The panel.
        panel: usize,
        /// Its padded entries.
        entries: u64,
    },
    /// More column splits than a grid dimension holds.
    #[error("{cols} columns need {splits} column splits of at most {max} columns, more than a grid's 65,535")]
    TooManyColumns {
        /// K.
        cols: u32,
        /// Splits needed.
        splits: u64,
        /// Columns a split at most.
        max: u64,
    },
    /// Threads per block out of range.
    #[error("threads per block must be a multiple of 32 in 32..=1024, got {0}")]
    Threads(u32),
}

/// The most columns one block of the fast kernel takes (its list of active columns is in
/// shared memory).
pub const MAX_SPLIT_COLS: u64 = 4096;

/// The fast kernel's launch geometry on a device with `sms` multiprocessors and `smem_limit`
/// bytes of shared memory per block (the opt-in maximum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastGeometry {
    /// The launch.
    pub launch: Launch,
    /// Columns per block (the last split may hold fewer).
    pub cols_per_split: u32,
    /// Floats of accumulators a warp (the tallest panel, rounded up to a multiple of 4).
    pub acc_words: u32,
}

impl FastGeometry {
    /// Splits the columns so that panels x splits is about `blocks_per_sm x sms` blocks, no split
    /// empty; refuses a panel whose accumulators and column list do not fit `smem_limit`.
    pub fn new(m: &FlatMatrix, p: FastParams, sms: u32, smem_limit: u32) -> Result<FastGeometry, GeometryError> {
        Self::for_shape(m.panels.len() as u32, m.cols, m.max_panel_rows(), p, sms, smem_limit)
    }

    /// [`FastGeometry::new`] from the three numbers it depends on: panels, columns, tallest panel.
    pub fn for_shape(
        panels: u32,
        cols: u32,
        max_panel_rows: u32,
        p: FastParams,
        sms: u32,
        smem_limit: u32,
    ) -> Result<FastGeometry, GeometryError> {
        if p.threads == 0 || p.threads % 32 != 0 || p.threads > 1024 {
            return Err(GeometryError::Threads(p.threads));
        }
        let panels = panels.max(1) as u64;
        let target = (p.blocks_per_sm.max(1) as u64) * (sms.max(1) as u64);
        let cols = cols.max(1) as u64;
        let splits = target.div_ceil(panels).clamp(1, cols);
        // A block's list of active columns lives in shared memory: at most MAX_SPLIT_COLS words,
        // whatever the number of panels.
        let cols_per_split = cols.div_ceil(splits).min(MAX_SPLIT_COLS);
        let splits = cols.div_ceil(cols_per_split); // no empty split
        if splits > 65_535 {
            return Err(GeometryError::TooManyColumns { cols: cols as u32, splits, max: MAX_SPLIT_COLS });
        }
        let acc_words = max_panel_rows.div_ceil(4) * 4;
        let warps = p.threads / 32;
        // The accumulators, the list of active columns and its count (all dynamic: the kernel
        // has no static shared memory).
        let needed = 4 * (warps as u64 * acc_words as u64 + cols_per_split + 1);
        if needed > smem_limit as u64 {
            return Err(GeometryError::PanelTooTall { needed, warps, rows: max_panel_rows, limit: smem_limit });
        }
        Ok(FastGeometry {
            launch: Launch { grid: (panels as u32, splits as u32), threads: p.threads, shared_bytes: needed as u32 },
            cols_per_split: cols_per_split as u32,
            acc_words,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;
    use lacuna_spec::{DenseMatrix, RlcMatrix};

    fn matrix(rows: usize, cols: usize, panel_rows: u32) -> RlcMatrix {
        let mut d = DenseMatrix::zeros(rows, cols);
        for r in 0..rows {
            for k in 0..cols {
                if (r * 7 + k * 3) % 5 == 0 {
                    d.set(r, k, f16::from_f32(((r + k) % 9) as f32 - 4.0));
                }
            }
        }
        RlcMatrix::encode(&d, Some(panel_rows)).unwrap()
    }

    #[test]
    fn the_flat_arrays_are_the_panels_back_to_back_each_on_a_word() {
        let m = matrix(70, 9, 32);
        let f = FlatMatrix::new(&m);
        assert_eq!(f.panels.len(), 3);
        assert_eq!(f.colptr.len(), 3 * 10);
        for (p, (desc, panel)) in f.panels.iter().zip(m.panels()).enumerate() {
            assert_eq!(desc.entry_base % 8, 0);
            assert_eq!(desc.row_start as usize, m.panel_start(p));
            assert_eq!(desc.rows, panel.rows());
            let b = desc.entry_base as usize;
            let vals: Vec<u16> = panel.values().iter().map(|v| v.to_bits()).collect();
            assert_eq!(&f.values[b..b + vals.len()], &vals[..]);
            assert_eq!(&f.runs[b / 2..b / 2 + panel.runs().len()], panel.runs());
            assert_eq!(&f.colptr[p * 10..p * 10 + 10], panel.colptr());
        }
        assert_eq!(f.values.len(), 2 * f.runs.len());
        assert_eq!(f.panel_bytes().len(), 48);
        assert_eq!(std::mem::size_of::<PanelDesc>(), 16);
        assert_eq!(f.max_panel_rows(), 32);
    }

    #[test]
    fn the_activation_key_is_the_filter_for_every_finite_activation_and_threshold_kind() {
        let thresholds = [0.0f32, -0.0, -1.0, 1e-7, 0.5, 1.0, 3.0, 65504.0, f32::NAN, f32::INFINITY];
        for t in thresholds {
            let filter = ActivationFilter { threshold: f16::from_f32(t) };
            let key = activation_key(filter);
            for bits in 0..=u16::MAX {
                let x = f16::from_bits(bits);
                if !x.is_finite() {
                    continue;
                }
                let mag = (bits & 0x7fff) as u32;
                let kernel = mag != 0 && mag >= key;
                assert_eq!(kernel, filter.is_active(x), "threshold {t}, x {x}");
            }
        }
    }

    #[test]
    fn the_golden_launch_gives_every_panel_one_warp() {
        let f = FlatMatrix::new(&matrix(70, 9, 8));
        let l = golden_launch(&f);
        assert_eq!(f.panels.len(), 9);
        assert!(l.grid.0 * l.threads / 32 >= 9 && (l.grid.0 - 1) * l.threads / 32 < 9);
    }

    #[test]
    fn the_fast_geometry_fills_the_device_without_an_empty_split() {
        let f = FlatMatrix::new(&matrix(4096, 1000, 2048));
        let g =
            FastGeometry::new(&f, FastParams { threads: 512, blocks_per_sm: 4, merge: Merge::Atomic }, 132, 227 * 1024)
                .unwrap();
        assert_eq!(g.launch.grid.0, 2);
        let splits = g.launch.grid.1;
        assert!(splits as u64 * g.cols_per_split as u64 >= 1000);
        assert!((splits as u64 - 1) * (g.cols_per_split as u64) < 1000, "an empty split");
        // About blocks_per_sm x SMs blocks in all: never more, and at least half of them.
        assert!(splits * 2 <= 4 * 132 && splits * 2 >= 4 * 132 / 2, "{splits} splits");
        assert_eq!(g.launch.shared_bytes, 4 * (16 * 2048 + g.cols_per_split + 1));
        // Fewer columns than the device wants splits: one column a block.
        let f = FlatMatrix::new(&matrix(64, 3, 64));
        let g = FastGeometry::new(&f, FastParams::DEFAULT, 132, 48 * 1024).unwrap();
        assert_eq!((g.launch.grid, g.cols_per_split), ((1, 3), 1));
        // Many panels and many columns: the split is capped, the panels go on the grid's x.
        let g = FastGeometry::for_shape(100_000, 200_000, 16, FastParams::DEFAULT, 132, 227 * 1024).unwrap();
        assert_eq!((g.launch.grid, g.cols_per_split), ((100_000, 49), 4096));
        let e = FastGeometry::for_shape(1, u32::MAX, 16, FastParams::DEFAULT, 132, 227 * 1024).unwrap_err();
        assert!(matches!(e, GeometryError::TooManyColumns { .. }), "{e}");
    }

    #[test]
    fn a_panel_too_tall_for_shared_memory_or_a_bad_block_size_is_refused() {
        let f = FlatMatrix::new(&matrix(20000, 4, 20000));
        let e = FastGeometry::new(&f, FastParams::DEFAULT, 132, 48 * 1024).unwrap_err();
        assert!(e.to_string().contains("shorter row panels"), "{e}");
        // One warp's 80,000 bytes fit a Hopper block (227 KiB), four warps' do not.
        let one_warp = FastParams::ONE_WARP;
        FastGeometry::new(&f, one_warp, 132, 227 * 1024).unwrap();
        assert!(FastGeometry::new(
            &f,
            FastParams { threads: 128, blocks_per_sm: 1, merge: Merge::Atomic },
            132,
            227 * 1024
        )
        .is_err());
        for t in [0, 48, 2048] {
            let e =
                FastGeometry::new(&f, FastParams { threads: t, blocks_per_sm: 1, merge: Merge::Atomic }, 132, 1 << 20)
                    .unwrap_err();
            assert_eq!(e, GeometryError::Threads(t));
        }
    }

    #[test]
    fn every_tuning_candidate_is_a_valid_launch_for_panels_of_2048_rows_on_hopper() {
        let f = FlatMatrix::new(&matrix(4096, 64, 2048));
        for p in FastParams::candidates() {
            let g = FastGeometry::new(&f, p, 132, 227 * 1024).unwrap();
            assert_eq!(g.acc_words, 2048);
        }
        assert!(FastParams::candidates().len() >= 6);
        assert!(FastParams::candidates().contains(&FastParams::DEFAULT));
    }

    #[test]
    fn accumulators_are_rounded_up_to_whole_16_byte_words_and_panels_are_within_32_bit_indices() {
        let f = FlatMatrix::new(&matrix(70, 9, 70));
        let g = FastGeometry::new(&f, FastParams::DEFAULT, 132, 227 * 1024).unwrap();
        assert_eq!(g.acc_words, 72);
        f.check_panel_sizes().unwrap();
        // A panel table whose second panel starts 2^31 entries after the first (the arrays are
        // not allocated: only the bases matter).
        let mut big = f.clone();
        big.panels.truncate(1);
        big.panels.push(PanelDesc { entry_base: 1 << 31, row_start: 70, rows: 1 });
        assert!(
            matches!(big.check_panel_sizes(), Err(GeometryError::PanelTooLarge { panel: 0, entries }) if entries == 1 << 31)
        );
        let mut tall = f.clone();
        tall.panels[0].rows = 1 << 31;
        assert!(matches!(tall.check_panel_sizes(), Err(GeometryError::PanelTooLarge { panel: 0, .. })));
    }
}
