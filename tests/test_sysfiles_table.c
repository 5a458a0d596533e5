/*
 * Tests of sandbox/sysfiles.c, the system files every runner may read:
 * which paths and flags it opens, refuses, or leaves to the caller, with
 * the files of the machine the tests run on.
 */
#include "sandbox/sysfiles.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

/* The flags a read-only open may carry, as the supervisor passes them. */
#define READ_ONLY_FLAGS (O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_NOATIME)

static SysFiles *sf;

static void setup(void)
{
        cr_assert_eq(sysfiles_new(&sf), 0);
}

static void teardown(void)
{
        sysfiles_free(sf);
}

TestSuite(sysfiles_table, .init = setup, .fini = teardown);

static int try_open(const char *path, int flags, const char **ret_why)
{
        const char *why = NULL;
        int fd = -1;
        int r = sysfiles_open(sf, path, (uint64_t)flags, READ_ONLY_FLAGS, &fd, &why);

        if (r == SYSFILES_OPENED) {
                cr_expect_geq(fd, 0);
                close(fd);
        }
        if (ret_why)
                *ret_why = why;
        return r;
}

Test(sysfiles_table, exact_files_open_read_only)
{
        cr_expect_eq(try_open("/dev/urandom", O_RDONLY | O_CLOEXEC, NULL), SYSFILES_OPENED);
        cr_expect_eq(try_open("/dev/urandom", O_WRONLY, NULL), SYSFILES_REFUSED);
        cr_expect_eq(try_open("/dev/urandom", O_RDWR, NULL), SYSFILES_REFUSED);
        cr_expect_eq(try_open("/etc/localtime", O_RDONLY | O_CREAT, NULL), SYSFILES_REFUSED);
}

Test(sysfiles_table, dev_null_may_be_written)
{
        cr_expect_eq(try_open("/dev/null", O_WRONLY | O_CREAT | O_TRUNC, NULL), SYSFILES_OPENED);
        cr_expect_eq(try_open("/dev/null", O_RDWR, NULL), SYSFILES_OPENED);
        cr_expect_eq(try_open("/dev/null", O_WRONLY | O_EXCL, NULL), SYSFILES_REFUSED);
}

Test(sysfiles_table, other_paths_are_left_to_the_caller)
{
        cr_expect_eq(try_open("/etc/passwd", O_RDONLY, NULL), SYSFILES_NOT_OURS);
        cr_expect_eq(try_open("/dev/urandomX", O_RDONLY, NULL), SYSFILES_NOT_OURS);
        cr_expect_eq(try_open("/dev/null/x", O_RDONLY, NULL), SYSFILES_NOT_OURS);
        cr_expect_eq(try_open("/dev//urandom", O_RDONLY, NULL), SYSFILES_NOT_OURS);
        cr_expect_eq(try_open("dev/urandom", O_RDONLY, NULL), SYSFILES_NOT_OURS);
}

Test(sysfiles_table, below_a_directory_and_not_out_of_it)
{
        const char *why = NULL;

        if (access("/usr/share/zoneinfo/UTC", R_OK) == 0)
                cr_expect_eq(try_open("/usr/share/zoneinfo/UTC", O_RDONLY, NULL), SYSFILES_OPENED);
        cr_expect_eq(try_open("/usr/share/zoneinfo/../../../etc/passwd", O_RDONLY, &why),
                     SYSFILES_REFUSED);
        cr_expect(why && strstr(why, "leaves"), "%s", why ? why : "(none)");
        cr_expect_eq(try_open("/usr/share/zoneinfo/no-such-zone", O_RDONLY, NULL), -ENOENT);
        cr_expect_eq(try_open("/usr/share/zoneinfo/UTC", O_WRONLY, NULL), SYSFILES_REFUSED);
}

/* Debian links /usr/share/locale/locale.alias to /etc/locale.alias, which
 * the table names: the link is followed to it, and only to it. */
Test(sysfiles_table, a_symlink_to_another_system_file_is_followed)
{
        char target[PATH_MAX];
        ssize_t n = readlink("/usr/share/locale/locale.alias", target, sizeof(target) - 1);

        if (n <= 0)
                cr_skip_test("/usr/share/locale/locale.alias is no symlink here");
        target[n] = '\0';
        if (strcmp(target, "/etc/locale.alias") != 0 || access(target, R_OK) != 0)
                cr_skip_test("locale.alias points to %s", target);
        cr_expect_eq(try_open("/usr/share/locale/locale.alias", O_RDONLY, NULL), SYSFILES_OPENED);
}
