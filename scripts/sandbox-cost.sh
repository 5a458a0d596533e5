#!/usr/bin/env bash
# What the sandbox costs: executions per second with --sandbox strict against
# --sandbox off, on the bundled targets and on a real parser (libxml2 from
# the system, when its headers are installed; only the harness is
# instrumented, the library is the distribution's).
#
#   scripts/sandbox-cost.sh [SECONDS [ROUNDS]]      (default 30 and 3)
#
# For each target, a corpus is grown first (one 30 s run, sandbox off).
# Then tests/bench_sandbox_cost hands two workers of the real binary, one
# strict, one off, the very same fuzzing batches from that corpus, sized
# like the coordinator's (~300 ms), in alternating order, for SECONDS each,
# ROUNDS times. Same batches means same inputs, same coverage, same crashes:
# the difference is the sandbox alone. (Whole `snapfuzz run` runs differ by
# +-30% from one to the next, by what the fuzzer happens to explore, which
# hides a cost of a few percent.)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
rounds=${2:-3}
bin=build/app/snapfuzz
bench=build/tests/bench_sandbox_cost
[ -x "$bin" ] && [ -x "$bench" ] || {
  echo "build first: meson setup build && ninja -C build" >&2
  exit 2
}

work=$(mktemp -d /tmp/snapfuzz-cost-XXXXXX)
trap 'rm -rf "$work"' EXIT

targets=(tlv_parser ini_parser png_chunks)
declare -A so seeds policy
for t in "${targets[@]}"; do
  so[$t]=build/fuzz_targets/$t.so
  seeds[$t]=fuzz_targets/seeds/$t
  policy[$t]=
done

if pkg-config --exists libxml-2.0 2>/dev/null; then
  # shellcheck disable=SC2046
  clang -g -O1 -fsanitize=fuzzer-no-link -fPIC -shared $(pkg-config --cflags libxml-2.0) \
    -o "$work/libxml2.so" scripts/sandbox-cost/xml_harness.c $(pkg-config --libs libxml-2.0)
  # glibc's iconv reads its module cache and maps modules for encodings
  # libxml2 does not know itself: a policy allows exactly that (found with
  # --sandbox log).
  gconv=$(dirname "$(find /usr/lib* -name gconv-modules.cache -print -quit 2>/dev/null)")
  cat >"$work/libxml2-policy.json" <<EOF
{
  "description": "libxml2 with glibc's iconv",
  "allow": [
    {"syscall": "openat", "under": "$gconv",
     "why": "iconv_open reads the gconv cache and loads modules"},
    {"syscall": "mmap", "args": [{"arg": 3, "op": "&=", "mask": 32, "value": 0}],
     "why": "ld.so maps a module's code from the file the worker opened; anonymous executable memory stays refused"}
  ]
}
EOF
  targets+=(libxml2)
  so[libxml2]=$work/libxml2.so
  seeds[libxml2]=scripts/sandbox-cost/seeds
  policy[libxml2]=$work/libxml2-policy.json
else
  echo "libxml2 headers not found (apt-get install libxml2-dev): bundled targets only" >&2
fi

echo "strict against off, identical batches, $seconds s per mode per round:"
for t in "${targets[@]}"; do
  "$bin" run "${so[$t]}" "${seeds[$t]}" --out "$work/grow-$t" --workers 1 --seed 1 \
    --max-total-time 30 --sandbox off --keep-going >/dev/null 2>&1 || true
  corpus=$work/grow-$t/corpus
  [ -n "$(ls -A "$corpus" 2>/dev/null)" ] || corpus=${seeds[$t]}
  extra=()
  [ -n "${policy[$t]}" ] && extra=(--policy "${policy[$t]}")
  for r in $(seq "$rounds"); do
    printf '%-11s round %d: ' "$t" "$r"
    # The targets' own output (assertion messages) is not the point here.
    "$bench" --bin "$bin" --target "${so[$t]}" --corpus "$corpus" --seconds "$seconds" \
      "${extra[@]}" 2>"$work/bench.err" || { tail -5 "$work/bench.err" >&2; exit 1; }
  done
done
