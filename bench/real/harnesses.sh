# The benchmark's harnesses: which Debian source each comes from, how its
# library is built, how the harness is linked for each fuzzer, and its seeds.
# Sourced by build.sh and run.sh.
#
# To add one: append its name to HARNESSES, map it to its source package in
# pkg_of, write lib_build_<package> (configure and build a static library
# with the exported CC/CFLAGS) and the cases in harness_link/harness_seeds.

HARNESSES=(libxml2_xml libpng_read expat_parse libjpeg_turbo sqlite3_ossfuzz cjson_read pcre2_fuzz)

pkg_of() {
  case $1 in
    libxml2_*) echo libxml2 ;;
    libpng_*)  echo libpng1.6 ;;
    expat_*)   echo expat ;;
    libjpeg_turbo*) echo libjpeg-turbo ;;
    sqlite3_*) echo sqlite3 ;;
    cjson_*)   echo cjson ;;
    pcre2_*)   echo pcre2 ;;
    *) echo "unknown harness $1" >&2; return 1 ;;
  esac
}

# Flags of the final link per variant; $1 is the compiler (clang or clang++).
link_snapfuzz()  { "$1" -O1 -g -fPIC -fsanitize=fuzzer-no-link -shared "${@:2}"; }
link_libfuzzer() { "$1" -O1 -g -fsanitize=fuzzer "${@:2}"; }
link_afl()       { AFL_QUIET=1 "afl-${1/clang/clang-fast}" -O1 -g -fsanitize=fuzzer "${@:2}"; }
link_aflcmp()    { AFL_LLVM_CMPLOG=1 link_afl "$@"; }
link_cov()       { "$1" -O1 -g -fprofile-instr-generate -fcoverage-mapping "${@:2}"; }

# Debian's patches touch Makefile.am files after the shipped Makefile.in were
# generated; make would then rerun automake, whose version differs. The
# generated files are made newer than their sources instead: the patched
# parts are tests, not the library.
autotools_freeze() {
  touch aclocal.m4; sleep 1
  touch configure config.h.in 2>/dev/null || true
  find . -name Makefile.in -exec touch {} +
}

lib_build_libxml2() {
  autotools_freeze
  ./configure -q --disable-shared --without-python --without-zlib --without-lzma \
    --without-http --without-ftp --without-debug --without-legacy
  make -j"$1" libxml2.la
}

lib_build_libpng1_6() {
  # As upstream's contrib/oss-fuzz/build.sh: no stdio, warnings or write
  # support, so the harness measures the reader.
  sed -i -e "s/option STDIO/option STDIO disabled/" \
         -e "s/option WARNING /option WARNING disabled/" \
         -e "s/option WRITE enables WRITE_INT_FUNCTIONS/option WRITE disabled/" \
      scripts/pnglibconf.dfa
  autotools_freeze
  ./configure -q --disable-shared
  make -j"$1" libpng16.la
}

lib_build_expat() {
  # Debian's expat source is upstream's git tree (no configure): CMake, as
  # OSS-Fuzz builds it, static, without tools, examples, tests or docs.
  mkdir -p b && cd b
  cmake -S ../expat -B . -DCMAKE_BUILD_TYPE=None -DEXPAT_SHARED_LIBS=OFF \
    -DEXPAT_BUILD_TOOLS=OFF -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_TESTS=OFF \
    -DEXPAT_BUILD_DOCS=OFF -DEXPAT_BUILD_PKGCONFIG=OFF >/dev/null
  # Debian's backported CVE fixes test "#if XML_DTD == 1" (upstream 2.6
  # defines it as 1); 2.5.0's CMake template defines it empty, which Debian's
  # autotools build does not use. Give it the value the patches expect.
  sed -i 's/^#define XML_DTD$/#define XML_DTD 1/' expat_config.h
  make -j"$1" expat
}

lib_build_libjpeg_turbo() {
  # As upstream's fuzz/build.sh (static, the TurboJPEG API), but without the
  # SIMD extensions: they are assembly no fuzzer instruments, and need nasm.
  mkdir -p b && cd b
  cmake -S .. -B . -DCMAKE_BUILD_TYPE=None -DENABLE_STATIC=1 -DENABLE_SHARED=0 \
    -DWITH_TURBOJPEG=1 -DWITH_SIMD=0 >/dev/null
  make -j"$1" turbojpeg-static
}

