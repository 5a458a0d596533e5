#!/usr/bin/env bash
# Where an execution's time goes: runs snapfuzz, libFuzzer and the bare loop
# once per target under `perf record` (a software CPU clock, so it works on
# VMs without hardware counters) and splits the CPU time into the target,
# the coverage callbacks, the mutator, the coverage scan, the rest of the
# loop, per-batch work, the kernel and the other processes, in nanoseconds
# per execution. Run bench/execs.sh first: it builds what this script runs.
# See bench/README.md.
#
#   bench/profile.sh                  # 10 s per tool and target
#
# Environment: BENCH_SECONDS (default 10), BENCH_CPU (default 1),
# BENCH_TARGETS, BENCH_BUILD (default build), BENCH_PERIOD_NS (one sample per
# this much CPU time, default 500000), BENCH_KEEP=1 (keep bench/build/profile-runs),
# BENCH_REAL (harnesses of bench/real to profile too, e.g. "expat_parse";
# BENCH_TARGETS="" profiles only those), REAL_WORK (as for bench/real/run.sh).
#
# The target's share of snapfuzz's CPU time, with the calls into the hooks'
# fast paths, is its speed as a fraction of a bare loop over the very inputs
# it executed: a bare loop would spend the target's time and its calls into
# no-op hooks on them, and nothing else.
#
# Writes bench/results/profile-<date>.md and prints it.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CPU=${BENCH_CPU:-1}
TARGETS=${BENCH_TARGETS-tlv_parser ini_parser png_chunks}
BUILD=${BENCH_BUILD:-build}
PERIOD=${BENCH_PERIOD_NS:-500000}
KEEP=${BENCH_KEEP:-0}
REAL=${BENCH_REAL:-}
REAL_WORK=${REAL_WORK:-$ROOT/bench/real/work}

OUT=$ROOT/bench/build
RUNS=$OUT/profile-runs
RESULTS=$ROOT/bench/results
SNAPFUZZ=$ROOT/$BUILD/app/snapfuzz

die() {
  echo "profile.sh: $*" >&2
  exit 1
}

command -v perf >/dev/null || die "perf is missing"
[[ -x $SNAPFUZZ ]] || die "$SNAPFUZZ is missing: run ./scripts/setup.sh"
[[ -z $TARGETS || -x $OUT/${TARGETS%% *}_fuzz ]] || die "run bench/execs.sh first (it builds the targets)"
if [[ ! -x $OUT/bare_loop ]]; then
  mkdir -p "$OUT"
  "${CLANG:-clang}" -O2 -g -Wall -I"$ROOT/include" -rdynamic "$ROOT/bench/bare_loop.c" \
    "$ROOT/tests/sancov_noop.c" -o "$OUT/bare_loop" -ldl
fi
perf record -e cpu-clock -c "$PERIOD" -o /dev/null -q -- true 2>/dev/null ||
  die "perf record -e cpu-clock does not work here (perf_event_paranoid?)"

rm -rf "$RUNS"
mkdir -p "$RUNS" "$RESULTS"
RAW=$RUNS/raw.tsv
printf 'target\ttool\texecs\tcpu_ms\ttarget_ms\thooks_ms\tcallbacks_ms\tmutation_ms\tfeedback_ms\tloop_ms\tbatch_ms\tkernel_ms\tother_ms\n' >"$RAW"

# The mutator's static helpers: inlined, their frames can appear without
# mutator_mutate's above them.
SYMS=$RUNS/mutator-syms
grep -h '^static' "$ROOT/core/mutator.c" "$ROOT/include/snapfuzz/prng.h" |
  sed -n 's/^static[^(]*[ *]\([A-Za-z_0-9]*\)(.*/\1/p' | sort -u >"$SYMS"

record() { # data-file log-file command...
  local data=$1 log=$2
  shift 2
  perf record -e cpu-clock -c "$PERIOD" --call-graph dwarf,16384 -q -o "$data" -- \
    taskset -c "$CPU" "$@" >"$log" 2>&1 || true
}

split() { # data-file tool execs target
  perf script -F comm,pid,ip,sym,dso -i "$1" 2>/dev/null |
    PROFILE_TOP=6 python3 "$ROOT/bench/profile.py" "$2" "$3" "$PERIOD" \
      --mutator-syms "$SYMS" --target-syms "$RUNS/$4/target-syms" \
      --target-imports "$RUNS/$4/target-imports" \
      --target-dso "$(cat "$RUNS/$4/target-dso")" \
      2>>"$RUNS/hot.txt" | sed "s/^/$4\t/" >>"$RAW"
  rm -f "$1"
}

