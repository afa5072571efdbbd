//! Builds the Verilated models of the RTL blocks and links them with the C++ shim.
//!
//! For every block `lacuna_rtl` can emit, this script writes its Verilog to `OUT_DIR`, runs
//! `verilator --cc -O3` on it, and compiles the generated C++, the Verilator runtime and
//! `csrc/shim.cpp` (a fused `extern "C"` call per batch or per cycle) with the `cc` crate.
//! Verilator is Debian's (`apt-get install verilator`, which `scripts/test.sh` does); the
//! `verilated` crate is not used because it does not build on Verilator 5.
//!
//! Without Verilator the crate still builds, with no RTL engine (`cfg(lacuna_verilator)` unset):
//! the CLI's other commands then work on a machine that has only Rust, and `lacuna cosim` says
//! what to install. `LACUNA_REQUIRE_VERILATOR=1` (set by the test command) turns a missing
//! Verilator into a build error, so that the suite can never pass without the RTL.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(lacuna_verilator)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-env-changed=LACUNA_REQUIRE_VERILATOR");
    println!("cargo:rerun-if-env-changed=PATH");
    let required = std::env::var("LACUNA_REQUIRE_VERILATOR").is_ok_and(|v| v == "1");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    write_case_list(&out);
    let root = match verilator_root() {
        Ok(root) => root,
        Err(why) if required => panic!("LACUNA_REQUIRE_VERILATOR=1 but {why}"),
        Err(why) => {
            println!("cargo:warning=building without the RTL engine: {why}");
            // The library of an earlier build no longer matches these empty bindings.
            let _ = std::fs::remove_file(out.join("verilated.stamp"));
            std::fs::write(out.join("models.rs"), "pub static MODELS: &[ModelInfo] = &[];\n")
                .expect("writing the empty bindings");
            return;
        }
    };
    // Every block of every preset and of every arch in `archs/` (the co-simulation's extra archs,
    // e.g. a single lane), each once (the FP units are the same for every arch).
    println!("cargo:rerun-if-changed=archs");
    let mut archs: Vec<lacuna_spec::Arch> = lacuna_spec::arch::PRESET_NAMES
        .iter()
        .map(|p| lacuna_spec::Arch::preset(p).expect("presets are valid"))
        .collect();
    let mut extra: Vec<PathBuf> = std::fs::read_dir("archs")
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
        })
        .unwrap_or_default();
    extra.sort();
    for path in extra {
        let text = std::fs::read_to_string(&path).expect("reading an arch file");
        let origin = path.display().to_string();
        archs.push(lacuna_spec::Arch::from_toml_str(&text, &origin).unwrap_or_else(|e| panic!("{origin}: {e}")));
    }
    let presets = lacuna_spec::arch::PRESET_NAMES.len();
    // `LACUNA_VERILATE=cores`: only the system tops and the FP units (what `lacuna cosim` and the
    // benchmarks run); the test command builds its release targets so, the block-level tests run
    // in the debug build, which has every block.
    println!("cargo:rerun-if-env-changed=LACUNA_VERILATE");
    let cores_only = std::env::var("LACUNA_VERILATE").is_ok_and(|v| v == "cores");
    let mut modules: Vec<lacuna_rtl::Module> = Vec::new();
    for (i, arch) in archs.iter().enumerate() {
        // Of an extra arch only the system top and its memory port (the arbitration differs by
        // arch): the other blocks are tested on the presets. The core alone is not built: the
        // system top holds it, and the co-simulation runs the system. The expert unit's engines
        // are built for `tiny` only: `edge`'s are the same generator with more lanes (its down
        // engine is 14 MB of Verilog, 256 lanes; its dot engine 16 units).
        let tiny = arch.name == "tiny";
        let wanted = |name: &str| {
            let top = name.starts_with("lacuna_system_");
            let port = name.starts_with("lacuna_mem_port_");
            let core = name.starts_with("lacuna_core_");
            let engine = name.starts_with("lacuna_down_engine_")
                || name.starts_with("lacuna_dot_engine_")
                || name.starts_with("lacuna_swiglu_engine_")
                || name.starts_with("lacuna_expert_pipe_")
                || name.starts_with("lacuna_quantizer_")
                || name.starts_with("lacuna_expert_datapath_");
            let unit = name == "lacuna_fp16_mul" || name == "lacuna_fp32_add";
            !core && (!engine || tiny) && if cores_only { top || unit } else { i < presets || top || port }
        };
        for m in lacuna_rtl::blocks_where(arch, wanted).unwrap_or_else(|e| panic!("emitting the RTL: {e}")) {
            if !modules.iter().any(|x| x.name == m.name) {
                modules.push(m);
            }
        }
        // `tiny` with 8 FP32 lanes: its quantizer and datapath (several feeds of the lanes'
        // maxima, chunks of four to a group), which `tiny`'s two lanes do not exercise.
        if tiny && !cores_only {
            let f8 = lacuna_testbench_arch_f8(arch);
            let quant =
                |name: &str| name.starts_with("lacuna_quantizer_") || name.starts_with("lacuna_expert_datapath_");
            modules.extend(lacuna_rtl::blocks_where(&f8, quant).unwrap_or_else(|e| panic!("emitting the RTL: {e}")));
        }
    }

    // The models are rebuilt only when what goes into them changed: this script also reruns when
    // a case file is added (`cases/`), which must not cost a Verilator build.
    let (shim_cpp, bindings) = generic_shims(&modules);
    let stamp = build_stamp(&modules, &shim_cpp, &bindings);
    let stamp_file = out.join("verilated.stamp");
    let lib = out.join("liblacuna_verilated.a");
    if lib.exists() && out.join("models.rs").exists() && std::fs::read(&stamp_file).is_ok_and(|s| s == stamp.as_bytes())
    {
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static=lacuna_verilated");
        println!("cargo:rustc-link-lib=stdc++");
        println!("cargo:rustc-cfg=lacuna_verilator");
        return;
    }
    let _ = std::fs::remove_file(&stamp_file);
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .opt_level(cpp_opt_level())
        .warnings(false)
        .flag_if_supported("-Wno-unused-parameter")
        .include(root.join("include"))
        .include(root.join("include/vltstd"))
        .include(&out);
    for name in ["verilated.cpp", "verilated_threads.cpp"] {
        build.file(root.join("include").join(name));
    }
    for module in &modules {
        let mdir = out.join(&module.name);
        let _ = std::fs::remove_dir_all(&mdir);
        std::fs::create_dir_all(&mdir).expect("creating the Verilator output folder");
        let source = out.join(format!("{}.v", module.name));
        std::fs::write(&source, &module.verilog).expect("writing the Verilog");
        verilate(&module.name, &source, &mdir);
        build.include(&mdir);
        for cpp in cpp_files(&mdir) {
            build.file(cpp);
        }
    }
    build.file("csrc/shim.cpp");
    std::fs::write(out.join("models_shim.cpp"), shim_cpp).expect("writing the generated shim");
    std::fs::write(out.join("models.rs"), bindings).expect("writing the generated bindings");
    build.file(out.join("models_shim.cpp"));
    build.compile("lacuna_verilated");
    std::fs::write(&stamp_file, stamp).expect("writing the build stamp");
    println!("cargo:rustc-cfg=lacuna_verilator");
}