# OSS-Fuzz's sqlite3 flags (projects/sqlite3/build.sh), for the library and
# the harness alike: limits on the lengths of values and statements, the
# memory and the page count, so that inputs do not end in out-of-memory or
# huge databases that say nothing about SQLite, and SQLITE_DEBUG, which turns
# on SQLite's assert()s and internal checks (part of what OSS-Fuzz finds; it
# makes inputs run 1.8-3.5x slower, for every fuzzer alike: README).
SQLITE3_OSSFUZZ_DEFS=(-DSQLITE_MAX_LENGTH=128000000 -DSQLITE_MAX_SQL_LENGTH=128000000
  -DSQLITE_MAX_MEMORY=25000000 -DSQLITE_PRINTF_PRECISION_LIMIT=1048576
  -DSQLITE_DEBUG=1 -DSQLITE_MAX_PAGE_COUNT=16384)

lib_build_sqlite3() {
  # As OSS-Fuzz: configure's defaults and the amalgamation (sqlite3.c, made
  # by Tcl scripts from the tree, so tclsh is needed), compiled once into
  # libsqlite3.a. --disable-tcl: no Tcl extension, so no tcl-dev either.
  ./configure -q --disable-shared --disable-tcl CFLAGS="$CFLAGS ${SQLITE3_OSSFUZZ_DEFS[*]}"
  make -j"$1" libsqlite3.la
}

lib_build_cjson() {
  # As upstream's fuzzing/ossfuzz.sh: CMake, a static libcjson.a that the
  # harness links, so the harness carries its own instrumented cJSON (while
  # snapfuzz itself links the system's libcjson.so.1).
  mkdir -p b && cd b
  cmake -S .. -B . -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF \
    -DENABLE_CJSON_TEST=OFF >/dev/null
  make -j"$1" cjson
}

lib_build_pcre2() {
  # As OSS-Fuzz's projects/pcre2/build.sh (configure's options: fuzz support,
  # \C refused, match and depth limits of 1000), static, and without JIT:
  # the JIT compiles patterns to machine code no fuzzer instruments (it is
  # off by default; the harness then runs the interpreter and the DFA).
  autotools_freeze
  ./configure -q --disable-shared --disable-jit --enable-fuzz-support \
    --enable-never-backslash-C --with-match-limit=1000 --with-match-limit-depth=1000
  make -j"$1" libpcre2-8.la
}

