#!/usr/bin/env bash
# Recovery soak: fuzz a target that dies in every way at random (SIGSEGV,
# SIGBUS, SIGFPE, SIGILL, abort, stack overflow, SIGKILL from itself, exit(),
# out of memory, heap corruption, all fds closed, const input overwritten,
# hangs, state-dependent) and count, for snapfuzz and for libFuzzer on the
# same source and the same wall time:
#   deaths       fuzzing processes/runners that died (and, with asan, leaks
#                the fuzzer found: a leak ends a libFuzzer process)
#   recovered    inputs stored for those deaths
#   reproduced   stored inputs that crash, hang or exit when run again by an
#                independent plain loader (tests/plainrun), outside the fuzzer
#   lost         deaths with no input stored
#
# The asan mode fuzzes deaths_soak_asan instead: the same ways built with
# AddressSanitizer (so ASan reports the memory errors itself) plus the
# ASan-only ones, heap-buffer-overflow 'O', use-after-free 'U', a leak 'L',
# reachable growth 'P' (not a bug: a leak check must dismiss it), and a
# UBSan signed overflow 'N'. snapfuzz runs with its defaults (leak detection
# on), libFuzzer with its own (-detect_leaks=1); the plain loader runs with
# the ASan runtime preloaded and LeakSanitizer checking at exit.
#
# usage: bench/soak.sh [SECONDS] [asan]    (default 120, plain; needs ./build)
# env:   SOAK_ASAN=1 is the same as the asan argument
#        SOAK_OUT=DIR to keep the run's files (default: a temporary directory)
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-120}
mode=plain
[ "${2:-}" = asan ] || [ "${SOAK_ASAN:-0}" = 1 ] && mode=asan
root=$(pwd)
out=${SOAK_OUT:-$(mktemp -d /tmp/snapfuzz-soak.XXXXXX)}
mkdir -p "$out"
snapfuzz=$root/build/app/snapfuzz
plainrun=$root/build/tests/targets/plainrun
src=$root/tests/deaths/deaths.c
if [ "$mode" = asan ]; then
  target=$root/build/tests/deaths/deaths_soak_asan.so
  # The libFuzzer binary gets the same sanitizers as the snapfuzz target.
  lf_cflags=(-fsanitize=address,signed-integer-overflow,fuzzer
             -fno-sanitize-recover=signed-integer-overflow
             -DDEATH_ASAN -DDEATH_UBSAN -DDEATH_SOAK)
else
  target=$root/build/tests/deaths/deaths_soak.so
  lf_cflags=(-fsanitize=fuzzer -DDEATH_SOAK)
fi
for f in "$snapfuzz" "$plainrun" "$target"; do
  [ -e "$f" ] || { echo "soak: $f is missing; run ./scripts/setup.sh first" >&2; exit 2; }
done

asan_rt=
if [ "$mode" = asan ]; then
  # The runtime the target was linked against (-shared-libasan), where
  # clang installs it: what snapfuzz preloads too (core/sanitizer.c).
  rt_name=$(readelf -d "$target" | sed -n 's/.*(NEEDED).*\[\(libclang_rt\.asan[^]]*\)\].*/\1/p')
  asan_rt=$(clang -print-file-name="${rt_name:-libclang_rt.asan-x86_64.so}")
  [ -f "$asan_rt" ] || { echo "soak: ASan runtime $asan_rt not found" >&2; exit 2; }
fi

# Runs one input (or a state-dependent sequence) outside any fuzzer and
# prints its exit status (128+N for a signal): a crash, a hang or an exit()
# is non-zero, counted as reproduced. A hang shows within 2 s (snapfuzz's
# --timeout is 1 s here). The out-of-memory input must fail as it does under
# the fuzzers' 300 MB limit:
# - plain: 600 MB of address space turns it into a failed malloc;
# - asan: ulimit -v cannot be used (ASan reserves terabytes of shadow), so
#   ASan's own allocation limit does it, the limit snapfuzz and libFuzzer
#   set under -rss_limit_mb 300 (the malloc is refused and reported).
#   LeakSanitizer checks at exit, so a leak makes the run exit non-zero (23).
run_plain() {
  if [ "$mode" = asan ]; then
    { ASAN_OPTIONS=detect_leaks=1:max_allocation_size_mb=300:allocator_may_return_null=0:symbolize=0 \
      LSAN_OPTIONS=detect_leaks=1:symbolize=0 \
      timeout -s KILL 2 env LD_PRELOAD="$asan_rt" "$plainrun" "$target" "$@" >/dev/null 2>&1; } 2>/dev/null
  else
    { ( ulimit -v 600000; exec timeout -s KILL 2 "$plainrun" "$target" "$@" ) >/dev/null 2>&1; } 2>/dev/null
  fi
  echo $?
}

