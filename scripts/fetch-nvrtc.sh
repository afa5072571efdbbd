#!/usr/bin/env bash
# Fetches NVIDIA's NVRTC (the CUDA C++ run-time compiler) from PyPI's nvidia-cuda-nvrtc wheel,
# pinned by sha256, into a cache outside the repository ($LACUNA_NVRTC, else
# ~/.cache/lacuna/nvrtc), and prints the directory that holds libnvrtc.so.13.
#
# The tests compile the GPU kernels with it on machines with no GPU and no CUDA toolkit
# (gpu/tests/nvrtc.rs). 13.0.88 is the NVRTC of CUDA 13.0, the toolkit of the GPU machines the
# kernels were first run on. Messages go to stderr; stdout is the directory alone.
set -euo pipefail

CACHE="${LACUNA_NVRTC:-$HOME/.cache/lacuna/nvrtc}"
SPEC="nvidia-cuda-nvrtc==13.0.88"
WHEEL_SHA=ad9b6d2ead2435f11cbb6868809d2adeeee302e9bb94bcf0539c7a40d80e8575
LIB="$CACHE/lib"

if [ -f "$LIB/libnvrtc.so.13" ] && [ "$(cat "$CACHE/.sha256" 2>/dev/null)" = "$WHEEL_SHA" ]; then
  echo "nvrtc cache: $SPEC present" >&2
  echo "$LIB"
  exit 0
fi
mkdir -p "$CACHE"
tmp="$(mktemp -d)"
echo "nvrtc cache: downloading $SPEC from PyPI" >&2
if ! python3 -m pip --version >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip >/dev/null
fi
# The wheel is platform-specific; name the platform so that any Python here can download it.
python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_12_x86_64 \
  --platform manylinux2010_x86_64 --python-version 3 -d "$tmp" "$SPEC" >&2
whl="$(ls "$tmp"/*.whl)"
echo "$WHEEL_SHA  $whl" | sha256sum -c --quiet >&2
rm -rf "$LIB"
mkdir -p "$LIB"
python3 - "$whl" "$LIB" <<'PY'
import sys, zipfile, os
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in ("nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cu13/lib/libnvrtc-builtins.so.13.0"):
        with z.open(name) as src, open(os.path.join(out, os.path.basename(name)), "wb") as dst:
            dst.write(src.read())
PY
echo "$WHEEL_SHA" > "$CACHE/.sha256"
rm -rf "$tmp"
echo "nvrtc cache: $SPEC fetched and checked" >&2
echo "$LIB"