# harness_link NAME SRC LIBDIR OUTDIR BENCHDIR: writes OUTDIR/{snapfuzz.so,
# libfuzzer,afl,afl-cmplog,cov}.
harness_link() {
  local h=$1 src=$2 lib=$3 out=$4 bench=$5 v cc files incs libs
  for v in sancov afl aflcmp cov; do
    case $h in
      libxml2_xml)
        cc=clang; files=("$src/fuzz/xml.c" "$src/fuzz/fuzz.c")
        incs=(-I"$lib/$v/include" -I"$lib/$v")
        libs=("$lib/$v/.libs/libxml2.a" -lm) ;;
      libpng_read)
        cc=clang++; files=("$src/contrib/oss-fuzz/libpng_read_fuzzer.cc")
        incs=(-I"$lib/$v" -std=c++11)
        libs=("$lib/$v/.libs/libpng16.a" -lz -lm) ;;
      expat_parse)
        # OSS-Fuzz builds one target per encoding; UTF-8 is the first.
        cc=clang; files=("$src/expat/fuzz/xml_parse_fuzzer.c")
        incs=(-DENCODING_FOR_FUZZING=UTF-8 -I"$lib/$v/expat/lib" -I"$lib/$v/b")
        libs=("$lib/$v/b/libexpat.a") ;;
      libjpeg_turbo)
        # fuzz/decompress.cc, upstream's libjpeg_turbo_fuzzer.
        cc=clang++; files=("$src/fuzz/decompress.cc")
        incs=(-I"$lib/$v" -I"$lib/$v/b")
        libs=("$lib/$v/b/libturbojpeg.a") ;;
      sqlite3_ossfuzz)
        # test/ossfuzz.c, OSS-Fuzz's sqlite3 target (sqlite3.h is generated
        # in the build directory), with one change: its progress handler
        # stops an input 10 s after it started, under OSS-Fuzz's 25 s
        # timeout. Here every fuzzer has a 1 s timeout, a recursive CTE
        # without end is found within seconds, and libFuzzer exits at its
        # first timeout: the cutoff is 0.5 s, so such inputs end themselves.
        sed 's/cx\.iLastCb + 10000;/cx.iLastCb + 500;/' "$src/test/ossfuzz.c" > "$out/ossfuzz.c"
        grep -q 'iLastCb + 500;' "$out/ossfuzz.c" ||
          { echo "build: ossfuzz.c: the 10 s cutoff was not found" >&2; return 1; }
        cc=clang; files=("$out/ossfuzz.c")
        incs=("${SQLITE3_OSSFUZZ_DEFS[@]}" -I"$lib/$v")
        libs=("$lib/$v/.libs/libsqlite3.a" -lm -ldl -lpthread) ;;
      cjson_read)
        # fuzzing/cjson_read_fuzzer.c (OSS-Fuzz's cjson_read_fuzzer), linked
        # with the static libcjson.a as upstream's ossfuzz.sh does.
        cc=clang; files=("$src/fuzzing/cjson_read_fuzzer.c")
        incs=(-I"$lib/$v")
        libs=("$lib/$v/b/libcjson.a") ;;
      pcre2_fuzz)
        # src/pcre2_fuzzsupport.c, OSS-Fuzz's pcre2_fuzzer: the input is the
        # pattern and the subject; options come from its middle byte.
        cc=clang; files=("$src/src/pcre2_fuzzsupport.c")
        incs=(-I"$lib/$v/src")
        libs=("$lib/$v/.libs/libpcre2-8.a") ;;
    esac
    case $v in
      sancov)
        link_snapfuzz "$cc" "${incs[@]}" "${files[@]}" "${libs[@]}" -o "$out/snapfuzz.so"
        link_libfuzzer "$cc" "${incs[@]}" "${files[@]}" "${libs[@]}" -o "$out/libfuzzer" ;;
      afl)
        link_afl "$cc" "${incs[@]}" "${files[@]}" "${libs[@]}" -o "$out/afl" ;;
      aflcmp)
        link_aflcmp "$cc" "${incs[@]}" "${files[@]}" "${libs[@]}" -o "$out/afl-cmplog" ;;
      cov)
        # covrun.c is C; compile it apart so a C++ harness links with it.
        clang -O1 -c "$bench/covrun.c" -o "$out/covrun.o"
        link_cov "$cc" "${incs[@]}" "${files[@]}" "$out/covrun.o" "${libs[@]}" -o "$out/cov" ;;
    esac
  done
}

