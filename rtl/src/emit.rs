//! `emit`: a block's Verilog under its own module name, with its port list.
//!
//! rust-hdl names the top module `top` and every submodule `top$path`; synthesis flows and
//! Verilator want distinct, plain names. [`emit`] renames `top` to the block's name and `$` in
//! module names to `__`, and reads the port list back from the module header, so that the
//! manifest (`lacuna emit-verilog`) and the co-simulation shims are generated from the same text
//! the synthesis flow reads.

use rust_hdl::prelude::*;
use serde::Serialize;

/// Direction of a top-level port.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Driven from outside the block.
    Input,
    /// Driven by the block.
    Output,
}

/// One top-level port, as the emitted Verilog declares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    /// Port name (a plain Verilog identifier).
    pub name: String,
    /// Input or output.
    pub direction: Direction,
    /// Width in bits.
    pub width: u32,
    /// What the port carries (from the block's port table, [`PortDoc`]).
    pub meaning: String,
}

/// The documentation of one port: every block that can be a top lists these for each port.
pub type PortDoc = (&'static str, &'static str);

/// A block's emitted Verilog.
#[derive(Clone, Debug)]
pub struct Module {
    /// The top module's name.
    pub name: String,
    /// The Verilog text: the top module, then one module per submodule instance.
    pub verilog: String,
    /// The top module's ports, in declaration order.
    pub ports: Vec<Port>,
}

/// Why a block could not be emitted.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// rust-hdl's output did not have the shape this module expects.
    #[error("emitted Verilog of {name} is not in the expected form: {what}")]
    UnexpectedVerilog {
        /// The module being emitted.
        name: String,
        /// What was missing.
        what: String,
    },
    /// The arch asks for more than the RTL's fixed widths hold.
    #[error("arch `{arch}` does not fit the RTL: {what}")]
    ArchTooLarge {
        /// The arch's name.
        arch: String,
        /// Which parameter, and the limit.
        what: String,
    },
    /// The port table and the Verilog disagree.
    #[error("port table of {name} does not match its Verilog: {what}")]
    PortTable {
        /// The module being emitted.
        name: String,
        /// The port that is missing or undocumented.
        what: String,
    },
}

impl Module {
    /// The Verilog split into one file per module (`NAME.v`), the top module first: one module
    /// per file, named as its module, is what lint (`DECLFILENAME`) and most flows expect.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut files = Vec::new();
        let mut rest = self.verilog.as_str();
        while let Some(start) = rest.find("\nmodule ") {
            let after = &rest[start + 1..];
            let name_end = after.find('(').unwrap_or(after.len());
            let module_name = after["module ".len()..name_end].trim().to_string();
            let end = after.find("\nendmodule").map(|e| e + "\nendmodule".len()).unwrap_or(after.len());
            let line_end = after[end..].find('\n').map(|n| end + n + 1).unwrap_or(after.len());
            files.push((format!("{module_name}.v"), format!("{}\n", after[..line_end].trim_end())));
            rest = &after[line_end..];
        }
        files
    }
}

/// Emits `uut` as module `name`, with the ports documented by `docs` (every port exactly once).
pub fn emit<U: Block>(name: &str, mut uut: U, docs: &[PortDoc]) -> Result<Module, EmitError> {
    uut.connect_all();
    let raw = generate_verilog(&uut);
    let bad = |what: &str| EmitError::UnexpectedVerilog { name: name.to_string(), what: what.to_string() };
    if !raw.contains("\nmodule top(") {
        return Err(bad("no `module top(` header"));
    }
    let verilog = static_slices(
        &raw.replace("\nmodule top(", &format!("\nmodule {name}("))
            .replace("endmodule // top\n", &format!("endmodule // {name}\n"))
            .replace("top$", &format!("{name}__")),
    );
    let prefix = format!("{name}__");
    let verilog = map_identifiers(&verilog, |id, _| id.starts_with(&prefix).then(|| id.replace('$', "_")));
    let verilog = plain_port_names(name, &verilog);
    let verilog = crate::split_always::split(&verilog);
    let ports = read_ports(name, &verilog, docs)?;
    Ok(Module { name: name.to_string(), verilog, ports })
}

