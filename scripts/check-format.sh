#!/usr/bin/env bash
# Fails when a C file differs from what .clang-format asks for.
# Fix with: clang-format -i $(git ls-files '*.c' '*.h')
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "clang-format is not installed; skipping the format check"
  exit 77
fi
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')
clang-format --dry-run --Werror $files
echo "format: $(echo "$files" | wc -w) files match .clang-format"
