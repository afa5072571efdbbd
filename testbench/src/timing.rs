//! Area and timing of emitted Verilog in a real standard-cell library: Yosys maps a block to the
//! library's cells ([`crate::synth::Depth::Mapped`]), OpenSTA (`sta`) times the netlist.
//!
//! Contract: [`analyze`] returns the block's area (the library's cell areas summed), its cell
//! and flip-flop counts, and its worst path of each kind (register to register, input to
//! register, register to output, input to output), each with its start and end (a register by
//! the name of the signal it holds), its delay (clock to output through the logic, plus the
//! capturing flip-flop's setup time), its logic levels (combinational cells on it) and its delay
//! scaled to the target process ([`lacuna_spec::timing`]); and whether the register-to-register
//! paths fit the budget. Inputs and outputs are taken as arriving and leaving at the clock edge
//! (no external delay), so the port paths are the block's share of a path its neighbours extend.
//! The reference library's FO4 delay is measured by [`fo4_ns`] with the same tool. The library is
//! OSU 0.18 um (Debian `qflow-tech-osu018`: typical corner, 1.8 V, 25 C, no wire-load model),
//! or the Liberty file `LACUNA_LIBERTY` names (its drawn length in nm in `LACUNA_LIBERTY_NM`;
//! the code expects OSU's pin names: inverters and buffers `A` -> `Y`, flip-flops' output `Q`).

use crate::synth::{self, SynthError};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A Liberty library and what the scaling needs of it.
#[derive(Clone, Debug, Serialize)]
pub struct Library {
    /// The Liberty file.
    pub liberty: PathBuf,
    /// Its drawn gate length, nm.
    pub drawn_nm: f64,
    /// `CELL IN OUT` of its smallest buffer (Yosys's `insbuf` turns wire aliases into them).
    pub buffer: String,
    /// Its smallest inverter: the drive ABC assumes for the flip-flops' outputs (and the
    /// block's inputs) when it buffers high-fanout nets (`crate::synth`).
    pub inverter: String,
    /// Each cell's area (um2) and whether it is a flip-flop.
    #[serde(skip)]
    cells: HashMap<String, (f64, bool)>,
}

/// Where Debian's `qflow-tech-osu018` puts the OSU 0.18 um library.
pub const OSU018: &str = "/usr/share/qflow/tech/osu018/osu018_stdcells.lib";

impl Library {
    /// The library `LACUNA_LIBERTY` names, or OSU 0.18 um.
    pub fn find() -> Result<Library, SynthError> {
        let (path, nm) = match std::env::var_os("LACUNA_LIBERTY") {
            Some(p) => {
                let nm =
                    std::env::var("LACUNA_LIBERTY_NM").ok().and_then(|v| v.parse::<f64>().ok()).ok_or_else(|| {
                        SynthError::Library(
                            "LACUNA_LIBERTY is set: LACUNA_LIBERTY_NM must give its drawn length in nm".into(),
                        )
                    })?;
                (PathBuf::from(p), nm)
            }
            None => (PathBuf::from(OSU018), 180.0),
        };
        Library::read(&path, nm)
    }

    /// Reads the cells of a Liberty file drawn at `drawn_nm`.
    pub fn read(path: &Path, drawn_nm: f64) -> Result<Library, SynthError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SynthError::Library(format!(
                "cannot read the Liberty library {} ({e}); install it (`apt-get install qflow-tech-osu018`)",
                path.display()
            ))
        })?;
        let cells = liberty_cells(&text);
        if cells.is_empty() {
            return Err(SynthError::Library(format!("{} has no cell with an area", path.display())));
        }
        // The smallest single-input cell named as a buffer; its pins by the usual names.
        let buffer = cells
            .iter()
            .filter(|(n, c)| n.to_ascii_uppercase().starts_with("BUF") && !c.1)
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.0.cmp(b.0)))
            .map(|(n, _)| format!("{n} A Y"))
            .ok_or_else(|| SynthError::Library(format!("{} has no BUF cell", path.display())))?;
        let inverter = cells
            .iter()
            .filter(|(n, c)| n.to_ascii_uppercase().starts_with("INV") && !c.1)
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0).then(a.0.cmp(b.0)))
            .map(|(n, _)| n.clone())
            .ok_or_else(|| SynthError::Library(format!("{} has no INV cell", path.display())))?;
        Ok(Library { liberty: path.to_path_buf(), drawn_nm, buffer, inverter, cells })
    }
}