# profile_one NAME SO SEEDS LIBFUZZER [SNAPFUZZ-ARGS...]
profile_one() {
  local t=$1 so=$2 seeds=$3 lf=$4
  shift 4
  local d=$RUNS/$t execs
  mkdir -p "$d/libfuzzer-corpus"
  # The target's own functions, as the compiler named them (not the
  # instrumentation's constructors nor the C runtime's helpers).
  nm --defined-only "$so" | awk '$2 ~ /^[tT]$/ && $3 !~ /^_|sancov|tm_clones|frame_dummy/ {print $3}' \
    >"$d/target-syms"
  nm -D --undefined-only "$so" | awk '{print $2}' >"$d/target-imports"
  realpath "$so" >"$d/target-dso"
  echo "$t: snapfuzz" >&2
  record "$d/sf.data" "$d/snapfuzz.log" "$SNAPFUZZ" run "$so" "$seeds" --workers 1 \
    --max-total-time "$SECONDS_PER_RUN" --seed 1 --out "$d/snapfuzz" --status-every 3600 "$@"
  execs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["execs"])' \
    "$d/snapfuzz/stats.json")
  echo "== $t" >>"$RUNS/hot.txt"
  split "$d/sf.data" snapfuzz "$execs" "$t"

  echo "$t: libFuzzer" >&2
  cp "$seeds"/* "$d/libfuzzer-corpus/"
  record "$d/lf.data" "$d/libfuzzer.log" "$lf" -max_total_time="$SECONDS_PER_RUN" \
    -print_final_stats=1 -seed=1 -close_fd_mask=3 "$d/libfuzzer-corpus"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/libfuzzer.log")
  split "$d/lf.data" libfuzzer "$execs" "$t"

  echo "$t: bare loop" >&2
  record "$d/bare.data" "$d/bare.log" "$OUT/bare_loop" "$so" "$d/snapfuzz/corpus" \
    "$SECONDS_PER_RUN"
  execs=$(awk '/^calls /{print $2}' "$d/bare.log")
  split "$d/bare.data" bare "$execs" "$t"
}

for t in $TARGETS; do
  profile_one "$t" "$OUT/$t.so" "$ROOT/fuzz_targets/seeds/$t" "$OUT/${t}_fuzz"
done
# The harnesses of bench/real (built by bench/real/build.sh), each with its
# sandbox policy when it has one.
for t in $REAL; do
  b=$REAL_WORK/build/$t
  [[ -e $b/snapfuzz.so && -x $b/libfuzzer ]] || die "$b: run bench/real/build.sh first"
  policy=()
  [[ -e $ROOT/bench/real/policies/$t.json ]] &&
    policy=(--sandbox-policy "$ROOT/bench/real/policies/$t.json")
  profile_one "$t" "$b/snapfuzz.so" "$b/seeds" "$b/libfuzzer" "${policy[@]}"
done

DATE=$(date -u +%Y-%m-%d-%H%M)
REPORT=$RESULTS/profile-$DATE.md
python3 - "$RAW" "$RUNS/hot.txt" >"$REPORT" <<EOF
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cats = ["target", "hooks", "callbacks", "mutation", "feedback", "loop", "batch", "kernel", "other"]
print("# Where an execution's time goes")
print()
print("- command: \`BENCH_SECONDS=$SECONDS_PER_RUN BENCH_CPU=$CPU BENCH_TARGETS='$TARGETS' BENCH_REAL='$REAL' bench/profile.sh\`")
print("- commit: \`$(git -C "$ROOT" rev-parse --short HEAD)\`")
print("- sampling: perf cpu-clock, one sample per $PERIOD ns of CPU time, DWARF call chains")
print()
print("CPU nanoseconds per execution (one run each; perf's own cost included),")
print("split by what the CPU was doing; see bench/profile.py for the categories.")
print("A tool's speed as a fraction of a bare loop over the inputs it executed")
print("(\\"x bare\\") is (target + hooks) / all: such a loop would spend the")
print("target's time and the calls of its instrumentation into no-op hooks, and")
print("no more (snapfuzz's hooks cost a no-op's when nothing records; for")
print("libFuzzer, whose hooks record inline, the figure is an upper bound).")
print()
print("| target | tool | execs | exec/CPU-s | ns/exec | x bare | " + " | ".join(cats) + " |")
print("|---|---|---:|---:|---:|---:|" + "---:|" * len(cats))
for r in rows:
    execs = int(r["execs"])
    cpu = float(r["cpu_ms"])
    ns = lambda ms: float(ms) * 1e6 / execs if execs else 0
    cells = []
    for c in cats:
        v = ns(r[c + "_ms"])
        cells.append(f"{v:.0f} ({100 * float(r[c + '_ms']) / cpu:.0f}%)" if cpu else "–")
    bare = (float(r["target_ms"]) + float(r["hooks_ms"])) / cpu if cpu else 0
    print(f"| {r['target']} | {r['tool']} | {execs} | {execs / cpu * 1000:.0f} | {ns(cpu):.0f} | {bare:.2f} | "
          + " | ".join(cells) + " |")
print()
print("## Hottest leaf functions per category")
print()
print("\`\`\`")
print(open(sys.argv[2]).read().rstrip())
print("\`\`\`")
EOF
cat "$REPORT"
echo "written: ${REPORT#"$ROOT"/}" >&2
[[ $KEEP == 1 ]] || rm -rf "$RUNS"
