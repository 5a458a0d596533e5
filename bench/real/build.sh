#!/usr/bin/env bash
# Builds every benchmark harness four ways from one unpacked Debian source:
#   snapfuzz  the library and harness with -fsanitize=fuzzer-no-link, as a .so
#   libfuzzer the same library, harness linked with -fsanitize=fuzzer
#   afl       the library and harness with afl-clang-fast, libAFLDriver
#   aflcmp    the same with AFL_LLVM_CMPLOG=1: AFL++'s cmplog build, which
#             run.sh fuzzes with -c 0 (see README: Debian's 4.04c)
#   cov       -fprofile-instr-generate -fcoverage-mapping, no fuzzer
#             instrumentation, linked with covrun.c: the independent judge
# plus the seed corpus. The library is where the coverage is, so it is
# instrumented in every variant, built as a static archive.
#
# usage: bench/real/build.sh [HARNESS...]   (default: all in harnesses.sh)
# env:   REAL_WORK=DIR (default bench/real/work), JOBS=N (default 2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${REAL_WORK:-$here/work}
jobs=${JOBS:-2}
. "$here/harnesses.sh"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${HARNESSES[@]}")

variant_env() {   # sets CC, CXX, CFLAGS (and AFL_LLVM_CMPLOG) for a library build variant
  unset AFL_LLVM_CMPLOG
  case $1 in
    sancov) CC=clang CXX=clang++ CFLAGS="-O1 -g -fPIC -fsanitize=fuzzer-no-link" ;;
    afl)    CC=afl-clang-fast CXX=afl-clang-fast++ CFLAGS="-O1 -g -fPIC" ;;
    aflcmp) CC=afl-clang-fast CXX=afl-clang-fast++ CFLAGS="-O1 -g -fPIC"
            export AFL_LLVM_CMPLOG=1 ;;
    cov)    CC=clang CXX=clang++ CFLAGS="-O1 -g -fPIC -fprofile-instr-generate -fcoverage-mapping" ;;
  esac
}

for h in "${names[@]}"; do
  src=$(ls -d "$work"/src/"$(pkg_of "$h")"-*/ | head -1)
  [ -d "$src" ] || { echo "build: no source for $h; run fetch.sh" >&2; exit 2; }
  out=$work/build/$h
  mkdir -p "$out"
  for v in sancov afl aflcmp cov; do
    b=$work/lib/$(pkg_of "$h")/$v
    if [ ! -e "$b/.built" ]; then
      echo "build: $(pkg_of "$h") ($v)"
      rm -rf "$b"; mkdir -p "$b"; cp -a "$src/." "$b/"
      variant_env "$v"
      ( cd "$b" && export CC CXX CFLAGS CXXFLAGS="$CFLAGS" AFL_QUIET=1 &&
        lib_build_"$(pkg_of "$h" | tr -c 'a-z0-9\n' _)" "$jobs" ) > "$b.log" 2>&1 ||
        { echo "build: failed, see $b.log" >&2; tail -20 "$b.log" >&2; exit 1; }
      touch "$b/.built"
    fi
  done
  unset AFL_LLVM_CMPLOG   # the aflcmp variant's, not the links'
  echo "build: harness $h"
  lib=$work/lib/$(pkg_of "$h")
  harness_link "$h" "$src" "$lib" "$out" "$here"
  rm -rf "$out/seeds"; mkdir -p "$out/seeds"
  harness_seeds "$h" "$src" "$out/seeds" "$here"
  echo "build: $h: $(ls "$out/seeds" | wc -l) seeds; $(ls "$out" | tr "\n" " ")"
done
