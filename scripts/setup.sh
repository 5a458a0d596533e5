#!/usr/bin/env bash
# Installs what snapfuzz needs on a fresh Debian bookworm machine (only what
# is missing) and builds it into ./build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# llvm: llvm-symbolizer, which names crash frames (recovery/symbolize.c);
# git: the format test lists the tracked files with it; clang-tidy and
# cppcheck: scripts/lint.sh, which CI runs. help2man and python3: the man
# page (data/meson.build); groff-base: tests/test_install.c renders it.
packages=(meson ninja-build pkg-config gcc clang clang-format clang-tidy cppcheck
          libclang-rt-14-dev libseccomp-dev libcjson-dev libcriterion-dev llvm git
          help2man python3 groff-base)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -f build/build.ninja ]; then
  meson setup build
fi
ninja -C build