# A benign input must run clean, or the check proves nothing.
printf 'a' >"$out/benign"
benign=$(run_plain "$out/benign")
[ "$benign" = 0 ] || { echo "soak: the plain loader fails a benign input (status $benign)" >&2; exit 2; }

echo "soak ($mode): $secs s per fuzzer, one core each, files in $out"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- snapfuzz ---
sf_out=$out/snapfuzz
"$snapfuzz" run "$target" --out "$sf_out" --workers 1 --keep-going --timeout 1 \
  --rss-limit-mb 300 --max-total-time "$secs" --status-every 30 2>"$out/snapfuzz.log" >/dev/null
# One line per checked input: the crash's kind, its id, the loader's status.
: >"$out/snapfuzz.checks"
while read -r kind id; do
  d=$sf_out/crashes/$id
  if [ -d "$d/sequence" ]; then
    echo "$kind $id $(run_plain $(ls "$d/sequence" | sort | sed "s|^|$d/sequence/|"))" >>"$out/snapfuzz.checks"
    continue
  fi
  for f in "$d/input" "$d"/more/*; do
    [ -f "$f" ] || continue
    echo "$kind $id/${f#"$d"/} $(run_plain "$f")" >>"$out/snapfuzz.checks"
  done
done < <(python3 -c '
import json,glob,os,sys
for p in sorted(glob.glob(sys.argv[1]+"/crashes/*/crash.json")):
    j=json.load(open(p))
    print(j["kind"]+("(state)" if "state_dependent" in j else ""), os.path.basename(os.path.dirname(p)))' "$sf_out")

# --- libFuzzer, restarted after every crash for the same wall time ---
lf_dir=$out/libfuzzer
mkdir -p "$lf_dir/corpus" "$lf_dir/artifacts" "$lf_dir/logs"
clang -g -O1 "${lf_cflags[@]}" "$src" -o "$lf_dir/deaths_soak_fuzz"
lf_runs=0
end=$(( $(date +%s) + secs ))
while [ "$(date +%s)" -lt "$end" ]; do
  left=$(( end - $(date +%s) ))
  [ "$left" -gt 0 ] || break
  lf_runs=$((lf_runs + 1))
  log=$lf_dir/logs/run-$lf_runs.log
  { (cd "$lf_dir" && exec ./deaths_soak_fuzz -timeout=1 -rss_limit_mb=300 -max_total_time="$left" \
     -artifact_prefix="$lf_dir/artifacts/" "$lf_dir/corpus" >"$log" 2>&1); } 2>/dev/null
  echo $? >"$log.status"
done
: >"$out/libfuzzer.checks"
for f in "$lf_dir"/artifacts/*; do
  [ -f "$f" ] || continue
  b=$(basename "$f")
  echo "${b%%-*} $b $(run_plain "$f")" >>"$out/libfuzzer.checks"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out" "$mode" <<'EOF'
import collections, glob, json, os, re, sys
out, mode = sys.argv[1], sys.argv[2]

def checks(name):
    rows = [l.split() for l in open(os.path.join(out, name)) if l.strip()]
    per = collections.defaultdict(lambda: [0, 0])
    for kind, _, status in rows:
        per[kind][0] += 1
        per[kind][1] += status != "0"
    return rows, per

def fmt(per):
    return " ".join("%s:%d/%d" % (k, v[1], v[0]) for k, v in sorted(per.items()))

# snapfuzz: runner deaths, and leak suspects the helper did not dismiss
# (a leak ends no runner: the runner ends its batch as a suspect).
sf = os.path.join(out, "snapfuzz")
s = json.load(open(os.path.join(sf, "stats.json")))
kinds = collections.Counter()
for p in glob.glob(sf + "/crashes/*/crash.json"):
    j = json.load(open(p))
    kinds[j["kind"] + ("(state)" if "state_dependent" in j else "")] += j.get("count", 1)
log = open(os.path.join(out, "snapfuzz.log"), errors="replace").read()
suspect_lost = log.count("a leak suspect's input could not be rebuilt")
leaks = s["leak_suspects"] - s["leak_suspects_dismissed"]
sf_deaths = s["runner_deaths"] + leaks
sf_lost = s["inputs_lost"] + suspect_lost
sf_rows, sf_per = checks("snapfuzz.checks")
sf_bad = [r for r in sf_rows if r[2] == "0"]

