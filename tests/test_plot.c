/*
 * OUT/plot_data from real runs, and `snapfuzz plot` drawing it with gnuplot
 * (app/plot_cmd.c): the PNG is checked as a PNG reader would (signature,
 * every chunk's CRC, the pixels inflated and unfiltered) and must hold the
 * colours of its series; the SVG must parse as XML (xmllint, a real
 * parser) and name its series. A resumed campaign continues the series;
 * a missing gnuplot, a missing or garbage plot_data are said as such.
 *
 * gnuplot (gnuplot-nox) and xmllint (libxml2-utils) are Debian packages
 * scripts/setup.sh installs; without them these tests fail.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sfrun.h"

typedef struct Row {
        double t, rate;
        unsigned long long execs, edges, features, corpus, unique, crashes, timeouts, ooms;
        long long rss;
} Row;

/* The lines of @out/plot_data that parse, in order. */
static size_t read_rows(const char *out, Row *rows, size_t cap, char **ret_text)
{
        char path[4200];
        size_t len, n = 0;
        snprintf(path, sizeof(path), "%s/plot_data", out);
        char *text = (char *)sf_read(path, &len);
        cr_assert(text, "no %s", path);
        static const char header[] = "# relative_time, execs, execs_per_sec, edges, features, "
                                     "corpus, unique_crashes, crashes, timeouts, ooms, rss_mb\n";
        cr_assert(strncmp(text, header, strlen(header)) == 0, "no header:\n%s", text);
        for (char *p = strchr(text, '\n') + 1; *p && n < cap;) {
                Row *r = &rows[n];
                int k = sscanf(p, "%lf, %llu, %lf, %llu, %llu, %llu, %llu, %llu, %llu, %llu, %lld",
                               &r->t, &r->execs, &r->rate, &r->edges, &r->features, &r->corpus,
                               &r->unique, &r->crashes, &r->timeouts, &r->ooms, &r->rss);
                cr_expect_eq(k, 11, "a line out of format: %.100s", p);
                n += k == 11;
                p = strchr(p, '\n');
                cr_assert(p, "the file does not end with a whole line:\n%s", text);
                p++;
        }
        if (ret_text)
                *ret_text = text;
        else
                free(text);
        return n;
}

