/*
 * Kinds, in order of precedence: what the worker itself did (timeout, oom),
 * what the runner reported on purpose (overwrite-input), then the signal
 * that ended the runner, then its exit status. A SIGKILL the worker did not
 * send is `killed`: someone else (the kernel's OOM killer, a person, the
 * target itself) ended the runner, and the input is still recovered.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/msg.h"
#include "recovery/classify.h"

#include "snapfuzz/banned.h"

static const char *const known_kinds[] = {
    "segv",
    "bus",
    "fpe",
    "ill",
    "abort",
    "trap",
    "timeout",
    "oom",
    "stack-overflow",
    "exit",
    "killed",
    "sandbox",
    "signal",
    "overwrite-input",
    "file-size",
    "leak",
    "asan",
    "ubsan",
    "msan",
    "null-deref",
    NULL,
};

bool classify_kind_is_known(const char *kind)
{
        for (int i = 0; known_kinds[i]; i++)
                if (strcmp(known_kinds[i], kind) == 0)
                        return true;
        return false;
}

static bool has_prefix(const char *s, const char *p)
{
        return strncmp(s, p, strlen(p)) == 0;
}

bool classify_frame_is_runtime(const cJSON *frame)
{
        const char *module = msg_str(frame, "module", "");
        if (!*module)
                return false;
        return strcmp(module, "snapfuzz") == 0 || has_prefix(module, "libc.so") ||
               has_prefix(module, "libc-") || has_prefix(module, "libpthread") ||
               has_prefix(module, "ld-linux") || has_prefix(module, "libgcc_s") ||
               has_prefix(module, "libclang_rt.") || has_prefix(module, "libasan") ||
               has_prefix(module, "libubsan") || has_prefix(module, "libstdc++") ||
               has_prefix(module, "linux-vdso") || has_prefix(module, "libsnapfuzz-malloc");
}

/* Appends "|part" to a signature. */
static void sig_add(char *buf, size_t cap, const char *part)
{
        size_t n = strlen(buf);
        if (n < cap)
                snprintf(buf + n, cap - n, "|%s", part);
}

/* "module!function" for a frame the symbolizer named, or "module+0xoffset"
 * without one; the top frame adds its line ("module!function:42") when
 * debug info has it, so two crashes in one function are told apart while
 * callers' edits do not change the id. dladdr's "symbol" is never used:
 * it knows exported symbols only and names a static function after the
 * exported one before it, so without a symbolizer (recovery/symbolize.h)
 * a signature is module+offset throughout rather than a mix that reads
 * like names but means addresses. */
static void frame_name(const cJSON *f, bool top, char *buf, size_t cap)
{
        const char *module = msg_str(f, "module", "?");
        const char *symbol = msg_str(f, "function", NULL);
        int64_t line = msg_int(f, "line", 0);
        if (symbol && top && line > 0)
                snprintf(buf, cap, "%s!%s:%lld", module, symbol, (long long)line);
        else if (symbol)
                snprintf(buf, cap, "%s!%s", module, symbol);
        else
                snprintf(buf, cap, "%s+%s", module, msg_str(f, "offset", msg_str(f, "pc", "?")));
}

static const char *kind_of_signal(int sig)
{
        switch (sig) {
        case SIGSEGV:
                return "segv";
        case SIGBUS:
                return "bus";
        case SIGFPE:
                return "fpe";
        case SIGILL:
                return "ill";
        case SIGABRT:
                return "abort";
        case SIGTRAP:
                return "trap";
        case SIGSYS:
                return "sandbox";
        case SIGKILL:
                return "killed";
        case SIGXFSZ:
                return "file-size";
        default:
                return "signal";
        }
}

/* Copies the first line of @s into @buf, without the "==pid==" prefix. */
static void first_line(const char *s, char *buf, size_t cap)
{
        if (s[0] == '=' && s[1] == '=') {
                const char *e = strstr(s + 2, "==");
                if (e && e - s < 32)
                        s = e + 2;
        }
        size_t n = strcspn(s, "\n");
        if (n >= cap)
                n = cap - 1;
        memcpy(buf, s, n);
        buf[n] = 0;
}

