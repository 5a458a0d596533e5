#!/usr/bin/env bash
# The libFuzzer drop-in against `snapfuzz run` on the same harness source:
# per trial, each real harness runs once as a .so under `snapfuzz run` and
# once linked with libsnapfuzz-fuzzer.a, one after the other, one worker,
# pinned to one core, the same seed; prints execs, execs/s and edges from
# each run's stats.json (the drop-in's via -snapfuzz_out). Medians by hand
# or with sort. Needs bench/real/build.sh's work tree (REAL_WORK) and a
# built tree (build/app/snapfuzz, build/fuzzer/libsnapfuzz-fuzzer.a).
#
#   REAL_WORK=/path/to/work DROPIN_SECONDS=20 DROPIN_TRIALS=3 bench/dropin.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
W=${REAL_WORK:-$ROOT/bench/real/work}
SECS=${DROPIN_SECONDS:-20}
TRIALS=${DROPIN_TRIALS:-3}
CPU=${DROPIN_CPU:-1}
OUT=${DROPIN_OUT:-$ROOT/bench/build/dropin}
SF=$ROOT/build/app/snapfuzz
A=$ROOT/build/fuzzer/libsnapfuzz-fuzzer.a
mkdir -p "$OUT"
cd "$OUT"

# The two harnesses, linked as bench/real/harnesses.sh links them, with the
# archive in place of -fsanitize=fuzzer.
L=$W/lib/expat/sancov S=$(ls -d "$W"/src/expat-*/ | head -1)
clang -O1 -g -fsanitize=fuzzer-no-link "$S/expat/fuzz/xml_parse_fuzzer.c" \
  -DENCODING_FOR_FUZZING=UTF-8 -I"$L/expat/lib" -I"$L/b" "$L/b/libexpat.a" "$A" -o expat_parse.dropin
L=$W/lib/libpng1.6/sancov S=$(ls -d "$W"/src/libpng1.6-*/ | head -1)
clang++ -O1 -g -fsanitize=fuzzer-no-link "$S/contrib/oss-fuzz/libpng_read_fuzzer.cc" -I"$L" \
  -std=c++11 "$L/.libs/libpng16.a" -lz -lm "$A" -o libpng_read.dropin

stats() { python3 -c "import json,sys;d=json.load(open(sys.argv[1]));print(d['execs'],round(d['execs']/d['elapsed_s']),d['edges'])" "$1"; }
printf 'trial\tharness\tvariant\texecs\texecs_per_s\tedges\n'
for t in $(seq "$TRIALS"); do
  for h in expat_parse libpng_read; do
    rm -rf out-sf corp-di work-di; mkdir corp-di; cp "$W/build/$h/seeds/"* corp-di/
    taskset -c "$CPU" "$SF" run "$W/build/$h/snapfuzz.so" "$W/build/$h/seeds" --workers 1 \
      --max-total-time "$SECS" --seed $((1000 + t)) --out out-sf --keep-going >/dev/null 2>&1
    printf '%s\t%s\tsnapfuzz_run\t%s\n' "$t" "$h" "$(stats out-sf/stats.json | tr ' ' '\t')"
    taskset -c "$CPU" "./$h.dropin" corp-di -max_total_time="$SECS" -seed=$((1000 + t)) \
      -snapfuzz_out=work-di >dropin.log 2>&1 || true
    printf '%s\t%s\tdropin\t%s\n' "$t" "$h" "$(stats work-di/stats.json | tr ' ' '\t')"
  done
done
