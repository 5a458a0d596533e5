#!/usr/bin/env bash
# Time to find the bug of each feature's own test program
# (tests/targets/), snapfuzz against libFuzzer built from the same source:
# comparison hooks (strcasestr, memmem), branchless byte counting, stack
# depth, two short seeds crossed over, a seed kept as a base, ten call sites
# told apart by the value profile. Each trial runs one fuzzer until it exits with the
# crash (or CAP seconds), alternating the two, both pinned to CORE, with a
# seed of the trial's number; the time is wall clock from start to exit,
# as a CI job sees it. snapfuzz runs with --minimize-time 0 (libFuzzer
# does not minimize while fuzzing either); MINIMIZE=1 keeps snapfuzz's
# default one-second minimization in the figure.
#
# usage: bench/features.sh [PROGRAM...]   (default: all; see the table below)
# env:   CAP=S (60), TRIALS=N (5), CORE=N (1), RESULTS=DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
cap=${CAP:-60}
trials=${TRIALS:-5}
core=${CORE:-1}
results=${RESULTS:-$here/results/features-$(date +%Y%m%d-%H%M%S)}
snapfuzz=$root/build/app/snapfuzz
src=$root/tests/targets
[ -x "$snapfuzz" ] || { echo "features: $snapfuzz missing; run ./scripts/setup.sh" >&2; exit 2; }

# name | source | extra cflags | seeds dir ('-': none) | snapfuzz flags | libFuzzer flags
programs="
strcasestr|cmp_search.c|-DCMP_SEARCH_ONLY='C'|-||
memmem|cmp_search.c|-DCMP_SEARCH_ONLY='M'|-||
count|cmp_count.c||-||
deep_recursion|deep_recursion.c||-||
seeds_cross|seeds_cross.c||seeds_cross||
seed_base|seed_base.c||seed_base|--keep-seeds|-keep_seed=1
value_profile|vp_sites.c||-|--use-value-profile|-use_value_profile=1
"
want=("$@")
b=$results/build
mkdir -p "$b"
echo "cap=$cap trials=$trials core=$core loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg) snapfuzz=$(git -C "$root" rev-parse --short HEAD)" >"$results/config"

# one FUZZER NAME TRIAL SEEDS FLAGS...: prints seconds to exit with a crash, or "-".
one() {
  local f=$1 n=$2 t=$3 seeds=$4 d t0 t1 rc
  shift 4
  d=$results/$n/$f/$t
  rm -rf "$d"
  mkdir -p "$d/corpus"
  [ "$seeds" != - ] && cp "$src/$seeds"/* "$d/corpus/"
  t0=$(date +%s.%N)
  if [ "$f" = snapfuzz ]; then
    local mflag=(--minimize-time 0)
    [ "${MINIMIZE:-0}" = 1 ] && mflag=()
    taskset -c "$core" "$snapfuzz" run "$b/$n.so" "$d/corpus" --out "$d/out" --workers 1 \
      --max-total-time "$cap" --seed "$t" --no-screen "${mflag[@]}" "$@" >"$d/log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    [ $rc -eq 1 ] || { echo -; return; }
  else
    mkdir -p "$d/art"
    taskset -c "$core" "$b/$n.libfuzzer" "$d/corpus" -artifact_prefix="$d/art/" \
      -max_total_time="$cap" -seed="$t" "$@" >"$d/log" 2>&1
    t1=$(date +%s.%N)
    compgen -G "$d/art/crash-*" >/dev/null || compgen -G "$d/art/leak-*" >/dev/null || { echo -; return; }
  fi
  echo "$t1 - $t0" | bc
}

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

printf '| program | snapfuzz: median s (found) | libFuzzer: median s (found) | snapfuzz flags | libFuzzer flags |\n|---|--:|--:|---|---|\n' >"$results/summary.md"
while IFS='|' read -r n source cflags seeds sflags lflags; do
  [ -n "$n" ] || continue
  if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " == *" $n "* ]]; then continue; fi
  clang -g -O1 -fPIC -shared -fsanitize=fuzzer-no-link $cflags "$src/$source" -o "$b/$n.so" || exit 2
  clang -g -O1 -fsanitize=fuzzer $cflags "$src/$source" -o "$b/$n.libfuzzer" || exit 2
  : >"$results/$n.snapfuzz"
  : >"$results/$n.libfuzzer"
  for t in $(seq 1 "$trials"); do
    s=$(one snapfuzz "$n" "$t" "$seeds" $sflags)
    l=$(one libfuzzer "$n" "$t" "$seeds" $lflags)
    echo "$n trial $t: snapfuzz $s  libFuzzer $l"
    [ "$s" != - ] && echo "$s" >>"$results/$n.snapfuzz"
    [ "$l" != - ] && echo "$l" >>"$results/$n.libfuzzer"
  done
  printf '| %s | %s (%d/%d) | %s (%d/%d) | %s | %s |\n' "$n" \
    "$(median <"$results/$n.snapfuzz")" "$(wc -l <"$results/$n.snapfuzz")" "$trials" \
    "$(median <"$results/$n.libfuzzer")" "$(wc -l <"$results/$n.libfuzzer")" "$trials" \
    "${sflags:--}" "${lflags:--}" >>"$results/summary.md"
done <<<"$programs"
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/config"
cat "$results/summary.md"
