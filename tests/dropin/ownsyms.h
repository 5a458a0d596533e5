/* The harness's own copies (tests/dropin/ownsyms_lib.c): not cJSON, not
 * libseccomp, not libc, only their names. */
#pragma once

typedef struct cJSON {
        int mine;
} cJSON;

extern int ownsyms_marker;
int ownsyms_is_mine(const cJSON *j);
cJSON *cJSON_Parse(const char *value);
cJSON *cJSON_CreateObject(void);
cJSON *cJSON_AddStringToObject(cJSON *object, const char *name, const char *string);
char *cJSON_PrintUnformatted(const cJSON *item);
void cJSON_Delete(cJSON *item);
const char *cJSON_Version(void);
void *seccomp_init(unsigned int def_action);
int rand(void);
