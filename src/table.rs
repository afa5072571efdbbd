//! A plain-text table with right-aligned numeric columns, for the CLI's human-readable output.

/// Rows of cells under a header; column widths fit the widest cell.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names.
    pub fn new(header: &[&str]) -> Self {
        Table { header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends a row (as many cells as the header).
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }

    /// Renders the table; the first column is left-aligned, the others right-aligned.
    pub fn render(&self) -> String {
        let n = self.header.len();
        let width: Vec<usize> = (0..n)
            .map(|c| self.rows.iter().map(|r| r[c].len()).chain([self.header[c].len()]).max().unwrap_or(0))
            .collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, s)| if c == 0 { format!("{s:<w$}", w = width[c]) } else { format!("{s:>w$}", w = width[c]) })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(&width.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}
