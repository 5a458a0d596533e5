#!/bin/sh
# Builds libsnapfuzz-fuzzer.a, the libFuzzer drop-in (fuzzer/driver.c says
# what it does), as two archive members:
#   snapfuzz-fuzzer.o  the engine (core, sandbox, worker, recovery, engine),
#                      libseccomp.a and the drop-in's front end, linked into
#                      ONE relocatable object in which every symbol is local
#                      but the public ones (keep list below), so that the
#                      harness's own symbols (a vendored cJSON or libseccomp,
#                      a function with a libc name) and the engine's never
#                      capture each other; the engine's cJSON calls are
#                      renamed sf_cJSON_* (fuzzer/cjsonbind.c defines them)
#   snapfuzz-main.o    main(), left out when the harness has its own
# The comparison interposers (memcmp, strcmp, ...) are weak: a sanitizer
# runtime's interceptors of the same names (strong) win and call our
# __sanitizer_weak_hook_*; without a sanitizer ours replace libc's.
#
# libcjson.so.1 is carried inside too (as data, loaded from a memfd by
# fuzzer/cjsonbind.c), so that a drop-in binary runs where libcjson is not
# installed (OSS-Fuzz's and ClusterFuzz's runner images).
#
# usage: mkarchive.sh OUT.a MAIN.a FRONT.a SECCOMP.a CJSON.so ENGINE.a... (env LD,
# OBJCOPY, AR, NM may name the tools)
set -eu
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
out=$(abs "$1") main=$(abs "$2") front=$(abs "$3") seccomp=$(abs "$4") cjson=$(abs "$5")
shift 5
engine=
for a in "$@"; do engine="$engine $(abs "$a")"; done
set -- $engine
LD=${LD:-ld} OBJCOPY=${OBJCOPY:-objcopy} AR=${AR:-ar} NM=${NM:-nm}
tmp=$(mktemp -d "${out}.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The objects of the engine's archives, each once: meson makes thin
# archives (members are paths, relative to the archive) and bundles a
# static library's static dependencies into it (core/ is in worker_abi
# too); a regular archive (libseccomp.a) is unpacked.
objects() {
        if [ "$(head -c 7 "$1")" = '!<thin>' ]; then
                d=$(dirname "$1")
                "$AR" t "$1" | while read -r m; do
                        case $m in /*) realpath "$m" ;; *) realpath "$d/$m" ;; esac
                done
        else
                mkdir "$tmp/x$2"
                (cd "$tmp/x$2" && "$AR" x "$1")
                for o in "$tmp/x$2"/*.o; do echo "$o"; done
        fi
}
n=0
for a in "$@" "$seccomp"; do
        n=$((n + 1))
        objects "$a" "$n"
done | sort -u >"$tmp/objs.list"
"$LD" -r -o "$tmp/engine.o" @"$tmp/objs.list"
"$NM" -u "$tmp/engine.o" | awk '$2 ~ /^cJSON_/ { print $2, "sf_" $2 }' >"$tmp/cjson.map"
"$OBJCOPY" --redefine-syms="$tmp/cjson.map" "$tmp/engine.o"
objects "$front" front >"$tmp/front.list"
cp -L "$cjson" "$tmp/libcjson.so.1"
(cd "$tmp" && "$LD" -r -b binary -z noexecstack -o cjson_blob.o libcjson.so.1)
"$OBJCOPY" --rename-section .data=.rodata,alloc,load,readonly,data,contents "$tmp/cjson_blob.o"
"$LD" -r -o "$tmp/all.o" "$tmp/engine.o" @"$tmp/front.list" "$tmp/cjson_blob.o"

# Every cJSON call must have its trampoline (fuzzer/cjsonbind.c's list).
missing=$("$NM" -u "$tmp/all.o" | awk '$2 ~ /^(sf_)?cJSON_/ { print $2 }')
if [ -n "$missing" ]; then
        echo "mkarchive.sh: add these to fuzzer/cjsonbind.c: $missing" >&2
        exit 1
fi

interposers='memcmp bcmp strcmp strncmp strcasecmp strncasecmp strstr strcasestr memmem'
"$NM" -g --defined-only "$tmp/all.o" | awk '{ print $3 }' |
        grep -E '^(LLVMFuzzerRunDriver|LLVMFuzzerMutate|__libfuzzer_is_present|__sanitizer_cov_.*|__sancov_lowest_stack|__sanitizer_weak_hook_.*|memcmp|bcmp|strcmp|strncmp|strcasecmp|strncasecmp|strstr|strcasestr|memmem)$' \
        >"$tmp/keep.list"
for s in $interposers; do echo "$s"; done >"$tmp/weak.list"
"$OBJCOPY" --keep-global-symbols="$tmp/keep.list" --weaken-symbols="$tmp/weak.list" \
        "$tmp/all.o" "$tmp/snapfuzz-fuzzer.o"
cp "$(objects "$main" main)" "$tmp/snapfuzz-main.o"
rm -f "$out"
"$AR" rcs "$out" "$tmp/snapfuzz-fuzzer.o" "$tmp/snapfuzz-main.o"
