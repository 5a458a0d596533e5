/*
 * A harness for gcc's SanitizerCoverage flavours (tests/test_instr.c):
 * built with gcc -fsanitize-coverage=trace-pc (gcc_tracepc), with
 * trace-pc,trace-cmp (gcc_tracecmp) and with none (gcc_nocov).
 *
 * An input "GCC!" (four nested byte tests: found in seconds with edge
 * feedback, about never without: 2^32 tries) then, in the trace-cmp build
 * (-DGCC_PLANTED_MAGIC), a 64-bit constant compared whole, which only
 * comparison feedback finds: "GCC!" followed by the eight bytes of
 * 0x5f4d4f4f4223c0de aborts. The trace-pc build aborts on "GCC!" alone. A
 * float and a double comparison make gcc's trace-cmp call
 * __sanitizer_cov_trace_cmpf and _cmpd, which clang has no counterpart of.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile float gcc_planted_f;
volatile double gcc_planted_d;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 0 && (float)data[0] > gcc_planted_f && (double)size < gcc_planted_d + 1e9)
                gcc_planted_f = 0;
        if (size < 4 || data[0] != 'G')
                return 0;
        if (data[1] != 'C')
                return 0;
        if (data[2] != 'C')
                return 0;
        if (data[3] != '!')
                return 0;
#ifdef GCC_PLANTED_MAGIC
        uint64_t v;
        if (size < 12)
                return 0;
        memcpy(&v, data + 4, 8);
        if (v != UINT64_C(0x5f4d4f4f4223c0de))
                return 0;
#endif
        abort();
}
