#!/usr/bin/env bash
# Recovery soak: fuzz a target that dies in every way at random (SIGSEGV,
# SIGBUS, SIGFPE, SIGILL, abort, stack overflow, SIGKILL from itself, exit(),
# out of memory, heap corruption, all fds closed, const input overwritten,
# hangs, state-dependent) and count, for snapfuzz and for libFuzzer on the
# same source and the same wall time:
#   deaths       fuzzing processes/runners that died
#   recovered    inputs stored for those deaths
#   reproduced   stored inputs that crash, hang or exit when run again by an
#                independent plain loader (tests/plainrun), outside the fuzzer
#   lost         deaths with no input stored
#
# usage: bench/soak.sh [SECONDS]      (default 120; needs ./build from setup.sh)
# env:   SOAK_OUT=DIR to keep the run's files (default: a temporary directory)
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
root=$(pwd)
out=${SOAK_OUT:-$(mktemp -d /tmp/snapfuzz-soak.XXXXXX)}
mkdir -p "$out"
snapfuzz=$root/build/app/snapfuzz
plainrun=$root/build/tests/targets/plainrun
target=$root/build/tests/deaths/deaths_soak.so
src=$root/tests/deaths/deaths.c
for f in "$snapfuzz" "$plainrun" "$target"; do
  [ -e "$f" ] || { echo "soak: $f is missing; run ./scripts/setup.sh first" >&2; exit 2; }
done

# Runs one input (or a state-dependent sequence) outside any fuzzer: a
# crash, a hang or an exit() counts as reproduced. 600 MB of address space
# turns the out-of-memory input into a failed malloc, as the RSS limit does.
reproduces() {
  # A hang shows within 2 s (snapfuzz's --timeout is 1 s here).
  { ( ulimit -v 600000; exec timeout -s KILL 2 "$plainrun" "$target" "$@" ) >/dev/null 2>&1; } 2>/dev/null
  [ $? -ne 0 ]
}

echo "soak: $secs s per fuzzer, one core each, files in $out"

# --- snapfuzz ---
sf_out=$out/snapfuzz
"$snapfuzz" run "$target" --out "$sf_out" --workers 1 --keep-going --timeout 1 \
  --rss-limit-mb 300 --max-total-time "$secs" --status-every 30 2>"$out/snapfuzz.log" >/dev/null
read -r sf_deaths sf_stored sf_lost < <(python3 -c '
import json,sys; s=json.load(open(sys.argv[1]))
print(s["runner_deaths"], s["crashes"], s["inputs_lost"])' "$sf_out/stats.json")
sf_checked=0; sf_repro=0
for d in "$sf_out"/crashes/*/; do
  [ -f "$d/crash.json" ] || continue
  if [ -d "$d/sequence" ]; then
    sf_checked=$((sf_checked + 1))
    reproduces $(ls "$d/sequence" | sort | sed "s|^|$d/sequence/|") && sf_repro=$((sf_repro + 1))
    continue
  fi
  for f in "$d/input" "$d"/more/*; do
    [ -f "$f" ] || continue
    sf_checked=$((sf_checked + 1))
    reproduces "$f" && sf_repro=$((sf_repro + 1))
  done
done
sf_kinds=$(python3 -c '
import json,glob,sys,collections
c=collections.Counter()
for p in glob.glob(sys.argv[1]+"/crashes/*/crash.json"):
    j=json.load(open(p)); c[j["kind"]+("(state)" if "state_dependent" in j else "")]+=j.get("count",1)
print(" ".join("%s:%d"%kv for kv in sorted(c.items())))' "$sf_out")

# --- libFuzzer, restarted after every crash for the same wall time ---
lf_dir=$out/libfuzzer
mkdir -p "$lf_dir/corpus" "$lf_dir/artifacts"
clang -g -O1 -fsanitize=fuzzer -DDEATH_SOAK "$src" -o "$lf_dir/deaths_soak_fuzz"
lf_deaths=0
end=$(( $(date +%s) + secs ))
while [ "$(date +%s)" -lt "$end" ]; do
  left=$(( end - $(date +%s) ))
  [ "$left" -gt 0 ] || break
  (cd "$lf_dir" && ./deaths_soak_fuzz -timeout=1 -rss_limit_mb=300 -max_total_time="$left" \
     -artifact_prefix="$lf_dir/artifacts/" "$lf_dir/corpus" >>"$lf_dir/log" 2>&1)
  code=$?
  [ $code -eq 0 ] && break      # the time ran out without a crash
  lf_deaths=$((lf_deaths + 1))
done
lf_stored=$(ls "$lf_dir/artifacts" | wc -l)
lf_repro=0
for f in "$lf_dir"/artifacts/*; do
  [ -f "$f" ] || continue
  reproduces "$f" && lf_repro=$((lf_repro + 1))
done
lf_lost=$(( lf_deaths > lf_stored ? lf_deaths - lf_stored : 0 ))

echo
echo "| fuzzer | deaths | inputs recovered | recovered inputs checked | reproduce independently | lost |"
echo "|---|---|---|---|---|---|"
echo "| snapfuzz | $sf_deaths | $sf_stored | $sf_checked | $sf_repro | $sf_lost |"
echo "| libFuzzer | $lf_deaths | $lf_stored | $lf_stored | $lf_repro | $lf_lost |"
echo
echo "snapfuzz deaths by kind: $sf_kinds"
echo "(snapfuzz keeps the first input of each crash id and up to 64 more distinct ones per id;"
echo " those are the recovered inputs checked. A state-dependent crash is checked as its sequence.)"
