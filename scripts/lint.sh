#!/usr/bin/env bash
# Static checks of snapfuzz's own C code (core/ sandbox/ worker/ recovery/
# engine/ app/): cppcheck and clang-tidy, both of which must be clean.
#
#   cppcheck    warning, portability and performance checks; it reads our
#               headers, not the system's (scripts/lint/cjson.cfg and
#               glibc.cfg tell it the macros it must know). Justified false
#               positives are in scripts/lint/cppcheck-suppressions.txt,
#               one comment each.
#   clang-tidy  the checks in .clang-tidy, with the flags of
#               build/compile_commands.json (run ./scripts/setup.sh first).
#
# scripts/lint/baseline.txt lists findings in files other branches were
# changing when the checks were introduced ("TOOL PATH CHECK"): they are
# printed but do not fail. It is meant to be emptied, not added to.
#
#   LINT_JOBS   clang-tidy processes at once (default: online cores)
#   LINT_ONLY   cppcheck or clang-tidy, to run one of them
#   LINT_FILES  the .c files to check (default: all of the folders above)
#
# Exit status: 0 clean, 1 findings, 2 a tool is missing or failed.
set -euo pipefail
cd "$(dirname "$0")/.."

dirs=(core sandbox worker recovery engine app fuzzer)
baseline=scripts/lint/baseline.txt
jobs=${LINT_JOBS:-$(nproc)}
only=${LINT_ONLY:-}
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The baseline's entries for one tool, as "PATH CHECK" lines.
baseline_of() {
  [ -f "$baseline" ] || return 0
  sed -e 's/#.*//' "$baseline" | awk -v t="$1" '$1 == t && NF >= 3 { print $2, $3 }'
}

if [ -z "$only" ] || [ "$only" = cppcheck ]; then
  command -v cppcheck >/dev/null || { echo "lint: cppcheck is not installed (./scripts/setup.sh)" >&2; exit 2; }
  supp=$tmp/cppcheck-suppressions.txt
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' scripts/lint/cppcheck-suppressions.txt >"$supp"
  baseline_of cppcheck | awk '{ print $2 ":" $1 }' >>"$supp"
  if cppcheck --enable=warning,portability,performance --std=c11 --quiet \
      --error-exitcode=1 --inline-suppr -I include -I . -D_GNU_SOURCE \
      --library=scripts/lint/cjson.cfg --library=scripts/lint/glibc.cfg \
      --suppressions-list="$supp" \
      --suppress=missingIncludeSystem --template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
      ${LINT_FILES:-"${dirs[@]}"} 2>"$tmp/cppcheck.txt"; then
    echo "lint: cppcheck: clean"
  else
    cat "$tmp/cppcheck.txt"
    echo "lint: cppcheck: findings above"
    status=1
  fi
fi

if [ -z "$only" ] || [ "$only" = clang-tidy ]; then
  command -v clang-tidy >/dev/null || { echo "lint: clang-tidy is not installed (./scripts/setup.sh)" >&2; exit 2; }
  if [ ! -f build/compile_commands.json ]; then
    echo "lint: build/compile_commands.json is missing; run ./scripts/setup.sh first" >&2
    exit 2
  fi
  # The compile database holds gcc-only flags clang does not know (worker/
  # meson.build gives cmphooks.c -fno-tree-loop-distribute-patterns).
  sed -e 's/ -fno-tree-loop-distribute-patterns//g' build/compile_commands.json \
    >"$tmp/compile_commands.json"
  files=${LINT_FILES:-$(git ls-files "${dirs[@]/%//*.c}")}
  printf '%s\n' $files |
    xargs -P "$jobs" -n 4 clang-tidy -p "$tmp" --quiet >"$tmp/tidy.txt" 2>"$tmp/tidy.err" || true
  if grep -q 'error: ' "$tmp/tidy.err"; then
    grep 'error: ' "$tmp/tidy.err" >&2
    echo "lint: clang-tidy failed" >&2
    exit 2
  fi
  # One finding per "FILE:LINE:COL: warning: MESSAGE [CHECK,...]" line.
  grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[^]]+\]$' "$tmp/tidy.txt" |
    sed -e "s|^$PWD/||" -e 's|^build/\.\./||' -e 's|^\.\./||' | sort -u >"$tmp/findings.txt" || true
  baseline_of clang-tidy >"$tmp/tidy-baseline.txt"
  new=0
  while IFS= read -r f; do
    path=${f%%:*}
    check=$(sed -E 's/.*\[([^],]+).*\]$/\1/' <<<"$f")
    if grep -qxF "$path $check" "$tmp/tidy-baseline.txt"; then
      echo "baselined: $f"
    else
      echo "$f"
      new=$((new + 1))
    fi
  done <"$tmp/findings.txt"
  if [ "$new" -eq 0 ]; then
    echo "lint: clang-tidy: clean ($(printf '%s\n' $files | wc -l) files)"
  else
    echo "lint: clang-tidy: $new findings (context: clang-tidy -p build FILE)"
    status=1
  fi
fi
exit $status
