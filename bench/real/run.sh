#!/usr/bin/env bash
# Runs snapfuzz, libFuzzer and AFL++ side by side on the built harnesses,
# one fuzzer at a time per core, TRIALS times, and records for each run:
# executions, and snapshots of its output corpus every SNAP seconds. Then
# measures each snapshot's coverage with the independent coverage build
# (llvm-cov), runs the bare loop over snapfuzz's corpus, and writes the table
# and plots (report.py).
#
# With several cores in CORES, the harnesses are dealt out to the cores
# (harness i to core i mod n); each core runs its harnesses one after the
# other, and every fuzzer of a harness runs on that harness's core, so the
# fuzzers compared in a row of the table always shared one core.
#
# usage: bench/real/run.sh [HARNESS...]     (default: all in harnesses.sh)
# env:   DURATION=S  seconds per run            (default 600: the figures)
#        TRIALS=N    runs per fuzzer and harness (default 5)
#        SNAP=S      corpus snapshot period      (default 60)
#        CORES="0 1" the cores to pin to         (default: $CORE, else 1)
#        CORE=N      one core (kept for older command lines)
#        FUZZERS="snapfuzz libfuzzer afl"        (default all three)
#        AFL_CMPLOG=1  AFL++ fuzzes its cmplog build with -c 0 (default 1;
#                    0: the plain afl-clang-fast build, no cmplog)
#        RESULTS=DIR (default bench/real/results/<date>)
#        REAL_WORK=DIR (default bench/real/work)
#
# A run whose coverage file is already in RESULTS is not run again: after an
# interruption, the same command with the same RESULTS goes on where it
# stopped, and harnesses can be run into one RESULTS by separate commands
# (the report covers every harness in it). RESUME=0 runs everything again.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${REAL_WORK:-$here/work}
duration=${DURATION:-600}
trials=${TRIALS:-5}
snap=${SNAP:-60}
cores=(${CORES:-${CORE:-1}})
fuzzers=(${FUZZERS:-snapfuzz libfuzzer afl})
afl_cmplog=${AFL_CMPLOG:-1}
resume=${RESUME:-1}
results=${RESULTS:-$here/results/$(date +%Y%m%d-%H%M%S)}
snapfuzz=$root/build/app/snapfuzz
. "$here/harnesses.sh"
names=("$@")
[ ${#names[@]} -gt 0 ] || names=("${HARNESSES[@]}")
[ -x "$snapfuzz" ] || { echo "run: $snapfuzz missing; run ./scripts/setup.sh" >&2; exit 2; }
for h in "${names[@]}"; do
  for x in snapfuzz.so libfuzzer afl afl-cmplog cov; do
    [ -e "$work/build/$h/$x" ] || { echo "run: $work/build/$h/$x missing; run build.sh" >&2; exit 2; }
  done
done
for c in "${cores[@]}"; do
  taskset -c "$c" true 2>/dev/null || { echo "run: cannot pin to core $c" >&2; exit 2; }
done
mkdir -p "$results"
bare=$work/bare
clang -O2 -g -rdynamic "$here/bare.c" -o "$bare" -ldl
# A run that outlives its duration by this much is killed (a fuzzer that
# hangs must not stall a 5-hour configuration).
grace=$((duration / 10 + 60))

cat >> "$results/config" <<CFG
duration=$duration trials=$trials snap=$snap cores=${cores[*]} fuzzers=${fuzzers[*]} afl_cmplog=$afl_cmplog
harnesses=${names[*]}
snapfuzz=$(git -C "$root" describe --always --dirty 2>/dev/null) afl=$(afl-fuzz -h 2>&1 | sed -n 's/.*afl-fuzz++\([0-9a-z.]*\).*/\1/p' | head -1) clang=$(clang --version | sed -n 's/.*clang version \([^ ]*\).*/\1/p' | head -1)
date=$(date -u +%FT%TZ) host=$(hostname) cores_online=$(nproc)
loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)
CFG

# The load average every 30 s while the benchmark runs: the other jobs on a
# shared machine are part of every figure.
( while :; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done ) \
  >> "$results/loadavg" 2>/dev/null &
load_sampler=$!
trap 'kill $load_sampler 2>/dev/null' EXIT

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

# reap BINARY: AFL++ 4.04c leaves its persistent-mode child behind, stopped
# (state T) and reparented, when it exits; kill the processes whose
# executable is exactly BINARY (one of this benchmark's builds), by pid.
reap() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/exe" 2>/dev/null)" = "$1" ] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  return 0
}

