#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

#include "app/cliopt.h"
#include "core/log.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

int cliopt_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        errno = 0;
        if (!*s || *s == '-')
                goto bad;
        v = strtoull(s, &end, 10);
        if (errno || *end || v < min || v > max)
                goto bad;
        *ret = v;
        return 0;
bad:
        if (min == 0 && max == UINT64_MAX)
                log_error("%s takes a whole number, not '%s'", opt, s);
        else
                log_error("%s takes a whole number from %llu to %llu, not '%s'", opt,
                          (unsigned long long)min, (unsigned long long)max, s);
        return -EINVAL;
}

int cliopt_seconds(const char *opt, const char *s, double min, double max, double *ret)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || !*s || *end || !(v >= min && v <= max)) {
                log_error("%s takes a number of seconds from %g to %g, not '%s'", opt, min, max, s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int cliopt_bad(int c, char **argv)
{
        if (c == ':')
                log_error("%s needs a value; see snapfuzz --help", argv[optind - 1]);
        else
                log_error("unknown option %s; see snapfuzz --help", argv[optind - 1]);
        return SF_EXIT_USAGE;
}