/* Whether a sanitizer's "SEGV on unknown address 0x..." names an address
 * in the zero page: a null pointer (plus a small offset) dereferenced. */
static bool report_null_page(const char *what)
{
        const char *p = strstr(what, "address 0x");
        if (!p)
                return false;
        char *end;
        unsigned long long a = strtoull(p + strlen("address 0x"), &end, 16);
        return end != p + strlen("address 0x") && a < 0x1000;
}

/* Reads a sanitizer's report: the kind, a message, and the bug type that
 * goes into the signature ("heap-buffer-overflow"). A SEGV report (the
 * sanitizer's fault handler, on in confirmations: core/sanitizer.h) on the
 * zero page is kind null-deref. Returns false when the report is not one
 * it knows. */
static bool classify_report(const char *report, Classification *ret, char *type, size_t cap)
{
        char line[512];
        first_line(report, line, sizeof(line));
        const char *p;
        type[0] = 0;
        if ((p = strstr(line, "ERROR: UndefinedBehaviorSanitizer: "))) {
                /* UBSan's fault handler: "SEGV on unknown address ...". */
                p += strlen("ERROR: UndefinedBehaviorSanitizer: ");
                size_t n = strcspn(p, " :");
                snprintf(type, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
                bool null = strcmp(type, "SEGV") == 0 && report_null_page(p);
                snprintf(ret->kind, sizeof(ret->kind), "%s", null ? "null-deref" : "ubsan");
                snprintf(ret->message, sizeof(ret->message), "UndefinedBehaviorSanitizer: %s", p);
                return true;
        }
        if ((p = strstr(line, "ERROR: AddressSanitizer: "))) {
                p += strlen("ERROR: AddressSanitizer: ");
                size_t n = strcspn(p, " :");
                snprintf(type, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
                const char *kind = "asan";
                if (strcmp(type, "stack-overflow") == 0)
                        kind = "stack-overflow";
                else if (strcmp(type, "SEGV") == 0 && report_null_page(p))
                        kind = "null-deref";
                else if (strstr(line, "allocation-size-too-big") ||
                         strstr(line, "requested allocation size") ||
                         strstr(line, "out of memory") || strstr(line, "out-of-memory"))
                        kind = "oom";
                snprintf(ret->kind, sizeof(ret->kind), "%s", kind);
                snprintf(ret->message, sizeof(ret->message), "AddressSanitizer: %s", p);
                return true;
        }
        if ((p = strstr(line, "ERROR: snapfuzz: malloc-limit: "))) {
                snprintf(ret->kind, sizeof(ret->kind), "oom");
                snprintf(type, cap, "malloc-limit");
                snprintf(ret->message, sizeof(ret->message), "malloc limit: %s",
                         p + strlen("ERROR: snapfuzz: malloc-limit: "));
                return true;
        }
        if ((p = strstr(line, "ERROR: LeakSanitizer: "))) {
                /* The kind says it all: no bug type in the signature. */
                snprintf(ret->kind, sizeof(ret->kind), "leak");
                snprintf(ret->message, sizeof(ret->message), "LeakSanitizer: %s",
                         p + strlen("ERROR: LeakSanitizer: "));
                return true;
        }
        if ((p = strstr(line, "ERROR: MemorySanitizer: "))) {
                p += strlen("ERROR: MemorySanitizer: ");
                size_t n = strcspn(p, " :");
                snprintf(type, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
                snprintf(ret->kind, sizeof(ret->kind), "msan");
                snprintf(ret->message, sizeof(ret->message), "MemorySanitizer: %s", p);
                return true;
        }
        if ((p = strstr(line, "runtime error: "))) {
                const char *what = p + strlen("runtime error: ");
                /* The type is the error's wording up to the first operand
                 * ("signed integer overflow", "load of misaligned address"). */
                size_t n = strcspn(what, ":0123456789'");
                while (n > 0 && what[n - 1] == ' ')
                        n--;
                snprintf(type, cap, "%.*s", (int)(n < cap ? n : cap - 1), what);
                snprintf(ret->kind, sizeof(ret->kind), "ubsan");
                snprintf(ret->message, sizeof(ret->message), "UndefinedBehaviorSanitizer: %s",
                         line);
                return true;
        }
        return false;
}

/* What a sandbox refusal's class says (sandbox_describe_refusal): the path
 * an open named, and the policy file rule that would allow it. "" when the
 * death has none. */
static void refusal_text(const cJSON *refusal, char *buf, size_t cap)
{
        const cJSON *rule = cJSON_GetObjectItemCaseSensitive(refusal, "rule");
        const char *path = msg_str(refusal, "path", NULL);
        char *text = rule ? cJSON_PrintUnformatted(rule) : NULL;
        char where[160] = "";

        buf[0] = '\0';
        if (!refusal)
                return;
        if (path)
                snprintf(where, sizeof(where), " on \"%.128s\"", path);
        if (text)
                snprintf(buf, cap, "%s; a policy file allows it with {\"allow\": [%.256s]}", where,
                         text);
        else
                snprintf(buf, cap, "%s; no policy file can allow it", where);
        cJSON_free(text);
}

/* Kind and message of a death by signal @sig (the death area @death may
 * say more: a stack overflow, the blocked syscall). */
static void classify_signal(int sig, const cJSON *death, const char *addr, Classification *ret)
{
        const char *kind = kind_of_signal(sig);
        if (sig == SIGSEGV && death && msg_bool(death, "stack_overflow", 0))
                kind = "stack-overflow";
        snprintf(ret->kind, sizeof(ret->kind), "%s", kind);
        const char *abbrev = sigabbrev_np(sig);
        if (sig == SIGSYS && death && cJSON_GetObjectItemCaseSensitive(death, "syscall")) {
                char allow[384];
                refusal_text(cJSON_GetObjectItemCaseSensitive(death, "refusal"), allow,
                             sizeof(allow));
                snprintf(ret->message, sizeof(ret->message),
                         "the sandbox blocked syscall %s (%s)%s",
                         msg_str(death, "syscall_name", "?"),
                         msg_str(death, "syscall_group", "not allowed"), allow);
        } else if (sig == SIGSYS) {
                snprintf(ret->message, sizeof(ret->message),
                         "the sandbox blocked a syscall; the target had SIGSYS "
                         "blocked, so the syscall could not be named");
        } else if (sig == SIGSEGV || sig == SIGBUS) {
                snprintf(ret->message, sizeof(ret->message), "SIG%s on address %s%s",
                         abbrev ? abbrev : "?", addr,
                         strcmp(kind, "stack-overflow") == 0 ? " (stack overflow)" : "");
        } else if (sig == SIGKILL) {
                snprintf(ret->message, sizeof(ret->message),
                         "the runner was killed by SIGKILL from outside snapfuzz "
                         "(the OOM killer, a person, or the target itself)");
        } else {
                snprintf(ret->message, sizeof(ret->message), "the target died by SIG%s",
                         abbrev ? abbrev : "?");
        }
}

/* Kind and message of a death the worker named (timeout, oom) or the
 * runner's death area did (leaks, a write into the input); false when it
 * is neither. */
static bool classify_named(const cJSON *died, const char *reason, int death_reason,
                           Classification *ret)
{
        const char *kind, *message;
        if (strcmp(reason, "timeout") == 0) {
                kind = "timeout";
                message = "the target ran longer than the timeout on one input";
        } else if (strcmp(reason, "oom") == 0) {
                kind = "oom";
                message = "the target's resident memory went over the RSS limit";
        } else if (death_reason == 5 /* RECORD_DEATH_LEAK_SUSPECT */) {
                /* Not a crash yet: the recovery helper confirms it with
                 * LeakSanitizer, or dismisses it. */
                kind = "leak-suspect";
                message = "an input allocated more memory than it freed, twice in a row";
        } else if (death_reason == 4 /* RECORD_DEATH_LEAK */) {
                kind = "leak";
                message = "LeakSanitizer found unreachable memory after the input ran";
        } else if (death_reason == 3 /* RECORD_DEATH_OVERWRITE */) {
                kind = "overwrite-input";
                message = "the target wrote into its const input buffer";
        } else {
                return false;
        }
        snprintf(ret->kind, sizeof(ret->kind), "%s", kind);
        int n = snprintf(ret->message, sizeof(ret->message), "%s", message);
        /* What the worker saw of an oom (worker.c, worker_add_rss). */
        if (strcmp(kind, "oom") == 0 && cJSON_GetObjectItemCaseSensitive(died, "rss_mb"))
                snprintf(ret->message + n, sizeof(ret->message) - (size_t)n,
                         ": %lld MB seen, limit %lld MB%s", (long long)msg_int(died, "rss_mb", 0),
                         (long long)msg_int(died, "rss_limit_mb", 0),
                         msg_bool(died, "after_timeout", 0)
                             ? "; it got there after the timeout: a memory blow-up, not a hang"
                             : "");
        return true;
}

/* The signature: kind, then the top frames that belong to the target. The
 * syscall name takes the place of frames for sandbox crashes whose stacks
 * are all runtime (a raw syscall in libc). Then the id, its hash. */
static void classify_sign(const cJSON *death, const char *san_type, int exit_code,
                          Classification *ret)
{
        snprintf(ret->signature, sizeof(ret->signature), "%s", ret->kind);
        if (strcmp(ret->kind, "sandbox") == 0 && death)
                sig_add(ret->signature, sizeof(ret->signature),
                        msg_str(death, "syscall_name", "?"));
        if (san_type[0])
                sig_add(ret->signature, sizeof(ret->signature), san_type);
        if (strcmp(ret->kind, "exit") == 0) {
                char code[32];
                snprintf(code, sizeof(code), "status %d", exit_code);
                sig_add(ret->signature, sizeof(ret->signature), code);
        }
        const cJSON *frames = death ? cJSON_GetObjectItemCaseSensitive(death, "frames") : NULL;
        int taken = 0;
        const cJSON *f;
        cJSON_ArrayForEach(f, frames)
        {
                if (taken == CLASSIFY_TOP_FRAMES)
                        break;
                if (classify_frame_is_runtime(f) || !cJSON_GetObjectItemCaseSensitive(f, "module"))
                        continue;
                char name[256];
                frame_name(f, taken == 0, name, sizeof(name));
                sig_add(ret->signature, sizeof(ret->signature), name);
                taken++;
        }
        uint64_t h = hash64(ret->signature, strlen(ret->signature), UINT64_C(0x736e6170));
        snprintf(ret->id, sizeof(ret->id), "%016llx", (unsigned long long)h);
}

void classify_death(const cJSON *died, Classification *ret)
{
        const char *reason = msg_str(died, "reason", "crash");
        const cJSON *death = cJSON_GetObjectItemCaseSensitive(died, "death");
        int sig = (int)msg_int(died, "signal", 0);
        int exit_code = (int)msg_int(died, "exit_code", -1);
        int death_reason = death ? (int)msg_int(death, "reason", 0) : 0;
        const char *addr = death ? msg_str(death, "addr", "0x0") : "0x0";

        memset(ret, 0, sizeof(*ret));
        ret->is_crash = strcmp(reason, "stopped") != 0;
        const char *report = msg_str(died, "sanitizer_report", NULL);
        char san_type[64] = "";

        /* The sanitizer's report, when there is one, says what went wrong
         * (the signal is only how it ended the process); else a death the
         * worker or the runner named; else the signal or the exit. */
        bool said = strcmp(reason, "crash") == 0 && report &&
                    classify_report(report, ret, san_type, sizeof(san_type));
        if (!said)
                said = classify_named(died, reason, death_reason, ret);
        if (said) {
                /* Kind and message are set. */
        } else if (sig) {
                classify_signal(sig, death, addr, ret);
        } else {
                snprintf(ret->kind, sizeof(ret->kind), "exit");
                snprintf(ret->message, sizeof(ret->message),
                         "the target called exit(%d) instead of returning", exit_code);
        }
        snprintf(ret->bug_type, sizeof(ret->bug_type), "%s", san_type);
        classify_sign(death, san_type, exit_code, ret);
}
