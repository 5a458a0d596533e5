#!/usr/bin/env bash
# --sanitizer-target measured side by side, runs interleaved (trial by
# trial, tool by tool), every run pinned to one core:
#   split  snapfuzz run T.so --sanitizer-target T-asan.so --workers 1
#   asan   snapfuzz run T-asan.so --workers 1
#   lf     libFuzzer, T built with -fsanitize=address,undefined,fuzzer
#   plain  snapfuzz run T.so --workers 1 (speed only: the ceiling)
# The ASan builds are -fsanitize=address,undefined throughout.
#
# speed: executions per second on the bundled targets (planted bug compiled
#   out) and, when REALWORK holds them, expat_parse and libpng_read of
#   bench/real (the plain builds bench/real/build.sh made; the ASan
#   libraries are built here).
# find: seconds until the bug of each target of the sanitizer-only set
#   (tests/targets/san_only.c) is stored, capped at BENCH_CAP.
#
#   bench/split.sh > raw.txt        # then summarize (bench/results/split-*.md)
#
# Environment: BENCH_CPU (default 0), BENCH_SECONDS per speed run (15),
# BENCH_TRIALS (3), BENCH_CAP (60), BENCH_BUILD (build), REALWORK
# (/work/realwork), BENCH_PARTS ("speed find"),
# BENCH_SPEED_TARGETS (default: all of them).
# Prints one line per run:
#   speed TOOL TARGET TRIAL EXECS_PER_S SANITIZER_CHECKED
#   find TOOL BUG TRIAL SECONDS FOUND(1/0) KIND
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CPU=${BENCH_CPU:-0}
SECS=${BENCH_SECONDS:-15}
TRIALS=${BENCH_TRIALS:-3}
CAP=${BENCH_CAP:-60}
BUILD=${BENCH_BUILD:-build}
REALWORK=${REALWORK:-/work/realwork}
PARTS=${BENCH_PARTS:-speed find}
SNAPFUZZ=$ROOT/$BUILD/app/snapfuzz
OUT=$ROOT/bench/build/split
RUNS=$OUT/runs
PIN=(taskset -c "$CPU")
ASAN=(-fsanitize=address,undefined)
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1 # libFuzzer: UBSan errors are crashes

die() {
  echo "split.sh: $*" >&2
  exit 1
}
[[ -x $SNAPFUZZ ]] || die "$SNAPFUZZ is missing: ninja -C $BUILD"
mkdir -p "$OUT"

# --- builds ---
speed_targets=()
for t in tlv_parser ini_parser png_chunks; do
  src=$ROOT/fuzz_targets/$t.c
  f=(-g -O1 -DSNAPFUZZ_NO_PLANTED_BUG)
  "${PIN[@]}" clang "${f[@]}" -fsanitize=fuzzer-no-link -fPIC -shared "$src" -o "$OUT/$t.so"
  "${PIN[@]}" clang "${f[@]}" "${ASAN[@]}",fuzzer-no-link -shared-libasan -fPIC -shared "$src" \
    -o "$OUT/$t-asan.so"
  "${PIN[@]}" clang "${f[@]}" "${ASAN[@]}",fuzzer "$src" -o "$OUT/$t-lf"
  cp -r "$ROOT/fuzz_targets/seeds/$t" "$OUT/$t-seeds" 2>/dev/null || true
  speed_targets+=("$t")
