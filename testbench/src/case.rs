//! The core cases (spMspV, and gemv over dense panels) every engine runs: seeded random ones ([`Case::random`]: synthetic matrices,
//! exact small values or real-valued Gaussian FP16), slices of real layers with real activations
//! ([`Case::from_matrix`]), and named edge cases read from TOML data files ([`Case::from_toml`],
//! `testbench/cases/`).

use half::f16;
use lacuna_model::{Job, PanelData};
use lacuna_spec::dense_panels::DensePanels;
use lacuna_spec::job::JobKind;
use lacuna_spec::{ActivationFilter, Arch, DenseMatrix, RlcCsc, RlcMatrix};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

/// One panel's arrays as the core reads them (possibly malformed).
#[derive(Clone, Debug)]
pub struct PanelArrays {
    /// Rows of the panel.
    pub rows: u32,
    /// FP16 values (padded to a multiple of 8).
    pub values: Vec<f16>,
    /// Packed run lengths (two per byte, low nibble first).
    pub runs: Vec<u8>,
    /// Column pointers (K + 1).
    pub colptr: Vec<u32>,
}

/// One core case (spMspV or gemv).
#[derive(Clone, Debug)]
pub struct Case {
    /// Its name (`random-<seed>` or the data file's).
    pub name: String,
    /// M.
    pub rows: u32,
    /// Rows per panel.
    pub panel_rows: u32,
    /// `Spmspv` (RLC-CSC panels) or `Gemv` (dense panels: `runs` empty, every run 0).
    pub kind: JobKind,
    /// The panels.
    pub panels: Vec<PanelArrays>,
    /// x.
    pub x: Vec<f16>,
    /// The activation threshold.
    pub filter: ActivationFilter,
    /// The streams were corrupted on purpose (the golden does not apply).
    pub malformed: bool,
    /// The archs the case is meant for (all when `None`).
    pub archs: Option<Vec<String>>,
}

impl Case {
    /// Whether the case is meant for `arch`.
    pub fn applies_to(&self, arch: &Arch) -> bool {
        self.archs.as_ref().is_none_or(|a| a.contains(&arch.name))
    }

