/*
 * A drop-in harness that carries its own code under names snapfuzz's
 * engine uses too (ownsyms_lib.c, another translation unit): a vendored
 * cJSON (cJSON_Parse, cJSON_Delete, cJSON_CreateObject, ...), libseccomp's
 * seccomp_init and libc's rand. Its copies must be what it calls (it
 * aborts otherwise, at the first input), and the engine must keep its own:
 * if the harness's cJSON or seccomp_init captured the engine's calls, the
 * engine could not read its own messages or build its sandbox, and no run
 * would get as far as the planted bug (a trap behind "ow").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ownsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        cJSON *j = cJSON_Parse("{}");
        if (!ownsyms_is_mine(j) || strcmp(cJSON_Version(), "dropin-own") != 0)
                abort();
        cJSON_Delete(j);
        if (rand() != 4242 || seccomp_init(0) != (void *)&ownsyms_marker)
                abort();
        if (size >= 2 && data[0] == 'o' && data[1] == 'w')
                __builtin_trap();
        return 0;
}
