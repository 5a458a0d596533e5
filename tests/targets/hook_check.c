/*
 * Checks, on every input, that the byte-string functions snapfuzz
 * interposes (memcmp, bcmp, strcmp, strncmp, strcasecmp, strncasecmp,
 * strstr, strcasestr, memmem) answer exactly as plain reference loops do: the input is
 * split into two operands and a length, both are compared every way, and a
 * wrong answer traps. Fuzzing it must find nothing. Built with -fno-builtin
 * so that the reference loops stay loops.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int sign(int v)
{
        return (v > 0) - (v < 0);
}

static int ref_memcmp(const uint8_t *a, const uint8_t *b, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (a[i] != b[i])
                        return a[i] < b[i] ? -1 : 1;
        return 0;
}

static uint8_t fold(uint8_t c)
{
        return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static int ref_strncmp(const char *a, const char *b, size_t n, int nocase)
{
        for (size_t i = 0; i < n; i++) {
                uint8_t x = (uint8_t)a[i], y = (uint8_t)b[i];
                if (nocase) {
                        x = fold(x);
                        y = fold(y);
                }
                if (x != y)
                        return x < y ? -1 : 1;
                if (!x)
                        return 0;
        }
        return 0;
}

static const uint8_t *ref_memmem(const uint8_t *h, size_t hl, const uint8_t *n, size_t nl)
{
        if (nl == 0)
                return h;
        for (size_t i = 0; i + nl <= hl; i++)
                if (ref_memcmp(h + i, n, nl) == 0)
                        return h + i;
        return NULL;
}

static const char *ref_strcasestr(const char *h, const char *n)
{
        size_t nl = 0;
        while (n[nl])
                nl++;
        for (;; h++) {
                if (ref_strncmp(h, n, nl, 1) == 0)
                        return h;
                if (!*h)
                        return NULL;
        }
}

static void expect(int ok)
{
        if (!ok)
                __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char a[64], b[64];

        if (size < 1 || size > 1 + 2 * 40)
                return 0;
        size_t n = data[0] % 48;
        size_t half = (size - 1) / 2;
        const uint8_t *pa = data + 1, *pb = data + 1 + half;
        size_t lb = size - 1 - half;

        /* Raw operands: memcmp and bcmp over the shorter length. */
        size_t m = half < lb ? half : lb;
        if (n < m)
                m = n;
        expect(sign(memcmp(pa, pb, m)) == ref_memcmp(pa, pb, m));
        expect((bcmp(pa, pb, m) != 0) == (ref_memcmp(pa, pb, m) != 0));
        expect(memmem(pa, half, pb, m) == (const void *)ref_memmem(pa, half, pb, m));

        /* The same as C strings (they may end early at a zero byte). */
        memcpy(a, pa, half);
        a[half] = '\0';
        memcpy(b, pb, lb);
        b[lb] = '\0';
        expect(sign(strcmp(a, b)) == ref_strncmp(a, b, SIZE_MAX, 0));
        expect(sign(strncmp(a, b, n)) == ref_strncmp(a, b, n, 0));
        expect(sign(strcasecmp(a, b)) == ref_strncmp(a, b, SIZE_MAX, 1));
        expect(sign(strncasecmp(a, b, n)) == ref_strncmp(a, b, n, 1));
        size_t blen = 0;
        while (b[blen])
                blen++;
        size_t alen = 0;
        while (a[alen])
                alen++;
        expect(strstr(a, b) ==
               (const char *)ref_memmem((const uint8_t *)a, alen, (const uint8_t *)b, blen));
        expect(strcasestr(a, b) == ref_strcasestr(a, b));
        return 0;
}
