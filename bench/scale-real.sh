#!/usr/bin/env bash
# A small real run: `snapfuzz run` with 1 and with 2 workers on a tiny
# target (tlv_parser, planted bug compiled out), alternating, a few trials,
# to see executions scale with cores and what the coordinator costs per
# batch with real workers. See bench/README.md.
#
#   bench/scale-real.sh                         # 3 trials x 10 s per worker count
#   SCALE_TRIALS=5 SCALE_SECONDS=20 bench/scale-real.sh
#
# Prints one line per run: workers, execs/s (wall), execs per CPU-second of
# the whole process tree, core share (CPU / wall; 2 is both cores), batches
# per second and the coordinator's own CPU time per batch.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SCALE_BUILD:-build}
seconds=${SCALE_SECONDS:-10}
trials=${SCALE_TRIALS:-3}
target_name=${SCALE_TARGET:-tlv_parser}
ninja -C "$build" >/dev/null
runs=$PWD/bench/build/scale-real
rm -rf "$runs"
mkdir -p "$runs"
target=$runs/$target_name.so
${CLANG:-clang} -g -O1 -DSNAPFUZZ_NO_PLANTED_BUG -fsanitize=fuzzer-no-link -fPIC -shared \
  -o "$target" "fuzz_targets/$target_name.c"

echo "commit $(git rev-parse --short HEAD), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "$target_name, $seconds s per run"
echo
echo "| trial | workers | execs/s | execs/CPU-s | core share | batches/s | coord µs/batch |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for t in $(seq 1 "$trials"); do
  for n in 1 2; do
    dir=$runs/t$t-w$n
    /usr/bin/time -f "%e %U %S" -o "$dir.time" "$PWD/$build/app/snapfuzz" run "$target" \
      "fuzz_targets/seeds/$target_name" --workers "$n" --max-total-time "$seconds" \
      --seed "$t" --out "$dir" 2>"$dir.stderr" || { cat "$dir.stderr"; exit 1; }
    python3 - "$dir/stats.json" "$dir.time" "$t" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
wall, user, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
cpu = user + sys_
ev = st["worker_events"]
print("| %s | %d | %.2fM | %.2fM | %.2f | %.1f | %.0f |" % (
    sys.argv[3], st["workers"], st["execs"] / st["elapsed_s"] / 1e6, st["execs"] / cpu / 1e6,
    cpu / wall, ev / st["elapsed_s"], 1e6 * st["coordinator_cpu_s"] / ev if ev else 0))
PY
  done
done
[ "${SCALE_KEEP:-0}" = 1 ] || rm -rf "$runs"
