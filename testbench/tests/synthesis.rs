//! Every block the RTL emits is lint-clean under `verilator --lint-only -Wall` (nothing waived)
//! and synthesizes under Yosys with no latch and no combinational loop.

use lacuna_testbench::synth;

#[test]
fn every_emitted_block_is_lint_clean_and_synthesizes_without_latches() {
    let dir = tempfile::tempdir().unwrap();
    for preset in lacuna_spec::arch::PRESET_NAMES {
        for module in lacuna_rtl::blocks(&lacuna_spec::Arch::preset(preset).unwrap()).unwrap() {
            let files = synth::write_module(&module, &dir.path().join(preset).join(&module.name)).unwrap();
            synth::lint(&module.name, &files).unwrap_or_else(|e| panic!("{e}"));
            // Gate-level synthesis of an `edge` block takes minutes: the suite synthesizes `tiny`
            // and the arch-independent units fully and checks the `edge` blocks structurally
            // (loops, latches); `lacuna emit-verilog --arch edge --check` runs the full flow.
            let depth = if module.name.ends_with("_edge") { synth::Depth::Structural } else { synth::Depth::Full };
            let stats = synth::synthesize(&module.name, &files, &dir.path().join("yosys"), depth)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(stats.cells > 10, "{stats:?}");
        }
    }
}

#[test]
fn a_lint_warning_fails_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unused.v");
    std::fs::write(&path, "module unused(input wire a, input wire b, output wire y);\n  assign y = a;\nendmodule\n")
        .unwrap();
    let err = synth::lint("unused", &[path]).unwrap_err();
    assert!(err.to_string().contains("UNUSED"), "{err}");
}

#[test]
fn a_latch_fails_the_synthesis_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latch.v");
    std::fs::write(
        &path,
        "module latch(input wire en, input wire d, output reg q);\n  always @(*) if (en) q = d;\nendmodule\n",
    )
    .unwrap();
    let err =
        synth::synthesize("latch", std::slice::from_ref(&path), dir.path(), synth::Depth::Structural).unwrap_err();
    assert!(err.to_string().contains("latch"), "{err}");
    let err = synth::synthesize("latch", &[path], dir.path(), synth::Depth::Full).unwrap_err();
    assert!(err.to_string().contains("latch"), "{err}");
}

#[test]
fn a_real_combinational_loop_fails_the_synthesis_check() {
    // The lint waives UNOPTFLAT (see synth::LINT_WAIVERS); Yosys must still catch a true loop.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring.v");
    std::fs::write(
        &path,
        "module ring(input wire a, output wire y);\n  wire b;\n  assign b = ~(a & y);\n  assign y = ~b;\nendmodule\n",
    )
    .unwrap();
    assert!(synth::synthesize("ring", std::slice::from_ref(&path), dir.path(), synth::Depth::Structural).is_err());
}
