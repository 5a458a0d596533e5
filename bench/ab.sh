#!/usr/bin/env bash
# A/B comparison of snapfuzz builds (and optionally libFuzzer), side by side:
# per trial, every variant runs once on every target, one after another,
# pinned to one core; the report gives per-trial ratios to the first variant
# (executions per CPU-second and per wall second, coverage reached) and
# their medians. For deciding a change by measurement, not for headlines.
#
#   AB_VARIANTS="base=/tmp/sf-base/build/app/snapfuzz new=build/app/snapfuzz" bench/ab.sh
#
# Environment:
#   AB_VARIANTS  name=path-to-snapfuzz pairs; the first is the reference
#   AB_TARGETS   bundled target names (fuzz_targets/) and/or real harnesses
#                named real:NAME (REAL_WORK/build/NAME/snapfuzz.so + seeds)
#                (default: tlv_parser ini_parser png_chunks)
#   AB_SECONDS   seconds per run (default 10)
#   AB_TRIALS    trials (default 3)
#   AB_CPU       core (default 1)
#   AB_LIBFUZZER 1: also run libFuzzer (bundled: bench/build/T_fuzz; real:
#                REAL_WORK/build/NAME/libfuzzer)
#   REAL_WORK    bench/real/work of a tree where bench/real/build.sh ran
#   AB_OUT       output directory (default bench/build/ab)
#   AB_ARGS      extra options for every snapfuzz run (e.g. --sandbox off)
#   AB_CLOCK     1 (default): builds that make a seeded run reproducible get
#                --no-reproducible (the trial's --seed only names it); 0: the
#                reproducible schedule is measured
# Prints one TSV row per run, then the medians.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
VARIANTS=${AB_VARIANTS:-"new=build/app/snapfuzz"}
TARGETS=${AB_TARGETS:-tlv_parser ini_parser png_chunks}
SECS=${AB_SECONDS:-10}
TRIALS=${AB_TRIALS:-3}
CPU=${AB_CPU:-1}
LIBF=${AB_LIBFUZZER:-0}
REAL_WORK=${REAL_WORK:-$ROOT/bench/real/work}
OUT=${AB_OUT:-$ROOT/bench/build/ab}
CLANG=${CLANG:-clang}

mkdir -p "$OUT" "$ROOT/bench/build"
RAW=$OUT/raw.tsv
printf 'trial\ttarget\tvariant\texecs\twall_s\tcpu_s\tedges\tfeatures\tcorpus\tmean_len\n' >"$RAW"

target_so() { # name -> path of the .so
  case $1 in
  real:*) echo "$REAL_WORK/build/${1#real:}/snapfuzz.so" ;;
  *) echo "$ROOT/bench/build/$1.so" ;;
  esac
}
target_seeds() {
  case $1 in
  real:*) echo "$REAL_WORK/build/${1#real:}/seeds" ;;
  *) echo "$ROOT/fuzz_targets/seeds/$1" ;;
  esac
}

for t in $TARGETS; do
  case $t in
  real:*) ;;
  *)
    src=$ROOT/fuzz_targets/$t.c
    if [[ ! -f $ROOT/bench/build/$t.so || $src -nt $ROOT/bench/build/$t.so ]]; then
      "$CLANG" -g -O1 -DSNAPFUZZ_NO_PLANTED_BUG -fsanitize=fuzzer-no-link -fPIC -shared "$src" \
        -o "$ROOT/bench/build/$t.so"
      "$CLANG" -g -O1 -DSNAPFUZZ_NO_PLANTED_BUG -fsanitize=fuzzer "$src" \
        -o "$ROOT/bench/build/${t}_fuzz"
    fi
    ;;
  esac
done

mean_len() { # dir
  python3 - "$1" <<'EOF'
import os, sys
d = sys.argv[1]
s = [os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if not f.startswith('.')]
print(f"{sum(s) / len(s):.0f}" if s else 0)
EOF
}

timed() { # log cmd...
  local log=$1 tf
  shift
  tf=$(mktemp)
  local TIMEFORMAT='%R %U %S'
  { time taskset -c "$CPU" "$@" >"$log" 2>&1; } 2>"$tf" || true
  read -r WALL USER SYS <"$tf"
  rm -f "$tf"
  CPUS=$(python3 -c "print($USER + $SYS)")
}

