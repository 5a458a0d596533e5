/*
 * A bug at exactly a nesting limit, the shape of cJSON's: lists ('[') nest,
 * a list and a map ('{') each check the depth against NEST_LIMIT before
 * going one deeper, and a map opened at exactly the limit reaches a branch
 * nothing else does (here an abort). A map holds no nested value (cJSON's
 * wants a key first), so it takes exactly NEST_LIMIT '[' and then '{': one
 * '[' more and the list's own check fails first, one fewer and the map is
 * merely nested. The limit is compared with the depth,
 * which is no byte of the input, so writing the constant into the input
 * does not help; neither does depth feedback alone, which tells an eighth
 * deeper, not one deeper. What reaches it is a run of NEST_LIMIT '['
 * (core/mutator.c, op_cmp_run).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef NEST_LIMIT
#define NEST_LIMIT 1000u
#endif

typedef struct Parser {
        const uint8_t *data;
        size_t size, pos;
} Parser;

static int nest_value(Parser *p, unsigned depth);

/* The items of a list or a map up to its closing byte; 0 or -1. */
static int nest_items(Parser *p, unsigned depth, uint8_t close)
{
        while (p->pos < p->size) {
                if (p->data[p->pos] == close) {
                        p->pos++;
                        return 0;
                }
                if (nest_value(p, depth) < 0)
                        return -1;
        }
        return -1;
}

static int nest_list(Parser *p, unsigned depth)
{
        if (depth >= NEST_LIMIT)
                return -1;
        return nest_items(p, depth + 1, ']');
}

/* A map's bytes up to its '}'; 0 or -1. */
static int nest_map(Parser *p, unsigned depth)
{
        if (depth >= NEST_LIMIT)
                abort(); /* cJSON's parse_object returns here; nothing else gets here */
        while (p->pos < p->size)
                if (p->data[p->pos++] == '}')
                        return 0;
        return -1;
}

static int nest_value(Parser *p, unsigned depth)
{
        uint8_t c = p->data[p->pos++];

        if (c == '[')
                return nest_list(p, depth);
        if (c == '{')
                return nest_map(p, depth);
        return c == ']' || c == '}' ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Parser p = {data, size, 0};

        while (p.pos < p.size)
                if (nest_value(&p, 0) < 0)
                        break;
        return 0;
}