/// Each `cell (NAME)` of a Liberty text: its `area` and whether it holds an `ff` group. A
/// flat scan (the groups of the libraries in use are one cell after another).
fn liberty_cells(text: &str) -> HashMap<String, (f64, bool)> {
    let mut cells = HashMap::new();
    let mut current: Option<(String, f64, bool)> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("cell") {
            let name = rest.trim_start().strip_prefix('(').and_then(|r| r.split(')').next());
            if let Some(name) = name {
                if let Some((n, a, ff)) = current.take() {
                    cells.insert(n, (a, ff));
                }
                current = Some((name.trim().trim_matches('"').to_string(), f64::NAN, false));
                continue;
            }
        }
        if let Some((_, area, ff)) = current.as_mut() {
            if let Some(v) = line.strip_prefix("area") {
                if let Ok(a) = v.trim_start_matches([' ', ':']).trim_end_matches(';').trim().parse::<f64>() {
                    *area = a;
                }
            } else if line.starts_with("ff ") || line.starts_with("ff(") {
                *ff = true;
            }
        }
    }
    if let Some((n, a, ff)) = current {
        cells.insert(n, (a, ff));
    }
    cells.retain(|_, (a, _)| a.is_finite());
    cells
}

/// The kinds of timing path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// Launched and captured by flip-flops of the block: what the clock must fit.
    RegToReg,
    /// From an input port to a flip-flop.
    InToReg,
    /// From a flip-flop to an output port.
    RegToOut,
    /// From an input port straight to an output port (a combinational block's one path).
    InToOut,
}

impl PathKind {
    /// Every kind, in report order.
    pub const ALL: [PathKind; 4] = [PathKind::RegToReg, PathKind::InToReg, PathKind::RegToOut, PathKind::InToOut];

    fn sta_args(self) -> &'static str {
        match self {
            PathKind::RegToReg => "-from [all_registers -clock_pins] -to [all_registers -data_pins]",
            PathKind::InToReg => "-from $inputs -to [all_registers -data_pins]",
            PathKind::RegToOut => "-from [all_registers -clock_pins] -to [all_outputs]",
            PathKind::InToOut => "-from $inputs -to [all_outputs]",
        }
    }

    /// Its name in tables.
    pub fn label(self) -> &'static str {
        match self {
            PathKind::RegToReg => "reg -> reg",
            PathKind::InToReg => "in -> reg",
            PathKind::RegToOut => "reg -> out",
            PathKind::InToOut => "in -> out",
        }
    }
}

/// One worst path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimingPath {
    /// Its kind.
    pub kind: PathKind,
    /// Where it starts: an input port, or the register (the signal it holds, one bit).
    pub start: String,
    /// Where it ends.
    pub end: String,
    /// Its delay in the reference library, ns (clock to output, the logic, the setup time).
    pub delay_ns: f64,
    /// Combinational cells on it.
    pub levels: u32,
    /// Its delay in FO4 delays.
    pub fo4: f64,
    /// Its delay scaled to the target process, ns.
    pub scaled_ns: f64,
}

/// A block's area and timing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimingReport {
    /// The top module.
    pub module: String,
    /// The Liberty file.
    pub library: String,
    /// Cells of the mapped netlist.
    pub cells: u64,
    /// Of them, flip-flops.
    pub flip_flops: u64,
    /// Bits of inferred memories before mapping (flip-flops here: no SRAM macro).
    pub memory_bits: u64,
    /// The cells' area, um2.
    pub area_um2: f64,
    /// The area scaled to the target process, um2 (ideal scaling, [`lacuna_spec::timing`]).
    pub scaled_area_um2: f64,
    /// The reference library's FO4 delay, ns.
    pub fo4_ns: f64,
    /// The clock the budget is for, MHz.
    pub clock_mhz: u32,
    /// The register-to-register budget, ns of the reference library.
    pub budget_ns: f64,
    /// The worst path of each kind the block has.
    pub paths: Vec<TimingPath>,
}