done
# Real harnesses bench/real/build.sh built (REALWORK): the plain .so is
# its own; the library is built again here with ASan+UBSan, by the same
# recipe (bench/real/harnesses.sh), and the harness linked twice against it.
# shellcheck source=real/harnesses.sh
source "$ROOT/bench/real/harnesses.sh"
# HARNESS_SOURCES: one or more files, blank-separated, relative to the
# source tree or absolute (a harness bench/real/build.sh rewrote into its
# output directory).
real_harness() { # NAME PACKAGE CC HARNESS_SOURCES LIB_A INCLUDES... -- LIBS...
  local h=$1 pkg=$2 cc=$3 hsrc=$4 liba=$5 src w f incs=() libs=() srcs=()
  shift 5
  while [[ $# -gt 0 && $1 != -- ]]; do incs+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  libs=("$@")
  src=$(ls -d "$REALWORK"/src/"$pkg"-*/ 2>/dev/null | head -1 || true)
  [[ -n $src && -f $REALWORK/build/$h/snapfuzz.so ]] || return 0
  w=$OUT/$h-lib
  if [[ ! -f $w/.built ]]; then
    rm -rf "$w"; mkdir -p "$w"; cp -a "$src/." "$w/"
    # detect_leaks=0: build tools made with these flags (sqlite3's lemon)
    # leak by design, and LeakSanitizer would fail the build.
    (cd "$w" && export CC=clang CXX=clang++ CFLAGS="-O1 -g -fPIC ${ASAN[*]},fuzzer-no-link" &&
      export ASAN_OPTIONS=detect_leaks=0 &&
      export CXXFLAGS="$CFLAGS" && "${PIN[@]}" bash -c "$(declare -f autotools_freeze \
        lib_build_"${pkg//[^a-z0-9]/_}"); lib_build_${pkg//[^a-z0-9]/_} 1") >"$w.log" 2>&1 ||
      die "building $h's library with ASan failed; see $w.log"
    touch "$w/.built"
  fi
  incs=("${incs[@]//@LIB@/$w}")
  for f in $hsrc; do
    if [[ $f == /* ]]; then srcs+=("$f"); else srcs+=("$src/$f"); fi
  done
  cp "$REALWORK/build/$h/snapfuzz.so" "$OUT/$h.so"
  "${PIN[@]}" "$cc" -O1 -g "${incs[@]}" "${ASAN[@]}",fuzzer-no-link -shared-libasan -fPIC -shared \
    "${srcs[@]}" "$w/$liba" "${libs[@]}" -o "$OUT/$h-asan.so"
  "${PIN[@]}" "$cc" -O1 -g "${incs[@]}" "${ASAN[@]}",fuzzer "${srcs[@]}" "$w/$liba" "${libs[@]}" \
    -o "$OUT/$h-lf"
  rm -rf "$OUT/$h-seeds"; cp -r "$REALWORK/build/$h/seeds" "$OUT/$h-seeds"
  speed_targets+=("$h")
}
# As harness_link in bench/real/harnesses.sh.
real_harness expat_parse expat clang expat/fuzz/xml_parse_fuzzer.c b/libexpat.a \
  -DENCODING_FOR_FUZZING=UTF-8 -I@LIB@/expat/lib -I@LIB@/b
real_harness libpng_read libpng1.6 clang++ contrib/oss-fuzz/libpng_read_fuzzer.cc \
  .libs/libpng16.a -I@LIB@ -std=c++11 -- -lz -lm
real_harness libxml2_xml libxml2 clang "fuzz/xml.c fuzz/fuzz.c" .libs/libxml2.a \
  -I@LIB@/include -I@LIB@ -- -lm
real_harness libjpeg_turbo libjpeg-turbo clang++ fuzz/decompress.cc b/libturbojpeg.a \
  -I@LIB@ -I@LIB@/b
real_harness sqlite3_ossfuzz sqlite3 clang "$REALWORK/build/sqlite3_ossfuzz/ossfuzz.c" \
  .libs/libsqlite3.a "${SQLITE3_OSSFUZZ_DEFS[@]}" -I@LIB@ -- -lm -ldl -lpthread
bugs=(heap_read:R heap_write:W uaf:U stack:S global:G overflow:O shift:L leak:K)
for b in "${bugs[@]}"; do
  "${PIN[@]}" clang -g -O1 "${ASAN[@]}",fuzzer -DSAN_ONLY_KIND="'${b#*:}'" \
    "$ROOT/tests/targets/san_only.c" -o "$OUT/san_only_${b%%:*}-lf"
done

# --- runs ---
stat_of() { # FILE KEY
  sed -n "s/.*\"$2\":[[:space:]]*\\([0-9.e+]*\\).*/\\1/p" "$1" | head -1
}

snapfuzz_run() { # DIR TIME_S ARGS...: exit status; the run's stats in DIR/out
  local dir=$1 t=$2
  shift 2
  "${PIN[@]}" "$SNAPFUZZ" run "$@" --out "$dir/out" --workers 1 --max-total-time "$t" \
    --quiet >"$dir/log" 2>&1
}

speed_run() { # TOOL TARGET TRIAL
  local tool=$1 t=$2 i=$3 dir=$RUNS/speed-$1-$2-$3 eps checked=0
  rm -rf "$dir"; mkdir -p "$dir/corpus"
  case $tool in
    split) snapfuzz_run "$dir" "$SECS" "$OUT/$t.so" "$OUT/$t-seeds" --keep-going \
      --sanitizer-target "$OUT/$t-asan.so" || true ;;
    asan) snapfuzz_run "$dir" "$SECS" "$OUT/$t-asan.so" "$OUT/$t-seeds" --keep-going || true ;;
    plain) snapfuzz_run "$dir" "$SECS" "$OUT/$t.so" "$OUT/$t-seeds" --keep-going || true ;;
    lf)
      local t0 t1 n
      t0=$(date +%s.%N)
      "${PIN[@]}" "$OUT/$t-lf" -max_total_time="$SECS" -print_final_stats=1 -timeout=1 \
        -rss_limit_mb=2048 "$dir/corpus" "$OUT/$t-seeds" >"$dir/log" 2>&1 || true
      t1=$(date +%s.%N)
      n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
      eps=$(echo "${n:-0} / ($t1 - $t0)" | bc -l)
      echo "speed $tool $t $i $eps 0"
      return ;;
  esac
  eps=$(stat_of "$dir/out/stats.json" execs_per_sec)
  [[ $tool == split ]] && checked=$(stat_of "$dir/out/stats.json" sanitizer_checked)
  echo "speed $tool $t $i ${eps:-0} ${checked:-0}"
}

find_run() { # TOOL BUG TRIAL
  local tool=$1 bug=$2 i=$3 dir=$RUNS/find-$1-$2-$3 tt=$ROOT/$BUILD/tests/targets t0 t1 found=0
  local kind=-
  rm -rf "$dir"; mkdir -p "$dir/corpus"
  t0=$(date +%s.%N)
  case $tool in
    split) snapfuzz_run "$dir" "$CAP" "$tt/san_only_$bug.so" --seed "$i" \
      --sanitizer-target "$tt/san_only_${bug}_asan.so" && found=0 || found=$? ;;
    asan) snapfuzz_run "$dir" "$CAP" "$tt/san_only_${bug}_asan.so" --seed "$i" && found=0 ||
      found=$? ;;
    lf) (cd "$dir" && "${PIN[@]}" "$OUT/san_only_$bug-lf" -seed="$i" -max_total_time="$CAP" \
      corpus >log 2>&1) && found=0 || found=$? ;;
  esac
  t1=$(date +%s.%N)
  if [[ $tool == lf ]]; then
    # libFuzzer's artifact: crash-<sha1>, or leak-<sha1> for a leak.
    # libFuzzer's artifact: crash-<sha1>, or leak-<sha1> for a leak.
    if [[ $found -ne 0 ]] && compgen -G "$dir/[cl][re][a-z]*-*" >/dev/null; then
      found=1
    else
      found=0
    fi
    kind=$(grep -o -m1 'ERROR: [A-Za-z]*Sanitizer: [a-z -]*\|runtime error: [a-z ]*' "$dir/log" |
      tr ' ' _ || echo -)
  else
    [[ $found -eq 1 ]] || found=0
    kind=$(sed -n 's/.*"kind":[[:space:]]*"\([a-z-]*\)".*/\1/p' "$dir"/out/crashes/*/crash.json \
      2>/dev/null | head -1)
  fi
  echo "find $tool $bug $i $(echo "$t1 - $t0" | bc -l) $found ${kind:--}"
}

[[ -n ${BENCH_SPEED_TARGETS:-} ]] && read -r -a speed_targets <<<"$BENCH_SPEED_TARGETS"
echo "# $(date -u +%FT%TZ) $(uptime)"
for i in $(seq 1 "$TRIALS"); do
  if [[ " $PARTS " == *" speed "* ]]; then
    for t in "${speed_targets[@]}"; do
      for tool in split asan lf plain; do speed_run "$tool" "$t" "$i"; done
    done
  fi
  if [[ " $PARTS " == *" find "* ]]; then
    for b in "${bugs[@]}"; do
      for tool in split asan lf; do find_run "$tool" "${b%%:*}" "$i"; done
    done
  fi
done
echo "# $(date -u +%FT%TZ) $(uptime)"
