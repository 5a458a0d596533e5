/*
 * The engine's public entry points (include/snapfuzz/engine.h): thin
 * wrappers that keep the internal modules' names out of the API.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/fsutil.h"

#include "engine/coordinator.h"
#include "engine/merge.h"
#include "engine/runinputs.h"
#include "engine/sync.h"
#include "snapfuzz/engine.h"
#include "worker/worker.h"

#include "snapfuzz/banned.h"

int engine_run(SfRunConfig *cfg)
{
        return coordinator_run(cfg);
}

void engine_target_builtin(const SfBuiltinTarget *t)
{
        WorkerBuiltin b = {0};
        if (t)
                b = (WorkerBuiltin){
                    .test = t->test,
                    .init = t->init,
                    .mutate = t->mutate,
                    .crossover = t->crossover,
                };
        worker_builtin_set(t ? &b : NULL);
}

int engine_merge(const SfMergeConfig *cfg, SfMergeResult *ret)
{
        return merge_run(cfg, ret);
}

int engine_run_inputs(const SfRunConfig *cfg, char *const *files, int n_files)
{
        return runinputs_run(cfg, files, n_files);
}

int engine_worker_main(int argc, char **argv)
{
        return worker_main(argc, argv);
}

bool engine_sync_name_valid(const char *name)
{
        return sync_name_valid(name);
}

/* crash.json is at most this large (its output and report are bounded). */
#define ENGINE_CRASH_JSON_MAX (16u << 20)

int engine_crash_field(const char *crash_dir, const char *field, char **ret)
{
        char path[4200];
        uint8_t *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof(path), "%s/crash.json", crash_dir);
        int r = fs_read_file(AT_FDCWD, path, ENGINE_CRASH_JSON_MAX, &text, &len);
        if (r < 0)
                return r;
        cJSON *j = cJSON_ParseWithLength((const char *)text, len);
        free(text);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, field);
        r = -ENOENT;
        if (cJSON_IsString(v) && v->valuestring) {
                *ret = strdup(v->valuestring);
                r = *ret ? 0 : -ENOMEM;
        }
        cJSON_Delete(j);
        return r;
}

bool engine_error_is_input(int r)
{
        switch (-r) {
        case EINVAL:       /* a bad value or a malformed file */
        case ENOENT:       /* a file or directory that is not there */
        case ENOTDIR:      /* a file where a directory was expected */
        case EISDIR:       /* the other way round */
        case ENOEXEC:      /* a target that cannot be loaded or initialized */
        case EBADMSG:      /* a corrupt record */
        case EACCES:       /* a path the user may not read or write */
        case EPERM:        /* likewise */
        case EROFS:        /* an output directory on a read-only file system */
        case ENAMETOOLONG: /* a path too long */
        case ELOOP:        /* a symbolic link loop */
        case EBUSY:        /* an output directory another campaign holds */
        case ESTALE:       /* a target file replaced or deleted during the run */
        case EFBIG:        /* an input file too long to run */
                return true;
        default:
                return false;
        }
}