impl TimingReport {
    /// Its worst path of `kind`.
    pub fn worst(&self, kind: PathKind) -> Option<&TimingPath> {
        self.paths.iter().find(|p| p.kind == kind)
    }

    /// Its longest path that a register starts or ends, in FO4: register to register, and the
    /// port paths, each of which is only part of a path of the top (its neighbour adds the
    /// rest), so one over the budget alone is over in any top. None for a combinational block:
    /// it is part of its user's stage.
    pub fn worst_clocked_fo4(&self) -> Option<f64> {
        self.worst(PathKind::RegToReg)?;
        let kinds = [PathKind::RegToReg, PathKind::InToReg, PathKind::RegToOut];
        kinds.iter().filter_map(|&k| self.worst(k)).map(|p| p.fo4).reduce(f64::max)
    }

    /// Whether those paths fit the budget (None: a combinational block).
    pub fn meets_budget(&self) -> Option<bool> {
        self.worst_clocked_fo4().map(|f| f * self.fo4_ns <= self.budget_ns)
    }
}

/// Runs `sta` on a Tcl script; its output.
fn run_sta(script: &Path) -> Result<String, SynthError> {
    let output = Command::new("sta")
        .arg("-no_splash")
        .arg("-exit")
        .arg(script)
        .output()
        .map_err(|e| SynthError::ToolMissing { tool: "sta", why: e.to_string() })?;
    let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() || log.lines().any(|l| l.starts_with("Error")) {
        return Err(SynthError::Timing(
            log.lines().filter(|l| l.starts_with("Error")).take(8).collect::<Vec<_>>().join("\n"),
        ));
    }
    Ok(log)
}

/// The library's FO4 delay, ns: the middle stages of a chain of minimum inverters, each driving
/// the next and three more, timed by OpenSTA (rising and falling stages averaged).
pub fn fo4_ns(lib: &Library, work: &Path) -> Result<f64, SynthError> {
    const STAGES: usize = 8;
    let inv = lib
        .cells
        .keys()
        .filter(|c| c.as_str() == "INVX1")
        .min()
        .ok_or_else(|| SynthError::Library(format!("{} has no INVX1 cell to measure FO4", lib.liberty.display())))?
        .clone();
    std::fs::create_dir_all(work)?;
    let mut v = format!("module fo4(input wire a, output wire y);\n  wire [{STAGES}:0] s;\n  assign s[0] = a;\n");
    for i in 0..STAGES {
        v += &format!("  {inv} u{i} (.A(s[{i}]), .Y(s[{}]));\n", i + 1);
        for k in 0..3 {
            v += &format!("  wire d{i}_{k};\n  {inv} l{i}_{k} (.A(s[{}]), .Y(d{i}_{k}));\n", i + 1);
        }
    }
    v += &format!("  assign y = s[{STAGES}];\nendmodule\n");
    let net = work.join("fo4.v");
    std::fs::write(&net, v)?;
    let script = work.join("fo4.tcl");
    std::fs::write(
        &script,
        format!(
            "read_liberty {}\nread_verilog {}\nlink_design fo4\ncreate_clock -name clk -period 100\n\
             set_input_delay 0 -clock clk [all_inputs]\nset_output_delay 0 -clock clk [all_outputs]\n\
             report_checks -from [all_inputs] -to [all_outputs] -digits 5\n",
            lib.liberty.display(),
            net.display()
        ),
    )?;
    let log = run_sta(&script)?;
    // Stage i's output arrives at time t_i; stages 2..6 are loaded like a chain's inside.
    let times: Vec<f64> = log
        .lines()
        .filter(|l| l.contains(&format!("/Y ({inv})")))
        .filter_map(|l| l.split_whitespace().nth(1).and_then(|t| t.parse().ok()))
        .collect();
    if times.len() != STAGES {
        return Err(SynthError::Timing(format!(
            "the FO4 chain's report has {} stages, not {STAGES}:\n{log}",
            times.len()
        )));
    }
    Ok((times[6] - times[2]) / 4.0)
}

