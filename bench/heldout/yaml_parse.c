/*
 * A libFuzzer harness for libyaml's event parser (bench/asan-quarantine.sh):
 * every event of the input, until the stream ends or an error.
 */
#include <stdint.h>
#include <stddef.h>
#include "yaml.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        yaml_parser_t p;
        yaml_event_t e;
        if (!yaml_parser_initialize(&p))
                return 0;
        yaml_parser_set_input_string(&p, data, size);
        for (;;) {
                if (!yaml_parser_parse(&p, &e))
                        break;
                int done = e.type == YAML_STREAM_END_EVENT;
                yaml_event_delete(&e);
                if (done)
                        break;
        }
        yaml_parser_delete(&p);
        return 0;
}
