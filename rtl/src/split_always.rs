//! `split_always`: each combinational `always @(*)` block that rust-hdl emits, split into one
//! always block per independent group of assignments, with the same meaning.
//!
//! rust-hdl writes a block's whole `update` as one `always @(*)`. Where that block drives a
//! sub-block's input and reads one of its outputs (a parent wiring its children, the accumulator
//! lane and its register file, the route and its lanes), Verilator orders the always block as one
//! node and reports UNOPTFLAT ("circular combinational logic") although no signal depends on
//! itself. Synthesis does not care (Yosys works on cells), but Verilator then settles the logic by
//! iterating, and the warning would hide a real loop. [`split`] cuts each such block into the
//! smallest groups whose order does not matter, so Verilator sees the true dependences.
//!
//! The contract (what makes the split exact): every assignment (a *leaf*, with the `if`
//! conditions above it) joins one group; leaves that write the same variable share a group, and
//! so does a leaf that reads a variable (in its right-hand side, its index, or a condition above
//! it) before one of that variable's writes (at or after the point of the read). So every read
//! outside the writers' group happens after the variable's last write and sees its final value,
//! which is what the variable's own always block settles to; inside a group the original order is
//! kept. Each group is the original statements pruned to its leaves (an `if` whose branches lose
//! all their leaves is dropped). A block in any other shape than rust-hdl's (assignments and
//! `if`/`else` with `begin`/`end`, one per line) is left as it was: the lint then reports it.

/// Splits every `    always @(*) begin` ... `    end` block of `verilog` (see the module docs).
pub fn split(verilog: &str) -> String {
    const OPEN: &str = "    always @(*) begin";
    const CLOSE: &str = "    end";
    let lines: Vec<&str> = verilog.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if lines[i] == OPEN {
            if let Some(len) = lines[i + 1..].iter().position(|l| *l == CLOSE) {
                let body = &lines[i + 1..i + 1 + len];
                match split_block(body) {
                    Some(blocks) => out.extend(blocks),
                    None => out.extend(lines[i..i + 2 + len].iter().map(|l| l.to_string())),
                }
                i += len + 2;
                continue;
            }
        }
        out.push(lines[i].to_string());
        i += 1;
    }
    out.join("\n")
}

/// One statement of a combinational block.
#[derive(Debug)]
enum Stmt {
    /// `lhs = rhs;`: the whole line, the variable written, the variables read.
    Assign { line: String, writes: String, reads: Vec<String> },
    /// `if (cond) begin ... end [else begin ... end]`: `else if` is an `If` alone in `otherwise`.
    If { cond: String, reads: Vec<String>, then: Vec<Stmt>, otherwise: Vec<Stmt> },
}

/// Reads a block body, one trimmed line at a time; `None` on anything not in rust-hdl's shape.
struct Parser<'a> {
    lines: Vec<&'a str>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn statements_until_end(&mut self) -> Option<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            match *self.lines.get(self.at)? {
                "end" => {
                    self.at += 1;
                    return Some(out);
                }
                // `end else ...` closes this list and leaves the `else ...` to the caller.
                line if line.starts_with("end else ") => {
                    self.lines[self.at] = &line["end ".len()..];
                    return Some(out);
                }
                _ => out.push(self.statement()?),
            }
        }
    }

    fn statement(&mut self) -> Option<Stmt> {
        let line = *self.lines.get(self.at)?;
        self.at += 1;
        if let Some(cond) = if_condition(line, "if ") {
            return self.if_rest(cond);
        }
        let body = line.strip_suffix(';')?;
        let (lhs, rhs) = split_assignment(body)?;
        let (name, index) = match lhs.find('[') {
            Some(open) => (&lhs[..open], &lhs[open..]),
            None => (lhs, ""),
        };
        if name.is_empty() || !name.chars().all(is_ident_char) || name.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let mut reads = identifiers(rhs);
        reads.extend(identifiers(index));
        Some(Stmt::Assign { line: line.to_string(), writes: name.to_string(), reads })
    }

    fn if_rest(&mut self, cond: &str) -> Option<Stmt> {
        let then = self.statements_until_end()?;
        let mut otherwise = Vec::new();
        match self.lines.get(self.at).copied() {
            Some("else begin") => {
                self.at += 1;
                otherwise = self.statements_until_end()?;
            }
            Some(line) if if_condition(line, "else if ").is_some() => {
                self.at += 1;
                otherwise.push(self.if_rest(if_condition(line, "else if ")?)?);
            }
            _ => {}
        }
        Some(Stmt::If { cond: cond.to_string(), reads: identifiers(cond), then, otherwise })
    }
}

/// `(cond)` of a line `PREFIX(cond) begin`.
fn if_condition<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let cond = line.strip_prefix(prefix)?.strip_suffix(" begin")?;
    (cond.starts_with('(') && cond.ends_with(')')).then_some(cond)
}

