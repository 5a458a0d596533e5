#!/usr/bin/env bash
# Does snapfuzz find what libFuzzer finds, on libFuzzer's own test programs?
# Builds each program of a directory you give (llvm-project's
# compiler-rt/test/fuzzer/*.cpp, copied there by you; this script fetches
# nothing) twice, as a snapfuzz target and as a libFuzzer binary, then runs
# both, alternating, one worker each, pinned to one core, for a time cap,
# with the same seed and the flags that mean the same thing, and tabulates
# found / not found and the seconds to the first crash (median over trials).
#
#   bench/lfsuite.sh /path/to/compiler-rt/test/fuzzer
#
# Environment:
#   LFS_TESTS    programs to run (default: every row of the table below whose
#                source is in the directory)
#   LFS_TRIALS   trials (default 3); trial i uses seed i
#   LFS_TIME     seconds per run (default 60)
#   LFS_FUZZERS  "sf lf" (default), or one of them
#   LFS_OUT      work directory (default bench/build/lfsuite)
#   LFS_SNAPFUZZ the snapfuzz binary (default build/app/snapfuzz)
#   LFS_CPU      core to pin to (default 1)
#   LFS_OPT      optimization level for both builds (default -O1)
# Prints one TSV row per run (raw.tsv in LFS_OUT), then the table.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SRC=${1:?usage: bench/lfsuite.sh DIR_WITH_LIBFUZZER_TEST_SOURCES}
SRC=$(cd "$SRC" && pwd)
TRIALS=${LFS_TRIALS:-3}
SECS=${LFS_TIME:-60}
FUZZERS=${LFS_FUZZERS:-sf lf}
OUT=${LFS_OUT:-$ROOT/bench/build/lfsuite}
SNAPFUZZ=${LFS_SNAPFUZZ:-$ROOT/build/app/snapfuzz}
CPU=${LFS_CPU:-1}
OPT=${LFS_OPT:--O1}
CXX=${CXX:-clang++}

# name | build (plain, asan) | extra cflags | snapfuzz options | libFuzzer
# flags | seeds (comma-separated, printf %b escapes) | dictionary tokens.
# The options follow each program's lit test: value profile, a dictionary,
# seeds, a length limit, time and memory limits.
TABLE='
SimpleTest|plain||||
SimpleCmpTest|plain||||
StrcmpTest|plain||||
StrncmpTest|plain||||
MemcmpTest|plain||||
SingleMemcmpTest|plain||||
SingleStrcmpTest|plain||||
SingleStrncmpTest|plain||||
StrstrTest|plain||||
SwitchTest|plain||||
Switch2Test|plain||||
Switch3Test|plain||||
SwapCmpTest|plain||||
SimpleHashTest|plain||--max-len 64|-max_len=64|
AbsNegAndConstantTest|plain||||
AbsNegAndConstant64Test|plain||||
CallerCalleeTest|plain||--use-value-profile|-use_value_profile=1 -cross_over=0|
DivTest|plain|-fsanitize-coverage=trace-div|--use-value-profile|-use_value_profile=1|
FourIndependentBranchesTest|plain||||
FullCoverageSetTest|plain||--use-value-profile|-use_value_profile=1|
SingleByteInputTest|plain||||
ThreeBytes|plain||||
TableLookupTest|plain||||
Memcmp64BytesTest|plain||||
RepeatedMemcmp|plain||||
LoadTest|asan|-fsanitize-coverage=trace-gep,trace-div|--use-value-profile|-use_value_profile=1 -use_cmp=0|
CounterTest|plain||--max-len 6|-max_len=6|
NullDerefTest|plain||||
StackOverflowTest|plain||||
TimeoutTest|plain||--timeout 1|-timeout=1|
OutOfMemoryTest|plain||--rss-limit-mb 300|-rss_limit_mb=300|
LeakTest|asan||||
CrossOverTest|plain||--no-reduce|-reduce_inputs=0|ABCDE00000,ZZZZZFGHIJ
KeepSeedTest|plain||--keep-seeds|-keep_seed=1|SELECTxFROMxWHERE
SimpleDictionaryTest|plain||||Elvis,Presley
BufferOverflowOnInput|asan||||
CxxStringEqTest|plain||||
RepeatedBytesTest|plain||||
MagicSeparatorTest|plain||||
OnlySomeBytesTest|plain||||
'

mkdir -p "$OUT/bin" "$OUT/runs"
RAW=$OUT/raw.tsv
[ -f "$RAW" ] || printf 'test\tfuzzer\ttrial\tfound\tsecs\tkind\n' >"$RAW"

row() { # name -> the table row
  printf '%s\n' "$TABLE" | grep "^$1|" | head -1
}
field() { # row index -> the field
  printf '%s\n' "$1" | cut -d'|' -f"$2"
}

build_one() { # name: builds OUT/bin/NAME.so and OUT/bin/NAME.lf
  local r san extra sanflags=""
  r=$(row "$1")
  san=$(field "$r" 2)
  extra=$(field "$r" 3)
  [ "$san" = asan ] && sanflags="-fsanitize=address"
  if [ ! -e "$OUT/bin/$1.so" ]; then
    # shellcheck disable=SC2086
    nice $CXX -g $OPT -fsanitize=fuzzer-no-link $sanflags ${sanflags:+-shared-libasan} \
      $extra -fPIC -shared -o "$OUT/bin/$1.so" "$SRC/$1.cpp"
  fi
  if [ ! -e "$OUT/bin/$1.lf" ]; then
    # shellcheck disable=SC2086
    nice $CXX -g $OPT -fsanitize=fuzzer $sanflags $extra -o "$OUT/bin/$1.lf" "$SRC/$1.cpp"
  fi
}

