#!/usr/bin/env bash
# Fetches the upstream sources of the benchmark's libraries from Debian
# (apt-get source), installing what the benchmark needs on the way: a deb-src
# entry mirroring the machine's deb entries, dpkg-dev (dpkg-source), afl++,
# gnuplot-nox and the build tools of each library (autotools, cmake, and
# tclsh, which generates sqlite's amalgamation).
#
# usage: bench/real/fetch.sh [PACKAGE...]   (default: the packages of harnesses.sh)
# env:   REAL_WORK=DIR  work directory (default bench/real/work)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${REAL_WORK:-$here/work}
pkgs=("$@")
. "$here/harnesses.sh"
if [ ${#pkgs[@]} -eq 0 ]; then
  for h in "${HARNESSES[@]}"; do pkgs+=("$(pkg_of "$h")"); done
  mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
fi
mkdir -p "$work/src"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# A deb-src twin of every deb stanza in the deb822 sources, in its own file,
# so the machine's own file is never edited.
src_list=/etc/apt/sources.list.d/snapfuzz-src.sources
if [ ! -e "$src_list" ]; then
  tmp=$(mktemp)
  for f in /etc/apt/sources.list.d/*.sources; do
    [ "$f" = "$src_list" ] && continue
    sed -n 's/^Types:.*\bdeb\b.*/Types: deb-src/p; /^\(URIs\|Suites\|Components\|Signed-By\):/p; /^$/p' "$f"
    echo
  done > "$tmp"
  # Old-style one-line entries, if any.
  if [ -e /etc/apt/sources.list ]; then
    sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list > "${tmp}.list"
    [ -s "${tmp}.list" ] && as_root cp "${tmp}.list" /etc/apt/sources.list.d/snapfuzz-src.list
    rm -f "${tmp}.list"
  fi
  as_root cp "$tmp" "$src_list"
  rm -f "$tmp"
  as_root apt-get update -qq
fi

need=()
for p in dpkg-dev afl++ gnuplot-nox autoconf automake libtool pkg-config make \
         cmake zlib1g-dev clang llvm bc python3 tcl; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
[ ${#need[@]} -eq 0 ] || as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"

cd "$work/src"
for p in "${pkgs[@]}"; do
  if ls -d "$p"-*/ >/dev/null 2>&1; then
    echo "fetch: $p already unpacked in $work/src"
    continue
  fi
  # A security update's source can be missing from the mirror while its
  # binaries are there; the release's own version is the fallback.
  apt-get source -qq "$p" || apt-get source -qq "$p/$(. /etc/os-release; echo "$VERSION_CODENAME")"
done
ls -d "$work"/src/*/