/// Maps `module` to `lib` and times it against the budget of `clock_mhz`
/// ([`lacuna_spec::timing::budget_ns`]), the library's FO4 delay being `fo4`.
pub fn analyze(
    module: &str,
    files: &[PathBuf],
    work: &Path,
    lib: &Library,
    fo4: f64,
    clock_mhz: u32,
) -> Result<TimingReport, SynthError> {
    let budget_ns = lacuna_spec::timing::budget_ns(clock_mhz, fo4);
    let target_ps = (budget_ns * 1000.0).round() as u32;
    let synthesized = synth::synthesize(module, files, work, synth::Depth::Mapped { library: lib, target_ps })?;
    let stats = synth::read_design_stats(&work.join(format!("{module}.synth.json")), module)?;
    let (mut cells, mut flip_flops, mut area) = (0u64, 0u64, 0f64);
    for (cell, n) in stats["num_cells_by_type"].as_object().into_iter().flatten() {
        let n = n.as_u64().unwrap_or(0);
        let &(a, ff) = lib
            .cells
            .get(cell)
            .ok_or_else(|| SynthError::Timing(format!("{module}: cell {cell} is not in the library")))?;
        cells += n;
        area += a * n as f64;
        if ff {
            flip_flops += n;
        }
    }
    let text = std::fs::read_to_string(work.join(format!("{module}.mapped.v")))?;
    // OpenSTA 2.0's Verilog reader refuses `assign { a, b } = 2'h0;`, which Yosys writes for
    // output bits tied to a constant: they start no path, so they are left out.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !(l.trim_start().starts_with("assign {") && l.contains("'h") && !l.contains(" = {")))
        .collect();
    let netlist = work.join(format!("{module}.sta.v"));
    std::fs::write(&netlist, kept.join("\n") + "\n")?;
    let q_nets = flop_outputs(&text, lib);
    // Each path kind in its own section: `puts` marks where one report ends.
    let clocked = text.lines().any(|l| l.trim() == "input clock;");
    let mut tcl =
        format!("read_liberty {}\nread_verilog {}\nlink_design {module}\n", lib.liberty.display(), netlist.display());
    if clocked {
        tcl += &format!(
            "create_clock -name clk -period {budget_ns} [get_ports clock]\nset inputs [delete_from_list [all_inputs] [get_ports clock]]\n"
        );
    } else {
        tcl += &format!("create_clock -name clk -period {budget_ns}\nset inputs [all_inputs]\n");
    }
    tcl += "set_input_delay 0 -clock clk $inputs\nset_output_delay 0 -clock clk [all_outputs]\n";
    // Without flip-flops `all_registers` is empty, and an empty `-from` would mean any start.
    let kinds = match flip_flops {
        0 => vec![PathKind::InToOut],
        _ => PathKind::ALL.to_vec(),
    };
    for kind in kinds {
        tcl += &format!(
            "puts \"== {kind:?}\"\nreport_checks -path_delay max {} -digits 4 -fields {{net}}\n",
            kind.sta_args()
        );
    }
    let script = work.join(format!("{module}.sta.tcl"));
    std::fs::write(&script, tcl)?;
    let log = run_sta(&script)?;
    let mut paths = Vec::new();
    for section in log.split("== ").skip(1) {
        let kind = PathKind::ALL.into_iter().find(|k| section.starts_with(&format!("{k:?}\n")));
        if let (Some(kind), Some(p)) = (kind, parse_path(section, lib, &q_nets)) {
            paths.push(TimingPath {
                kind,
                start: p.start,
                end: p.end,
                delay_ns: p.delay_ns,
                levels: p.levels,
                fo4: p.delay_ns / fo4,
                scaled_ns: lacuna_spec::timing::scaled_ns(p.delay_ns, fo4),
            });
        }
    }
    Ok(TimingReport {
        module: module.to_string(),
        library: lib.liberty.display().to_string(),
        cells,
        flip_flops,
        memory_bits: synthesized.memory_bits,
        area_um2: area,
        scaled_area_um2: lacuna_spec::timing::scaled_area_um2(area, lib.drawn_nm),
        fo4_ns: fo4,
        clock_mhz,
        budget_ns,
        paths,
    })
}

