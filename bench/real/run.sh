#!/usr/bin/env bash
# Runs snapfuzz, libFuzzer and AFL++ side by side on the built harnesses,
# one fuzzer at a time, each pinned to one core, TRIALS times, and records
# for each run: executions, and snapshots of its output corpus every SNAP
# seconds. Then measures each snapshot's coverage with the independent
# coverage build (llvm-cov), runs the bare loop over snapfuzz's corpus, and
# writes the table and plots (report.py).
#
# usage: bench/real/run.sh [HARNESS...]     (default: all in harnesses.sh)
# env:   DURATION=S  seconds per run            (default 600: the figures)
#        TRIALS=N    runs per fuzzer and harness (default 5)
#        SNAP=S      corpus snapshot period      (default 60)
#        CORE=N      the core to pin to          (default 1)
#        FUZZERS="snapfuzz libfuzzer afl"        (default all three)
#        RESULTS=DIR (default bench/real/results/<date>)
#        REAL_WORK=DIR (default bench/real/work)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${REAL_WORK:-$here/work}
duration=${DURATION:-600}
trials=${TRIALS:-5}
snap=${SNAP:-60}
core=${CORE:-1}
fuzzers=(${FUZZERS:-snapfuzz libfuzzer afl})
results=${RESULTS:-$here/results/$(date +%Y%m%d-%H%M%S)}
snapfuzz=$root/build/app/snapfuzz
. "$here/harnesses.sh"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${HARNESSES[@]}")
[ -x "$snapfuzz" ] || { echo "run: $snapfuzz missing; run ./scripts/setup.sh" >&2; exit 2; }
mkdir -p "$results"
pin=(taskset -c "$core")
bare=$work/bare
clang -O2 -g -rdynamic "$here/bare.c" -o "$bare" -ldl

cat > "$results/config" <<CFG
duration=$duration trials=$trials snap=$snap core=$core fuzzers=${fuzzers[*]}
harnesses=${names[*]}
date=$(date -u +%FT%TZ) host=$(hostname) cores=$(nproc)
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
CFG

# snapshots DIR_TO_COPY DEST: copies the corpus every $snap s until the
# file DEST/stop appears; a copy in progress always finishes first.
snapshots() {
  local start=$SECONDS t=$snap
  while [ ! -e "$2/stop" ]; do
    sleep 1
    if [ $((SECONDS - start)) -ge "$t" ] && [ "$t" -lt "$duration" ]; then
      [ -d "$1" ] && cp -r "$1" "$2/$t" 2>/dev/null
      t=$((t + snap))
    fi
  done
}

# run_one FUZZER HARNESS TRIAL: one run; writes execs and snap/<t>/.
run_one() {
  local f=$1 h=$2 n=$3 b=$work/build/$2 d=$results/$2/$1/$3 corpus
  rm -rf "$d"; mkdir -p "$d/snap/0" "$d/out"   # snap/0: the seeds alone
  case $f in
    snapfuzz)  corpus=$d/out/corpus ;;
    libfuzzer) corpus=$d/out/corpus; mkdir -p "$corpus"; cp "$b/seeds/"* "$corpus/" ;;
    afl)       corpus=$d/out/default/queue ;;
  esac
  snapshots "$corpus" "$d/snap" & local snapper=$!
  local t0=$(date +%s.%N)
  case $f in
    snapfuzz)
      "${pin[@]}" "$snapfuzz" run "$b/snapfuzz.so" "$b/seeds" --out "$d/out" --workers 1 \
        --keep-going --timeout 1 --max-total-time "$duration" --status-every 30 \
        --seed "$n" >/dev/null 2>"$d/log" ;;
    libfuzzer)
      "${pin[@]}" "$b/libfuzzer" "$corpus" -max_total_time="$duration" -timeout=1 \
        -seed="$n" -print_final_stats=1 -close_fd_mask=3 >/dev/null 2>"$d/log" ;;
    afl)
      AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
      AFL_NO_UI=1 AFL_SKIP_CRASHES=1 AFL_NO_STARTUP_CALIBRATION=1 \
        "${pin[@]}" afl-fuzz -i "$b/seeds" -o "$d/out" -V "$duration" -t 1000 -s "$n" \
        -- "$b/afl" >"$d/log" 2>&1 ;;
  esac
  local t1=$(date +%s.%N)
  touch "$d/snap/stop"; wait "$snapper" 2>/dev/null; rm -f "$d/snap/stop"
  rm -rf "$d/snap/final"; cp -r "$corpus" "$d/snap/final" 2>/dev/null || mkdir -p "$d/snap/final"
  local execs
  case $f in
    snapfuzz)  execs=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["execs"]))' "$d/out/stats.json") ;;
    libfuzzer) execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log") ;;
    afl)       execs=$(sed -n 's/^execs_done *: *//p' "$d/out/default/fuzzer_stats") ;;
  esac
  echo "execs=${execs:-0} wall=$(echo "$t1 - $t0" | bc) duration=$duration load=$(cut -d' ' -f1 /proc/loadavg)" > "$d/execs"
  echo "run: $h $f trial $n: $(cat "$d/execs")"
}

# coverage DIR HARNESS: branch and line coverage of each snapshot.
coverage() {
  local d=$1 b=$work/build/$2 s t prof
  : > "$d/coverage"
  for s in "$d"/snap/*/; do
    t=$(basename "$s"); [ "$t" = final ] && t=$duration
    prof=$(mktemp -d)
    LLVM_PROFILE_FILE="$prof/%p.profraw" "${pin[@]}" "$b/cov" "$b/seeds" "$s" >/dev/null 2>&1
    llvm-profdata merge -sparse "$prof"/*.profraw -o "$prof/all.profdata" 2>/dev/null &&
      llvm-cov export -summary-only -instr-profile="$prof/all.profdata" "$b/cov" 2>/dev/null |
      python3 -c 'import json,sys
t=json.load(sys.stdin)["data"][0]["totals"]
print(sys.argv[1], t["branches"]["covered"], t["lines"]["covered"], t["branches"]["count"], t["lines"]["count"])' "$t" >> "$d/coverage"
    rm -rf "$prof"
  done
  sort -n -o "$d/coverage" "$d/coverage"
}

for h in "${names[@]}"; do
  [ -e "$work/build/$h/snapfuzz.so" ] || { echo "run: $h not built; run build.sh" >&2; exit 2; }
  for n in $(seq 1 "$trials"); do
    for f in "${fuzzers[@]}"; do
      run_one "$f" "$h" "$n"
      coverage "$results/$h/$f/$n" "$h"
    done
  done
  # The bare loop over the inputs snapfuzz ran from: its final corpus.
  for n in $(seq 1 "$trials"); do
    "${pin[@]}" "$bare" "$work/build/$h/snapfuzz.so" 10 "$results/$h/snapfuzz/$n/snap/final" \
      "$work/build/$h/seeds" 2>/dev/null | tee -a "$results/$h/bare" || true
  done
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$results/config"
python3 "$here/report.py" "$results"