/// Applies `rename` to every identifier of `text` (Verilog identifiers: letters, digits, `_` and
/// `$`), told whether it follows a `.` (an instance's port name); `None` keeps it.
fn map_identifiers(text: &str, rename: impl Fn(&str, bool) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut ident = String::new();
    // `after_dot`: the identifier names a port of an instance (`.port(signal)`), not a signal.
    let flush = |ident: &mut String, out: &mut String| {
        let after_dot = out.ends_with('.');
        match rename(ident, after_dot) {
            Some(new) => out.push_str(&new),
            None => out.push_str(ident),
        }
        ident.clear();
    };
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' || ch == '$' {
            ident.push(ch);
        } else {
            if !ident.is_empty() {
                flush(&mut ident, &mut out);
            }
            out.push(ch);
        }
    }
    if !ident.is_empty() {
        flush(&mut ident, &mut out);
    }
    out
}

/// Renames the top module's `Vec` ports `name$k` (rust-hdl's spelling) to `name_k`, so that every
/// port of a top is a plain identifier (Verilator would otherwise mangle `$` as `__024`).
fn plain_port_names(name: &str, verilog: &str) -> String {
    let header = format!("\nmodule {name}(");
    let Some(start) = verilog.find(&header) else { return verilog.to_string() };
    let end = verilog[start..].find("\nendmodule").map_or(verilog.len(), |e| start + e);
    let names_end = verilog[start..].find(");").map_or(start, |e| start + e);
    let ports: Vec<&str> =
        verilog[start + header.len()..names_end].split(',').map(str::trim).filter(|p| p.contains('$')).collect();
    if ports.is_empty() {
        return verilog.to_string();
    }
    let body = map_identifiers(&verilog[start..end], |id, port_of_instance| {
        (!port_of_instance && ports.contains(&id)).then(|| id.replace('$', "_"))
    });
    format!("{}{}{}", &verilog[..start], body, &verilog[end..])
}