    /// The job the model and the RTL run.
    pub fn job(&self) -> Job<'_> {
        Job {
            kind: self.kind,
            rows: self.rows,
            panel_rows: self.panel_rows,
            panels: self
                .panels
                .iter()
                .map(|p| PanelData { rows: p.rows, values: &p.values, runs: &p.runs, colptr: &p.colptr })
                .collect(),
            x: &self.x,
            filter: self.filter,
        }
    }

    /// The matrix, when the streams are canonical RLC-CSC or well-formed dense panels (the
    /// golden's input: a gemv job's weights in RLC-CSC, which the golden adds in the same order).
    pub fn matrix(&self) -> Option<RlcMatrix> {
        if self.malformed {
            return None;
        }
        let cols = self.x.len() as u32;
        if self.kind == JobKind::Gemv {
            let mut d = DenseMatrix::zeros(self.rows as usize, cols as usize);
            let mut row0 = 0usize;
            for p in &self.panels {
                let r = p.rows as usize;
                let implied = (0..=cols).all(|k| p.colptr.get(k as usize) == Some(&(k * p.rows)));
                if !implied || p.values.len() < r * cols as usize || row0 + r > d.rows() {
                    return None;
                }
                for k in 0..cols as usize {
                    for i in 0..r {
                        d.set(row0 + i, k, p.values[k * r + i]);
                    }
                }
                row0 += r;
            }
            return RlcMatrix::encode(&d, Some(self.panel_rows)).ok();
        }
        let panels = self
            .panels
            .iter()
            .map(|p| RlcCsc::from_parts(p.rows, cols, p.values.clone(), p.runs.clone(), p.colptr.clone()))
            .collect::<Result<Vec<_>, _>>()
            .ok()?;
        RlcMatrix::from_panels(self.rows, self.panel_rows, panels).ok()
    }

    /// A well-formed case of an encoded matrix (e.g. a slice of a real layer).
    pub fn from_matrix(name: String, m: &RlcMatrix, x: Vec<f16>, filter: ActivationFilter) -> Case {
        Case {
            name,
            kind: JobKind::Spmspv,
            rows: m.rows(),
            panel_rows: m.panel_rows(),
            panels: m
                .panels()
                .iter()
                .map(|p| PanelArrays {
                    rows: p.rows(),
                    values: p.values().to_vec(),
                    runs: p.runs().to_vec(),
                    colptr: p.colptr().to_vec(),
                })
                .collect(),
            x,
            filter,
            malformed: false,
            archs: None,
        }
    }

    /// A well-formed gemv case: `m`'s weights in dense panels.
    pub fn dense_from_matrix(name: String, m: &RlcMatrix, x: Vec<f16>, filter: ActivationFilter) -> Case {
        let d = DensePanels::from_rlc(m).expect("an RlcMatrix's weights fit dense panels of its shape");
        Case {
            name,
            kind: JobKind::Gemv,
            rows: d.rows(),
            panel_rows: d.panel_rows(),
            panels: d
                .panels()
                .iter()
                .map(|p| PanelArrays {
                    rows: p.rows(),
                    values: p.values().to_vec(),
                    runs: Vec::new(),
                    colptr: p.colptr().to_vec(),
                })
                .collect(),
            x,
            filter,
            malformed: false,
            archs: None,
        }
    }

    /// A seeded random case for `arch` (synthetic data): 1-4 panels of the arch's tile, K up to 96,
    /// density up to 50 %, 30 % zero activations, a threshold of 0, 0.5 or 1; a quarter of the
    /// cases get one corrupted run-length byte or column pointer. Even seeds draw small exact
    /// values (multiples of 1/4 and 1/2: every sum is exact whatever its order, so the cycle-level
    /// checks see clean numbers); odd seeds draw real-valued Gaussian FP16 weights and activations,
    /// where the order of the additions changes the result, so an engine that summed in another
    /// order than the golden's would differ in y. Seeds 5 and 6 modulo 8 (a quarter, exact and
    /// real-valued alike) are gemv jobs over the same weights in dense panels; a corrupted one
    /// gets a bad column pointer.
    pub fn random(arch: &Arch, seed: u64) -> Case {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let real_valued = seed % 2 == 1;
        let tile = arch.tile_rows() as usize;
        let rows = rng.random_range(1..=4 * tile);
        let cols = rng.random_range(1..=(arch.max_cols() as usize).min(96));
        let density = rng.random_range(0.0..0.5);
        let value = |rng: &mut ChaCha8Rng, exact_step: f32, exact_max: i32| -> f16 {
            if real_valued {
                f16::from_f32(rng.sample(rand_distr::StandardNormal))
            } else {
                f16::from_f32(rng.random_range(-exact_max..=exact_max) as f32 * exact_step)
            }
        };
        let mut dense = DenseMatrix::zeros(rows, cols);
        for r in 0..rows {
            for k in 0..cols {
                if rng.random_bool(density) {
                    dense.set(r, k, value(&mut rng, 0.25, 8));
                }
            }
        }
        let m = RlcMatrix::encode(&dense, Some(tile as u32)).expect("a small random matrix encodes");
        let x: Vec<f16> =
            (0..cols).map(|_| if rng.random_bool(0.3) { f16::ZERO } else { value(&mut rng, 0.5, 4) }).collect();
        let filter = ActivationFilter { threshold: f16::from_f32(rng.random_range(0i32..=2) as f32 * 0.5) };
        let name = format!("random-{seed}");
        let mut case = if matches!(seed % 8, 5 | 6) {
            Case::dense_from_matrix(name, &m, x, filter)
        } else {
            Case::from_matrix(name, &m, x, filter)
        };
        if rng.random_bool(0.25) {
            case.malformed = true;
            let p = rng.random_range(0..case.panels.len());
            let panel = &mut case.panels[p];
            if rng.random_bool(0.5) && !panel.runs.is_empty() {
                let i = rng.random_range(0..panel.runs.len());
                panel.runs[i] = rng.random();
            } else {
                let i = rng.random_range(0..panel.colptr.len());
                panel.colptr[i] = rng.random_range(0..=panel.values.len() as u32 + 4);
            }
        }
        case
    }

    /// A named case from its TOML data file (see `testbench/cases/README.md`), panels of the
    /// file's `panel_rows` or else of `arch`'s tile.
    pub fn from_toml(arch: &Arch, text: &str) -> Result<Case, CaseError> {
        let f: CaseFile = toml::from_str(text).map_err(|e| CaseError::Parse(e.to_string()))?;
        let cols = f.x.len();
        if cols == 0 {
            return Err(CaseError::Invalid(f.name, "x must not be empty".into()));
        }
        let x: Vec<f16> = f.x.iter().map(|&v| f16::from_f32(v)).collect();
        let filter = ActivationFilter { threshold: f16::from_f32(f.threshold) };
        let panel_rows = f.panel_rows.unwrap_or(arch.tile_rows());
        let bad = |why: String| CaseError::Invalid(f.name.clone(), why);
        let mut entries = f.entries.clone().unwrap_or_default();
        for &(k, first, stride, count, v) in f.stripes.iter().flatten() {
            entries.extend((0..count).map(|i| (first + i * stride, k, v)));
        }
        let archs = f.archs.clone();
        match (f.entries.is_some() || f.stripes.is_some(), &f.panels) {
            (true, None) => {
                let mut dense = DenseMatrix::zeros(f.rows as usize, cols);
                for &(r, k, v) in &entries {
                    if r as u32 >= f.rows || k as usize >= cols {
                        return Err(bad(format!("entry ({r}, {k}) outside the {} x {cols} matrix", f.rows)));
                    }
                    dense.set(r as usize, k as usize, f16::from_f32(v));
                }
                let m = RlcMatrix::encode(&dense, Some(panel_rows)).map_err(|e| bad(e.to_string()))?;
                let mut case = if f.dense {
                    Case::dense_from_matrix(f.name, &m, x, filter)
                } else {
                    Case::from_matrix(f.name, &m, x, filter)
                };
                case.archs = archs;
                Ok(case)
            }
            (false, Some(_)) if f.dense => Err(bad("`dense` takes `entries`/`stripes`, not raw panels".into())),
            (false, Some(panels)) => {
                let mut out = Vec::new();
                for p in panels {
                    let mut values: Vec<f16> = p.values.iter().map(|&v| f16::from_f32(v)).collect();
                    let mut nibbles = p.runs.clone();
                    if nibbles.len() != values.len() || nibbles.iter().any(|&n| n > 15) {
                        return Err(bad("a raw panel needs one run (0..=15) per value".into()));
                    }
                    let padded = values.len().div_ceil(8).max(1) * 8;
                    values.resize(padded, f16::ZERO);
                    nibbles.resize(padded, 0);
                    let runs = nibbles.chunks(2).map(|c| c[0] | (c[1] << 4)).collect();
                    if p.colptr.len() != cols + 1 {
                        return Err(bad(format!("a raw panel needs K + 1 = {} column pointers", cols + 1)));
                    }
                    out.push(PanelArrays { rows: p.rows, values, runs, colptr: p.colptr.clone() });
                }
                let case = Case {
                    name: f.name,
                    kind: JobKind::Spmspv,
                    rows: f.rows,
                    panel_rows,
                    panels: out,
                    x,
                    filter,
                    malformed: f.malformed,
                    archs,
                };
                if f.canonical && !case.malformed && case.matrix().is_none() {
                    return Err(CaseError::Invalid(case.name, "the raw panels are not canonical RLC-CSC".into()));
                }
                Ok(case)
            }
            _ => Err(bad("give either `entries`/`stripes` or `panels`".into())),
        }
    }
}

