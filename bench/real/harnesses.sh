# The benchmark's harnesses: which Debian source each comes from, how its
# library is built, how the harness is linked for each fuzzer, and its seeds.
# Sourced by build.sh and run.sh.
#
# To add one: append its name to HARNESSES, map it to its source package in
# pkg_of, write lib_build_<package> (configure and build a static library
# with the exported CC/CFLAGS) and the cases in harness_link/harness_seeds.

HARNESSES=(libxml2_xml libpng_read expat_parse libjpeg_turbo)

pkg_of() {
  case $1 in
    libxml2_*) echo libxml2 ;;
    libpng_*)  echo libpng1.6 ;;
    expat_*)   echo expat ;;
    libjpeg_turbo*) echo libjpeg-turbo ;;
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
  esac
}
