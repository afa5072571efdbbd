#!/usr/bin/env bash
# Every `lacuna` command of the README as written, in its order, the long ones included (the
# main jobs on their full workloads, `eval` over whole texts, `emit-verilog --arch tiny --check`):
# tests/readme.rs on the release build with LACUNA_README_ALL=1. About 10 minutes after the build;
# not part of CI, whose test command (scripts/test.sh) runs all but the long ones.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fetch-models.sh
LACUNA_README_ALL=1 LACUNA_REQUIRE_MODELS=1 \
  cargo test --release --locked --test readme -- --nocapture every_lacuna_command_of_the_readme_runs_as_written
