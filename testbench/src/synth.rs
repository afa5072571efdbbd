//! The synthesis-flow checks of emitted Verilog: Verilator lint and Yosys synthesis.
//!
//! [`write_module`] writes a block's modules one per file; [`lint`] runs
//! `verilator --lint-only -Wall` on them with no warning waived; [`synthesize`] runs Yosys:
//! `proc; flatten; stat` (memory bits: arrays before any mapping), `memory -nomap; opt -fast;
//! check -assert`, then, at [`Depth::Full`], `synth -top TOP -flatten; check -assert;
//! stat`, or at [`Depth::Mapped`] the mapping to a real cell library that [`crate::timing`]
//! times; it refuses latches. These are what `lacuna emit-verilog --check` and the test suite
//! run.

use lacuna_rtl::Module;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a check failed.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The tool could not be started.
    #[error("could not run `{tool}` ({why}); install it (`apt-get install verilator yosys opensta`)")]
    ToolMissing {
        /// verilator, yosys or sta.
        tool: &'static str,
        /// The OS error.
        why: String,
    },
    /// Verilator lint reported something.
    #[error("verilator --lint-only -Wall rejects {module}:\n{log}")]
    Lint {
        /// The top module.
        module: String,
        /// Verilator's output.
        log: String,
    },
    /// Yosys failed, found a combinational loop or a latch.
    #[error("yosys rejects {module}: {why}")]
    Synthesis {
        /// The top module.
        module: String,
        /// What went wrong (Yosys's last lines, or the latch count).
        why: String,
    },
    /// The Liberty library is missing or unusable.
    #[error("{0}")]
    Library(String),
    /// OpenSTA failed, or its report was not understood.
    #[error("static timing: {0}")]
    Timing(String),
    /// Reading or writing files.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Yosys's figures for one block (the whole hierarchy under its top, flattened). With
/// [`Depth::Structural`] cells and flip-flops are word-level cells (`$add`, `$sdff`, ...), not
/// gates or flip-flop bits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SynthStats {
    /// The top module.
    pub module: String,
    /// Generic gate-level cells after `synth` (flip-flops included).
    pub cells: u64,
    /// Flip-flop cells after `synth`.
    pub flip_flops: u64,
    /// Bits of inferred memories before they are mapped (0 where a block has none).
    pub memory_bits: u64,
}

/// Writes `module` into `dir`, one file per Verilog module; returns the paths, top first.
pub fn write_module(module: &Module, dir: &Path) -> Result<Vec<PathBuf>, SynthError> {
    std::fs::create_dir_all(dir)?;
    let mut paths = Vec::new();
    for (file, text) in module.files() {
        let path = dir.join(file);
        std::fs::write(&path, text)?;
        paths.push(path);
    }
    Ok(paths)
}

/// `verilator --lint-only -Wall` over the files of one block, with no warning waived: any
/// `%Warning` fails it (UNOPTFLAT included: `lacuna_rtl::split_always` and phase-local signals
/// keep the emitted always blocks free of false loops, docs/synthesis.md).
pub fn lint(module: &str, files: &[PathBuf]) -> Result<(), SynthError> {
    // The file list goes in a command file: an `edge` top has hundreds of files, past the
    // argument-list limit of the shell Verilator's wrapper runs.
    let dir = files.first().and_then(|f| f.parent()).unwrap_or(Path::new("."));
    let list = dir.join(format!("{module}.lint.f"));
    let lines: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    std::fs::write(&list, lines.join("\n") + "\n")?;
    let output = Command::new("verilator")
        .args(["--lint-only", "-Wall"])
        .args(["--top-module", module])
        .arg("-f")
        .arg(&list)
        .output()
        .map_err(|e| SynthError::ToolMissing { tool: "verilator", why: e.to_string() })?;
    let log = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if !output.status.success() || log.contains("%Warning") || log.contains("%Error") {
        return Err(SynthError::Lint { module: module.to_string(), log });
    }
    Ok(())
}

