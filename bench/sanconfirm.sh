#!/usr/bin/env bash
# Time to find and report tests/targets/sanconfirm.c's read past the input
# (AddressSanitizer), snapfuzz against libFuzzer built from the same source,
# side by side: per trial, libFuzzer then snapfuzz with the same seed, each
# pinned to one core, each until it stops on the crash. Prints one TSV row
# per run (wall seconds from start to exit, and whether the report says
# heap-buffer-overflow), then the medians.
#
#   SC_TRIALS  trials (default 5)
#   SC_CPU     core (default 0)
#   SC_OUT     work directory (default bench/build/sanconfirm)
#
# snapfuzz runs with --workers 1 --minimize-time 0 (libFuzzer does not
# minimize either); its time includes loading, the crash's recovery,
# verification and sanitizer confirmation, and writing sanitizer.txt.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
TRIALS=${SC_TRIALS:-5}
CPU=${SC_CPU:-0}
OUT=${SC_OUT:-$ROOT/bench/build/sanconfirm}
CLANG=${CLANG:-clang}
SF=$ROOT/build/app/snapfuzz
SO=$ROOT/build/tests/targets/sanconfirm_overread.so
SRC=$ROOT/tests/targets/sanconfirm.c

mkdir -p "$OUT"
[ -x "$SF" ] && [ -f "$SO" ] || { echo "build first: ninja -C build" >&2; exit 2; }
LF=$OUT/lf_overread
taskset -c "$CPU" "$CLANG" -g -O1 -fsanitize=address,fuzzer "-DSANCONFIRM_BUG='R'" "$SRC" -o "$LF"

now() { date +%s.%N; }
printf 'trial\tfuzzer\tseed\twall_s\treport\n'
for t in $(seq 1 "$TRIALS"); do
  seed=$((1000 + t))
  rm -rf "$OUT/lf" "$OUT/sf"
  mkdir -p "$OUT/lf"
  t0=$(now)
  (cd "$OUT/lf" && taskset -c "$CPU" "$LF" -seed=$seed >"$OUT/lf.log" 2>&1) || true
  t1=$(now)
  ok=$(grep -c "heap-buffer-overflow" "$OUT/lf.log" || true)
  printf '%s\tlibfuzzer\t%s\t%.3f\t%s\n' "$t" "$seed" "$(echo "$t1 - $t0" | bc)" "$ok"
  t0=$(now)
  taskset -c "$CPU" "$SF" run "$SO" --out "$OUT/sf" --workers 1 --seed $seed \
    --minimize-time 0 --max-total-time 120 >"$OUT/sf.log" 2>&1 || true
  t1=$(now)
  ok=$(cat "$OUT"/sf/crashes/*/sanitizer.txt 2>/dev/null | grep -c "heap-buffer-overflow" || true)
  printf '%s\tsnapfuzz\t%s\t%.3f\t%s\n' "$t" "$seed" "$(echo "$t1 - $t0" | bc)" "$ok"
done | tee "$OUT/raw.tsv"
echo
for f in libfuzzer snapfuzz; do
  awk -F'\t' -v f=$f '$2 == f { print $4 }' "$OUT/raw.tsv" | sort -n |
    awk -v f=$f '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                   printf "median %s: %.3f s over %d runs\n", f, m, NR }'
done
