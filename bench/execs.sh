#!/usr/bin/env bash
# Execution speed, side by side in one run: snapfuzz (sandbox strict and off),
# libFuzzer and a bare loop, on each bundled target, built from the same
# source with the planted bug compiled out. See bench/README.md.
#
#   bench/execs.sh                    # 5 trials of 20 s per tool and target
#   BENCH_TRIALS=3 BENCH_SECONDS=10 bench/execs.sh
#
# Environment:
#   BENCH_SECONDS   seconds per run (default 20)
#   BENCH_TRIALS    trials (default 5)
#   BENCH_CPU       the core every run is pinned to (default 1)
#   BENCH_TARGETS   targets to run (default: tlv_parser ini_parser png_chunks)
#   BENCH_BUILD     snapfuzz's meson build directory (default build)
#   BENCH_KEEP=1    keep the run directories under bench/build/execs-runs
#
# Writes bench/results/execs-<date>.md (the tables and every raw figure) and
# prints the summary table.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_PER_RUN=${BENCH_SECONDS:-20}
TRIALS=${BENCH_TRIALS:-5}
CPU=${BENCH_CPU:-1}
TARGETS=${BENCH_TARGETS:-tlv_parser ini_parser png_chunks}
BUILD=${BENCH_BUILD:-build}
KEEP=${BENCH_KEEP:-0}

OUT=$ROOT/bench/build
RUNS=$OUT/execs-runs
RESULTS=$ROOT/bench/results
SNAPFUZZ=$ROOT/$BUILD/app/snapfuzz
CLANG=${CLANG:-clang}
TARGET_CFLAGS=(-g -O1 -DSNAPFUZZ_NO_PLANTED_BUG)

die() {
  echo "execs.sh: $*" >&2
  exit 1
}

[[ -f $BUILD/build.ninja ]] || die "no snapfuzz build in $BUILD; run: meson setup $BUILD && ninja -C $BUILD"
ninja -C "$BUILD" >/dev/null || die "ninja -C $BUILD failed"
[[ -x $SNAPFUZZ ]] || die "$SNAPFUZZ is missing"
command -v taskset >/dev/null || die "taskset is missing (util-linux)"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to core $CPU; set BENCH_CPU"

# --- build: three binaries per target, from the same source ---
mkdir -p "$OUT" "$RESULTS"
echo "building into $OUT" >&2
"$CLANG" -O2 -g -Wall -I"$ROOT/include" -rdynamic "$ROOT/bench/bare_loop.c" "$ROOT/tests/sancov_noop.c" \
  -o "$OUT/bare_loop" -ldl
for t in $TARGETS; do
  src=$ROOT/fuzz_targets/$t.c
  [[ -f $src ]] || die "no target $src"
  "$CLANG" "${TARGET_CFLAGS[@]}" -fsanitize=fuzzer-no-link -fPIC -shared "$src" -o "$OUT/$t.so"
  "$CLANG" "${TARGET_CFLAGS[@]}" -fsanitize=fuzzer "$src" -o "$OUT/${t}_fuzz"
done

rm -rf "$RUNS"
mkdir -p "$RUNS"
RAW=$RUNS/raw.tsv
printf 'trial\ttarget\ttool\texecs\telapsed_s\twall_s\tuser_s\tsys_s\tcorpus\n' >"$RAW"

# Runs "$@" pinned to $CPU with stdout+stderr into $log; sets WALL USER SYS
# (bash's own timing of the whole process tree) and RC.
timed() {
  local log=$1 tf
  shift
  tf=$(mktemp)
  local TIMEFORMAT='%R %U %S'
  RC=0
  { time taskset -c "$CPU" "$@" >"$log" 2>&1; } 2>"$tf" || RC=$?
  read -r WALL USER SYS <"$tf"
  rm -f "$tf"
}