# harness_seeds NAME SRC DIR BENCHDIR: the starting corpus, the same for every fuzzer.
harness_seeds() {
  case $1 in
    libxml2_xml) python3 "$4/seeds_xml.py" "$3" ;;
    libpng_read)
      local i=0 f
      # Small PNGs only: the suite's images, a few kB each. (awk reads its
      # whole input: head would end the pipe early, and pipefail would
      # make build.sh exit 141 after a complete build.)
      find "$2" -name '*.png' -size -8k | grep -v crash | sort | awk 'NR <= 64' |
        while read -r f; do cp "$f" "$3/seed$((i++)).png"; done ;;
    expat_parse)
      # The small documents of testdata/largefiles, and the first 4 kB of
      # the large ones (a parse error at the cut does not stop the parser
      # from covering what comes before it).
      local f
      for f in "$2"/testdata/largefiles/*.xml "$2"/testdata/largefiles/*.rdf; do
        head -c 4096 "$f" > "$3/$(basename "$f")"
      done ;;
    libjpeg_turbo) cp "$2"/testimages/*.jpg "$3/" ;;
    sqlite3_ossfuzz) sqlite3_seeds "$3" ;;
    cjson_read) cjson_seeds "$2/fuzzing/inputs" "$3" ;;
    pcre2_fuzz) pcre2_seeds "$3" ;;
  esac
}

# sqlite3_seeds DIR: 12 small SQL scripts, one per area of the language
# (the source's test/*.test are Tcl, and its test/fuzzdata*.db hold ~35000
# inputs of earlier fuzzing: a finished corpus, not seeds). The harness runs
# its input on an in-memory database; if the second byte is a newline, the
# first is a selector (bit 0: foreign keys, the rest: the limit on result
# rows), which the last seed shows. Each "-- seed NAME" line starts a file.
sqlite3_seeds() {
  awk -v d="$1" '/^-- seed / { f = d "/" $3 ".sql"; next } { print > f }' <<'SQL'
-- seed basic
CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT, c REAL);
INSERT INTO t1(b, c) VALUES('one', 1.5), ('two', 2.5), ('three', NULL);
UPDATE t1 SET c = c * 2 WHERE b LIKE 't%';
DELETE FROM t1 WHERE c IS NULL;
SELECT a, b, c FROM t1 WHERE a > 0 ORDER BY b DESC LIMIT 2 OFFSET 0;
-- seed join
CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT UNIQUE);
CREATE TABLE q(pid INT, v INT);
CREATE INDEX q_pid ON q(pid, v);
INSERT INTO p VALUES(1, 'x'), (2, 'y'), (3, 'z');
INSERT INTO q VALUES(1, 10), (1, 20), (2, 30), (4, 40);
SELECT p.name, count(q.v), sum(q.v) FROM p LEFT JOIN q ON q.pid = p.id
  GROUP BY p.id HAVING count(*) > 0 ORDER BY 3;
SELECT * FROM q WHERE pid IN (SELECT id FROM p) AND EXISTS (SELECT 1 FROM p WHERE id = q.pid);
-- seed cte
WITH RECURSIVE cnt(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 20)
SELECT x, x * x, x % 3 FROM cnt WHERE x % 2 = 0;
WITH a(n) AS MATERIALIZED (VALUES(1), (2)) SELECT * FROM a, a AS b;
-- seed window
CREATE TABLE s(g TEXT, v INT);
INSERT INTO s VALUES('a', 1), ('a', 3), ('b', 2), ('b', 5), ('b', 4);
SELECT g, v, row_number() OVER w, sum(v) OVER (PARTITION BY g ORDER BY v
  ROWS BETWEEN 1 PRECEDING AND CURRENT ROW), lag(v) OVER w, rank() OVER w
  FROM s WINDOW w AS (ORDER BY v);
SELECT g, group_concat(v, '-') FILTER (WHERE v > 1) FROM s GROUP BY g;
-- seed trigger
PRAGMA foreign_keys = ON;
CREATE TABLE parent(id INTEGER PRIMARY KEY);
CREATE TABLE child(pid REFERENCES parent(id) ON DELETE CASCADE, x);
CREATE TABLE log(msg);
CREATE TRIGGER tr AFTER INSERT ON child BEGIN
  INSERT INTO log VALUES('child ' || new.x);
END;
CREATE VIEW v AS SELECT parent.id, child.x FROM parent JOIN child ON pid = id;
INSERT INTO parent VALUES(1), (2);
INSERT INTO child VALUES(1, 'a'), (2, 'b');
DELETE FROM parent WHERE id = 1;
SELECT * FROM v; SELECT * FROM log;
-- seed json
SELECT json('{"a": [1, 2, {"b": null}]}'), json_extract('{"a": {"b": 7}}', '$.a.b');
SELECT key, value, type FROM json_each('[1, "two", 3.0, true]');
SELECT json_group_array(x), json_object('k', x) FROM (SELECT 1 AS x UNION SELECT 2);
SELECT '{"x": [5, 6]}' -> '$.x', '{"x": [5, 6]}' ->> '$.x[1]', json_valid('{');
-- seed functions
SELECT printf('%5.2f|%-4s|%x|%q', 3.14159, 'ab', 255, 'it''s'), substr('hello', 2, 3),
  replace('aaa', 'a', 'bc'), hex('xyz'), quote(x'00ff'), typeof(1.0), abs(-7),
  round(2.567, 2), upper('mixed'), trim('  t  '), instr('abc', 'c'), unicode('A');
SELECT sqrt(2), pow(2, 10), log(100), sin(0.5), ceil(1.2), floor(-1.2), mod(7, 3);
SELECT date('2024-02-28', '+1 day'), strftime('%Y-%j %H:%M', '2020-12-31 23:59:59'),
  julianday('2000-01-01'), datetime(0, 'unixepoch');
-- seed upsert
CREATE TABLE kv(k TEXT PRIMARY KEY, v INT, w INT GENERATED ALWAYS AS (v * 2) STORED) WITHOUT ROWID;
INSERT INTO kv(k, v) VALUES('a', 1), ('b', 2);
INSERT INTO kv(k, v) VALUES('a', 10) ON CONFLICT(k) DO UPDATE SET v = v + excluded.v;
INSERT OR REPLACE INTO kv(k, v) VALUES('b', 5) RETURNING k, v, w;
UPDATE kv SET v = -v WHERE k = 'a' RETURNING *;
-- seed alter
CREATE TABLE a1(x, y);
INSERT INTO a1 VALUES(1, 2);
ALTER TABLE a1 ADD COLUMN z DEFAULT 9;
ALTER TABLE a1 RENAME COLUMN y TO yy;
ALTER TABLE a1 RENAME TO a2;
ALTER TABLE a2 DROP COLUMN x;
PRAGMA table_info(a2);
PRAGMA integrity_check;
VACUUM;
SELECT * FROM a2;
-- seed text
CREATE TABLE b(id INTEGER PRIMARY KEY, t TEXT COLLATE NOCASE, d BLOB);
CREATE INDEX b_lt ON b(lower(t)) WHERE t IS NOT NULL;
INSERT INTO b(t, d) VALUES('Abc', zeroblob(4)), ('abd', x'0102'), (NULL, randomblob(3));
SELECT t, length(d), CASE WHEN t GLOB 'A*' THEN 'upper' ELSE 'other' END,
  CAST(t AS INTEGER), t = 'ABC' FROM b WHERE lower(t) > 'a' ORDER BY t COLLATE BINARY;
-- seed compound
SELECT 1 AS n UNION SELECT 2 UNION ALL SELECT 2 ORDER BY n;
SELECT 'a' INTERSECT SELECT 'a' EXCEPT SELECT 'b';
VALUES(1, 'x'), (2, 'y');
SELECT DISTINCT x FROM (SELECT 3 AS x UNION ALL SELECT 3) WHERE x BETWEEN 1 AND 5;
SELECT (SELECT max(y) FROM (SELECT 4 AS y)), coalesce(NULL, nullif(1, 1), 'z'), iif(1, 'y', 'n');
-- seed transaction
A
CREATE TEMP TABLE tt(x);
BEGIN;
INSERT INTO tt VALUES(1);
SAVEPOINT sp;
INSERT INTO tt VALUES(2);
ROLLBACK TO sp;
RELEASE sp;
COMMIT;
ATTACH ':memory:' AS aux;
CREATE TABLE aux.t(y);
INSERT INTO aux.t SELECT x FROM tt;
SELECT * FROM aux.t, temp.tt;
EXPLAIN QUERY PLAN SELECT * FROM aux.t WHERE y = 1;
SQL
}

# cjson_seeds INPUTS DIR: upstream's fuzzing/inputs, put in the harness's
# format. They are written for fuzzing/afl.c: two letters (b/u: buffered or
# not, f/u: formatted or not), then the JSON. cjson_read_fuzzer.c returns at
# once unless the input starts with four '0'/'1' flags (minify, require
# termination, formatted, buffered) and ends with a NUL, so taken as they are
# (as OSS-Fuzz takes them) not one of them would reach the parser. Each seed
# keeps its JSON and its two letters' meaning, with minify and required
# termination on, and gets the NUL.
cjson_seeds() {
  local f flags
  for f in "$1"/*; do
    flags=11$(head -c 2 "$f" | sed 's/^\(.\)\(.\)$/\2\1/; s/f/1/; s/b/1/; s/u/0/g')
    { printf '%s' "$flags"; tail -c +3 "$f"; printf '\0'; } > "$2/$(basename "$f")"
  done
}

# pcre2_seeds DIR: 12 small patterns, one per area of the syntax (upstream
# ships no corpus for the harness; testdata/testinput* are pcre2test
# scripts). The harness compiles its whole input as a pattern and matches it
# against itself, with options drawn from its middle byte. One seed per
# line, written without the newline.
pcre2_seeds() {
  local i=0 line
  while IFS= read -r line; do
    printf '%s' "$line" > "$1/seed$((i++))"
  done <<'RE'
abc|a(b+)c*d?|x{2,5}
^[a-z0-9_.-]+@[[:alpha:]]+\.(?:com|org)$
(?<year>\d{4})-(?<mon>\d\d)-\k<mon>
(a+?)(b*+)(c?+)[^xyz]++.*?$
(?=foo)\w+(?<!bar)\b(?!baz)
(?i)(?m)^hello\s+WORLD$\n(?s:.)\Z
\p{Lu}\P{N}\X\x{263a}\h\v\R\N{U+41}
\((?:[^()]++|(?R))*\)|(?1)(a|b(?1))
(a)?(?(1)b|c)(?(?=d)de|f)(?(DEFINE)(?<n>x))
a(*SKIP)(*FAIL)|b(*PRUNE)c(*THEN)d|(*ACCEPT)
(?x) a b  [[:digit:]]{3} \Q.*+\E # comment
(*UTF)(*UCP)\x{100}+[\x{80}-\x{10ffff}]\1?(?|(x)|(y))\g{-1}
RE
}
