/*
 * Atomic files: what is written is what is read back, a rewrite replaces
 * the old content whole, and no temporary file is ever left behind.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/hash.h"

static int count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.' || strncmp(de->d_name, FS_TMP_PREFIX, 5) == 0)
                        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n;
}

Test(fsutil, atomic_write_reads_back_and_leaves_no_temporary)
{
        char dir[] = "/tmp/sf-fsutil-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        int dfd = open(dir, O_RDONLY | O_DIRECTORY);
        cr_assert_geq(dfd, 0);

        uint8_t big[100000];
        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (uint8_t)(i * 7);
        cr_assert_eq(fs_write_atomic(dfd, "f", big, sizeof(big)), 0);
        cr_assert_eq(fs_write_atomic(dfd, "f", "short", 5), 0);
        uint8_t *got;
        size_t len;
        cr_assert_eq(fs_read_file(dfd, "f", 1 << 20, &got, &len), 0);
        cr_expect_eq(len, 5);
        cr_expect_arr_eq(got, "short", 5);
        cr_expect_eq(count_entries(dir), 1, "only the final file exists");
        free(got);
        cr_expect_eq(fs_write_atomic(dfd, "a/b", "x", 1), -EINVAL);
        close(dfd);
}

Test(fsutil, sweep_removes_leftover_temporaries_only)
{
        char dir[] = "/tmp/sf-fsutil-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        int dfd = open(dir, O_RDONLY | O_DIRECTORY);
        int fd = openat(dfd, FS_TMP_PREFIX "stats.json.123.0", O_CREAT | O_WRONLY, 0644);
        cr_assert_geq(fd, 0);
        close(fd);
        cr_assert_eq(fs_write_atomic(dfd, "keep", "k", 1), 0);
        fs_sweep_tmp(dfd);
        cr_expect_eq(count_entries(dir), 1);
        cr_expect_eq(faccessat(dfd, "keep", F_OK, 0), 0);
        close(dfd);
}

Test(fsutil, read_refuses_oversized_and_missing_files)
{
        uint8_t *buf;
        size_t len;
        cr_expect_eq(fs_read_file(AT_FDCWD, "/nonexistent/file", 10, &buf, &len), -ENOENT);
        cr_expect_eq(fs_read_file(AT_FDCWD, "/etc/passwd", 1, &buf, &len), -EFBIG);
        cr_expect_eq(fs_read_file(AT_FDCWD, "/tmp", 10, &buf, &len), -EISDIR);
}

/* A FIFO where crash.json belongs (someone else's crash directory): refused
 * at once, where opening it to read would wait for a writer forever. */
Test(fsutil, read_refuses_a_fifo_without_waiting_for_a_writer, .timeout = 10)
{
        char dir[] = "/tmp/sf-fifo-XXXXXX", path[64];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/crash.json", dir);
        cr_assert_eq(mkfifo(path, 0600), 0);
        uint8_t *buf;
        size_t len;
        cr_expect_eq(fs_read_file(AT_FDCWD, path, 1 << 20, &buf, &len), -EINVAL);
        unlink(path);
        rmdir(dir);
}

Test(fsutil, mkdir_p_creates_nested_directories)
{
        char dir[] = "/tmp/sf-fsutil-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        char path[256];
        snprintf(path, sizeof(path), "%s/a/b/c", dir);
        cr_assert_eq(fs_mkdir_p(path, 0755), 0);
        struct stat st;
        cr_expect_eq(stat(path, &st), 0);
        cr_expect(S_ISDIR(st.st_mode));
        cr_expect_eq(fs_mkdir_p("/etc/passwd/x", 0755), -ENOTDIR);
}

Test(hash, sha1_matches_known_answers)
{
        char hex[SHA1_HEX_LEN];
        sha1_hex("", 0, hex);
        cr_expect_str_eq(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        sha1_hex("abc", 3, hex);
        cr_expect_str_eq(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
        const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        sha1_hex(m, strlen(m), hex);
        cr_expect_str_eq(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

Test(hash, hash64_is_stable_and_sensitive)
{
        cr_expect_eq(hash64("snapfuzz", 8, 0), hash64("snapfuzz", 8, 0));
        cr_expect_neq(hash64("snapfuzz", 8, 0), hash64("snapfuzy", 8, 0));
        cr_expect_neq(hash64("snapfuzz", 8, 0), hash64("snapfuzz", 8, 1));
        cr_expect_neq(hash64("", 0, 0), hash64("\0", 1, 0));
}
