#!/usr/bin/env bash
# Builds snapfuzz itself with AddressSanitizer and UBSan (in build-asan/)
# and runs the unit tests and the bad-input tests there, with every UBSan
# finding fatal. The other integration tests check signals and sanitizer
# reports of targets, which a sanitizer build of the fuzzer (gcc's runtime
# in the fuzzer, clang's in the targets) changes, so they run in the normal
# build only.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C build-asan
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
meson test -C build-asan --print-errorlogs --suite unit
meson test -C build-asan --print-errorlogs cli
