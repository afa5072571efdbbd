//! A minimal VCD (IEEE 1364 value change dump) writer for the co-simulation's waveforms: the
//! core's ports and probes sampled once per cycle, which GTKWave opens.

use std::fmt::Write as _;

/// Signals sampled once per cycle.
pub struct Vcd {
    scope: String,
    signals: Vec<(String, u32)>,
    samples: Vec<(u64, Vec<u64>)>,
}

impl Vcd {
    /// A dump of `signals` (name, width in bits) under module `scope`.
    pub fn new(scope: &str, signals: &[(&str, u32)]) -> Vcd {
        Vcd {
            scope: scope.to_string(),
            signals: signals.iter().map(|&(n, w)| (n.to_string(), w.clamp(1, 64))).collect(),
            samples: Vec::new(),
        }
    }

    /// Records the values at `cycle` (one per signal, in order).
    pub fn sample(&mut self, cycle: u64, values: Vec<u64>) {
        debug_assert_eq!(values.len(), self.signals.len());
        self.samples.push((cycle, values));
    }

    /// Cycles recorded.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The dump as text: a header, then at each cycle the signals that changed.
    pub fn to_text(&self) -> String {
        let id = |i: usize| -> String {
            // Identifiers from the printable ASCII range, base 94.
            let mut n = i;
            let mut s = String::new();
            loop {
                s.push((33 + (n % 94)) as u8 as char);
                n /= 94;
                if n == 0 {
                    break s;
                }
            }
        };
        let mut out = String::from("$version lacuna cosim $end\n$timescale 1ns $end\n");
        let _ = writeln!(out, "$scope module {} $end", self.scope);
        for (i, (name, width)) in self.signals.iter().enumerate() {
            let _ = writeln!(out, "$var wire {width} {} {name} $end", id(i));
        }
        out.push_str("$upscope $end\n$enddefinitions $end\n");
        let mut last: Option<&Vec<u64>> = None;
        for (cycle, values) in &self.samples {
            let _ = writeln!(out, "#{cycle}");
            for (i, (&v, (_, width))) in values.iter().zip(&self.signals).enumerate() {
                if last.is_some_and(|l| l[i] == v) {
                    continue;
                }
                if *width == 1 {
                    let _ = writeln!(out, "{}{}", v & 1, id(i));
                } else {
                    let _ = writeln!(out, "b{:b} {}", v, id(i));
                }
            }
            last = Some(values);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_declares_every_signal_and_writes_only_changes() {
        let mut v = Vcd::new("core", &[("done", 1), ("addr", 32)]);
        v.sample(0, vec![0, 16]);
        v.sample(1, vec![0, 32]);
        v.sample(2, vec![1, 32]);
        let t = v.to_text();
        assert!(t.contains("$var wire 1 ! done $end") && t.contains("$var wire 32 \" addr $end"), "{t}");
        assert!(t.contains("#0\n0!\nb10000 \"\n#1\nb100000 \"\n#2\n1!\n"), "{t}");
    }
}
