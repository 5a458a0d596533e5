/*
 * The harness's own copies (tests/targets/ownsyms.c): a cJSON_Version and
 * a rand that answer differently from libcjson's and libc's.
 */
const char *cJSON_Version(void);
int rand(void);

const char *cJSON_Version(void)
{
        return "ownsyms-1";
}

int rand(void)
{
        return 4242;
}