# libFuzzer: one log per process; the kind from what it printed last.
def lf_kind(text, status):
    pats = [("leak", r"ERROR: LeakSanitizer"),
            ("oom", r"out-of-memory|allocation-size-too-big|requested allocation size"),
            ("timeout", r"ERROR: libFuzzer: timeout"),
            ("exit", r"ERROR: libFuzzer: fuzz target exited"),
            ("overwrite-input", r"fuzz target overwrites its const input"),
            ("ubsan", r"runtime error: "),
            # -fsanitize=fuzzer alone brings UBSan's signal handlers along:
            # "UndefinedBehaviorSanitizer: FPE" in the plain build too.
            ("stack-overflow", r"Sanitizer: stack-overflow|ERROR: libFuzzer: deadly signal(?s:.*)in recurse"),
            ("double-free", r"attempting double-free"),
            ("heap-buffer-overflow", r"AddressSanitizer: heap-buffer-overflow"),
            ("heap-use-after-free", r"AddressSanitizer: heap-use-after-free"),
            ("segv", r"Sanitizer: SEGV"),
            ("bus", r"Sanitizer: BUS"),
            ("fpe", r"Sanitizer: FPE"),
            ("ill", r"Sanitizer: ILL"),
            ("deadly-signal", r"ERROR: libFuzzer: deadly signal|Sanitizer: ABRT")]
    for k, p in pats:
        if re.search(p, text):
            return k
    if status == 137:
        return "killed(no report)"
    return "no-report(status %d)" % status  # 'C' closes stderr first

# libFuzzer names an artifact by its input's SHA-1: a death whose process
# wrote no artifact lost its input; one that wrote an artifact an earlier
# process had written already (an input in its corpus that kills it at
# start-up) is a repeat, stored but not new.
lf = os.path.join(out, "libfuzzer")
lf_kinds = collections.Counter()
lf_deaths = lf_lost = lf_repeats = 0
seen = set()
for p in sorted(glob.glob(lf + "/logs/run-*.log"), key=lambda p: int(re.findall(r"\d+", p)[-1])):
    status = int(open(p + ".status").read())
    if status == 0:
        continue  # the time ran out
    text = open(p, errors="replace").read()
    lf_deaths += 1
    lf_kinds[lf_kind(text, status)] += 1
    written = re.findall(r"Test unit written to (\S+)", text)
    if not written:
        lf_lost += 1
    elif written[-1] in seen:
        lf_repeats += 1
    seen.update(written)
lf_rows, lf_per = checks("libfuzzer.checks")
lf_stored = len(lf_rows)

print()
print("| fuzzer | deaths | inputs recovered | recovered inputs checked | reproduce independently | lost |")
print("|---|---|---|---|---|---|")
print("| snapfuzz | %d | %d | %d | %d | %d |" % (sf_deaths, s["crashes"], len(sf_rows),
      len(sf_rows) - len(sf_bad), sf_lost))
print("| libFuzzer | %d | %d | %d | %d | %d |" % (lf_deaths, lf_stored, lf_stored,
      lf_stored - len([r for r in lf_rows if r[2] == "0"]), lf_lost))
print()
print("snapfuzz deaths by kind: " + " ".join("%s:%d" % kv for kv in sorted(kinds.items())))
print("snapfuzz inputs reproduced/checked by kind: " + fmt(sf_per))
if mode == "asan":
    print("snapfuzz leak suspects: %d, dismissed as reachable: %d, input not rebuilt: %d"
          " (deaths above = %d runner deaths + %d suspects not dismissed)"
          % (s["leak_suspects"], s["leak_suspects_dismissed"], suspect_lost,
             s["runner_deaths"], leaks))
print("libFuzzer deaths by kind (from its report): " + " ".join("%s:%d" % kv for kv in sorted(lf_kinds.items())))
print("libFuzzer artifacts reproduced/checked by prefix: " + fmt(lf_per))
print("libFuzzer deaths that wrote an artifact an earlier process had written (same input): %d"
      % lf_repeats)
for kind, name, status in sf_bad:
    print("snapfuzz input that did not reproduce: %s %s" % (kind, name))
print("(snapfuzz keeps the first input of each crash id and up to 64 more distinct ones per id;")
print(" those are the recovered inputs checked. A state-dependent crash is checked as its sequence.)")
EOF
