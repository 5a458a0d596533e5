/*
 * A test target for `snapfuzz merge`: each letter 'a'..'p' reaches a
 * branch of its own as often as it appears, so inputs differ in edges and
 * in hit-count buckets ("a" and "aaaa" are different features). Inputs
 * starting "!C" abort, "!H" hang, and "!S" spin 40 ms on the clock (no
 * syscall) before going on, so that a merge takes long enough to be killed
 * in the middle.
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