/// Rewrites rust-hdl's constant part-selects `x[(NN'hOFFSET)+:(WIDTH)]` (struct fields and
/// `get_bits`, whose sized index Verilator's `-Wall` flags as WIDTH) into the equivalent static
/// part-selects `x[MSB:LSB]`.
fn static_slices(text: &str) -> String {
    const OPEN: &str = "[(";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let tail = &rest[at + OPEN.len()..];
        let parsed = tail.find(")+:(").and_then(|mid| {
            let close = tail[mid..].find(")]")? + mid;
            let (size, hex) = tail[..mid].split_once("'h")?;
            if size.is_empty() || !size.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let offset = u64::from_str_radix(hex, 16).ok()?;
            let width = tail[mid + 4..close].parse::<u64>().ok()?;
            Some((offset, width, close + 2))
        });
        match parsed {
            Some((offset, width, used)) if width > 0 => {
                out.push_str(&format!("[{}:{}]", offset + width - 1, offset));
                rest = &tail[used..];
            }
            _ => {
                out.push_str(OPEN);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether the port table entry `doc` covers `port`: the same name, or one port `doc_k` of a
/// `Vec` of ports (one entry documents them all).
fn documents(doc: &str, port: &str) -> bool {
    port == doc
        || port
            .strip_prefix(doc)
            .and_then(|r| r.strip_prefix('_'))
            .is_some_and(|k| k.bytes().all(|b| b.is_ascii_digit()) && !k.is_empty())
}

/// Reads the port declarations of module `name` (non-ANSI: `input wire [w-1:0] p;` lines after the
/// header) and joins them with their documentation.
fn read_ports(name: &str, verilog: &str, docs: &[PortDoc]) -> Result<Vec<Port>, EmitError> {
    let header = format!("module {name}(");
    let start = verilog.find(&header).ok_or_else(|| EmitError::UnexpectedVerilog {
        name: name.to_string(),
        what: "renamed header missing".into(),
    })?;
    let body = &verilog[start..];
    let names_end = body.find(");").unwrap_or(0);
    let declared: Vec<&str> =
        body[header.len()..names_end].split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut ports = Vec::new();
    for line in body.lines().skip(1) {
        let line = line.trim();
        if line.starts_with("endmodule") {
            break;
        }
        let direction = if line.starts_with("input ") {
            Direction::Input
        } else if line.starts_with("output ") {
            Direction::Output
        } else {
            continue;
        };
        let decl = line.trim_end_matches(';');
        let port = decl.rsplit(' ').next().unwrap_or("").to_string();
        let width = match (decl.find('['), decl.find(':')) {
            (Some(open), Some(colon)) if colon > open => {
                decl[open + 1..colon].trim().parse::<u32>().map(|msb| msb + 1).unwrap_or(0)
            }
            _ => 1,
        };
        let meaning = docs.iter().find(|(n, _)| documents(n, &port)).map(|(_, m)| m.to_string()).ok_or_else(|| {
            EmitError::PortTable { name: name.to_string(), what: format!("port `{port}` is not documented") }
        })?;
        ports.push(Port { name: port, direction, width, meaning });
    }
    for (doc_name, _) in docs {
        if !ports.iter().any(|p| documents(doc_name, &p.name)) {
            return Err(EmitError::PortTable {
                name: name.to_string(),
                what: format!("documented port `{doc_name}` does not exist"),
            });
        }
    }
    if declared.len() != ports.len() || ports.iter().any(|p| p.width == 0) {
        return Err(EmitError::UnexpectedVerilog {
            name: name.to_string(),
            what: "port declarations do not match the header".into(),
        });
    }
    Ok(ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitted_modules_have_plain_names_and_documented_ports() {
        for module in crate::blocks(&lacuna_spec::Arch::preset("tiny").unwrap()).unwrap() {
            assert!(!module.verilog.contains("module top"), "{}", module.name);
            assert!(!module.verilog.contains('$') || !module.verilog.contains("module top$"));
            assert!(module.verilog.contains(&format!("module {}(", module.name)));
            assert!(module.ports.len() >= 3);
            let files = module.files();
            assert_eq!(files[0].0, format!("{}.v", module.name));
            for (file, text) in &files {
                assert_eq!(text.matches("\nendmodule").count() + text.starts_with("endmodule") as usize, 1, "{file}");
                assert!(text.starts_with(&format!("module {}(", file.trim_end_matches(".v"))), "{file}");
            }
        }
        let blocks = crate::blocks(&lacuna_spec::Arch::preset("tiny").unwrap()).unwrap();
        let mul = blocks.iter().find(|m| m.name == "lacuna_fp16_mul").unwrap();
        let widths: Vec<(&str, u32)> = mul.ports.iter().map(|p| (p.name.as_str(), p.width)).collect();
        assert_eq!(widths, [("a", 16), ("b", 16), ("product", 32), ("invalid", 1)]);
        // A `Vec` of ports becomes plain, numbered ports; submodules get plain names.
        let lane = blocks.iter().find(|m| m.name == "lacuna_acc_lane_tiny").unwrap();
        assert!(lane.ports.iter().any(|p| p.name == "push_target_1" && p.width == 16));
        assert!(lane.files().iter().all(|(file, _)| !file.contains('$')));
    }

    #[test]
    fn struct_field_selects_become_static_part_selects() {
        let text = "r$d[(64'h0)+:(8)] = r$q[(64'h8)+:(1)] + x[(64'h1f)+:(32)];";
        assert_eq!(static_slices(text), "r$d[7:0] = r$q[8:8] + x[62:31];");
        assert_eq!(static_slices("a[(64'hzz)+:(1)]"), "a[(64'hzz)+:(1)]");
        assert_eq!(static_slices("y = a[(32'h0)+:(16)];"), "y = a[15:0];");
        assert_eq!(static_slices("m[(i)+:(2)]"), "m[(i)+:(2)]");
    }

    #[test]
    fn an_undocumented_port_is_an_error() {
        let err = emit("m", crate::fp16_mul::Fp16Mul::default(), &crate::fp16_mul::PORTS[..3]).unwrap_err();
        assert!(err.to_string().contains("`invalid` is not documented"), "{err}");
    }
}
