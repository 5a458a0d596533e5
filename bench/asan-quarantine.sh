#!/usr/bin/env bash
# ASan's quarantine and executions per second: snapfuzz with its default
# (quarantine_size_mb=10 in the workers, as OSS-Fuzz's runner gives
# libFuzzer) and with ASan's own 256 MB, against libFuzzer with ASan at
# both sizes, on libyaml's event parser and giflib's decoder (Debian's
# sources, harnesses in bench/heldout/, libraries not in bench/real).
# Trials alternate the four runs, one worker each, pinned to CORE, no
# seeds, snapfuzz with the clock's schedule as bench/real/run.sh runs it
# (--no-reproducible: a seeded run's fixed 8192-input batches would make
# the decoder's slow inputs hold the status for seconds); the figure is each fuzzer's own executions per second, and its
# own edge count (snapfuzz's cov, libFuzzer's cov: comparable within a
# fuzzer only).
#
# usage: bench/asan-quarantine.sh
# env:   SECONDS_PER_RUN=S (20), TRIALS=N (3), CORE=N (1),
#        WORK=DIR (bench/build/heldout), RESULTS=DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
secs=${SECONDS_PER_RUN:-20}
trials=${TRIALS:-3}
core=${CORE:-1}
work=${WORK:-$root/bench/build/heldout}
results=${RESULTS:-$here/results/asan-quarantine-$(date +%Y%m%d-%H%M%S)}
snapfuzz=$root/build/app/snapfuzz
[ -x "$snapfuzz" ] || { echo "asan-quarantine: $snapfuzz missing; run ./scripts/setup.sh" >&2; exit 2; }
mkdir -p "$work" "$results"

# Sources (bench/real/fetch.sh set up the deb-src entry) and two builds each.
cd "$work"
[ -d libyaml-0.2.5 ] || apt-get source -q libyaml >/dev/null 2>&1 || { echo "cannot fetch libyaml (run bench/real/fetch.sh first for the deb-src entry)" >&2; exit 2; }
[ -d giflib-5.2.1 ] || apt-get source -q giflib >/dev/null 2>&1 || { echo "cannot fetch giflib" >&2; exit 2; }
yaml_src=(libyaml-*/src/{api,reader,scanner,parser}.c)
yaml_flags=(-Ilibyaml-0.2.5/include -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2
            -DYAML_VERSION_PATCH=5 '-DYAML_VERSION_STRING="0.2.5"')
gif_src=(giflib-*/{dgif_lib,gif_err,gif_hash,gifalloc,openbsd-reallocarray}.c)
gif_flags=(-Igiflib-5.2.1)
for h in yaml gif; do
  if [ "$h" = yaml ]; then src=("$here/heldout/yaml_parse.c" "${yaml_src[@]}"); fl=("${yaml_flags[@]}")
  else src=("$here/heldout/gif_read.c" "${gif_src[@]}"); fl=("${gif_flags[@]}"); fi
  clang -g -O1 -fPIC -shared -fsanitize=address,fuzzer-no-link -shared-libasan "${fl[@]}" "${src[@]}" -o "$h.so" || exit 2
  clang -g -O1 -fsanitize=address,fuzzer "${fl[@]}" "${src[@]}" -o "$h.libfuzzer" || exit 2
done
echo "secs=$secs trials=$trials core=$core loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg) snapfuzz=$(git -C "$root" rev-parse --short HEAD)" >"$results/config"

# run HARNESS CONFIG TRIAL: prints "execs_per_s edges".
run() {
  local h=$1 c=$2 t=$3 d=$results/$1/$2/$3
  rm -rf "$d"; mkdir -p "$d/corpus"
  case $c in
    snapfuzz-q10|snapfuzz-q256)
      local opt=; [ "$c" = snapfuzz-q256 ] && opt=quarantine_size_mb=256
      ASAN_OPTIONS=$opt taskset -c "$core" "$snapfuzz" run "$work/$h.so" --out "$d/out" --workers 1 \
        --max-total-time "$secs" --seed "$t" --no-reproducible --no-screen >"$d/log" 2>&1
      python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(round(s["execs_per_sec"]), s["edges"])' "$d/out/stats.json" ;;
    libfuzzer-q256|libfuzzer-q10)
      local q=256; [ "$c" = libfuzzer-q10 ] && q=10
      ASAN_OPTIONS=quarantine_size_mb=$q taskset -c "$core" "$work/$h.libfuzzer" "$d/corpus" \
        -max_total_time="$secs" -seed="$t" -print_final_stats=1 -artifact_prefix="$d/" >"$d/log" 2>&1
      awk '/stat::number_of_executed_units/ {n=$2} /stat::average_exec_per_sec/ {e=$2} /(DONE|INITED|NEW|REDUCE|pulse) / {for (i=1;i<=NF;i++) if ($i=="cov:") c=$(i+1)} END {print e+0, c+0}' "$d/log" ;;
  esac
}

configs=(snapfuzz-q10 snapfuzz-q256 libfuzzer-q256 libfuzzer-q10)
for h in yaml gif; do
  for t in $(seq 1 "$trials"); do
    for c in "${configs[@]}"; do
      echo "$h $c $t $(run "$h" "$c" "$t")" | tee -a "$results/raw.txt"
    done
  done
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$results/config"
# Medians per harness and configuration.
python3 - "$results/raw.txt" <<'PY' | tee "$results/summary.md"
import statistics, sys, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    h, c, t, e, cov = line.split()
    runs[(h, c)].append((float(e), int(cov)))
print("| harness | run | exec/s (median) | edges (median, the fuzzer's own count) |")
print("|---|---|--:|--:|")
for (h, c), v in runs.items():
    print(f"| {h} | {c} | {statistics.median(x for x, _ in v):.0f} | {statistics.median(y for _, y in v):.0f} |")
PY
