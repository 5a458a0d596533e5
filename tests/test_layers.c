/*
 * The layers of the tree, checked on every build: a file may include
 * headers of its own folder and of the layers below its own, never above
 * or beside it, and no header reaches itself through its includes.
 *
 *   include/snapfuzz  the contracts (target ABI, record, PRNG, engine API)
 *   core/, sandbox/   the fuzzer's parts, and the seccomp sandbox
 *   worker/           the worker process and the symbols a target binds to
 *   recovery/         replay, triage, minimization, the recovery helper
 *   engine/           the coordinator and the engine's public entry points
 *   app/              the snapfuzz command line
 *   fuzzer/           the libFuzzer drop-in (beside app/: neither includes
 *                     the other)
 *
 * The source root comes from SF_SOURCE_ROOT (tests/meson.build).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
        const char *dir;
        int rank;
} layers[] = {
    {"include/snapfuzz", 0}, {"core", 1},   {"sandbox", 1}, {"worker", 2},
    {"recovery", 3},         {"engine", 4}, {"app", 5},     {"fuzzer", 5},
};
#define N_LAYERS (sizeof(layers) / sizeof(layers[0]))

/* The layer of a path relative to the root ("core/corpus.h"), or -1. */
static int layer_of(const char *path)
{
        for (size_t i = 0; i < N_LAYERS; i++) {
                size_t n = strlen(layers[i].dir);
                if (strncmp(path, layers[i].dir, n) == 0 && path[n] == '/')
                        return (int)i;
        }
        return -1;
}

/* An include line's target as a root-relative path: "snapfuzz/x.h" lives
 * in include/. */
static void include_path(const char *inc, char *out, size_t cap)
{
        if (strncmp(inc, "snapfuzz/", 9) == 0)
                snprintf(out, cap, "include/%s", inc);
        else
                snprintf(out, cap, "%s", inc);
}

typedef struct Edge {
        char from[256], to[256];
} Edge;

static Edge edges[4096];
static size_t n_edges;

static void scan_file(const char *root, const char *rel)
{
        char path[1024], line[1024];
        snprintf(path, sizeof(path), "%s/%s", root, rel);
        FILE *f = fopen(path, "r");
        cr_assert(f, "cannot open %s", path);
        while (fgets(line, sizeof(line), f)) {
                char inc[256];
                if (sscanf(line, " #include \"%255[^\"]\"", inc) != 1)
                        continue;
                cr_assert_lt(n_edges, sizeof(edges) / sizeof(edges[0]));
                Edge *e = &edges[n_edges++];
                snprintf(e->from, sizeof(e->from), "%s", rel);
                include_path(inc, e->to, sizeof(e->to));
        }
        fclose(f);
}

static void scan_tree(const char *root)
{
        n_edges = 0;
        for (size_t i = 0; i < N_LAYERS; i++) {
                char dir[1024];
                snprintf(dir, sizeof(dir), "%s/%s", root, layers[i].dir);
                DIR *d = opendir(dir);
                cr_assert(d, "cannot open %s", dir);
                struct dirent *de;
                while ((de = readdir(d))) {
                        size_t n = strlen(de->d_name);
                        if (n < 3 || de->d_name[n - 2] != '.' ||
                            (de->d_name[n - 1] != 'c' && de->d_name[n - 1] != 'h'))
                                continue;
                        char rel[512];
                        snprintf(rel, sizeof(rel), "%s/%s", layers[i].dir, de->d_name);
                        scan_file(root, rel);
                }
                closedir(d);
        }
}

static const char *root(void)
{
        const char *r = getenv("SF_SOURCE_ROOT");
        cr_assert(r, "SF_SOURCE_ROOT is not set (run the tests with meson test)");
        return r;
}

Test(layers, a_file_includes_only_its_own_layer_and_those_below)
{
        scan_tree(root());
        cr_assert_gt(n_edges, 100, "the scan found the tree's includes");
        size_t bad = 0;
        for (size_t i = 0; i < n_edges; i++) {
                int from = layer_of(edges[i].from), to = layer_of(edges[i].to);
                if (to < 0)
                        continue; /* a header outside the layers (none today) */
                bool ok = from == to || layers[to].rank < layers[from].rank;
                if (!ok) {
                        cr_log_error("%s includes %s: %s may not depend on %s", edges[i].from,
                                     edges[i].to, layers[from].dir, layers[to].dir);
                        bad++;
                }
        }
        cr_expect_eq(bad, 0, "%zu includes cross the layers the wrong way", bad);
}

/* Depth-first search over header includes; a header met again on the
 * current path is a cycle. */
static int visit(const char *h, const char **path, int depth)
{
        for (int i = 0; i < depth; i++)
                if (strcmp(path[i], h) == 0) {
                        cr_log_error("include cycle through %s", h);
                        return 1;
                }
        if (depth >= 64)
                return 0;
        path[depth] = h;
        for (size_t i = 0; i < n_edges; i++)
                if (strcmp(edges[i].from, h) == 0 && visit(edges[i].to, path, depth + 1))
                        return 1;
        return 0;
}

Test(layers, no_file_reaches_itself_through_its_includes)
{
        const char *path[64];
        scan_tree(root());
        size_t cycles = 0;
        for (size_t i = 0; i < n_edges; i++)
                cycles += visit(edges[i].from, path, 0);
        cr_expect_eq(cycles, 0, "%zu include cycles", cycles);
}

/* The check itself: a deliberately wrong edge is caught. */
Test(layers, an_include_from_a_lower_layer_upward_is_reported)
{
        cr_assert_eq(layers[layer_of("core/corpus.c")].rank, 1);
        cr_assert_gt(layers[layer_of("engine/coordinator.h")].rank,
                     layers[layer_of("worker/runner.c")].rank);
        cr_assert_eq(layer_of("bench/simworker.c"), -1);
}

/* The two front ends are beside each other: same rank, different layers. */
Test(layers, the_front_ends_are_beside_each_other)
{
        int app = layer_of("app/main.c"), fuzzer = layer_of("fuzzer/driver.c");
        cr_assert(app >= 0 && fuzzer >= 0 && app != fuzzer);
        cr_assert_eq(layers[app].rank, layers[fuzzer].rank);
        cr_assert_gt(layers[fuzzer].rank, layers[layer_of("engine/engine.c")].rank);
}
