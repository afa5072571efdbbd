//! Real text for calibration and evaluation: Debian's `fortunes-min` (BSD licence; quotes,
//! literature and riddles that no one here wrote), fetched into the model cache by
//! `scripts/fetch-models.sh` and never committed.
//!
//! The three files have fixed roles so that no text is used twice:
//! - `fortunes` ([`Split::Calibration`]): Wanda's input norms and the activation thresholds;
//! - `riddles` ([`Split::HeldOut`]): the sparsity the thresholds actually reach on new text;
//! - `literature` ([`Split::Evaluation`]): perplexity and top-1 agreement.

use crate::models::cache_dir;

/// Which part of the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// Used to calibrate (the `fortunes` file).
    Calibration,
    /// Held out from calibration, to check what it reached (the `riddles` file).
    HeldOut,
    /// Held out from everything, to measure accuracy (the `literature` file).
    Evaluation,
}

impl Split {
    /// The file of the split.
    pub fn file(self) -> &'static str {
        match self {
            Split::Calibration => "fortunes",
            Split::HeldOut => "riddles",
            Split::Evaluation => "literature",
        }
    }
}

/// A description of the text for reports.
pub const SOURCE: &str = "Debian fortunes-min 1:1.99.1-7.3 (BSD)";

/// The entries of a split, in file order: each fortune, trimmed, with its line breaks.
pub fn fortunes(split: Split) -> Result<Vec<String>, String> {
    let path = cache_dir().join("fortunes-min").join(split.file());
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e}: run scripts/fetch-models.sh to fetch Debian's fortunes-min", path.display()))?;
    Ok(parse_fortunes(&text))
}

/// Joins consecutive entries, `per_doc` at a time, with a blank line between them: fortunes
/// are short (~15 tokens), and calibration and perplexity want longer contexts.
pub fn join(entries: &[String], per_doc: usize) -> Vec<String> {
    entries.chunks(per_doc.max(1)).map(|c| c.join("\n\n")).collect()
}

/// Splits a fortune file on its `%` lines; empty entries are dropped.
pub fn parse_fortunes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        if line == "%" {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn fortunes_split_on_percent_lines() {
        assert_eq!(super::parse_fortunes("a\nb\n%\n\n%\nc\n%\n"), ["a\nb", "c"]);
    }
}