for trial in $(seq 1 "$TRIALS"); do
  for t in $TARGETS; do
    so=$(target_so "$t")
    seeds=$(target_seeds "$t")
    tn=${t#real:}
    for v in $VARIANTS; do
      name=${v%%=*}
      bin=${v#*=}
      dir=$OUT/$trial/$tn/$name
      rm -rf "$dir"
      mkdir -p "$(dirname "$dir")"
      # --seed names the trial; a build that makes seeded runs reproducible
      # is measured with the clock's schedule, as a run without a seed.
      clock=""
      [[ ${AB_CLOCK:-1} == 1 ]] && "$bin" run --help 2>/dev/null | grep -q -- --no-reproducible &&
        clock=--no-reproducible
      timed "$dir.log" "$bin" run "$so" "$seeds" --workers 1 --max-total-time "$SECS" \
        --out "$dir" --seed "$trial" --status-every 3600 --keep-going $clock ${AB_ARGS:-}
      read -r execs edges feats corpus < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["execs"], j["edges"], j["features"], j["corpus"])' "$dir/stats.json")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$trial" "$tn" "$name" "$execs" "$WALL" \
        "$CPUS" "$edges" "$feats" "$corpus" "$(mean_len "$dir/corpus")" | tee -a "$RAW"
    done
    if [[ $LIBF == 1 ]]; then
      case $t in
      real:*) lf=$REAL_WORK/build/$tn/libfuzzer ;;
      *) lf=$ROOT/bench/build/${t}_fuzz ;;
      esac
      dir=$OUT/$trial/$tn/libfuzzer
      rm -rf "$dir"
      mkdir -p "$dir/corpus"
      cp "$seeds"/* "$dir/corpus/"
      timed "$dir.log" "$lf" -max_total_time="$SECS" -print_final_stats=1 -seed="$trial" \
        -timeout=1 "$dir/corpus"
      execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir.log")
      printf '%s\t%s\tlibfuzzer\t%s\t%s\t%s\t-\t-\t%s\t%s\n' "$trial" "$tn" "$execs" "$WALL" \
        "$CPUS" "$(find "$dir/corpus" -type f | wc -l)" "$(mean_len "$dir/corpus")" | tee -a "$RAW"
    fi
  done
done

python3 - "$RAW" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter='\t'))
ref = {}
variants = []
for r in rows:
    if r['variant'] not in variants:
        variants.append(r['variant'])
by = {(r['trial'], r['target'], r['variant']): r for r in rows}
targets = []
for r in rows:
    if r['target'] not in targets:
        targets.append(r['target'])
first = variants[0]
print(f"\nmedian over trials; ratios are per-trial ratios to '{first}' (min-max)")
print("target\tvariant\texec/cpu-s\tx ref (cpu)\tx ref (wall)\tedges\tx ref edges\tmean_len")
for t in targets:
    for v in variants:
        rs = [r for r in rows if r['target'] == t and r['variant'] == v]
        def med(xs):
            return statistics.median(xs) if xs else float('nan')
        rate = [float(r['execs']) / float(r['cpu_s']) for r in rs]
        rc, rw, re = [], [], []
        for r in rs:
            b = by.get((r['trial'], t, first))
            if not b:
                continue
            rc.append((float(r['execs']) / float(r['cpu_s'])) / (float(b['execs']) / float(b['cpu_s'])))
            rw.append((float(r['execs']) / float(r['wall_s'])) / (float(b['execs']) / float(b['wall_s'])))
            if r['edges'] != '-' and b['edges'] != '-':
                re.append(float(r['edges']) / float(b['edges']))
        edges = [float(r['edges']) for r in rs if r['edges'] != '-']
        ml = [float(r['mean_len']) for r in rs]
        span = lambda xs: f"{med(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"
        print(f"{t}\t{v}\t{med(rate):.0f}\t{span(rc)}\t{span(rw)}\t"
              f"{med(edges) if edges else '-'}\t{span(re)}\t{med(ml):.0f}")
EOF