json_field() { # file field
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

count_files() { find "$1" -maxdepth 1 -type f ! -name '.*' | wc -l; }

run_snapfuzz() { # trial target mode
  local trial=$1 t=$2 mode=$3 dir=$RUNS/$1/$2/snapfuzz-$3
  mkdir -p "$(dirname "$dir")"
  timed "$dir.log" "$SNAPFUZZ" run "$OUT/$t.so" "$ROOT/fuzz_targets/seeds/$t" --workers 1 \
    --max-total-time "$SECONDS_PER_RUN" --out "$dir" --seed "$trial" --sandbox "$mode" \
    --status-every 3600
  [[ $RC == 0 ]] || die "snapfuzz ($mode) on $t exited with $RC; see $dir.log"
  local execs elapsed
  execs=$(json_field "$dir/stats.json" execs)
  elapsed=$(json_field "$dir/stats.json" elapsed_s)
  printf '%s\t%s\tsnapfuzz-%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$trial" "$t" "$mode" "$execs" \
    "$elapsed" "$WALL" "$USER" "$SYS" "$(count_files "$dir/corpus")" >>"$RAW"
}

run_libfuzzer() { # trial target
  local trial=$1 t=$2 dir=$RUNS/$1/$2/libfuzzer
  mkdir -p "$dir/corpus"
  cp "$ROOT/fuzz_targets/seeds/$t"/* "$dir/corpus/"
  timed "$dir.log" "$OUT/${t}_fuzz" -max_total_time="$SECONDS_PER_RUN" -print_final_stats=1 \
    -seed="$trial" "$dir/corpus"
  [[ $RC == 0 ]] || die "libFuzzer on $t exited with $RC; see $dir.log"
  local execs
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir.log")
  [[ -n $execs ]] || die "no stat::number_of_executed_units in $dir.log"
  # libFuzzer reports whole seconds only; its elapsed time is the process's wall time.
  printf '%s\t%s\tlibfuzzer\t%s\t%s\t%s\t%s\t%s\t%s\n' "$trial" "$t" "$execs" "$WALL" "$WALL" \
    "$USER" "$SYS" "$(count_files "$dir/corpus")" >>"$RAW"
}

run_bare() { # trial target
  local trial=$1 t=$2 dir=$RUNS/$1/$2
  timed "$dir/bare.log" "$OUT/bare_loop" "$OUT/$t.so" "$dir/snapfuzz-strict/corpus" \
    "$SECONDS_PER_RUN"
  [[ $RC == 0 ]] || die "bare_loop on $t exited with $RC; see $dir/bare.log"
  local calls secs inputs
  read -r calls secs inputs < <(awk '/^calls /{print $2, $4, $8}' "$dir/bare.log")
  printf '%s\t%s\tbare\t%s\t%s\t%s\t%s\t%s\t%s\n' "$trial" "$t" "$calls" "$secs" "$WALL" \
    "$USER" "$SYS" "$inputs" >>"$RAW"
}

# --- the trials ---
# Within a trial the three fuzzers run one after the other, never at once,
# in an order that rotates from trial to trial so that slow drift of the
# machine does not always hit the same tool; the bare loop runs last, over
# the corpus the strict snapfuzz run of the same trial produced.
TOOLS=(strict off libfuzzer)
STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for ((trial = 1; trial <= TRIALS; trial++)); do
  for t in $TARGETS; do
    for ((k = 0; k < 3; k++)); do
      tool=${TOOLS[$(((trial - 1 + k) % 3))]}
      echo "trial $trial/$TRIALS $t: $tool (${SECONDS_PER_RUN}s)" >&2
      case $tool in
      strict | off) run_snapfuzz "$trial" "$t" "$tool" ;;
      libfuzzer) run_libfuzzer "$trial" "$t" ;;
      esac
    done
    echo "trial $trial/$TRIALS $t: bare loop (${SECONDS_PER_RUN}s)" >&2
    run_bare "$trial" "$t"
  done
done

# --- the report ---
DATE=$(date -u +%Y-%m-%d-%H%M)
REPORT=$RESULTS/execs-$DATE.md
python3 "$ROOT/bench/tabulate.py" execs "$RAW" \
  --meta "started=$STARTED" \
  --meta "trials=$TRIALS" \
  --meta "seconds=$SECONDS_PER_RUN" \
  --meta "cpu=$CPU" \
  --meta "commit=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . ':!bench/results' || echo +dirty)" \
  --meta "machine=$(nproc) cores, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" \
  --meta "clang=$("$CLANG" --version | head -1)" \
  --meta "command=BENCH_TRIALS=$TRIALS BENCH_SECONDS=$SECONDS_PER_RUN BENCH_CPU=$CPU bench/execs.sh" \
  >"$REPORT"
cat "$REPORT"
echo "written: ${REPORT#"$ROOT"/}" >&2
[[ $KEEP == 1 ]] || rm -rf "$RUNS"
