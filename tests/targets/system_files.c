/*
 * A test target that does, on every input, what common libraries do behind
 * a parser's back, and what the default sandbox lets a runner do (the
 * system files, sandbox/sysfiles.c):
 *
 *   - iconv_open("UTF-16LE", "ISO-8859-2") and a conversion: glibc reads
 *     its converter cache and maps the ISO-8859-2 module (libxml2 does this
 *     for an encoding declaration);
 *   - open("/dev/urandom", O_RDONLY) and a read (sqlite's randomness);
 *   - newlocale("C.UTF-8") and a read-only open of a compiled locale file;
 *   - a read of /etc/localtime and of /usr/share/zoneinfo/UTC;
 *   - /dev/null opened for writing (fopen "w") and for reading.
 *
 * LLVMFuzzerInitialize tries each in a child process, outside the sandbox
 * (and without loading anything into the worker, so that every runner does
 * it again): what works there must work under the sandbox, and a step
 * that fails in a runner aborts (a crash of kind `abrt` that names no
 * syscall), so a test sees a broken allowance as well as a refusal.
 *
 * Built with -DSYSTEM_FILES_REFUSED, the first byte of the input picks one
 * thing the sandbox must still refuse:
 *   'W'  open("/dev/urandom", O_WRONLY)
 *   'S'  open("/etc/passwd", O_RDONLY), a file outside the table
 *   'D'  open("/usr/lib/locale/../../../etc/passwd"), out of a directory
 *   'C'  open("/usr/share/zoneinfo/snapfuzz-test", O_WRONLY | O_CREAT)
 * and any other input does nothing.
 */
#include <fcntl.h>
#include <iconv.h>
#include <locale.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef SYSTEM_FILES_REFUSED

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int fd = -1;

        if (size == 0)
                return 0;
        switch (data[0]) {
        case 'W':
                fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
                break;
        case 'S':
                fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
                break;
        case 'D':
                fd = open("/usr/lib/locale/../../../etc/passwd", O_RDONLY | O_CLOEXEC);
                break;
        case 'C':
                fd =
                    open("/usr/share/zoneinfo/snapfuzz-test", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                break;
        }
        if (fd >= 0)
                close(fd);
        return 0;
}

#else

/* The locale files one of which exists where a C.UTF-8 locale is
 * installed. */
static const char *const locale_files[] = {
    "/usr/lib/locale/C.utf8/LC_CTYPE",
    "/usr/lib/locale/C.UTF-8/LC_CTYPE",
    "/usr/lib/locale/locale-archive",
};

typedef enum Step {
        STEP_ICONV,
        STEP_URANDOM,
        STEP_NEWLOCALE,
        STEP_LOCALE_FILE,
        STEP_LOCALTIME,
        STEP_ZONEINFO,
        STEP_DEVNULL,
        STEP_COUNT,
} Step;

/* Which steps worked outside the sandbox. */
static int works[STEP_COUNT];
static const char *locale_file;

static int read_some(const char *path)
{
        char buf[64];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        return n > 0 ? 0 : -1;
}

static int step_iconv(void)
{
        iconv_t cd = iconv_open("UTF-16LE", "ISO-8859-2");
        char in[] = "\xa1", out[8];
        char *ip = in, *op = out;
        size_t il = 1, ol = sizeof(out);
        int ok;

        if (cd == (iconv_t)-1)
                return -1;
        /* 0xa1 in ISO-8859-2 is U+0104, LATIN CAPITAL LETTER A WITH OGONEK. */
        ok = iconv(cd, &ip, &il, &op, &ol) == 0 && ol == sizeof(out) - 2 && out[0] == 0x04 &&
             out[1] == 0x01;
        iconv_close(cd);
        return ok ? 0 : -1;
}

static int step_newlocale(void)
{
        locale_t l = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);

        if (l == (locale_t)0)
                return -1;
        freelocale(l);
        return 0;
}

static int step_devnull(void)
{
        FILE *f = fopen("/dev/null", "w");
        char c;
        int fd, ok;

        if (!f)
                return -1;
        ok = fputs("discarded\n", f) >= 0;
        ok = fclose(f) == 0 && ok;
        fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ok = ok && read(fd, &c, 1) == 0;
        close(fd);
        return ok ? 0 : -1;
}

static int step_run(Step s)
{
        switch (s) {
        case STEP_ICONV:
                return step_iconv();
        case STEP_URANDOM:
                return read_some("/dev/urandom");
        case STEP_NEWLOCALE:
                return step_newlocale();
        case STEP_LOCALE_FILE:
                return locale_file ? read_some(locale_file) : -1;
        case STEP_LOCALTIME:
                return read_some("/etc/localtime");
        case STEP_ZONEINFO:
                return read_some("/usr/share/zoneinfo/UTC");
        case STEP_DEVNULL:
                return step_devnull();
        case STEP_COUNT:
                break;
        }
        return -1;
}

/* Runs step @s in a child: nothing it loads stays in this process. */
static int step_works_outside(Step s)
{
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return 0;
        if (pid == 0)
                _exit(step_run(s) == 0 ? 0 : 1);
        if (waitpid(pid, &status, 0) != pid)
                return 0;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        for (size_t i = 0; i < sizeof(locale_files) / sizeof(locale_files[0]); i++)
                if (access(locale_files[i], R_OK) == 0) {
                        locale_file = locale_files[i];
                        break;
                }
        for (int s = 0; s < STEP_COUNT; s++)
                works[s] = step_works_outside((Step)s);
        if (getenv("SYSTEM_FILES_VERBOSE"))
                for (int s = 0; s < STEP_COUNT; s++)
                        fprintf(stderr, "system_files: step %d %s outside the sandbox\n", s,
                                works[s] ? "works" : "does not work");
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        (void)data;
        (void)size;
        for (int s = 0; s < STEP_COUNT; s++)
                if (works[s] && step_run((Step)s) != 0) {
                        fprintf(stderr, "system_files: step %d failed under the sandbox\n", s);
                        abort();
                }
        return 0;
}

#endif
