#include "core/featcover.h"

#include "snapfuzz/banned.h"

void featcover_pin(uint32_t *holders, const uint32_t *ft, uint32_t n)
{
        for (uint32_t k = 0; k < n; k++)
                holders[ft[k]] = FEATCOVER_PINNED;
}

/* Adds @delta (+1 or -1) to the holders of @ft's features, pinned ones
 * excepted. */
static void featcover_hold(uint32_t *holders, const uint32_t *ft, uint32_t n, int delta)
{
        for (uint32_t k = 0; k < n; k++)
                if (holders[ft[k]] != FEATCOVER_PINNED)
                        holders[ft[k]] += (uint32_t)delta;
}

/* Whether every feature of @ft has a keeper besides the one holding it. */
static bool featcover_redundant(const uint32_t *holders, const uint32_t *ft, uint32_t n)
{
        for (uint32_t k = 0; k < n; k++)
                if (holders[ft[k]] < 2)
                        return false;
        return true;
}

size_t featcover_select(const size_t *order, size_t n, FeatcoverList list, const void *ctx,
                        uint32_t *holders, bool *keep)
{
        size_t kept = 0;
        for (size_t j = 0; j < n; j++) {
                uint32_t nf;
                const uint32_t *ft = list(ctx, order[j], &nf);
                for (uint32_t k = 0; k < nf && !keep[order[j]]; k++)
                        keep[order[j]] = holders[ft[k]] == 0;
                if (!keep[order[j]])
                        continue;
                featcover_hold(holders, ft, nf, +1);
                kept++;
        }
        /* A short input kept first may have its features all reached by
         * longer ones kept after it: the longest such go again. */
        for (size_t j = n; j-- > 0;) {
                uint32_t nf;
                const uint32_t *ft = list(ctx, order[j], &nf);
                if (!keep[order[j]] || !featcover_redundant(holders, ft, nf))
                        continue;
                keep[order[j]] = false;
                featcover_hold(holders, ft, nf, -1);
                kept--;
        }
        return kept;
}
