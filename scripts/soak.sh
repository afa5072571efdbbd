#!/usr/bin/env bash
# The soak: long randomized checks beyond what the test command runs (not part of CI).
#
#   bash scripts/soak.sh [OUT]        # defaults: 100,000 tiny jobs, 1,000 edge jobs, 10^7 runs a fuzz target
#
# 1. Three-way co-simulation (RTL under Verilator, cycle model, golden) on fresh seeds: the seeds
#    start at a value drawn from the clock and recorded, so each soak runs jobs no test has run.
#    Half the random jobs are real-valued (Gaussian FP16). Counts: SOAK_TINY_JOBS, SOAK_EDGE_JOBS.
# 2. Every fuzz target for SOAK_FUZZ_RUNS executions (cargo-fuzz; a nightly toolchain, or
#    RUSTC_BOOTSTRAP=1 on a stable one), each from its seeds and a corpus kept in fuzz/corpus/.
#    SOAK_FUZZ_TARGETS picks targets (default: all); SOAK_FUZZ_RUNS=0 skips the fuzzing;
#    SOAK_FUZZ_SECONDS=S runs each target S seconds instead of a number of executions.
#
# Writes OUT/soak.json (one object per part: what ran, for how long, what failed) and the raw
# outputs beside it; exits non-zero on the first failure (the cosim report names the job and
# writes its waveform into OUT; a fuzz crash leaves its input in fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${1:-soak-out}"
TINY_JOBS="${SOAK_TINY_JOBS:-100000}"
EDGE_JOBS="${SOAK_EDGE_JOBS:-1000}"
FUZZ_RUNS="${SOAK_FUZZ_RUNS:-10000000}"
FUZZ_SECONDS="${SOAK_FUZZ_SECONDS:-}"
TARGETS="${SOAK_FUZZ_TARGETS:-rlc_reader arch_toml weight_files gguf hf_json shard_index trace program merge}"
SEED="${SOAK_SEED:-$(( $(date +%s) * 1000 ))}"
mkdir -p "$OUT"
log() { printf '\n== %s (%s)\n' "$*" "$(date +%T)"; }

log "building lacuna (release)"
cargo build --release --locked
LACUNA=target/release/lacuna

parts=()
for spec in "tiny:$TINY_JOBS" "edge:$EDGE_JOBS"; do
  arch="${spec%%:*}"
  jobs="${spec##*:}"
  [ "$jobs" -gt 0 ] || continue
  log "cosim $arch: $jobs random jobs from seed $SEED"
  start=$(date +%s)
  if ! "$LACUNA" cosim --arch "$arch" --jobs "$jobs" --seed "$SEED" --vcd "$OUT" --json >"$OUT/cosim-$arch.json"; then
    echo "soak: cosim on $arch failed; see $OUT/cosim-$arch.json" >&2
    exit 1
  fi
  secs=$(( $(date +%s) - start ))
  parts+=("{\"part\": \"cosim\", \"arch\": \"$arch\", \"seed\": $SEED, \"jobs\": $jobs, \"seconds\": $secs, \"report\": $(cat "$OUT/cosim-$arch.json")}")
done

if [ "$FUZZ_RUNS" -gt 0 ]; then
  if ! cargo fuzz --version >/dev/null 2>&1; then
    log "installing cargo-fuzz"
    cargo install --locked cargo-fuzz
  fi
  limit=(-runs="$FUZZ_RUNS")
  [ -n "$FUZZ_SECONDS" ] && limit=(-max_total_time="$FUZZ_SECONDS")
  for t in $TARGETS; do
    log "fuzz $t: ${limit[*]}"
    mkdir -p "fuzz/corpus/$t"
    seeds=()
    [ -d "fuzz/seeds/$t" ] && seeds=("fuzz/seeds/$t")
    start=$(date +%s)
    # -rss_limit_mb: a reader that allocates beyond what its input warrants fails the soak.
    if ! (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" "corpus/$t" "${seeds[@]/#fuzz\//}" -- \
        "${limit[@]}" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1) >"$OUT/fuzz-$t.log" 2>&1; then
      echo "soak: fuzz target $t failed; see $OUT/fuzz-$t.log and fuzz/artifacts/$t/" >&2
      exit 1
    fi
    secs=$(( $(date +%s) - start ))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$OUT/fuzz-$t.log" | grep -o '[0-9]*$' | tail -1)
    parts+=("{\"part\": \"fuzz\", \"target\": \"$t\", \"executions\": ${execs:-0}, \"seconds\": $secs, \"crashes\": 0}")
  done
fi

{
  printf '['
  for i in "${!parts[@]}"; do
    [ "$i" -gt 0 ] && printf ','
    printf '\n%s' "${parts[$i]}"
  done
  printf '\n]\n'
} >"$OUT/soak.json"
log "soak passed: $OUT/soak.json"