// The named edge cases of `testbench/cases/`, embedded (file name, text), every file of the
// folder, listed by `build.rs`.
include!(concat!(env!("OUT_DIR"), "/cases.rs"));

/// The named cases meant for `arch`.
pub fn named_cases(arch: &Arch) -> Result<Vec<Case>, CaseError> {
    let mut out = Vec::new();
    for (file, text) in NAMED_CASES {
        let case = Case::from_toml(arch, text).map_err(|e| CaseError::Invalid(file.to_string(), e.to_string()))?;
        if case.applies_to(arch) {
            out.push(case);
        }
    }
    Ok(out)
}

/// A stripe of nonzeros in a case file: (column, first row, row stride, count, value).
type Stripe = (u64, u64, u64, u64, f32);

/// A case data file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: String,
    #[allow(dead_code)]
    description: String,
    rows: u32,
    panel_rows: Option<u32>,
    x: Vec<f32>,
    #[serde(default)]
    threshold: f32,
    /// Nonzeros of W: (row, column, value).
    entries: Option<Vec<(u64, u64, f32)>>,
    /// More nonzeros: (column, first row, row stride, count, value).
    stripes: Option<Vec<Stripe>>,
    /// The archs the case is for (all when absent).
    archs: Option<Vec<String>>,
    /// Raw panels, for streams the encoder does not produce.
    panels: Option<Vec<RawPanel>>,
    #[serde(default)]
    malformed: bool,
    /// Run `entries`/`stripes` as a gemv job (dense panels) instead of spMspV.
    #[serde(default)]
    dense: bool,
    /// The raw panels are canonical RLC-CSC (checked); `false` for streams the hardware takes but
    /// the format's canonical form forbids (no golden then).
    #[serde(default = "yes")]
    canonical: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPanel {
    rows: u32,
    values: Vec<f32>,
    runs: Vec<u8>,
    colptr: Vec<u32>,
}

/// A case file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// Not TOML of the case format.
    #[error("case file: {0}")]
    Parse(String),
    /// Well-formed TOML describing an impossible case.
    #[error("case `{0}`: {1}")]
    Invalid(String, String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_file_with_an_unknown_key_or_an_entry_outside_the_matrix_is_refused() {
        let arch = Arch::preset("tiny").unwrap();
        let err =
            Case::from_toml(&arch, "name = \"a\"\ndescription = \"\"\nrows = 4\nx = [1.0]\nentries = [[9, 0, 1.0]]\n");
        assert!(err.unwrap_err().to_string().contains("outside the 4 x 1 matrix"));
        let err =
            Case::from_toml(&arch, "name = \"a\"\ndescription = \"\"\nrows = 4\nx = [1.0]\nentries = []\nspeed = 3\n");
        assert!(err.unwrap_err().to_string().contains("unknown field"));
    }
}
