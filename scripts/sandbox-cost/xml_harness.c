/*
 * A real parser for the sandbox cost benchmark (scripts/sandbox-cost.sh):
 * libxml2 from the system, parsing each input from memory. Only this
 * harness is instrumented (-fsanitize=fuzzer-no-link); libxml2 itself is
 * the distribution's uninstrumented shared library, so coverage comes from
 * the harness alone and the fuzzer mostly measures libxml2's parsing
 * speed, which is the point here.
 */
#include <libxml/parser.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *ctx, const char *msg, ...)
{
        (void)ctx;
        (void)msg;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        xmlInitParser();
        xmlSetGenericErrorFunc(NULL, quiet);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        xmlDocPtr doc;

        if (size > 1 << 20)
                return -1;
        doc = xmlReadMemory((const char *)data, (int)size, "input.xml", NULL,
                            XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR);
        if (doc) {
                (void)xmlDocGetRootElement(doc);
                xmlFreeDoc(doc);
        }
        return 0;
}