/// How far Yosys goes.
#[derive(Clone, Copy, Debug)]
pub enum Depth<'a> {
    /// Elaborate, flatten, `check -assert`, refuse latches, count memory bits: seconds even for
    /// the largest block. `cells` and `flip_flops` are then word-level cell counts.
    Structural,
    /// The above, then `synth -top TOP -flatten; check -assert`: gate-level figures (minutes for
    /// the `edge` blocks).
    Full,
    /// [`Depth::Full`], then the gates mapped to a real standard-cell library, timing-driven:
    /// `dfflibmap`, then ABC maps for a target delay (ps) and buffers and sizes the gates as a
    /// synthesis flow would (without that, a net of fanout 150 on a minimum gate takes 8 ns);
    /// the netlist `WORK/MODULE.mapped.v`, which [`crate::timing`] reads for area and timing.
    /// [`SynthStats`] then counts library cells.
    Mapped {
        /// The library.
        library: &'a crate::timing::Library,
        /// The delay ABC maps for, ps of the library.
        target_ps: u32,
    },
}

/// Yosys on one block: no combinational loop, no latch; returns its figures.
pub fn synthesize(module: &str, files: &[PathBuf], work: &Path, depth: Depth) -> Result<SynthStats, SynthError> {
    std::fs::create_dir_all(work)?;
    let before = work.join(format!("{module}.mem.json"));
    let after = work.join(format!("{module}.synth.json"));
    let reads: Vec<String> = files.iter().map(|f| format!("read_verilog {};", f.display())).collect();
    // `flatten` before the first `stat`: Yosys 0.23's `stat -json` of a hierarchy is not JSON.
    // Memory bits are counted right after `proc`, while arrays are still RTLIL memories (later
    // passes turn them into memory cells, which `stat` does not count as memory bits).
    // `memory -nomap` before `opt -fast`: in the other order Yosys 0.23 disconnects the read
    // port of a ROM that `proc_rom` made from a `case` (the SwiGLU lane's `rom::Rom256`), and
    // `check` then finds its outputs undriven; `synth` itself, and this order, keep it.
    let structural = format!(
        "{} hierarchy -check -top {module}; proc; flatten; tee -q -o {} stat -json; memory -nomap; opt -fast; check -assert",
        reads.join(" "),
        before.display()
    );
    let full =
        format!("{structural}; synth -top {module} -flatten; check -assert; tee -q -o {} stat -json", after.display());
    let script = match depth {
        Depth::Structural => structural,
        Depth::Full => full,
        // OpenSTA 2.0's Verilog reader refuses the concatenated assignments Yosys writes for
        // wires that alias others: `opt_clean -purge` drops the names nothing uses, `insbuf`
        // turns the remaining aliases into buffer cells (a few ps too many on a path), and
        // `crate::timing` drops the assignments of constant output bits. No `check` after the
        // mapping: Yosys does not know the library cells' port directions.
        Depth::Mapped { library, target_ps } => {
            // Yosys 0.23's own `abc -D` script maps for the delay but neither buffers nor sizes.
            // No `dc2` (2026-12-07): its area-oriented rewriting turned the parallel-prefix
            // (Brent-Kung) carry chains that Yosys's techmap builds back into ripple chains (a
            // 30-bit address adder became 28 AOI/OAI cells in series); without it
            // `colptr_fetch`'s input path fell from 80.5 to ~54 FO4 at 7 % more area.
            // `read_constr` (2026-12-07): ABC sees the flip-flops' outputs as its primary inputs
            // and, told nothing, drives them ideally, so `buffer -p` left a register driving the
            // 1,911 read multiplexers of `act_path`'s activation SRAM unbuffered (35 ns on that
            // one net). Driven by the library's smallest inverter (weaker than OSU's DFFPOSX1
            // output: 1.7 against 0.96 ns/pF in the tables), ABC builds the buffer trees a
            // resizer would: `act_path` fell from 454 to 52.5 FO4, `chunk_fetch` 223 to 76.3,
            // `drain` 134 to 65.0, and the blocks without such nets moved by a few FO4.
            let abc = work.join(format!("{module}.abc"));
            let constr = work.join(format!("{module}.constr"));
            std::fs::write(&constr, format!("set_driving_cell {}\n", library.inverter))?;
            std::fs::write(
                &abc,
                format!(
                    "read_constr -v {}\nstrash\n&get -n\n&fraig -x\n&put\nscorr\ndretime\nstrash\n&get -n\n&dch -f\n\
                     &nf -D {target_ps}\n&put\nbuffer -p\nupsize -D {target_ps}\ndnsize -D {target_ps}\n",
                    constr.display()
                ),
            )?;
            // `synth -noabc`: the generic gate mapping would be thrown away by the library's.
            format!(
                "{structural}; synth -top {module} -flatten -noabc; dfflibmap -liberty {lib}; abc -script {} -liberty {lib}; opt_clean -purge; insbuf -buf {buf}; tee -q -o {} stat -json; write_verilog -noattr -noexpr {}",
                abc.display(),
                after.display(),
                work.join(format!("{module}.mapped.v")).display(),
                lib = library.liberty.display(),
                buf = library.buffer,
            )
        }
    };
    // A script file, not `-p`: one argument that long exceeds the kernel's limit for an `edge` top.
    let script_path = work.join(format!("{module}.ys"));
    std::fs::write(&script_path, script.replace("; ", "\n"))?;
    let output = Command::new("yosys")
        .arg("-q")
        .arg("-s")
        .arg(&script_path)
        .output()
        .map_err(|e| SynthError::ToolMissing { tool: "yosys", why: e.to_string() })?;
    if !output.status.success() {
        let log = String::from_utf8_lossy(&output.stderr).to_string() + &String::from_utf8_lossy(&output.stdout);
        let tail: Vec<&str> = log.lines().rev().take(12).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(SynthError::Synthesis { module: module.to_string(), why: tail.join("\n") });
    }
    let stats_before = read_design_stats(&before, module)?;
    let stats_after = match depth {
        Depth::Structural => stats_before.clone(),
        Depth::Full | Depth::Mapped { .. } => read_design_stats(&after, module)?,
    };
    let count = |stats: &serde_json::Value, pred: &dyn Fn(&str) -> bool| -> u64 {
        stats["num_cells_by_type"]
            .as_object()
            .map(|m| m.iter().filter(|(k, _)| pred(k)).map(|(_, v)| v.as_u64().unwrap_or(0)).sum())
            .unwrap_or(0)
    };
    let latches = count(&stats_before, &|k| k.contains("DLATCH") || k.contains("dlatch"))
        + count(&stats_after, &|k| k.contains("DLATCH") || k.contains("dlatch"));
    if latches > 0 {
        return Err(SynthError::Synthesis { module: module.to_string(), why: format!("{latches} latches inferred") });
    }
    Ok(SynthStats {
        module: module.to_string(),
        cells: stats_after["num_cells"].as_u64().unwrap_or(0),
        flip_flops: count(&stats_after, &|k| k.contains("DFF") || k.contains("dff")),
        memory_bits: stats_before["num_memory_bits"].as_u64().unwrap_or(0),
    })
}

/// The statistics of the top module (a flattened design has one module).
pub(crate) fn read_design_stats(path: &Path, module: &str) -> Result<serde_json::Value, SynthError> {
    let text = std::fs::read_to_string(path)?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| SynthError::Synthesis {
        module: module.to_string(),
        why: format!("unreadable stat output {}: {e}", path.display()),
    })?;
    // Yosys writes per-module figures under "modules" (names prefixed with a backslash) and the
    // hierarchy's total under "design".
    Ok(json.get("design").cloned().unwrap_or_else(|| json["modules"][format!("\\{module}")].clone()))
}
