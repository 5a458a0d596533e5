#!/usr/bin/env bash
# snapfuzz fuzzes itself: runs `snapfuzz run` on each harness of
# fuzz_targets/self/ (its own parsers of untrusted input) for a short
# budget, one worker, under the default strict sandbox, and fails when any
# run stores a crash, printing the command that replays it.
#
#   SELFFUZZ_SECONDS   budget per harness (default 20)
#   SELFFUZZ_TARGETS   harnesses to run (default: all, in the order below)
#   SELFFUZZ_OUT       where the output directories go (default: a fresh
#                      temporary directory, kept when something crashed)
#   SELFFUZZ_BUILD     the build directory (default: build)
#
# Exit status: 0 no crash, 1 a crash was found, 2 a run failed otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${SELFFUZZ_SECONDS:-20}
build=${SELFFUZZ_BUILD:-build}
targets=${SELFFUZZ_TARGETS:-dict mutdict msg stats crashrec policy quarantine plotdata}
snapfuzz=$build/app/snapfuzz
self=fuzz_targets/self

if [ ! -x "$snapfuzz" ]; then
  echo "selffuzz: $snapfuzz is missing; build first (./scripts/setup.sh)" >&2
  exit 2
fi
out=${SELFFUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/selffuzz.XXXXXX")}
mkdir -p "$out"

failed=0
crashed=0
for t in $targets; do
  so=$build/$self/selffuzz_$t.so
  args=(run "$so" "$self/seeds/$t" --out "$out/$t" --max-total-time "$seconds" --workers 1)
  case $t in
    msg|stats|crashrec|policy|quarantine) args+=(--dict "$self/json.dict") ;;
  esac
  if [ -f "$self/$t.sandbox.json" ]; then
    args+=(--sandbox-policy "$self/$t.sandbox.json")
  fi
  rc=0
  "$snapfuzz" "${args[@]}" >"$out/$t.log" 2>&1 || rc=$?
  summary=$(grep '^done ' "$out/$t.log" | tail -n 1 || true)
  case $rc in
    0) echo "selffuzz: $t: no crash; ${summary#done }" ;;
    1)
      crashed=1
      echo "selffuzz: $t: CRASH; ${summary#done }"
      grep '^snapfuzz: crash ' "$out/$t.log" | grep -v ': minimized ' || true
      for id in $(ls "$out/$t/crashes" 2>/dev/null); do
        echo "  reproduce with: $snapfuzz reproduce $id --out $out/$t"
      done
      ;;
    *)
      failed=1
      echo "selffuzz: $t: snapfuzz exited with $rc; its log ($out/$t.log) ends:"
      tail -n 5 "$out/$t.log" | sed 's/^/  /'
      ;;
  esac
done

if [ $crashed -eq 0 ] && [ $failed -eq 0 ] && [ -z "${SELFFUZZ_OUT:-}" ]; then
  rm -rf "$out"
fi
[ $crashed -eq 0 ] || exit 1
[ $failed -eq 0 ] || exit 2
echo "selffuzz: no crash in $(echo $targets | wc -w) harnesses, ${seconds} s each"
