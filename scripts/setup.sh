#!/usr/bin/env bash
# Installs what snapfuzz needs on a fresh Debian bookworm machine (only what
# is missing) and builds it into ./build. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# llvm: llvm-symbolizer, which names crash frames (recovery/symbolize.c);
# git: the format test lists the tracked files with it; clang-tidy and
# cppcheck: scripts/lint.sh, which CI runs; python3-yaml: tests/ci/test_recipes.py
# reads the CI recipes in docs/ci/ with a real YAML parser (/usr/bin/python3). afl++: afl-fuzz and
# afl-clang-fast, for the sync test with a real AFL++ instance
# (tests/test_sync.c); afl++-doc: the dictionaries AFL++ ships, which
# tests/test_dict.c loads one by one (the test skips without them, and
# --no-install-recommends leaves them out). help2man and python3: the man page (data/meson.build);
# groff-base: tests/test_install.c renders it.
packages=(meson ninja-build pkg-config gcc clang clang-format clang-tidy cppcheck
          libclang-rt-14-dev libseccomp-dev libcjson-dev libcriterion-dev llvm git afl++ afl++-doc
          python3 python3-yaml help2man groff-base)
# The SARIF and JUnit tests (tests/test_sarif.c): nodejs and npm install
# Microsoft's SARIF validator (tests/sarif/package.json, below; its .NET
# build needs libicu72, which nodejs pulls in anyway); libxml2-utils is
# xmllint, the XML parser that reads the JUnit reports.
packages+=(nodejs libicu72 libxml2-utils)
# npm only where no npm is installed (a nodejs from elsewhere brings its own).
command -v npm >/dev/null || packages+=(npm)
# snapfuzz plot draws with gnuplot; the tests read the live screen in tmux,
# parse the SVG with xmllint and inflate the PNG with zlib.
packages+=(gnuplot-nox tmux zlib1g-dev)
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

# Microsoft's SARIF validator, at the version tests/sarif/package-lock.json
# pins (from the npm registry; it runs offline once installed).
if [ ! -x tests/sarif/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool ] ||
   [ tests/sarif/package-lock.json -nt tests/sarif/node_modules/.package-lock.json ]; then
  (cd tests/sarif && npm ci --no-audit --no-fund)
fi

if [ ! -f build/build.ninja ]; then
  meson setup build
fi
ninja -C build
