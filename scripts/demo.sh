#!/usr/bin/env bash
# The README's first command: fuzz a bundled parser until it finds the
# planted out-of-bounds write, then replay the stored crash.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-snapfuzz-out/demo}
rm -rf "$out"
./build/app/snapfuzz run build/fuzz_targets/tlv_parser.so fuzz_targets/seeds/tlv_parser \
  --out "$out" --max-total-time 300
code=$?
if [ $code -ne 1 ]; then
  echo "demo: snapfuzz exited with $code, expected 1 (crash found)" >&2
  exit 1
fi
id=$(ls "$out/crashes" | head -n 1)
echo
echo "\$ snapfuzz reproduce $id --out $out"
./build/app/snapfuzz reproduce "$id" --out "$out"
test $? -eq 1