/// Each flip-flop instance's output net, from the mapped netlist (`CELL NAME (` ... `.Q(net)`).
fn flop_outputs(netlist: &str, lib: &Library) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut current: Option<String> = None;
    for line in netlist.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        if let (Some(cell), Some(name), Some("(")) = (words.next(), words.next(), words.next()) {
            current = lib.cells.get(cell).filter(|c| c.1).map(|_| name.to_string());
        } else if let (Some(inst), Some(q)) = (&current, line.strip_prefix(".Q(")) {
            map.insert(inst.clone(), clean_net(q.trim_end_matches([')', ',', ' '])));
            current = None;
        }
    }
    map
}

/// A Verilog net name as people read it: no escape backslash, no trailing space.
fn clean_net(name: &str) -> String {
    name.trim().trim_start_matches('\\').trim().to_string()
}

struct ParsedPath {
    start: String,
    end: String,
    delay_ns: f64,
    levels: u32,
}

/// One `report_checks -fields {net}` path: start and end (a register by its output net), arrival
/// plus setup, combinational cells before the arrival.
fn parse_path(report: &str, lib: &Library, q_nets: &HashMap<String, String>) -> Option<ParsedPath> {
    let point = |key: &str| -> Option<String> {
        report.lines().find_map(|l| l.strip_prefix(key)).map(|r| r.split(" (").next().unwrap_or(r).trim().to_string())
    };
    let (start, end) = (point("Startpoint: ")?, point("Endpoint: ")?);
    let name = |inst: String| q_nets.get(&inst).cloned().unwrap_or(inst);
    let mut arrival = None;
    let mut setup = 0.0;
    let mut levels = 0;
    for line in report.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if line.contains("data arrival time") && arrival.is_none() {
            arrival = words.first().and_then(|w| w.parse::<f64>().ok());
        } else if line.contains("library setup time") {
            setup = words.first().and_then(|w| w.parse::<f64>().ok()).map_or(0.0, |s: f64| -s);
        } else if arrival.is_none() {
            // "delay time ^ inst/pin (CELL)": a cell on the data path.
            if let Some(cell) = words.last().and_then(|w| w.strip_prefix('(')).and_then(|w| w.strip_suffix(')')) {
                if lib.cells.get(cell).is_some_and(|c| !c.1) {
                    levels += 1;
                }
            }
        }
    }
    Some(ParsedPath { start: name(start), end: name(end), delay_ns: arrival? + setup, levels })
}

