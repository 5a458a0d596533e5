/*
 * A tokenizer that compares every byte it reads with constants: the
 * comparison-heavy shape of PCRE2's and libxml2's scanners, for measuring
 * what the trace-cmp hooks cost (bench/ab.sh). Each byte is tested against
 * punctuation one `if` at a time (one-byte comparisons against constants),
 * the last four bytes against 32-bit keywords (four-byte comparisons
 * against constants), and a keyword's length against two computed bounds
 * (four-byte comparisons of two variables).
 *
 * No planted bug: a benchmark target.
 */
#include <stddef.h>
#include <stdint.h>

static volatile unsigned sink;

static unsigned classify(uint8_t c)
{
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                return 1;
        if (c == '<' || c == '>' || c == '/' || c == '=')
                return 2;
        if (c == '"' || c == '\'')
                return 3;
        if (c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}')
                return 4;
        if (c >= '0' && c <= '9')
                return 5;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
                return 6;
        return 0;
}

static unsigned keyword(uint32_t w)
{
        if (w == 0x786d6c20u) /* "xml " */
                return 1;
        if (w == 0x68656164u) /* "head" */
                return 2;
        if (w == 0x626f6479u) /* "body" */
                return 3;
        if (w == 0x7363726au) /* "scrj" */
                return 4;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint32_t w = 0;
        unsigned run = 0, longest = 0, counts[8] = {0};

        for (size_t i = 0; i < size; i++) {
                unsigned k = classify(data[i]);
                counts[k]++;
                w = w << 8 | data[i];
                counts[keyword(w) + 1]++;
                run = k == 6 ? run + 1 : 0;
                if (run > longest)
                        longest = run;
        }
        sink = counts[0] + counts[2] * 3 + counts[6] * 5 + longest;
        return 0;
}
