#!/usr/bin/env bash
# Can one coordinator keep up with 64 workers? Runs the real `snapfuzz run`
# with simulated workers (bench/simworker.c, started through
# SNAPFUZZ_WORKER_EXE) that sleep for as long as a batch of a tiny target
# would run and report finds as a real campaign does, then prints the
# coordinator's CPU share and cost per event and the workers' idle time.
# See bench/README.md.
#
#   bench/scale.sh                        # 1, 8, 32, 64 workers, 20 s each
#   SCALE_WORKERS="64" SCALE_SECONDS=10 bench/scale.sh
#
# Environment: SCALE_WORKERS (default "1 8 32 64"), SCALE_SECONDS (20),
# SCALE_BUILD (build), SCALE_CPU (core the coordinator is pinned to, 0;
# the simulated workers only sleep), SCALE_FINDS ("on off": with the find
# model of simworker.c, and with no finds at all), SIMWORKER_RATE,
# SIMWORKER_A, SIMWORKER_E0 (see simworker.c), SCALE_KEEP=1 keeps
# bench/build/scale-runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SCALE_BUILD:-build}
seconds=${SCALE_SECONDS:-20}
cpu=${SCALE_CPU:-0}
ninja -C "$build" >/dev/null
bin=$PWD/$build/app/snapfuzz
sim=$PWD/$build/bench/simworker
target=$PWD/$build/fuzz_targets/tlv_parser.so
runs=$PWD/bench/build/scale-runs
rm -rf "$runs"
mkdir -p "$runs"

echo "commit $(git rev-parse --short HEAD), $(nproc) cores, ${seconds} s per run," \
     "SIMWORKER_RATE=${SIMWORKER_RATE:-3.5e6} A=${SIMWORKER_A:-150} E0=${SIMWORKER_E0:-1e5}"
echo
python3 bench/scale.py --header
for finds in ${SCALE_FINDS:-on off}; do
  for n in ${SCALE_WORKERS:-1 8 32 64}; do
    dir=$runs/w$n-$finds
    a=${SIMWORKER_A:-150}
    [ "$finds" = off ] && a=0
    SNAPFUZZ_WORKER_EXE=$sim SIMWORKER_LOG=$dir.log SIMWORKER_A=$a \
      taskset -c "$cpu" "$bin" run "$target" --workers "$n" --max-total-time "$seconds" \
      --seed 1 --out "$dir" 2>"$dir.stderr" || { cat "$dir.stderr"; exit 1; }
    python3 bench/scale.py "$dir/stats.json" "$dir.log" "$finds"
  done
done
[ "${SCALE_KEEP:-0}" = 1 ] || rm -rf "$runs"