/// `lhs = rhs` at the first `=` that is not part of `==`, `<=`, `>=` or `!=`.
fn split_assignment(body: &str) -> Option<(&str, &str)> {
    let bytes = body.as_bytes();
    let at = (0..bytes.len()).find(|&i| {
        bytes[i] == b'='
            && bytes.get(i + 1) != Some(&b'=')
            && (i == 0 || !matches!(bytes[i - 1], b'=' | b'<' | b'>' | b'!'))
    })?;
    Some((body[..at].trim(), body[at + 1..].trim()))
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The identifiers of an expression (sized literals such as `32'h0` and `16'd8` are skipped).
fn identifiers(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() || c == '\'' {
            // A number, with its size, base and digits: never an identifier.
            i += 1;
            while i < chars.len() && (is_ident_char(chars[i]) || chars[i] == '\'') {
                i += 1;
            }
        } else if is_ident_char(c) {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            i += 1;
        }
    }
    out
}

/// One assignment with where its conditions are evaluated.
struct Leaf<'s> {
    /// The top-level statement it belongs to.
    top: usize,
    writes: &'s str,
    /// (variable, position of the read): a leaf's own reads are at its index + 1 (after the
    /// writes before it), a condition's at the index of the first leaf under its `if`.
    reads: Vec<(&'s str, usize)>,
}

fn collect<'s>(stmt: &'s Stmt, top: usize, conds: &mut Vec<(usize, &'s [String])>, out: &mut Vec<Leaf<'s>>) {
    match stmt {
        Stmt::Assign { writes, reads, .. } => {
            let at = out.len();
            let mut all: Vec<(&str, usize)> = reads.iter().map(|r| (r.as_str(), at + 1)).collect();
            for (pos, vars) in conds.iter() {
                all.extend(vars.iter().map(|v| (v.as_str(), *pos)));
            }
            out.push(Leaf { top, writes, reads: all });
        }
        Stmt::If { reads, then, otherwise, .. } => {
            conds.push((out.len(), reads));
            for s in then.iter().chain(otherwise) {
                collect(s, top, conds, out);
            }
            conds.pop();
        }
    }
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    parent[ra] = rb;
}

