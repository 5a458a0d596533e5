/*
 * The write queue: every queued file ends up on disk with its content,
 * later writes of a name win, nothing queued is lost when the queue is
 * freed, a failed write is held and reported by the calls that follow it,
 * and written once the disk (or another directory) takes it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/writeq.h"

static int open_tmpdir(char *dir)
{
        cr_assert_not_null(mkdtemp(dir));
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dfd, 0);
        return dfd;
}

/* Entries other than . and ..; *ret_tmp counts temporaries among them. */
static int count_entries(const char *dir, int *ret_tmp)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        int n = 0, tmp = 0;
        cr_assert_not_null(d);
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                n++;
                tmp += strncmp(de->d_name, FS_TMP_PREFIX, strlen(FS_TMP_PREFIX)) == 0;
        }
        closedir(d);
        *ret_tmp = tmp;
        return n;
}

static void expect_file(int dfd, const char *name, const void *want, size_t want_len)
{
        uint8_t *got;
        size_t len;
        cr_assert_eq(fs_read_file(dfd, name, 1 << 20, &got, &len), 0, "%s exists", name);
        cr_expect_eq(len, want_len, "%s has %zu bytes, not %zu", name, len, want_len);
        if (len == want_len && len)
                cr_expect_arr_eq(got, want, len, "%s has the queued content", name);
        free(got);
}

Test(writeq, every_queued_file_is_written_and_the_last_write_of_a_name_wins)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;
        char name[32], data[64];

        cr_assert_eq(writeq_new(&q, dfd), 0);
        for (int i = 0; i < 300; i++) {
                snprintf(name, sizeof(name), "f%03d", i);
                int n = snprintf(data, sizeof(data), "entry %d", i * 7);
                cr_assert_eq(writeq_put(q, name, data, (size_t)n), 0);
        }
        cr_assert_eq(writeq_put(q, "f007", "rewritten", 9), 0);
        cr_assert_eq(writeq_put(q, "empty", "", 0), 0);
        cr_assert_eq(writeq_flush(q), 0);
        cr_expect_eq(writeq_pending(q), 0);

        int tmp;
        cr_expect_eq(count_entries(dir, &tmp), 301);
        cr_expect_eq(tmp, 0, "no temporary file is left");
        for (int i = 0; i < 300; i++) {
                if (i == 7)
                        continue;
                snprintf(name, sizeof(name), "f%03d", i);
                int n = snprintf(data, sizeof(data), "entry %d", i * 7);
                expect_file(dfd, name, data, (size_t)n);
        }
        expect_file(dfd, "f007", "rewritten", 9);
        expect_file(dfd, "empty", "", 0);
        writeq_free(q);
        close(dfd);
}

Test(writeq, freeing_the_queue_writes_what_is_still_queued)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;
        char name[32];
        static uint8_t big[256 * 1024];

        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (uint8_t)(i * 13 + 1);
        cr_assert_eq(writeq_new(&q, dfd), 0);
        for (int i = 0; i < 40; i++) {
                snprintf(name, sizeof(name), "big%d", i);
                cr_assert_eq(writeq_put(q, name, big, sizeof(big)), 0);
        }
        writeq_free(q);

        int tmp;
        cr_expect_eq(count_entries(dir, &tmp), 40);
        cr_expect_eq(tmp, 0);
        expect_file(dfd, "big0", big, sizeof(big));
        expect_file(dfd, "big39", big, sizeof(big));
        close(dfd);
}

Test(writeq, a_failed_write_is_held_and_written_once_the_directory_works)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX", dir2[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;

        /* A directory removed under the queue: creating a file in it fails
         * with ENOENT, whoever runs the test. */
        cr_assert_eq(rmdir(dir), 0);
        cr_assert_eq(writeq_new(&q, dfd), 0);
        cr_assert_eq(writeq_put(q, "a", "x", 1), 0, "the put itself only queues");
        cr_expect_eq(writeq_flush(q), -ENOENT);
        cr_expect_eq(writeq_error(q), -ENOENT);
        cr_expect_eq(writeq_put(q, "b", "y", 1), 0, "later puts are held, not refused");
        cr_expect_eq(writeq_flush(q), -ENOENT);
        cr_expect_eq(writeq_pending(q), 2, "nothing was dropped");

        /* Somewhere that works: everything held is written there. */
        int dfd2 = open_tmpdir(dir2);
        writeq_redirect(q, dfd2);
        cr_expect_eq(writeq_flush(q), 0);
        cr_expect_eq(writeq_error(q), 0);
        cr_expect_eq(writeq_pending(q), 0);
        expect_file(dfd2, "a", "x", 1);
        expect_file(dfd2, "b", "y", 1);
        writeq_free(q);
        close(dfd);
        close(dfd2);
}

