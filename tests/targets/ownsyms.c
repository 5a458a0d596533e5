/*
 * A harness that carries its own code under names the snapfuzz executable
 * or its libraries also export (tests/targets/ownsyms_lib.c, another
 * translation unit, so its calls go through the GOT): its own copy of
 * cJSON_Version (snapfuzz links libcjson) and its own rand (a libc name).
 * It aborts when a call reaches anything but its own copy, so a run that
 * fuzzes the wrong code is a crash the test sees at the first input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *cJSON_Version(void);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (strcmp(cJSON_Version(), "ownsyms-1") != 0)
                abort();
        if (rand() != 4242)
                abort();
        if (size > 2 && data[0] == 'o' && data[1] == 'w')
                return 1;
        return 0;
}
