#!/usr/bin/env bash
# Time to find a bug guarded by comparisons (planted.c): a 32-bit constant,
# a 64-bit constant, an 8-byte memcmp, and the three chained. Each fuzzer
# runs until the first crash or CAP seconds, pinned to one core, TRIALS
# times; prints the median time (">CAP" when fewer than half the trials
# found it) and how many trials found it.
#   snapfuzz   the .so built with -fsanitize=fuzzer-no-link
#   libFuzzer  -fsanitize=fuzzer (its trace-cmp table and memcmp hooks)
#   AFL++      afl-clang-fast, persistent mode, its cmplog build
#              (AFL_LLVM_CMPLOG=1) fuzzed with -c 0: Debian's afl-fuzz 4.04c
#              runs the main target in place of a separate -c binary, so
#              cmplog only works when the target is the cmplog build itself
#
# usage: bench/real/ttf.sh
# env:   CAP=S (default 300), TRIALS=N (default 5), CORE=N (default 1),
#        GUARDS="1 2 3 4", FUZZERS="snapfuzz libfuzzer afl",
#        RESULTS=DIR (default bench/real/results/ttf-<date>)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${REAL_WORK:-$here/work}
cap=${CAP:-300}
trials=${TRIALS:-5}
core=${CORE:-1}
guards=(${GUARDS:-1 2 3 4})
fuzzers=(${FUZZERS:-snapfuzz libfuzzer afl})
results=${RESULTS:-$here/results/ttf-$(date +%Y%m%d-%H%M%S)}
snapfuzz=$root/build/app/snapfuzz
pin=(taskset -c "$core")
[ -x "$snapfuzz" ] || { echo "ttf: $snapfuzz missing; run ./scripts/setup.sh" >&2; exit 2; }
b=$work/build/planted
rm -rf "$b/seeds"; mkdir -p "$b" "$results" "$b/seeds"
printf 'AAAAAAAAAAAAAAAAAAAAAAAA' > "$b/seeds/a"
export AFL_QUIET=1
for g in "${guards[@]}"; do
  clang -O1 -g -fPIC -fsanitize=fuzzer-no-link -shared -DPLANTED_GUARD="$g" "$here/planted.c" -o "$b/g$g.so"
  clang -O1 -g -fsanitize=fuzzer -DPLANTED_GUARD="$g" "$here/planted.c" -o "$b/g$g.libfuzzer"
  AFL_LLVM_CMPLOG=1 afl-clang-fast -O1 -g -fsanitize=fuzzer -DPLANTED_GUARD="$g" "$here/planted.c" \
    -o "$b/g$g.afl-cmplog" 2>/dev/null
done
echo "cap=$cap trials=$trials core=$core loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)" > "$results/config"

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

# one FUZZER GUARD TRIAL: prints seconds to the first crash, or "-".
one() {
  local f=$1 g=$2 n=$3 d=$results/g$2/$1/$3 t0 t1 found=0
  rm -rf "$d"; mkdir -p "$d"
  t0=$(date +%s.%N)
  case $f in
    snapfuzz)
      "${pin[@]}" "$snapfuzz" run "$b/g$g.so" "$b/seeds" --out "$d/out" --workers 1 \
        --max-total-time "$cap" --seed "$n" --no-minimize >/dev/null 2>"$d/log"
      [ $? -eq 1 ] && found=1 ;;
    libfuzzer)
      # libFuzzer writes new inputs into its first directory: its own.
      mkdir -p "$d/corpus"; cp "$b/seeds/"* "$d/corpus/"
      "${pin[@]}" "$b/g$g.libfuzzer" "$d/corpus" -max_total_time="$cap" -seed="$n" \
        -artifact_prefix="$d/" >/dev/null 2>"$d/log"
      ls "$d"/crash-* >/dev/null 2>&1 && found=1 ;;
    afl)
      AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1 \
      AFL_NO_UI=1 AFL_BENCH_UNTIL_CRASH=1 \
        "${pin[@]}" afl-fuzz -i "$b/seeds" -o "$d/out" -V "$cap" -s "$n" -c 0 \
        -- "$b/g$g.afl-cmplog" >"$d/log" 2>&1
      ls "$d"/out/default/crashes/id* >/dev/null 2>&1 && found=1 ;;
  esac
  t1=$(date +%s.%N)
  [ "$f" = afl ] && reap "$b/g$g.afl-cmplog"
  if [ $found = 1 ]; then echo "$t1 - $t0" | bc; else echo -; fi
}

label() { case $1 in snapfuzz) echo snapfuzz;; libfuzzer) echo libFuzzer;; afl) echo "AFL++ cmplog";; esac; }
gname() { case $1 in 1) echo "32-bit const";; 2) echo "64-bit const";; 3) echo "8-byte memcmp";; 4) echo "all 3 chained";; esac; }
printf '%-14s %-13s %12s %7s  %s\n' guard fuzzer "median s" found "times (s)"
for g in "${guards[@]}"; do
  for f in "${fuzzers[@]}"; do
    ts=()
    for n in $(seq 1 "$trials"); do ts+=("$(one "$f" "$g" "$n")"); done
    echo "${ts[*]}" > "$results/g$g/$f/times"
    python3 - "$cap" "$(gname "$g")" "$(label "$f")" "${ts[@]}" <<'PY'
import statistics, sys
cap = float(sys.argv[1]); ts = sys.argv[4:]
found = [float(t) for t in ts if t != '-']
# Trials that did not find it count as the cap, so the median says ">cap"
# when fewer than half found it.
vals = sorted(found + [float('inf')] * (len(ts) - len(found)))
m = statistics.median_high(vals)
ms = ('>%g' % cap) if m == float('inf') else '%.1f' % m
print('%-14s %-13s %12s %4d/%-2d  %s' % (sys.argv[2], sys.argv[3], ms, len(found), len(ts),
      ' '.join('-' if t == '-' else '%.1f' % float(t) for t in ts)))
PY
  done
done | tee "$results/table"
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$results/config"
python3 "$here/report.py" "$results" > /dev/null && echo "summary: $results/summary.md"
