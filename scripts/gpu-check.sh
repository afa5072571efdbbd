#!/usr/bin/env bash
# The GPU check: one prepared script for a machine with an NVIDIA GPU and a CUDA 13 driver but
# no Rust toolchain and no network.
#
#   bash scripts/gpu-check.sh --prepare   # here: build the release binaries into .gpu-carry/
#   bash scripts/gpu-check.sh             # there, in the repository root, with .gpu-carry/
#
# There it finds the CUDA libraries the binaries load at run time (libcuda from the driver,
# libnvrtc.so.13 and libcublas.so.13 from the CUDA toolkit or Python's nvidia-* wheels), runs the
# GPU tests with LACUNA_REQUIRE_GPU=1 (golden kernel bit-exact, fast kernel and cuBLAS within the
# bound; every testbench case), then `lacuna spmspv --engine gpu` on the Celty paper's six shapes
# at 30/50/70 % dual sparsity. Output in $OUT (else ./gpu-check-out): gpu-spmspv.json (the rows),
# gpu-summary.md (the table), gpu-check.log (everything). Each step has a time limit (2 + 2 + 5
# minutes) so that the whole stays within 9 minutes whatever happens; it took 64 s on an H200.
set -uo pipefail
cd "$(dirname "$0")/.."
CARRY=.gpu-carry

if [ "${1:-}" = "--prepare" ]; then
  set -e
  cargo build --release --locked
  dev="$(cargo test --release --locked -p lacuna-gpu --test device --no-run --message-format=json \
    | python3 -c 'import sys,json; [print(j["executable"]) for j in map(json.loads, sys.stdin) if j.get("executable") and j.get("target",{}).get("name")=="device"]')"
  tb="$(cargo test --release --locked -p lacuna-testbench --test gpu --no-run --message-format=json \
    | python3 -c 'import sys,json; [print(j["executable"]) for j in map(json.loads, sys.stdin) if j.get("executable") and j.get("target",{}).get("name")=="gpu"]')"
  rm -rf "$CARRY"
  mkdir -p "$CARRY"
  cp target/release/lacuna "$CARRY/lacuna"
  cp "$dev" "$CARRY/gpu-device-tests"
  cp "$tb" "$CARRY/testbench-gpu-tests"
  strip "$CARRY"/*
  # Which code the figures come from: the commit, and whether the tree had changes on top of it.
  echo "$(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo ' +uncommitted changes')" > "$CARRY/COMMIT"
  ls -la "$CARRY"
  exit 0
fi

OUT="${OUT:-gpu-check-out}"
mkdir -p "$OUT"
LOG="$OUT/gpu-check.log"
exec > >(tee "$LOG") 2>&1
start=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

for b in lacuna gpu-device-tests testbench-gpu-tests; do
  [ -x "$CARRY/$b" ] || { echo "error: $CARRY/$b missing: run 'bash scripts/gpu-check.sh --prepare' where Rust is"; exit 2; }
done
echo "binaries built from commit $(cat "$CARRY/COMMIT" 2>/dev/null || echo unknown)"

step "CUDA libraries"
# The first directory holding each library, searched where CUDA toolkits and wheels put them.
libdir() {
  find /usr/local/cuda*/lib64 /usr/local/cuda*/targets/*/lib /usr/local/nvidia /usr/lib/x86_64-linux-gnu \
       /opt /usr/local/lib /usr/lib/python3*/ -name "$1" 2>/dev/null | head -n 1 | xargs -r dirname
}
for lib in libcuda.so.1 libnvrtc.so.13 libcublas.so.13 libcublasLt.so.13; do
  if ! ldconfig -p | grep -q "$lib"; then
    d="$(libdir "$lib")"
    if [ -n "$d" ]; then
      export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      echo "$lib: $d"
    else
      echo "$lib: not found (the binaries will say which one they miss)"
    fi
  else
    echo "$lib: on the loader's path"
  fi
done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv || true

rc=0
export LACUNA_REQUIRE_GPU=1
step "GPU tests (lacuna-gpu): golden bit-exact, fast and cuBLAS within the bound, timing"
timeout 120 "$CARRY/gpu-device-tests" --test-threads=1 || rc=1
step "GPU tests (testbench): every named case and 600 random cases on the GPU engines"
timeout 120 "$CARRY/testbench-gpu-tests" --nocapture || rc=1

step "benchmark: lacuna spmspv --engine gpu, six paper shapes x 30/50/70 %"
if timeout 300 "$CARRY/lacuna" spmspv --engine gpu --sparsity 30,50,70 --gpu-reps "${GPU_REPS:-30}" --json > "$OUT/gpu-spmspv.json"; then
  :
else
  rc=1
fi

step "summary"
python3 - "$OUT/gpu-spmspv.json" > "$OUT/gpu-summary.md" <<'PY' || rc=1
import json, sys
rows = json.load(open(sys.argv[1]))
by = {}
for r in rows:
    by.setdefault((r["shape"], round(r["weight_sparsity"] * 100)), {})[r["kernel"]] = r
gpu = rows[0]["gpu"] if rows else "?"
print(f"GPU: {gpu}; {rows[0]['provenance'] if rows else ''}")
print()
print("| shape | W/A % | cuBLAS us | fast us | fast vs cuBLAS | byte limit | fast GB/s | golden us | golden bit-exact | bound (fast / cuBLAS) | fast setting |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (shape, lvl), k in by.items():
    f, c, g = k["fast"], k["cublas"], k["golden"]
    limit = c["bytes_loaded"] / f["bytes_loaded"]
    p = f["fast_params"]
    print(f"| {shape} | {lvl}/{lvl} | {c['time_us']:.1f} | {f['time_us']:.1f} | {f['speedup_vs_cublas']:.2f}x | {limit:.2f}x | "
          f"{f['achieved_gb_per_s']:.0f} | {g['time_us']:.0f} | {'yes' if g['bit_exact_with_golden'] else 'NO'} | "
          f"{f['max_bound_fraction']:.2f} / {c['max_bound_fraction']:.2f} | {p['threads']}t x {p['blocks_per_sm']}/SM, {p['merge']} |")
PY
cat "$OUT/gpu-summary.md"
step "done, status $rc"
exit $rc
