//! The points of an architecture sweep (`lacuna sweep`) and the merge of its shards
//! (`lacuna merge`): one JSON object per line, one line per point.
//!
//! Contract: [`merge`] joins the lines of several shard files into one set of points, or refuses
//! with the file and line named: a line that is not a point; a point of another sweep (its hash
//! differs) or that counts the sweep's points differently; a point numbered past the sweep; a
//! point present twice. Its memory and time follow the input's size, whatever the points claim
//! (what is missing is counted, not listed).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One point's result.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub struct Point {
    /// The sweep's hash: every point of one sweep carries the same.
    pub sweep: String,
    /// The point's number in the sweep.
    pub index: usize,
    /// Points in the whole sweep.
    pub total: usize,
    pub lanes: u32,
    pub entries_per_lane: u32,
    pub acc_write_ports: u32,
    pub bytes_per_cycle: u32,
    pub arch_hash: String,
    pub shape: String,
    pub sparsity: f64,
    /// Arch invalid for this point: why (the point is reported, not run).
    pub invalid: Option<String>,
    pub cycles: u64,
    pub dense_cycles: u64,
    pub speedup_vs_dense: f64,
    pub roofline_fraction: f64,
    pub energy_pj: f64,
    pub bytes_loaded: u64,
    pub provenance: String,
}

/// The points of one sweep, joined.
#[derive(Debug)]
pub struct Merged {
    /// The sweep's hash.
    pub sweep: String,
    /// Points the sweep has.
    pub total: usize,
    /// The points present, by number.
    pub points: BTreeMap<usize, Point>,
}

impl Merged {
    /// Points of the sweep not present.
    pub fn missing(&self) -> usize {
        self.total - self.points.len()
    }

    /// The first point not present.
    pub fn first_missing(&self) -> Option<usize> {
        // Points are distinct and below `total`: a gap lies within the first len + 1 numbers.
        (0..self.total).take(self.points.len() + 1).find(|i| !self.points.contains_key(i))
    }
}

/// Joins the lines of shard files, given as (name, text), into one sweep's points.
pub fn merge<'a>(inputs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Merged, String> {
    let mut merged: Option<Merged> = None;
    for (name, text) in inputs {
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let at = |m: String| format!("{name}, line {}: {m}", n + 1);
            let p: Point = serde_json::from_str(line).map_err(|e| at(format!("not a sweep point ({e})")))?;
            let m = merged.get_or_insert_with(|| Merged {
                sweep: p.sweep.clone(),
                total: p.total,
                points: BTreeMap::new(),
            });
            if p.sweep != m.sweep {
                return Err(at(format!("point of sweep {} but earlier shards are of sweep {}", p.sweep, m.sweep)));
            }
            if p.total != m.total {
                return Err(at(format!("a sweep of {} points, but earlier points say {}", p.total, m.total)));
            }
            if p.index >= p.total {
                return Err(at(format!("point {} of a sweep of {}", p.index, p.total)));
            }
            let index = p.index;
            if m.points.insert(index, p).is_some() {
                return Err(at(format!("point {index} appears twice")));
            }
        }
    }
    merged.ok_or_else(|| "no points in the inputs".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(index: usize, total: usize) -> String {
        let p = Point {
            sweep: "s".into(),
            index,
            total,
            lanes: 4,
            entries_per_lane: 2,
            acc_write_ports: 1,
            bytes_per_cycle: 16,
            arch_hash: "h".into(),
            shape: "8x8".into(),
            sparsity: 50.0,
            invalid: None,
            cycles: 10,
            dense_cycles: 20,
            speedup_vs_dense: 2.0,
            roofline_fraction: 0.5,
            energy_pj: 1.0,
            bytes_loaded: 64,
            provenance: "test".into(),
        };
        serde_json::to_string(&p).unwrap()
    }

    /// The merge fuzz target's seed (`fuzz/seeds/merge/`): two shards separated by 0xff. Written
    /// by `LACUNA_BLESS=1 cargo test -p lacuna-model sweep`, checked on every run.
    #[test]
    fn the_committed_fuzz_seed_merges() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/merge/two_shards.jsonl");
        let mut seed = format!("{}\n{}\n", point(0, 3), point(2, 3)).into_bytes();
        seed.push(0xff);
        seed.extend(point(1, 3).into_bytes());
        if std::env::var("LACUNA_BLESS").as_deref() == Ok("1") {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &seed).unwrap();
        }
        let committed = std::fs::read(&path).expect("the merge seed (LACUNA_BLESS=1 writes it)");
        let cut = committed.iter().position(|&b| b == 0xff).unwrap();
        let (a, b) =
            (std::str::from_utf8(&committed[..cut]).unwrap(), std::str::from_utf8(&committed[cut + 1..]).unwrap());
        assert_eq!(merge([("a", a), ("b", b)]).unwrap().missing(), 0);
    }

    #[test]
    fn shards_join_and_what_is_missing_is_counted_not_listed() {
        let (a, b) = (format!("{}\n{}\n", point(0, 4), point(2, 4)), point(3, 4));
        let m = merge([("a", a.as_str()), ("b", b.as_str())]).unwrap();
        assert_eq!((m.missing(), m.first_missing()), (1, Some(1)));
        let huge = point(0, usize::MAX);
        let m = merge([("h", huge.as_str())]).unwrap();
        assert_eq!((m.missing(), m.first_missing()), (usize::MAX - 1, Some(1)));
        let e = merge([("a", a.as_str()), ("c", point(1, 5).as_str())]).unwrap_err();
        assert!(e.contains("c, line 1") && e.contains("earlier points say 4"), "{e}");
        let e = merge([("a", a.as_str()), ("a2", a.as_str())]).unwrap_err();
        assert!(e.contains("appears twice"), "{e}");
        assert!(merge([("x", "not json")]).unwrap_err().contains("x, line 1: not a sweep point"));
    }
}
