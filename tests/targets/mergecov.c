/*
 * A test target for `snapfuzz merge`: each letter 'a'..'p' reaches a
 * branch of its own as often as it appears, so inputs differ in edges and
 * in hit-count buckets ("a" and "aaaa" are different features). Inputs
 * starting "!C" abort, "!H" hang, and "!S" spin 40 ms on the clock (no
 * syscall) before going on, so that a merge takes long enough to be killed
 * in the middle. Inputs starting "!W" call 20000 functions, each a counter
 * of its own: more features than one find slot holds (RECORD_FIND_FEATURES).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile unsigned sink;

/* One function per letter: a branch of its own each, whatever the
 * compiler makes of the switch. */
#define LETTER(c, k)                                                                               \
        __attribute__((noinline)) static void on_##c(void)                                         \
        {                                                                                          \
                sink += k;                                                                         \
        }
LETTER(a, 1)
LETTER(b, 2)
LETTER(c, 3)
LETTER(d, 5)
LETTER(e, 7)
LETTER(f, 11)
LETTER(g, 13)
LETTER(h, 17)
LETTER(i, 19)
LETTER(j, 23)
LETTER(k, 29)
LETTER(l, 31)
LETTER(m, 37)
LETTER(n, 41)
LETTER(o, 43)
LETTER(p, 47)

/* 20000 functions, w_10000 .. w_29999, and a table of them. (Left as
 * written: clang-format does not settle on lists of macro calls.) */
/* clang-format off */
#define W(n) __attribute__((noinline)) static void w_##n(void) { sink += n; }
#define D0(p, X) X(p##0) X(p##1) X(p##2) X(p##3) X(p##4) X(p##5) X(p##6) X(p##7) X(p##8) X(p##9)
#define D1(p, X) D0(p##0, X) D0(p##1, X) D0(p##2, X) D0(p##3, X) D0(p##4, X) \
                 D0(p##5, X) D0(p##6, X) D0(p##7, X) D0(p##8, X) D0(p##9, X)
#define D2(p, X) D1(p##0, X) D1(p##1, X) D1(p##2, X) D1(p##3, X) D1(p##4, X) \
                 D1(p##5, X) D1(p##6, X) D1(p##7, X) D1(p##8, X) D1(p##9, X)
#define D3(p, X) D2(p##0, X) D2(p##1, X) D2(p##2, X) D2(p##3, X) D2(p##4, X) \
                 D2(p##5, X) D2(p##6, X) D2(p##7, X) D2(p##8, X) D2(p##9, X)
D3(1, W) D3(2, W)
#define WREF(n) w_##n,
static void (*const wide[])(void) = {D3(1, WREF) D3(2, WREF)};
/* clang-format on */

/* Not instrumented: how often its loop runs depends on the clock, and an
 * 8-bit counter that wraps would make its bucket random. */
__attribute__((no_sanitize("coverage"), noinline)) static void spin_ms(long ms)
{
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
                clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size >= 2 && data[0] == '!' && data[1] == 'C')
                abort();
        if (size >= 2 && data[0] == '!' && data[1] == 'H')
                for (volatile int spin = 1; spin;)
                        ;
        if (size >= 2 && data[0] == '!' && data[1] == 'S')
                spin_ms(40);
        if (size >= 2 && data[0] == '!' && data[1] == 'W')
                for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
                        wide[i]();
        for (size_t i = 0; i < size; i++) {
                switch (data[i]) {
                case 'a':
                        on_a();
                        break;
                case 'b':
                        on_b();
                        break;
                case 'c':
                        on_c();
                        break;
                case 'd':
                        on_d();
                        break;
                case 'e':
                        on_e();
                        break;
                case 'f':
                        on_f();
                        break;
                case 'g':
                        on_g();
                        break;
                case 'h':
                        on_h();
                        break;
                case 'i':
                        on_i();
                        break;
                case 'j':
                        on_j();
                        break;
                case 'k':
                        on_k();
                        break;
                case 'l':
                        on_l();
                        break;
                case 'm':
                        on_m();
                        break;
                case 'n':
                        on_n();
                        break;
                case 'o':
                        on_o();
                        break;
                case 'p':
                        on_p();
                        break;
                default:
                        break;
                }
        }
        return 0;
}
