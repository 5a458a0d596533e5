/*
 * `snapfuzz status`'s report (engine/status.h, status_report): what a
 * person reads from a stats.json, including one that was edited or
 * damaged.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/status.h"

static char *report_of(const char *json, int *ret)
{
        char *text = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&text, &len);
        cr_assert(out);
        *ret = status_report(out, "OUT", json, strlen(json), 0, 0, (time_t)1764000000);
        fclose(out);
        return text;
}

Test(status, a_finished_campaign_shows_its_figures)
{
        int r;
        char *text = report_of("{\"status\":\"finished\",\"target\":\"t.so\",\"started_at\":"
                               "1763999900,\"execs\":5000,\"elapsed_s\":10,\"edges\":77}",
                               &r);
        cr_assert_eq(r, 0);
        cr_assert(strstr(text, "state        finished\n"), "%s", text);
        cr_assert(strstr(text, "started    2025-11-24 15:58:20 UTC (100 s ago)"), "%s", text);
        cr_assert(strstr(text, "5000 executions (500/s)"), "%s", text);
        cr_assert(strstr(text, "77 edges"), "%s", text);
        free(text);
}

Test(status, malformed_json_is_refused_and_prints_nothing)
{
        int r;
        char *text = report_of("{\"status\":", &r);
        cr_assert_eq(r, -EBADMSG);
        cr_assert_str_eq(text, "");
        free(text);
}

/* Found by fuzz_targets/self/stats.c: a time outside time_t's range was
 * converted before it was checked, which is undefined behaviour (the
 * sanitizer build, scripts/check-sanitizers.sh, traps on it). */
Test(status, a_time_out_of_range_is_unknown)
{
        int r;
        char *text = report_of("{\"started_at\":1e300,\"updated_at\":-1e300}", &r);
        cr_assert_eq(r, 0);
        cr_assert(strstr(text, "  started    unknown\n"), "%s", text);
        cr_assert(strstr(text, "  updated    unknown\n"), "%s", text);
        free(text);
}

Test(status, control_characters_from_the_file_are_escaped)
{
        int r;
        char *text = report_of("{\"target\":\"a\\u001b[31mb\"}", &r);
        cr_assert_eq(r, 0);
        cr_assert(strstr(text, "target       a\\x1b[31mb\n"), "%s", text);
        free(text);
}

/* What the live screen showed is in the report too: when coverage last
 * grew, runner deaths by timeout and by memory, the largest runner. */
Test(status, shows_the_last_new_edge_hangs_and_memory)
{
        int r;
        char *text = report_of("{\"status\":\"done\",\"elapsed_s\":600,\"last_new_edge_s\":120.5,"
                               "\"timeouts\":3,\"ooms\":1,\"rss_mb\":48}",
                               &r);
        cr_assert_eq(r, 0);
        cr_expect(strstr(text, "last edge    new coverage 120.5 s into the run; none in the "
                               "479.5 s after it\n"),
                  "%s", text);
        cr_expect(strstr(text, "hangs        3 timeouts, 1 out of memory"), "%s", text);
        cr_expect(strstr(text, "memory       48 MB resident"), "%s", text);
        free(text);
}

/* A stats.json from before these figures: the report says nothing of them
 * rather than zeros it cannot know. */
Test(status, an_older_stats_file_has_no_such_lines)
{
        int r;
        char *text = report_of("{\"status\":\"done\",\"elapsed_s\":10}", &r);
        cr_assert_eq(r, 0);
        cr_expect(!strstr(text, "last edge"), "%s", text);
        cr_expect(!strstr(text, "hangs"), "%s", text);
        cr_expect(!strstr(text, "memory"), "%s", text);
        free(text);
}