/// A Markdown table of reports: area, and the worst path of each kind in FO4 (register to
/// register also in ns at the target, with its logic levels), and whether the block fits
/// ([`TimingReport::meets_budget`]: its register-to-register and port paths).
pub fn table(reports: &[TimingReport]) -> String {
    let (budget, clock) = reports.first().map_or((0.0, 0), |r| (r.budget_ns / r.fo4_ns, r.clock_mhz));
    let mut out = format!(
        "budget: {budget:.1} FO4 register to register ({} at {clock} MHz, {:.0} % uncertainty)\n\n\
         | block | cells | flip-flops | area (um2, 180 nm) | area (um2, {}) | reg -> reg (FO4) | at {} (ns) | levels | in -> reg | reg -> out | in -> out | fits |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
        lacuna_spec::timing::TARGET.name,
        lacuna_spec::timing::CLOCK_UNCERTAINTY * 100.0,
        lacuna_spec::timing::TARGET.name,
        lacuna_spec::timing::TARGET.name,
    );
    let fo4 = |r: &TimingReport, k: PathKind| r.worst(k).map_or("-".to_string(), |p| format!("{:.1}", p.fo4));
    for r in reports {
        let rr = r.worst(PathKind::RegToReg);
        out += &format!(
            "| {} | {} | {} | {:.0} | {:.0} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.module,
            r.cells,
            r.flip_flops,
            r.area_um2,
            r.scaled_area_um2,
            fo4(r, PathKind::RegToReg),
            rr.map_or("-".to_string(), |p| format!("{:.3}", p.scaled_ns)),
            rr.map_or("-".to_string(), |p| p.levels.to_string()),
            fo4(r, PathKind::InToReg),
            fo4(r, PathKind::RegToOut),
            fo4(r, PathKind::InToOut),
            match r.meets_budget() {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIBERTY: &str = "library (t) {\n  cell (INVX1) {\n  area : 16;\n  pin (A) { }\n  }\n  cell (BUFX2) {\n  area : 32;\n  }\n  \
        cell (NOR2X1) {\n  area : 24;\n  }\n  cell (DFFPOSX1) {\n  area : 96;\n  ff (DS0000,P0002) {\n  next_state : \"D\";\n  }\n  }\n}\n";

    /// OpenSTA 2.0's `report_checks -fields {net}` for a register-to-register path, as it prints it.
    const REPORT: &str = "RegToReg
Startpoint: _8149_ (rising edge-triggered flip-flop clocked by clk)
Endpoint: _7923_ (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max

Fanout     Delay      Time   Description
------------------------------------------------------------------
         0.0000    0.0000   clock clk (rise edge)
         0.0000    0.0000   clock network delay (ideal)
         0.0000    0.0000 ^ _8149_/CLK (DFFPOSX1)
         0.2580    0.2580 ^ _8149_/Q (DFFPOSX1)
   10                       head.q[3] (net)
         0.1110    0.3690 v _3918_/Y (NOR2X1)
    2                       _0492_ (net)
         0.6100    0.9790 ^ _3920_/Y (INVX1)
    1                       _0494_ (net)
         0.0000    0.9790 ^ _7923_/D (DFFPOSX1)
                   0.9790   data arrival time

        10.0000   10.0000   clock clk (rise edge)
                  10.0000 ^ _7923_/CLK (DFFPOSX1)
        -0.1820    9.8180   library setup time
                   9.8180   data required time
";

    fn library() -> Library {
        let cells = liberty_cells(LIBERTY);
        Library {
            liberty: PathBuf::from("t.lib"),
            drawn_nm: 180.0,
            buffer: "BUFX2 A Y".into(),
            inverter: "INVX1".into(),
            cells,
        }
    }

    #[test]
    fn liberty_cells_have_their_areas_and_the_flip_flops_are_known() {
        let lib = library();
        assert_eq!(lib.cells.len(), 4);
        assert_eq!(lib.cells["NOR2X1"], (24.0, false));
        assert_eq!(lib.cells["DFFPOSX1"], (96.0, true));
    }

    #[test]
    fn a_path_is_read_with_its_registers_named_its_setup_added_and_its_gates_counted() {
        let lib = library();
        let netlist = "  DFFPOSX1 _8149_ (\n    .CLK(clock),\n    .D(_0001_),\n    .Q(\\head.q [3] )\n  );\n  \
                       DFFPOSX1 _7923_ (\n    .CLK(clock),\n    .D(_0494_),\n    .Q(\\acc.q [30] )\n  );\n";
        let q = flop_outputs(netlist, &lib);
        let p = parse_path(REPORT, &lib, &q).unwrap();
        assert_eq!((p.start.as_str(), p.end.as_str()), ("head.q [3]", "acc.q [30]"));
        assert!((p.delay_ns - (0.979 + 0.182)).abs() < 1e-9, "{}", p.delay_ns);
        // NOR2X1 and INVX1: the flip-flops' clock-to-output and capture are not logic levels.
        assert_eq!(p.levels, 2);
    }

    #[test]
    fn a_section_without_a_path_gives_none() {
        let lib = library();
        assert!(parse_path("RegToReg\nNo paths found.\n", &lib, &HashMap::new()).is_none());
    }
}