/// The groups of a block body, each as a whole `always @(*)` block's lines.
fn split_block(body: &[&str]) -> Option<Vec<String>> {
    let mut parser = Parser { lines: body.iter().map(|l| l.trim()).collect(), at: 0 };
    let mut tops = Vec::new();
    while parser.at < parser.lines.len() {
        tops.push(parser.statement()?);
    }
    let mut leaves = Vec::new();
    for (top, stmt) in tops.iter().enumerate() {
        collect(stmt, top, &mut Vec::new(), &mut leaves);
    }
    let mut writers: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (k, leaf) in leaves.iter().enumerate() {
        writers.entry(leaf.writes).or_default().push(k);
    }
    let mut parent: Vec<usize> = (0..leaves.len()).collect();
    for ws in writers.values() {
        for &w in &ws[1..] {
            union(&mut parent, ws[0], w);
        }
    }
    for (k, leaf) in leaves.iter().enumerate() {
        for &(var, at) in &leaf.reads {
            if let Some(ws) = writers.get(var) {
                if ws.last().is_some_and(|&last| last >= at) {
                    union(&mut parent, k, ws[0]);
                }
            }
        }
    }
    // Groups in the order of their first leaf; each keeps its leaves' statements, pruned.
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut group_of_root = std::collections::HashMap::new();
    for k in 0..leaves.len() {
        let root = find(&mut parent, k);
        let g = *group_of_root.entry(root).or_insert_with(|| {
            groups.push((root, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(k);
    }
    let mut out = Vec::new();
    for (_, members) in &groups {
        let keep: std::collections::HashSet<usize> = members.iter().copied().collect();
        out.push("    always @(*) begin".to_string());
        let mut next_leaf = 0;
        for (top, stmt) in tops.iter().enumerate() {
            let first = next_leaf;
            next_leaf += leaves.iter().skip(first).take_while(|l| l.top == top).count();
            if (first..next_leaf).any(|k| keep.contains(&k)) {
                let mut counter = first;
                write_pruned(stmt, &keep, &mut counter, 2, &mut out);
            }
        }
        out.push("    end".to_string());
    }
    Some(out)
}

/// The number of assignments under `stmt`.
fn count_leaves(stmt: &Stmt) -> usize {
    match stmt {
        Stmt::Assign { .. } => 1,
        Stmt::If { then, otherwise, .. } => then.iter().chain(otherwise).map(count_leaves).sum(),
    }
}

/// Writes `stmt` with only the leaves in `keep`, at `depth` levels of four spaces.
fn write_pruned(
    stmt: &Stmt,
    keep: &std::collections::HashSet<usize>,
    counter: &mut usize,
    depth: usize,
    out: &mut Vec<String>,
) {
    let pad = "    ".repeat(depth);
    match stmt {
        Stmt::Assign { line, .. } => {
            if keep.contains(counter) {
                out.push(format!("{pad}{line}"));
            }
            *counter += 1;
        }
        Stmt::If { cond, then, otherwise, .. } => {
            let kept = |list: &[Stmt], from: usize| {
                let n: usize = list.iter().map(count_leaves).sum();
                (from..from + n).any(|k| keep.contains(&k))
            };
            let then_kept = kept(then, *counter);
            let else_from = *counter + then.iter().map(count_leaves).sum::<usize>();
            let else_kept = kept(otherwise, else_from);
            if !then_kept && !else_kept {
                *counter = else_from + otherwise.iter().map(count_leaves).sum::<usize>();
                return;
            }
            out.push(format!("{pad}if {cond} begin"));
            for s in then {
                write_pruned(s, keep, counter, depth + 1, out);
            }
            out.push(format!("{pad}end"));
            if else_kept {
                out.push(format!("{pad}else begin"));
                for s in otherwise {
                    write_pruned(s, keep, counter, depth + 1, out);
                }
                out.push(format!("{pad}end"));
            } else {
                *counter += otherwise.iter().map(count_leaves).sum::<usize>();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(body: &[&str]) -> String {
        let mut text = vec!["module m;", "    always @(*) begin"];
        text.extend(body);
        text.extend(["    end", "endmodule"]);
        text.join("\n")
    }

    #[test]
    fn independent_assignments_get_blocks_of_their_own() {
        let out = split(&block(&["        a = x;", "        b = y & 8'hff;"]));
        assert_eq!(out.matches("always @(*) begin").count(), 2, "{out}");
        assert!(out.contains("    always @(*) begin\n        b = y & 8'hff;\n    end"), "{out}");
    }

    #[test]
    fn a_default_and_its_conditional_override_stay_together_in_order() {
        let out = split(&block(&[
            "        a$d = a$q;",
            "        b = c;",
            "        if (go) begin",
            "            a$d = n;",
            "            b = m;",
            "        end",
        ]));
        assert_eq!(out.matches("always @(*) begin").count(), 2, "{out}");
        assert!(out.contains("        a$d = a$q;\n        if (go) begin\n            a$d = n;\n        end"), "{out}");
        assert!(out.contains("        b = c;\n        if (go) begin\n            b = m;\n        end"), "{out}");
    }

    #[test]
    fn a_read_before_a_later_write_joins_the_writer() {
        // `y` reads `t` before its second write: in a block of its own it would see the final `t`.
        let out = split(&block(&["        t = a;", "        y = t;", "        t = b;", "        z = t;"]));
        assert_eq!(out.matches("always @(*) begin").count(), 2, "{out}");
        assert!(out.contains("        t = a;\n        y = t;\n        t = b;\n    end"), "{out}");
        assert!(out.contains("    always @(*) begin\n        z = t;\n    end"), "{out}");
    }

    #[test]
    fn a_condition_over_a_variable_written_under_it_keeps_them_together() {
        let out = split(&block(&[
            "        f = 1'b0;",
            "        if (f == 1'b0) begin",
            "            f = 1'b1;",
            "            g = 1'b1;",
            "        end",
        ]));
        assert_eq!(out.matches("always @(*) begin").count(), 1, "{out}");
    }

    #[test]
    fn else_if_chains_are_pruned_per_group() {
        let out = split(&block(&[
            "        if (a) begin",
            "            x = 1'b1;",
            "            y = 1'b0;",
            "        end",
            "        else if (b) begin",
            "            y = 1'b1;",
            "        end",
            "        else begin",
            "            x = 1'b0;",
            "        end",
        ]));
        assert_eq!(out.matches("always @(*) begin").count(), 2, "{out}");
        assert!(out.contains(
            "        if (a) begin\n            y = 1'b0;\n        end\n        else begin\n            if (b) begin\n                y = 1'b1;\n            end\n        end"
        ), "{out}");
        assert!(out.contains(
            "        if (a) begin\n            x = 1'b1;\n        end\n        else begin\n            if (b) begin\n            end\n            else begin\n                x = 1'b0;\n            end\n        end"
        ), "{out}");
    }

    #[test]
    fn a_block_in_another_shape_is_left_as_it_was() {
        let text = block(&["        case (s)", "        endcase"]);
        assert_eq!(split(&text), text);
        let text = block(&["        if (a) x = 1'b1;"]);
        assert_eq!(split(&text), text);
    }

    #[test]
    fn comparisons_are_not_assignments() {
        let out = split(&block(&["        a = (b <= c) && (d == e) && (f >= g) && (h != i);"]));
        assert!(out.contains("        a = (b <= c) && (d == e) && (f >= g) && (h != i);"), "{out}");
        assert_eq!(split_assignment("a = b <= c"), Some(("a", "b <= c")));
        assert_eq!(identifiers("x[3:0] + 32'h0 + 16'd8 + y$z"), vec!["x", "y$z"]);
    }
}
