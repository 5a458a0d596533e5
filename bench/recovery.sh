#!/usr/bin/env bash
# Crash recovery figures: snapfuzz runs each bundled target, planted bug on,
# several times with different --seed, until it finds and stores the crash;
# the report gives, per target, the time to find it and the recovery times
# from crash.json. See bench/README.md.
#
#   bench/recovery.sh                 # 10 runs per target
#   BENCH_RUNS=20 bench/recovery.sh
#
# Environment:
#   BENCH_RUNS          runs per target, --seed 1..N (default 10)
#   BENCH_MAX_SECONDS   budget of one run; a run that finds nothing in it
#                       counts as not found (default 120)
#   BENCH_CPU           the core every run is pinned to (default 1)
#   BENCH_TARGETS       targets (default: tlv_parser ini_parser png_chunks); a
#                       name from tests/deaths (deaths_asan_leak, ...) runs
#                       that target from the empty input
#   BENCH_PNG_TIMEOUT   --timeout for png_chunks, whose bug is a hang (default 0.5)
#   BENCH_BUILD         snapfuzz's meson build directory (default build)
#   BENCH_KEEP=1        keep the run directories under bench/build/recovery-runs
#
# Writes bench/results/recovery-<date>.md and prints it.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS_PER_TARGET=${BENCH_RUNS:-10}
MAX_SECONDS=${BENCH_MAX_SECONDS:-120}
CPU=${BENCH_CPU:-1}
TARGETS=${BENCH_TARGETS:-tlv_parser ini_parser png_chunks}
PNG_TIMEOUT=${BENCH_PNG_TIMEOUT:-0.5}
BUILD=${BENCH_BUILD:-build}
KEEP=${BENCH_KEEP:-0}

RUNS=$ROOT/bench/build/recovery-runs
RESULTS=$ROOT/bench/results
SNAPFUZZ=$ROOT/$BUILD/app/snapfuzz

die() {
  echo "recovery.sh: $*" >&2
  exit 1
}

[[ -f $BUILD/build.ninja ]] || die "no snapfuzz build in $BUILD; run: meson setup $BUILD && ninja -C $BUILD"
ninja -C "$BUILD" >/dev/null || die "ninja -C $BUILD failed"
[[ -x $SNAPFUZZ ]] || die "$SNAPFUZZ is missing"
taskset -c "$CPU" true 2>/dev/null || die "cannot pin to core $CPU; set BENCH_CPU"

rm -rf "$RUNS"
mkdir -p "$RUNS" "$RESULTS"
RAW=$RUNS/raw.tsv
printf 'target\tseed\ttimeout_s\texit\tkind\treproduced\telapsed_s\tdeath_to_verified_ms\trebuild_ms\tverify_ms\texecs\tinput_len\n' >"$RAW"

# One line of RAW from a run's output directory (the crash.json, if any, and stats.json).
summarize() { # dir target seed timeout exit
  python3 - "$@" <<'EOF'
import glob, json, sys
d, target, seed, timeout, rc = sys.argv[1:6]
stats = json.load(open(f"{d}/stats.json"))
crashes = sorted(glob.glob(f"{d}/crashes/*/crash.json"))
row = dict(kind="", reproduced="", d2v="", rebuild="", verify="", input_len="")
if crashes:
    c = json.load(open(crashes[0]))
    rec = c.get("recovery", {})
    row = dict(kind=c.get("kind", "?"), reproduced=str(c.get("reproduced")),
               d2v=rec.get("death_to_verified_ms", ""), rebuild=rec.get("rebuild_ms", ""),
               verify=rec.get("verify_ms", ""), input_len=c.get("input_len", ""))
print("\t".join(str(x) for x in [
    target, seed, timeout, rc, row["kind"], row["reproduced"], stats["elapsed_s"],
    row["d2v"], row["rebuild"], row["verify"], stats["execs"], row["input_len"]]))
EOF
}

for t in $TARGETS; do
  so=$ROOT/$BUILD/fuzz_targets/$t.so
  seeds=("$ROOT/fuzz_targets/seeds/$t")
  if [[ ! -f $so && -f $ROOT/$BUILD/tests/deaths/$t.so ]]; then
    # A tests/deaths target (deaths_asan_leak, ...): no seeds, the empty input.
    so=$ROOT/$BUILD/tests/deaths/$t.so
    seeds=()
  fi
  [[ -f $so ]] || die "$so is missing (built by ninja -C $BUILD)"
  timeout=1
  [[ $t == png_chunks ]] && timeout=$PNG_TIMEOUT
  for ((seed = 1; seed <= RUNS_PER_TARGET; seed++)); do
    dir=$RUNS/$t/seed-$seed
    mkdir -p "$(dirname "$dir")"
    echo "$t: --seed $seed --timeout $timeout" >&2
    rc=0
    taskset -c "$CPU" "$SNAPFUZZ" run "$so" "${seeds[@]}" --workers 1 \
      --seed "$seed" --timeout "$timeout" --max-total-time "$MAX_SECONDS" --out "$dir" \
      --status-every 3600 >"$dir.log" 2>&1 || rc=$?
    # 1 is "a crash was found and stored"; 0 "nothing found in the budget".
    [[ $rc == 0 || $rc == 1 ]] || die "snapfuzz on $t exited with $rc; see $dir.log"
    summarize "$dir" "$t" "$seed" "$timeout" "$rc" >>"$RAW"
  done
done

DATE=$(date -u +%Y-%m-%d-%H%M)
REPORT=$RESULTS/recovery-$DATE.md
python3 "$ROOT/bench/tabulate.py" recovery "$RAW" \
  --meta "runs per target=$RUNS_PER_TARGET" \
  --meta "budget per run=${MAX_SECONDS}s" \
  --meta "cpu=$CPU" \
  --meta "png_chunks --timeout=$PNG_TIMEOUT" \
  --meta "commit=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . ':!bench/results' || echo +dirty)" \
  --meta "machine=$(nproc) cores, $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" \
  --meta "command=BENCH_RUNS=$RUNS_PER_TARGET BENCH_CPU=$CPU bench/recovery.sh" \
  >"$REPORT"
cat "$REPORT"
echo "written: ${REPORT#"$ROOT"/}" >&2
[[ $KEEP == 1 ]] || rm -rf "$RUNS"
