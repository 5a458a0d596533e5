#!/usr/bin/env bash
# Scheduling, side by side: the energy scheduler against the one before it
# (SNAPFUZZ_SCHEDULE=legacy: uniform picks, a quarter from the newest
# eighth), same binary, same seeds, one worker pinned to one core, one run
# at a time, in an order that alternates from trial to trial. The figure is
# coverage after a fixed time: edges and features from stats.json (the same
# instrumentation in both modes, so the counts compare).
#
#   bench/sched.sh                                      # bundled targets, 3 x 30 s
#   SCHED_SECONDS=90 REAL_WORK=/path/to/bench/real/work \
#     SCHED_TARGETS="libxml2_xml libpng_read" bench/sched.sh
#
# Environment:
#   SCHED_SECONDS  seconds per run (default 30)
#   SCHED_TRIALS   trials (default 3)
#   SCHED_CPU      the core runs are pinned to (default 1)
#   SCHED_TARGETS  bundled target names (fuzz_targets/) or harnesses built by
#                  bench/real/build.sh under $REAL_WORK/build (default: the
#                  three bundled targets)
#   REAL_WORK      bench/real's work directory (default bench/real/work)
#   SCHED_BUILD    meson build directory (default build)
#   SCHED_SANDBOX  --sandbox mode (default strict; off for harnesses that need
#                  a policy, such as bench/real's libxml2, which calls getcwd)
#
# Writes bench/results/sched-<date>.md (summary and every run) and prints it.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SECS=${SCHED_SECONDS:-30}
TRIALS=${SCHED_TRIALS:-3}
CPU=${SCHED_CPU:-1}
TARGETS=${SCHED_TARGETS:-tlv_parser ini_parser png_chunks}
REAL=${REAL_WORK:-$ROOT/bench/real/work}
BUILD=${SCHED_BUILD:-build}
SANDBOX=${SCHED_SANDBOX:-strict}
SNAPFUZZ=$ROOT/$BUILD/app/snapfuzz
OUT=$ROOT/bench/build/sched-runs

die() {
  echo "sched.sh: $*" >&2
  exit 1
}

ninja -C "$BUILD" >/dev/null || die "ninja -C $BUILD failed"
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . ':!bench/results' || echo +dirty)
mkdir -p "$OUT" "$ROOT/bench/results"
RAW=$OUT/raw.tsv
printf 'trial\ttarget\tmode\tedges\tfeatures\texecs\tcorpus\tactive\tfavored\n' >"$RAW"

# target_paths NAME: sets SO and SEEDS.
target_paths() {
  if [[ -f $ROOT/fuzz_targets/$1.c ]]; then
    SO=$OUT/$1.so
    SEEDS=$ROOT/fuzz_targets/seeds/$1
    [[ -f $SO ]] || clang -g -O1 -DSNAPFUZZ_NO_PLANTED_BUG -fsanitize=fuzzer-no-link -fPIC \
      -shared "$ROOT/fuzz_targets/$1.c" -o "$SO"
  else
    SO=$REAL/build/$1/snapfuzz.so
    SEEDS=$REAL/build/$1/seeds
    [[ -f $SO ]] || die "no $SO; build it with bench/real/build.sh or set REAL_WORK"
  fi
}

field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' "$1" "$2"; }

for ((trial = 1; trial <= TRIALS; trial++)); do
  for t in $TARGETS; do
    target_paths "$t"
    if ((trial % 2)); then modes="legacy energy"; else modes="energy legacy"; fi
    for mode in $modes; do
      d=$OUT/$trial/$t/$mode
      rm -rf "$d"
      mkdir -p "$d"
      echo "trial $trial/$TRIALS $t: $mode (${SECS}s)" >&2
      rc=0
      SNAPFUZZ_SCHEDULE=$mode taskset -c "$CPU" "$SNAPFUZZ" run "$SO" "$SEEDS" --out "$d/out" \
        --workers 1 --keep-going --timeout 1 --max-total-time "$SECS" --seed "$trial" \
        --status-every 3600 --sandbox "$SANDBOX" >"$d/log" 2>&1 || rc=$?
      [[ $rc == 0 || $rc == 1 ]] || die "snapfuzz exited with $rc; see $d/log"
      s=$d/out/stats.json
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$trial" "$t" "$mode" "$(field "$s" edges)" \
        "$(field "$s" features)" "$(field "$s" execs)" "$(field "$s" corpus)" \
        "$(field "$s" corpus_active)" "$(field "$s" corpus_favored)" >>"$RAW"
    done
  done
done

REPORT=$ROOT/bench/results/sched-$(date -u +%Y-%m-%d-%H%M).md
python3 - "$RAW" "$SECS" "$TRIALS" "$CPU" \
  "$COMMIT" "$SANDBOX" "$TARGETS" >"$REPORT" <<'EOF'
import csv, statistics, sys
raw, secs, trials, cpu, commit, sandbox, targets = sys.argv[1:]
rows = list(csv.DictReader(open(raw), delimiter='\t'))
print(f"# Scheduling: energy against legacy\n")
print(f"{trials} trials x {secs} s per mode and target, one worker pinned to core {cpu}, "
      f"sandbox {sandbox}, commit {commit}. Command: `SCHED_SECONDS={secs} SCHED_TRIALS={trials} "
      f"SCHED_SANDBOX={sandbox} SCHED_TARGETS=\"{targets}\" bench/sched.sh`.\n")
print("| target | mode | edges, median [min-max] | features, median [min-max] | execs, median | "
      "corpus (active/favoured) | features energy/legacy per trial |")
print("|---|---|---|---|---|---|---|")
for t in dict.fromkeys(r['target'] for r in rows):
    by = {m: [r for r in rows if r['target'] == t and r['mode'] == m] for m in ('legacy', 'energy')}
    ratios = []
    for a in by['energy']:
        b = [x for x in by['legacy'] if x['trial'] == a['trial']]
        if b and float(b[0]['features']):
            ratios.append(float(a['features']) / float(b[0]['features']))
    for m, rs in by.items():
        if not rs:
            continue
        e = [int(float(r['edges'])) for r in rs]
        f = [int(float(r['features'])) for r in rs]
        x = statistics.median(float(r['execs']) for r in rs)
        c = statistics.median(int(float(r['corpus'])) for r in rs)
        act = statistics.median(int(float(r['active'])) for r in rs)
        fav = statistics.median(int(float(r['favored'])) for r in rs)
        ca = f"{c:.0f} ({act:.0f}/{fav:.0f})" if m == 'energy' else f"{c:.0f}"
        rr = " ".join(f"{v:.3f}" for v in ratios) if m == 'energy' else ""
        print(f"| {t} | {m} | {statistics.median(e):.0f} [{min(e)}-{max(e)}] | "
              f"{statistics.median(f):.0f} [{min(f)}-{max(f)}] | {x/1e6:.2f}M | {ca} | {rr} |")
print("\n## Every run\n")
print("| trial | target | mode | edges | features | execs | corpus | active | favoured |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r[k] for k in ('trial', 'target', 'mode', 'edges', 'features', 'execs',
                                             'corpus', 'active', 'favored')) + " |")
EOF
cat "$REPORT"
echo "written: ${REPORT#"$ROOT"/}" >&2
