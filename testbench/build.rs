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
    let root = match verilator_root() {
        Ok(root) => root,
        Err(why) if required => panic!("LACUNA_REQUIRE_VERILATOR=1 but {why}"),
        Err(why) => {
            println!("cargo:warning=building without the RTL engine: {why}");
            return;
        }
    };
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let modules = lacuna_rtl::blocks(&lacuna_spec::Arch::preset("tiny").unwrap())
        .unwrap_or_else(|e| panic!("emitting the RTL: {e}"));

    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .opt_level(2)
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
    build.compile("lacuna_verilated");
    println!("cargo:rustc-cfg=lacuna_verilator");
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

/// Runs Verilator on one module: C++ into `mdir`, class `V<name>`.
fn verilate(name: &str, source: &Path, mdir: &Path) {
    let status = Command::new("verilator")
        .args(["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert"])
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
