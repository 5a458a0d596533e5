#!/usr/bin/env bash
# Measures minimization: for each case, finds a crash once (with
# --no-minimize), then runs `snapfuzz minimize ID` RUNS times from the
# stored input and prints the median of the minimizer's own time
# (crash.json "minimize"."ms"), the median wall time of the whole command
# (which includes starting the worker and loading the target), the trials
# and the size reduction.
#
#   scripts/bench-minimize.sh [RUNS]        (default 5; run from anywhere)
#
# Cases: tests' magic6 (a 4 KiB seed whose crash needs the 6 bytes
# "FUZZ!!"), and the bundled tlv_parser, ini_parser and png_chunks (a hang:
# minimized with --timeout 0.5 and a 60 s budget).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
sf=./build/app/snapfuzz
work=$(mktemp -d /tmp/snapfuzz-bench-min.XXXXXX)
trap 'rm -rf "$work"' EXIT

json_num() { # FILE KEY: the first "KEY": number in FILE
  grep -o "\"$2\":[[:space:]]*[0-9]*" "$1" | head -n 1 | grep -o '[0-9]*$'
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench NAME TARGET.so SEED_DIR RUN_OPTS MINIMIZE_OPTS
bench() {
  local name=$1 target=$2 seeds=$3 run_opts=$4 min_opts=$5
  local out=$work/$name
  # shellcheck disable=SC2086
  $sf run "$target" "$seeds" --out "$out" --workers 1 --seed 7 --max-total-time 300 \
    --no-minimize $run_opts 2>/dev/null || true
  local id
  id=$(ls "$out/crashes" 2>/dev/null | head -n 1)
  if [ -z "$id" ]; then
    echo "$name: no crash found" >&2
    return
  fi
  local dir=$out/crashes/$id ms=() wall=() trials len min
  for _ in $(seq "$runs"); do
    rm -f "$dir/minimized"
    local t0 t1
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    $sf minimize "$id" --out "$out" $min_opts >/dev/null 2>&1
    t1=$(date +%s%N)
    ms+=("$(json_num "$dir/crash.json" ms)")
    wall+=($(((t1 - t0) / 1000000)))
  done
  trials=$(json_num "$dir/crash.json" trials)
  len=$(json_num "$dir/crash.json" input_len)
  min=$(json_num "$dir/crash.json" minimized_len)
  printf '%-11s %-6s %6s -> %-6s %7s %9s %9s   %s\n' "$name" \
    "$(sed -n 's/.*"kind":[[:space:]]*"\([^"]*\)".*/\1/p' "$dir/crash.json" | head -n 1)" \
    "$len" "$min" "$trials" "$(printf '%s\n' "${ms[@]}" | median)" \
    "$(printf '%s\n' "${wall[@]}" | median)" "ms: ${ms[*]}"
}

mkdir -p "$work/magic6-seeds"
python3 - "$work/magic6-seeds/big" <<'EOF'
import random, sys
random.seed(1)
b = bytearray(random.getrandbits(8) for _ in range(4096))
b[2045:2051] = b"FUZZ!!"
open(sys.argv[1], "wb").write(b)
EOF

printf '%-11s %-6s %6s    %-6s %7s %9s %9s\n' case kind bytes min trials "ms(med)" "wall(med)"
bench magic6 build/tests/targets/magic6.so "$work/magic6-seeds" "" ""
bench tlv_parser build/fuzz_targets/tlv_parser.so fuzz_targets/seeds/tlv_parser "" ""
bench ini_parser build/fuzz_targets/ini_parser.so fuzz_targets/seeds/ini_parser "" ""
bench png_chunks build/fuzz_targets/png_chunks.so fuzz_targets/seeds/png_chunks \
  "--timeout 0.5" "--timeout 0.5 --max-time 60"