static void fuzz(const char *out, const char *secs)
{
        SfRun r;
        const char *args[] = {"run",
                              sf_target("tlv_parser"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--keep-going",
                              "--max-total-time",
                              secs,
                              "--status-every",
                              "1",
                              NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "%s", r.err);
        sf_run_free(&r);
}

static void plot(SfRun *r, const char *out, const char *output)
{
        const char *args[] = {"plot", out, "--output", output, NULL};
        const char *args_default[] = {"plot", out, NULL};
        sf_run(r, 120, output ? args : args_default);
}

static uint32_t be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
        int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the PNG filters of @h scanlines of @stride bytes (@bpp a pixel)
 * in place; the pixels end up at @raw + y * (@stride + 1) + 1. */
static void unfilter(uint8_t *raw, uint32_t h, size_t stride, size_t bpp)
{
        for (uint32_t y = 0; y < h; y++) {
                uint8_t *line = raw + y * (stride + 1);
                uint8_t *cur = line + 1, *prev = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;
                cr_assert_leq(line[0], 4, "scanline %u: unknown filter %u", y, line[0]);
                for (size_t i = 0; i < stride; i++) {
                        int a = i >= bpp ? cur[i - bpp] : 0, b = prev ? prev[i] : 0;
                        int c = prev && i >= bpp ? prev[i - bpp] : 0;
                        int add = line[0] == 1   ? a
                                  : line[0] == 2 ? b
                                  : line[0] == 3 ? (a + b) / 2
                                  : line[0] == 4 ? paeth(a, b, c)
                                                 : 0;
                        cur[i] = (uint8_t)(cur[i] + add);
                }
        }
}

/* Reads @path as a PNG: signature, every chunk's CRC, IHDR, the pixels.
 * Returns how many pixels have each of @colours (@n of them, 0xRRGGBB). */
static void png_check(const char *path, uint32_t want_w, uint32_t want_h, const uint32_t *colours,
                      size_t n, size_t *counts)
{
        size_t len;
        uint8_t *png = sf_read(path, &len);
        cr_assert(png && len > 1000, "%s is missing or tiny", path);
        cr_assert(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: no PNG signature", path);
        uint32_t w = 0, h = 0, type = 0;
        uint8_t *idat = NULL;
        size_t idat_len = 0;
        bool end = false;
        for (size_t p = 8; p + 12 <= len && !end;) {
                uint32_t clen = be32(png + p);
                cr_assert_leq(p + 12 + (size_t)clen, len, "a chunk runs past the end");
                const uint8_t *ctype = png + p + 4, *data = png + p + 8;
                cr_assert_eq(be32(data + clen), (uint32_t)crc32(0, ctype, clen + 4),
                             "chunk %.4s: bad CRC", (const char *)ctype);
                if (memcmp(ctype, "IHDR", 4) == 0) {
                        w = be32(data);
                        h = be32(data + 4);
                        cr_assert_eq(data[8], 8, "bit depth %u", data[8]);
                        type = data[9];
                } else if (memcmp(ctype, "IDAT", 4) == 0) {
                        idat = realloc(idat, idat_len + clen);
                        memcpy(idat + idat_len, data, clen);
                        idat_len += clen;
                } else if (memcmp(ctype, "IEND", 4) == 0) {
                        end = true;
                }
                p += 12 + clen;
        }
        cr_assert(end, "no IEND");
        cr_assert_eq(w, want_w);
        cr_assert_eq(h, want_h);
        cr_assert(type == 2 || type == 6, "colour type %u (RGB or RGBA expected)", type);
        size_t bpp = type == 2 ? 3 : 4, stride = w * bpp;
        uLongf raw_len = (uLongf)(h * (stride + 1));
        uint8_t *raw = malloc(raw_len);
        cr_assert_eq(uncompress(raw, &raw_len, idat, idat_len), Z_OK, "IDAT does not inflate");
        cr_assert_eq(raw_len, h * (stride + 1));
        unfilter(raw, h, stride, bpp);
        memset(counts, 0, n * sizeof(*counts));
        for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                        const uint8_t *px = raw + y * (stride + 1) + 1 + x * bpp;
                        uint32_t rgb = (uint32_t)px[0] << 16 | (uint32_t)px[1] << 8 | px[2];
                        for (size_t i = 0; i < n; i++)
                                counts[i] += rgb == colours[i];
                }
        free(raw);
        free(idat);
        free(png);
}

/* Runs @cmd; its output goes to @out. */
static int sh(char *out, size_t cap, const char *cmd)
{
        FILE *p = popen(cmd, "r");
        cr_assert(p);
        size_t n = fread(out, 1, cap - 1, p);
        out[n] = 0;
        return pclose(p);
}

Test(plot, a_real_run_is_drawn_as_a_valid_png_and_svg_with_its_series, .timeout = 300)
{
        char *out = sf_tmpdir();
        fuzz(out, "6");
        Row rows[64];
        size_t n = read_rows(out, rows, 64, NULL);
        cr_assert_geq(n, 5, "a line a second, and one at the end");
        for (size_t i = 1; i < n; i++) {
                cr_expect_geq(rows[i].t, rows[i - 1].t);
                cr_expect_geq(rows[i].execs, rows[i - 1].execs);
                cr_expect_geq(rows[i].crashes, rows[i - 1].crashes);
        }
        cr_expect_gt(rows[n - 1].edges, 10);
        cr_expect_gt(rows[n - 1].crashes, 0);
        cr_expect_gt(rows[n - 1].rate, 0);

        SfRun r;
        plot(&r, out, NULL);
        cr_assert_eq(r.exit_code, 0, "%s%s", r.out, r.err);
        sf_run_free(&r);
        char png[4200], svg[4200];
        snprintf(png, sizeof(png), "%s/plot.png", out);
        /* The series' colours: edges, exec/s and unique crashes, features,
         * crashes stored (app/plot_cmd.c). */
        const uint32_t colours[] = {0x0060ad, 0xdd181f, 0x00a000, 0x9400d3};
        size_t counts[4];
        png_check(png, 1000, 1000, colours, 4, counts);
        for (size_t i = 0; i < 4; i++)
                cr_expect_gt(counts[i], 30, "series colour #%06x: %zu pixels", colours[i],
                             counts[i]);

        snprintf(svg, sizeof(svg), "%s/progress.svg", out);
        plot(&r, out, svg);
        cr_assert_eq(r.exit_code, 0, "%s%s", r.out, r.err);
        sf_run_free(&r);
        char res[65536], cmd[4400];
        snprintf(cmd, sizeof(cmd), "xmllint --noout '%s' 2>&1", svg);
        cr_assert_eq(sh(res, sizeof(res), cmd), 0,
                     "the SVG is not XML (or xmllint is missing: scripts/setup.sh): %s", res);
        snprintf(cmd, sizeof(cmd), "xmllint --xpath \"count(//*[local-name()='path'])\" '%s'", svg);
        cr_assert_eq(sh(res, sizeof(res), cmd), 0);
        cr_expect_gt(atoi(res), 10, "%s paths in the SVG", res);
        size_t len;
        char *text = (char *)sf_read(svg, &len);
        static const char *const series[] = {
            ">edges<",          ">features<", ">exec/s<", ">unique crashes<",
            ">crashes stored<", ">timeouts<", ">ooms<"};
        for (size_t i = 0; i < sizeof(series) / sizeof(series[0]); i++)
                cr_expect(strstr(text, series[i]), "no %s in the SVG", series[i]);
        free(text);
        free(out);
}

/* A second run on the same directory goes on with the time, the executions
 * and the crashes; a torn line left by a kill is cut off first. */
Test(plot, a_resumed_campaign_continues_its_series, .timeout = 300)
{
        char *out = sf_tmpdir();
        fuzz(out, "3");
        Row first[64], all[128];
        size_t n1 = read_rows(out, first, 64, NULL);
        cr_assert_geq(n1, 2);
        char path[4200];
        snprintf(path, sizeof(path), "%s/plot_data", out);
        FILE *f = fopen(path, "a");
        cr_assert(f);
        fputs("99.0, 12", f); /* torn */
        fclose(f);
        fuzz(out, "3");
        char *text;
        size_t n = read_rows(out, all, 128, &text);
        cr_expect(!strstr(text, "99.0, 12\n") && !strstr(text, "99.0, 1299"),
                  "the torn line is still there:\n%s", text);
        cr_assert_gt(n, n1, "%s", text);
        const Row *last1 = &first[n1 - 1], *next = &all[n1];
        cr_expect_gt(next->t, last1->t, "time went back:\n%s", text);
        cr_expect_gt(next->execs, last1->execs, "%s", text);
        cr_expect_geq(next->crashes, last1->crashes, "%s", text);
        cr_expect_geq(next->unique, last1->unique, "%s", text);
        free(text);
        free(out);
}

Test(plot, a_missing_or_garbage_plot_data_and_a_bad_name_are_usage_errors)
{
        char *out = sf_tmpdir();
        SfRun r;
        plot(&r, out, NULL);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, "snapfuzz: error: ") && strstr(r.err, "plot_data"), "%s", r.err);
        sf_run_free(&r);

        char path[4200];
        snprintf(path, sizeof(path), "%s/plot_data", out);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        fputs("# relative_time, execs\nhello, world\n\x1b[2J1, 2, 3\n", f);
        fclose(f);
        plot(&r, out, NULL);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, "no line of figures"), "%s", r.err);
        sf_run_free(&r);

        plot(&r, out, "picture.jpg");
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, ".png or .svg"), "%s", r.err);
        sf_run_free(&r);
        free(out);
}

Test(plot, without_gnuplot_it_says_what_to_install)
{
        char *out = sf_tmpdir();
        char path[4200];
        snprintf(path, sizeof(path), "%s/plot_data", out);
        FILE *f = fopen(path, "w");
        cr_assert(f);
        fputs("1.0, 100, 100.0, 5, 9, 2, 0, 0, 0, 0, 3\n", f);
        fclose(f);
        char *saved = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
        setenv("PATH", "/nonexistent", 1);
        SfRun r;
        plot(&r, out, NULL);
        setenv("PATH", saved, 1);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, "gnuplot is not installed"), "%s", r.err);
        sf_run_free(&r);
        /* The same file, with gnuplot: drawn. */
        plot(&r, out, NULL);
        cr_expect_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);
        free(saved);
        free(out);
}