# run_one FUZZER HARNESS TRIAL CORE: one run; writes execs and snap/<t>/.
run_one() {
  local f=$1 h=$2 n=$3 b=$work/build/$2 d=$results/$2/$1/$3 corpus rc
  local pin=(timeout -k 10 $((duration + grace)) taskset -c "$4")
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
      # The sandbox refuses what a harness legitimately does (libxml2 calls
      # getcwd); policies/<harness>.json allows exactly that, as a user would.
      local policy=()
      [ -e "$here/policies/$h.json" ] && policy=(--sandbox-policy "$here/policies/$h.json")
      # --seed names the trial; a seeded run is reproducible by default,
      # which costs speed on some targets (README, "Reproducible runs"):
      # the trials measure the schedule a user who gives no seed gets.
      local clock=()
      "$snapfuzz" run --help 2>/dev/null | grep -q -- --no-reproducible && clock=(--no-reproducible)
      "${pin[@]}" "$snapfuzz" run "$b/snapfuzz.so" "$b/seeds" --out "$d/out" --workers 1 \
        --keep-going --timeout 1 --max-total-time "$duration" --status-every 30 \
        --seed "$n" "${clock[@]}" "${policy[@]}" >/dev/null 2>"$d/log" ;;
    libfuzzer)
      "${pin[@]}" "$b/libfuzzer" "$corpus" -max_total_time="$duration" -timeout=1 \
        -seed="$n" -print_final_stats=1 -close_fd_mask=3 >/dev/null 2>"$d/log" ;;
    afl)
      # Debian's afl-fuzz 4.04c execs the main target for its cmplog fork
      # server too (argv[0] is swapped, the path is not), so "-c cmplog-build
      # -- plain-build" never runs the cmplog build. "-c 0" with the cmplog
      # build as the target is the form that works (README, "AFL++ cmplog").
      local target=$b/afl cmp=()
      [ "$afl_cmplog" = 1 ] && { target=$b/afl-cmplog; cmp=(-c 0); }
      AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
      AFL_NO_UI=1 AFL_SKIP_CRASHES=1 AFL_NO_STARTUP_CALIBRATION=1 \
        "${pin[@]}" afl-fuzz -i "$b/seeds" -o "$d/out" -V "$duration" -t 1000 -s "$n" \
        "${cmp[@]}" -- "$target" >"$d/log" 2>&1 ;;
  esac
  rc=$?
  [ "$f" = afl ] && reap "$target"
  local t1=$(date +%s.%N)
  touch "$d/snap/stop"; wait "$snapper" 2>/dev/null; rm -f "$d/snap/stop"
  rm -rf "$d/snap/final"; cp -r "$corpus" "$d/snap/final" 2>/dev/null || mkdir -p "$d/snap/final"
  local execs
  case $f in
    snapfuzz)  execs=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["execs"]))' "$d/out/stats.json" 2>/dev/null) ;;
    libfuzzer) execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log") ;;
    afl)       execs=$(sed -n 's/^execs_done *: *//p' "$d/out/default/fuzzer_stats" 2>/dev/null) ;;
  esac
  echo "execs=${execs:-0} wall=$(echo "$t1 - $t0" | bc) duration=$duration load=$(cut -d' ' -f1 /proc/loadavg) core=$4 rc=$rc" > "$d/execs"
  echo "run: $h $f trial $n (core $4): $(cat "$d/execs")"
  [ -n "${execs:-}" ] || echo "run: $h $f trial $n: no execution count; see $d/log" >&2
}

# coverage DIR HARNESS CORE: branch and line coverage of each snapshot.
coverage() {
  local d=$1 b=$work/build/$2 s t prof
  : > "$d/coverage.part"
  for s in "$d"/snap/*/; do
    t=$(basename "$s"); [ "$t" = final ] && t=$duration
    prof=$(mktemp -d)
    LLVM_PROFILE_FILE="$prof/%p.profraw" timeout 600 taskset -c "$3" "$b/cov" "$b/seeds" "$s" >/dev/null 2>&1
    llvm-profdata merge -sparse "$prof"/*.profraw -o "$prof/all.profdata" 2>/dev/null &&
      llvm-cov export -summary-only -instr-profile="$prof/all.profdata" "$b/cov" 2>/dev/null |
      python3 -c 'import json,sys
t=json.load(sys.stdin)["data"][0]["totals"]
print(sys.argv[1], t["branches"]["covered"], t["lines"]["covered"], t["branches"]["count"], t["lines"]["count"])' "$t" >> "$d/coverage.part"
    rm -rf "$prof"
  done
  # Complete or absent: a resumed run trusts what it finds.
  sort -n "$d/coverage.part" > "$d/coverage.sorted" && mv "$d/coverage.sorted" "$d/coverage"
  rm -f "$d/coverage.part"
}

# run_harness HARNESS CORE: every trial of every fuzzer, then the bare loop.
run_harness() {
  local h=$1 c=$2 n f
  for n in $(seq 1 "$trials"); do
    for f in "${fuzzers[@]}"; do
      if [ "$resume" = 1 ] && [ -s "$results/$h/$f/$n/coverage" ]; then
        echo "run: $h $f trial $n: done before, kept"
        continue
      fi
      run_one "$f" "$h" "$n" "$c"
      coverage "$results/$h/$f/$n" "$h" "$c"
    done
  done
  # The bare loop over the inputs snapfuzz ran from: its final corpus.
  if [[ " ${fuzzers[*]} " == *" snapfuzz "* ]]; then
    : > "$results/$h/bare"
    for n in $(seq 1 "$trials"); do
      taskset -c "$c" "$bare" "$work/build/$h/snapfuzz.so" 10 "$results/$h/snapfuzz/$n/snap/final" \
        "$work/build/$h/seeds" 2>/dev/null | tee -a "$results/$h/bare" || true
    done
  fi
}

pids=()
for i in "${!cores[@]}"; do
  (
    for j in "${!names[@]}"; do
      [ $((j % ${#cores[@]})) -eq "$i" ] && run_harness "${names[$j]}" "${cores[$i]}"
    done
  ) 2>&1 | sed -u "s/^/[core ${cores[$i]}] /" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$results/config"
python3 "$here/report.py" "$results" | tee "$results/report.txt"
