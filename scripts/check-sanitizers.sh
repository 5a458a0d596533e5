#!/usr/bin/env bash
# Builds snapfuzz itself with AddressSanitizer and UBSan (in build-asan/)
# and runs the unit tests and the bad-input tests there, with every UBSan
# finding fatal. The other integration tests check signals and sanitizer
# reports of targets, which a sanitizer build of the fuzzer (gcc's runtime
# in the fuzzer, clang's in the targets) changes, so they run in the normal
# build only.
set -euo pipefail
cd "$(dirname "$0")/.."
# gcc leaves float-cast-overflow out of -fsanitize=undefined; a double out
# of an integer type's range (a number in a JSON file) is exactly the kind
# of undefined behaviour bad input causes here, so it is asked for.
extra=-fsanitize=float-cast-overflow
if [ ! -f build-asan/build.ninja ]; then
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args=$extra -Dc_link_args=$extra >/dev/null
elif ! meson introspect build-asan --buildoptions | grep -q -- "$extra"; then
  meson configure build-asan -Dc_args=$extra -Dc_link_args=$extra >/dev/null
fi
ninja -C build-asan
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
meson test -C build-asan --print-errorlogs --suite unit
meson test -C build-asan --print-errorlogs cli
