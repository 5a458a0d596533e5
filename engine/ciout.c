/*
 * Reads the crash store once (engine/crashreport.h) and writes each report
 * asked for with fs_write_atomic in the report's own directory. A report
 * is a function of the crash store alone, so rewriting it at any moment
 * gives the same file for the same store; nothing is kept between calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "engine/ciout.h"
#include "engine/crashreport.h"
#include "engine/junit.h"
#include "engine/sarif.h"

#include "snapfuzz/banned.h"

/* Splits @path into its directory (into @dir) and its last component. */
static const char *path_split(const char *path, char *dir, size_t cap)
{
        const char *slash = strrchr(path, '/');
        if (!slash) {
                snprintf(dir, cap, ".");
                return path;
        }
        size_t n = (size_t)(slash - path);
        snprintf(dir, cap, "%.*s", (int)(n ? n : 1), path);
        return slash + 1;
}

int ciout_check_path(const char *opt, const char *path, char *err, size_t errlen)
{
        char dir[PATH_MAX];
        struct stat st;
        const char *base = path_split(path, dir, sizeof(dir));
        if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
                snprintf(err, errlen, "%s needs a file name, not '%s'", opt, path);
                return -EISDIR;
        }
        if (strlen(path) >= PATH_MAX || strlen(base) >= FS_TMP_NAME_MAX - 64) {
                snprintf(err, errlen, "%s: the file name is too long", opt);
                return -ENAMETOOLONG;
        }
        if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%s %s: no directory %s to write it in (create it first)",
                         opt, path, dir);
                return -ENOENT;
        }
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%s %s is a directory; name a file", opt, path);
                return -EISDIR;
        }
        return 0;
}

static int write_report(const char *opt, const char *path, const char *text, size_t len, char *err,
                        size_t errlen)
{
        char dir[PATH_MAX];
        int r = ciout_check_path(opt, path, err, errlen);
        if (r < 0)
                return r;
        const char *base = path_split(path, dir, sizeof(dir));
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                r = -errno;
                snprintf(err, errlen, "cannot write %s: %s", path, strerror(-r));
                return r;
        }
        r = fs_write_atomic(dfd, base, text, len);
        close(dfd);
        if (r < 0)
                snprintf(err, errlen, "cannot write %s: %s", path, strerror(-r));
        return r;
}

int ciout_write(const CiOutConfig *cfg, CiOutResult *ret, char *err, size_t errlen)
{
        CrashReport *rep = NULL;
        char *text = NULL;
        size_t len;
        int r = crashreport_load(cfg->out_dir, cfg->source_root, cfg->quiet, &rep);
        if (r == -ENOENT)
                snprintf(err, errlen, "no output directory %s", cfg->out_dir);
        else if (r == -ENOTDIR)
                snprintf(err, errlen, "--source-root %s is not a directory",
                         cfg->source_root ? cfg->source_root : ".");
        else if (r < 0)
                snprintf(err, errlen, "cannot read %s/crashes: %s", cfg->out_dir, strerror(-r));
        if (r < 0)
                return r;
        if (cfg->sarif_path) {
                r = sarif_format(rep, &text, &len);
                if (r == 0)
                        r = write_report("--sarif", cfg->sarif_path, text, len, err, errlen);
                else
                        snprintf(err, errlen, "out of memory building the SARIF report");
                free(text);
                text = NULL;
        }
        if (r == 0 && cfg->junit_path) {
                r = junit_format(rep, &text, &len);
                if (r == 0)
                        r = write_report("--junit", cfg->junit_path, text, len, err, errlen);
                else
                        snprintf(err, errlen, "out of memory building the JUnit report");
                free(text);
        }
        if (r == 0 && ret)
                *ret = (CiOutResult){.crashes = rep->n, .skipped = rep->skipped};
        crashreport_free(rep);
        return r;
}