Test(writeq, a_removal_follows_the_writes_queued_before_it)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;
        cr_assert_eq(writeq_new(&q, dfd), 0);
        cr_assert_eq(writeq_put(q, "old", "long input", 10), 0);
        cr_assert_eq(writeq_flush(q), 0);
        cr_assert_eq(writeq_put(q, "new", "short", 5), 0);
        cr_assert_eq(writeq_remove(q, "old"), 0);
        cr_assert_eq(writeq_remove(q, "never-there"), 0);
        cr_expect_eq(writeq_flush(q), 0, "a file already gone counts as removed");
        expect_file(dfd, "new", "short", 5);
        cr_expect_neq(faccessat(dfd, "old", F_OK, 0), 0, "the replaced file is gone");
        cr_expect_eq(writeq_pending(q), 0);
        writeq_free(q);
        close(dfd);
}

Test(writeq, names_that_are_not_plain_file_names_are_refused_at_once)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;
        char longname[300];

        memset(longname, 'n', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        cr_assert_eq(writeq_new(&q, dfd), 0);
        cr_expect_eq(writeq_put(q, "a/b", "x", 1), -EINVAL);
        cr_expect_eq(writeq_put(q, "", "x", 1), -EINVAL);
        cr_expect_eq(writeq_put(q, longname, "x", 1), -EINVAL);
        cr_expect_eq(writeq_flush(q), 0, "a refused name is no write error");
        int tmp;
        cr_expect_eq(count_entries(dir, &tmp), 0);
        writeq_free(q);
        close(dfd);
}

Test(writeq, a_file_that_cannot_take_its_name_is_held_alone_and_leaves_no_temporary)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;
        char name[32];

        /* A rename over a non-empty directory fails (EISDIR), root or not. */
        cr_assert_eq(mkdirat(dfd, "taken", 0755), 0);
        cr_assert_eq(mkdirat(dfd, "taken/x", 0755), 0);
        cr_assert_eq(writeq_new(&q, dfd), 0);
        for (int i = 0; i < 20; i++) {
                snprintf(name, sizeof(name), i == 10 ? "taken" : "s%02d", i);
                cr_assert_eq(writeq_put(q, name, name, strlen(name)), 0);
        }
        cr_expect_eq(writeq_flush(q), -EISDIR);
        cr_expect_eq(writeq_put(q, "later", "y", 1), 0, "the queue goes on");
        cr_expect_eq(writeq_flush(q), -EISDIR, "the one file still cannot be written");
        cr_expect_eq(writeq_pending(q), 1, "only the one file is held");
        writeq_free(q);

        int tmp;
        count_entries(dir, &tmp);
        cr_expect_eq(tmp, 0, "the storm's temporary files are all gone");
        expect_file(dfd, "s00", "s00", 3);
        expect_file(dfd, "s19", "s19", 3);
        expect_file(dfd, "later", "y", 1);
        close(dfd);
}

Test(writeq, a_file_removed_and_written_again_in_one_pass_is_there)
{
        char dir[] = "/tmp/sf-writeq-XXXXXX";
        int dfd = open_tmpdir(dir);
        WriteQueue *q;
        cr_assert_eq(writeq_new(&q, dfd), 0);
        cr_assert_eq(writeq_put(q, "back", "input", 5), 0);
        cr_assert_eq(writeq_put(q, "gone", "input", 5), 0);
        cr_assert_eq(writeq_flush(q), 0);
        /* Queued within WRITEQ_GATHER_MS of each other: one pass. */
        cr_assert_eq(writeq_remove(q, "back"), 0);
        cr_assert_eq(writeq_put(q, "back", "input", 5), 0);
        cr_assert_eq(writeq_remove(q, "gone"), 0);
        cr_assert_eq(writeq_put(q, "gone", "input", 5), 0);
        cr_assert_eq(writeq_remove(q, "gone"), 0);
        cr_expect_eq(writeq_flush(q), 0);
        expect_file(dfd, "back", "input", 5);
        cr_expect_neq(faccessat(dfd, "gone", F_OK, 0), 0, "the last removal wins");
        cr_expect_eq(writeq_pending(q), 0);
        writeq_free(q);
        close(dfd);
}