/// `cases.rs`: every `cases/*.toml`, embedded by name, sorted (`case::NAMED_CASES`): a case added
/// as a file runs on every engine with no list to edit.
fn write_case_list(out: &Path) {
    println!("cargo:rerun-if-changed=cases");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("reading testbench/cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut rs = String::from("// Generated by testbench/build.rs from testbench/cases/. Do not edit.\n");
    rs.push_str("/// The named edge cases of `testbench/cases/` (file name, text).\n");
    rs.push_str("pub const NAMED_CASES: &[(&str, &str)] = &[\n");
    for f in files {
        let name = f.file_name().and_then(|n| n.to_str()).expect("a case file's name is UTF-8");
        rs.push_str(&format!("    ({name:?}, include_str!({:?})),\n", f.display().to_string()));
    }
    rs.push_str("];\n");
    std::fs::write(out.join("cases.rs"), rs).expect("writing the case list");
}

/// Everything the Verilated library is built from: the Verilog of every module, the hand-written
/// and generated shims and bindings, Verilator's flags and version, the C++ optimisation level.
fn build_stamp(modules: &[lacuna_rtl::Module], shim_cpp: &str, bindings: &str) -> String {
    let version = Command::new("verilator").arg("--version").output().map(|o| o.stdout).unwrap_or_default();
    let mut stamp = format!(
        "opt {}\nverilator {} {:?}\n",
        cpp_opt_level(),
        String::from_utf8_lossy(&version).trim(),
        VERILATOR_FLAGS
    );
    stamp.push_str(&std::fs::read_to_string("csrc/shim.cpp").expect("reading csrc/shim.cpp"));
    stamp.push_str(shim_cpp);
    stamp.push_str(bindings);
    for m in modules {
        stamp.push_str(&format!("\n// module {}\n", m.name));
        stamp.push_str(&m.verilog);
    }
    stamp
}

/// -O1 for the C++ of debug builds (the test suite: it halves the compile time of the models and
/// the tests run a few million cycles at most), -O2 for release builds (benchmarks, `lacuna cosim`).
fn cpp_opt_level() -> u32 {
    println!("cargo:rerun-if-env-changed=PROFILE");
    if std::env::var("PROFILE").is_ok_and(|p| p == "release") {
        2
    } else {
        1
    }
}

/// Verilator's install root, or why there is none.
fn verilator_root() -> Result<PathBuf, String> {
    let output = Command::new("verilator").args(["--getenv", "VERILATOR_ROOT"]).output().map_err(|e| {
        format!("`verilator` could not be run ({e}); install it with `apt-get install verilator` (5.x)")
    })?;
    if !output.status.success() {
        return Err("`verilator --getenv VERILATOR_ROOT` failed".into());
    }
    let root = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !root.join("include/verilated.cpp").exists() {
        return Err(format!("Verilator's runtime is not under {}", root.display()));
    }
    Ok(root)
}

/// Verilator's flags for every model.
const VERILATOR_FLAGS: [&str; 7] = ["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert"];

/// Runs Verilator on one module: C++ into `mdir`, class `V<name>`.
fn verilate(name: &str, source: &Path, mdir: &Path) {
    let status = Command::new("verilator")
        // No warning waived: the emitted Verilog is lint-clean (docs/synthesis.md).
        .args(VERILATOR_FLAGS)
        .arg("--prefix")
        .arg(format!("V{name}"))
        .arg("--top-module")
        .arg(name)
        .arg("--Mdir")
        .arg(mdir)
        .arg(source)
        .status()
        .expect("running verilator");
    assert!(status.success(), "verilator failed on {name} ({})", source.display());
}

/// The generated C++ files of one model (sorted: the build is reproducible).
fn cpp_files(mdir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(mdir)
        .expect("reading the Verilator output")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    files.sort();
    files
}

/// Words of 32 bits a port of `width` bits takes in the flat in/out arrays.
fn words(width: u32) -> usize {
    width.div_ceil(32) as usize
}

/// A C++ shim and its Rust bindings for every module, generated from the port lists: `new`,
/// `delete`, `eval` (set inputs, evaluate, read outputs) and `cycle` (the same with the clock low,
/// then a rising edge), each one FFI call, over flat arrays of 32-bit words (each port takes
/// `ceil(width / 32)` words, least significant first, in port order).
fn generic_shims(modules: &[lacuna_rtl::Module]) -> (String, String) {
    use lacuna_rtl::Direction;
    use std::fmt::Write;
    let mut cpp = String::from("// Generated by testbench/build.rs from the RTL's port lists. Do not edit.\n");
    cpp.push_str("#include <cstdint>\n#include \"verilated.h\"\n");
    let mut rust = String::from("// Generated by testbench/build.rs from the RTL's port lists. Do not edit.\n");
    let mut table = String::from("pub static MODELS: &[ModelInfo] = &[\n");
    rust.push_str("extern \"C\" {\n");
    for m in modules {
        let n = &m.name;
        let clocked = m.ports.iter().any(|p| p.name == "clock" && p.direction == Direction::Input && p.width == 1);
        writeln!(cpp, "#include \"V{n}.h\"").unwrap();
        writeln!(cpp, "namespace {{ struct H_{n} {{ VerilatedContext ctx; V{n}* m; }}; }}").unwrap();
        writeln!(cpp, "extern \"C\" void* lacuna_{n}_new() {{ auto* h = new H_{n}; h->m = new V{n}{{&h->ctx, \"{n}\"}}; return h; }}").unwrap();
        writeln!(cpp, "extern \"C\" void lacuna_{n}_delete(void* p) {{ auto* h = static_cast<H_{n}*>(p); h->m->final(); delete h->m; delete h; }}").unwrap();
        let mut set = String::new();
        let mut get = String::new();
        let (mut wi, mut wo) = (0usize, 0usize);
        let mut ports = String::new();
        for p in &m.ports {
            let w = words(p.width);
            let input = p.direction == Direction::Input;
            let at = if input { wi } else { wo };
            writeln!(
                ports,
                "        PortInfo {{ name: {:?}, input: {input}, width: {}, word: {at} }},",
                p.name, p.width
            )
            .unwrap();
            if input && clocked && p.name == "clock" {
                wi += w;
                continue;
            }
            let code = match (input, w) {
                (true, 1) => format!("    h->m->{} = in[{at}];\n", p.name),
                (true, 2) => format!("    h->m->{} = (uint64_t)in[{at}] | ((uint64_t)in[{}] << 32);\n", p.name, at + 1),
                (true, _) => (0..w).map(|i| format!("    h->m->{}[{i}] = in[{}];\n", p.name, at + i)).collect(),
                (false, 1) => format!("    out[{at}] = h->m->{};\n", p.name),
                (false, 2) => format!(
                    "    out[{at}] = (uint32_t)h->m->{0}; out[{1}] = (uint32_t)(h->m->{0} >> 32);\n",
                    p.name,
                    at + 1
                ),
                (false, _) => (0..w).map(|i| format!("    out[{}] = h->m->{}[{i}];\n", at + i, p.name)).collect(),
            };
            if input {
                set.push_str(&code);
                wi += w;
            } else {
                get.push_str(&code);
                wo += w;
            }
        }
        writeln!(cpp, "extern \"C\" void lacuna_{n}_eval(void* p, const uint32_t* in, uint32_t* out) {{\n    auto* h = static_cast<H_{n}*>(p);\n{set}    h->m->eval();\n{get}}}").unwrap();
        if clocked {
            writeln!(cpp, "extern \"C\" void lacuna_{n}_cycle(void* p, const uint32_t* in, uint32_t* out) {{\n    auto* h = static_cast<H_{n}*>(p);\n{set}    h->m->clock = 0;\n    h->m->eval();\n{get}    h->m->clock = 1;\n    h->m->eval();\n}}").unwrap();
        } else {
            writeln!(cpp, "extern \"C\" void lacuna_{n}_cycle(void* p, const uint32_t* in, uint32_t* out) {{ lacuna_{n}_eval(p, in, out); }}").unwrap();
        }
        writeln!(rust, "    fn lacuna_{n}_new() -> *mut core::ffi::c_void;").unwrap();
        writeln!(rust, "    fn lacuna_{n}_delete(p: *mut core::ffi::c_void);").unwrap();
        writeln!(rust, "    fn lacuna_{n}_eval(p: *mut core::ffi::c_void, input: *const u32, output: *mut u32);")
            .unwrap();
        writeln!(rust, "    fn lacuna_{n}_cycle(p: *mut core::ffi::c_void, input: *const u32, output: *mut u32);")
            .unwrap();
        writeln!(
            table,
            "    ModelInfo {{\n        name: {n:?},\n        clocked: {clocked},\n        in_words: {wi},\n        out_words: {wo},\n        ports: &[\n{ports}        ],\n        new: lacuna_{n}_new,\n        delete: lacuna_{n}_delete,\n        eval: lacuna_{n}_eval,\n        cycle: lacuna_{n}_cycle,\n    }},"
        )
        .unwrap();
    }
    rust.push_str("}\n");
    table.push_str("];\n");
    rust.push_str(&table);
    (cpp, rust)
}

/// `tiny` with 8 FP32 lanes, named `tiny_f8` (`lacuna_testbench::expert_cases::tiny_f8`, which
/// this build script cannot call: the crate is not built yet).
fn lacuna_testbench_arch_f8(tiny: &lacuna_spec::Arch) -> lacuna_spec::Arch {
    let mut a = tiny.clone();
    a.name = "tiny_f8".into();
    a.expert_unit.fp32_lanes = 8;
    a
}
