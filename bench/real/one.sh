#!/usr/bin/env bash
# One short run and its coverage, for A/B comparisons of snapfuzz builds or
# options (bench/results/pack-2026-11-21.md): the command run.sh's run_one
# uses, on one core, then the branches the harness's llvm-cov build covers
# over the output corpus.
#
#   bench/real/one.sh NAME SNAPFUZZ|libfuzzer HARNESS SECONDS CORE SEED [ARGS...]
#
# SNAPFUZZ is the path of a snapfuzz binary (any build); ARGS go to it (or
# to libFuzzer). Appends a line to $ONE_RESULTS (default
# bench/real/results/one.txt) and prints it; runs are kept under
# bench/real/results/one/NAME/HARNESS/SEED. REAL_WORK as for run.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${REAL_WORK:-$here/work}
[ $# -ge 6 ] || { sed -n '5,7p' "$0" >&2; exit 2; }
name=$1 fuzzer=$2 h=$3 secs=$4 core=$5 seed=$6
shift 6
b=$work/build/$h
d=$here/results/one/$name/$h/$seed
results=${ONE_RESULTS:-$here/results/one.txt}
[ -x "$b/cov" ] || { echo "one: $b/cov missing; run build.sh" >&2; exit 2; }
rm -rf "$d"
mkdir -p "$d"
if [ "$fuzzer" = libfuzzer ]; then
  mkdir -p "$d/out/corpus"
  cp "$b/seeds/"* "$d/out/corpus/"
  timeout -k 10 $((secs + 30)) taskset -c "$core" "$b/libfuzzer" "$d/out/corpus" \
    -max_total_time="$secs" -timeout=1 -seed="$seed" -print_final_stats=1 -close_fd_mask=3 \
    "$@" >/dev/null 2>"$d/log" || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log")
else
  policy=()
  [ -e "$here/policies/$h.json" ] && policy=(--sandbox-policy "$here/policies/$h.json")
  timeout -k 10 $((secs + 30)) taskset -c "$core" "$fuzzer" run "$b/snapfuzz.so" "$b/seeds" \
    --out "$d/out" --workers 1 --keep-going --timeout 1 --max-total-time "$secs" \
    --status-every 30 --seed "$seed" "${policy[@]}" "$@" >/dev/null 2>"$d/log" || true
  execs=$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["execs"]))' \
    "$d/out/stats.json")
fi
prof=$(mktemp -d)
LLVM_PROFILE_FILE="$prof/%p.profraw" timeout 600 taskset -c "$core" "$b/cov" "$b/seeds" \
  "$d/out/corpus" >/dev/null 2>&1 || true
llvm-profdata merge -sparse "$prof"/*.profraw -o "$prof/all.profdata"
branches=$(llvm-cov export -summary-only -instr-profile="$prof/all.profdata" "$b/cov" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["totals"]["branches"]["covered"])')
rm -rf "$prof"
mkdir -p "$(dirname "$results")"
echo "$name $h seed=$seed seconds=$secs branches=$branches execs=${execs:-?} corpus=$(ls "$d/out/corpus" | wc -l)" |
  tee -a "$results"
