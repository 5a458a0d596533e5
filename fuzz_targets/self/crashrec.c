/*
 * Self-fuzzing harness: reading a stored crash's crash.json
 * (core/crashstore.c, crashstore_report_parse), as `reproduce`, `minimize`
 * and `crashes` do, and the fields they then read from it. The file sits
 * in an output directory anyone may have copied, edited or truncated.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/crashstore.h"
#include "core/msg.h"
#include "recovery/classify.h"

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        cJSON *report = NULL;
        char err[512];

        err[0] = '\0';
        int r = crashstore_report_parse("OUT/crashes/x/crash.json", (const char *)data, size,
                                        &report, err, sizeof(err));
        if (r < 0) {
                /* A refused file is refused with a reason. */
                if (r != CRASHSTORE_ERR_CORRUPT || err[0] == '\0')
                        abort();
                return 0;
        }
        /* What `crashes` and `reproduce` read from an accepted report. */
        const char *kind = msg_str(report, "kind", NULL);
        if (!kind || !msg_str(report, "target", NULL))
                abort();
        (void)classify_kind_is_known(kind);
        const char *id = msg_str(report, "id", "");
        (void)crashstore_id_valid(id);
        (void)msg_int(report, "input_len", -1);
        (void)msg_int(report, "count", 1);
        (void)msg_int(report, "minimized_len", -1);
        (void)msg_bool(report, "reproduced", 0);
        (void)msg_str(report, "signature", "");
        cJSON_Delete(report);
        return 0;
}