prepare_inputs() { # name dir: writes dir/seeds and dir/dict from the row
  local r seeds dict i=0 s
  r=$(row "$1")
  seeds=$(field "$r" 6)
  dict=$(field "$r" 7)
  mkdir -p "$2/seeds"
  if [ -n "$seeds" ]; then
    IFS=, read -ra parts <<<"$seeds"
    for s in "${parts[@]}"; do
      printf '%b' "$s" >"$2/seeds/seed$i"
      i=$((i + 1))
    done
  fi
  : >"$2/dict"
  if [ -n "$dict" ]; then
    IFS=, read -ra parts <<<"$dict"
    for s in "${parts[@]}"; do printf '"%s"\n' "$s" >>"$2/dict"; done
  fi
}

run_sf() { # name trial dir -> "found secs kind"
  local r args t0 t1 rc=0 kind=-
  r=$(row "$1")
  args=$(field "$r" 4)
  local dictarg=()
  [ -s "$3/dict" ] && dictarg=(--dict "$3/dict")
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  taskset -c "$CPU" "$SNAPFUZZ" run "$OUT/bin/$1.so" "$3/seeds" --out "$3/out" --workers 1 \
    --max-total-time "$SECS" --seed "$2" --no-minimize --quiet "${dictarg[@]}" $args \
    >"$3/log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  if [ "$rc" = 1 ]; then
    kind=$(grep -ho '"kind":[[:space:]]*"[a-z-]*"' "$3"/out/crashes/*/crash.json 2>/dev/null |
      head -1 | sed 's/.*"\([a-z-]*\)"$/\1/')
    echo "1 $(echo "$t1 - $t0" | bc) ${kind:--}"
  else
    echo "0 $(echo "$t1 - $t0" | bc) rc$rc"
  fi
}

run_lf() { # name trial dir -> "found secs kind"
  local r args t0 t1 rc=0 kind=-
  r=$(row "$1")
  args=$(field "$r" 5)
  local dictarg=()
  [ -s "$3/dict" ] && dictarg=(-dict="$3/dict")
  mkdir -p "$3/corpus" "$3/art"
  cp "$3"/seeds/* "$3/corpus/" 2>/dev/null || true
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  (cd "$3" && taskset -c "$CPU" "$OUT/bin/$1.lf" -seed="$2" -max_total_time="$SECS" \
    -artifact_prefix="$3/art/" "${dictarg[@]}" $args "$3/corpus" >"$3/log" 2>&1) || rc=$?
  t1=$(date +%s.%N)
  if [ "$rc" != 0 ] || grep -q BINGO "$3/log"; then
    kind=$(grep -o 'ERROR: [a-zA-Z]*: [a-z-]*\|BINGO\|deadly signal\|timeout\|out-of-memory' \
      "$3/log" | head -1 | tr ' ' _)
    echo "1 $(echo "$t1 - $t0" | bc) ${kind:-rc$rc}"
  else
    echo "0 $(echo "$t1 - $t0" | bc) -"
  fi
}

if [ -n "${LFS_TESTS:-}" ]; then
  TESTS=$LFS_TESTS
else
  TESTS=""
  for n in $(printf '%s\n' "$TABLE" | cut -d'|' -f1); do
    [ -e "$SRC/$n.cpp" ] && TESTS="$TESTS $n"
  done
fi

for t in $TESTS; do
  [ -n "$(row "$t")" ] || { echo "lfsuite: $t is not in the table" >&2; exit 2; }
  build_one "$t"
done

for trial in $(seq 1 "$TRIALS"); do
  for t in $TESTS; do
    for f in $FUZZERS; do
      d=$OUT/runs/$t.$f.$trial
      rm -rf "$d"
      mkdir -p "$d"
      prepare_inputs "$t" "$d"
      res=$("run_$f" "$t" "$trial" "$d")
      printf '%s\t%s\t%s\t%s\n' "$t" "$f" "$trial" "${res// /$'\t'}" | tee -a "$RAW"
    done
  done
done

python3 - "$RAW" "$SECS" <<'EOF'
import collections, statistics, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])][1:]
cap = sys.argv[2]
by = collections.defaultdict(list)
order = []
for t, f, trial, found, secs, kind in rows:
    if t not in order:
        order.append(t)
    by[(t, f)].append((int(found), float(secs), kind))
def cell(runs):
    if not runs:
        return '-'
    hits = [s for ok, s, _ in runs if ok]
    med = statistics.median([s if ok else float('inf') for ok, s, _ in runs])
    m = f'{med:.1f} s' if med != float('inf') else f'>{cap} s'
    return f'{len(hits)}/{len(runs)}, median {m}'
print(f'| program | libFuzzer | snapfuzz |')
print('|---|---|---|')
for t in order:
    print(f'| {t} | {cell(by[(t, "lf")])} | {cell(by[(t, "sf")])} |')
EOF
