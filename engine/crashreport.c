/*
 * Reads the crash store back for machine-readable reports. Invariants:
 * every string an entry holds is valid UTF-8 without control characters
 * (core/termsafe.h made it so) and bounded (TERMSAFE_MAX bytes of the
 * original), so a writer may put it in JSON or XML after the format's own
 * escaping; a file path is kept only when it needed no escaping at all; an
 * entry is either complete or skipped (one line saying why), never half
 * read. The rule of a crash depends on its kind and, for sanitizer
 * reports, on the bug type classify put second in its signature
 * (recovery/classify.c), so the rules follow the kinds classify knows.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "engine/crashreport.h"
#include "recovery/classify.h"

#include "snapfuzz/banned.h"

/* A crash.json larger than this is not one snapfuzz wrote. */
#define CRASHREPORT_MAX_JSON (16u << 20)
/* Faults below this address are null-pointer dereferences (the zero page). */
#define CRASHREPORT_NULL_PAGE 0x1000ull

#define MEMORY_HELP                                                                                \
        "Replay the crash with the command in the result's message (snapfuzz reproduce ID --out "  \
        "OUT) and read the stack: the top frame in your code is where the access happened. Fix "   \
        "the bounds or lifetime check there, then run snapfuzz reproduce with --target "           \
        "./fixed.so to confirm that the input no longer crashes."
#define GENERIC_HELP                                                                               \
        "Replay the crash with the command in the result's message (snapfuzz reproduce ID --out "  \
        "OUT), which prints the kind, the stack and the input; the minimized input (crashes/ID/"   \
        "minimized) is the shortest one that still crashes the same way."

const CrashRule crashreport_rules[] = {
    {"heap-buffer-overflow", "HeapBufferOverflow", "Heap buffer overflow.",
     "AddressSanitizer saw a read or write outside the bounds of a heap allocation.", MEMORY_HELP,
     "error", "9.0"},
    {"heap-use-after-free", "HeapUseAfterFree", "Use of heap memory after it was freed.",
     "AddressSanitizer saw an access to heap memory that had already been freed.", MEMORY_HELP,
     "error", "9.0"},
    {"double-free", "DoubleFree", "Memory freed twice.",
     "AddressSanitizer saw free() called on memory that was already freed.", MEMORY_HELP, "error",
     "8.0"},
    {"bad-free", "BadFree", "Free of memory that was not allocated.",
     "AddressSanitizer saw free() called on an address that malloc() did not return.", MEMORY_HELP,
     "error", "8.0"},
    {"stack-buffer-overflow", "StackBufferOverflow", "Stack buffer overflow.",
     "AddressSanitizer saw an access outside the bounds of a local variable.", MEMORY_HELP, "error",
     "9.0"},
    {"stack-buffer-underflow", "StackBufferUnderflow", "Stack buffer underflow.",
     "AddressSanitizer saw an access before the start of a local variable.", MEMORY_HELP, "error",
     "9.0"},
    {"dynamic-stack-buffer-overflow", "DynamicStackBufferOverflow",
     "Overflow of a variable-length stack buffer.",
     "AddressSanitizer saw an access outside a variable-length array or alloca() buffer.",
     MEMORY_HELP, "error", "9.0"},
    {"global-buffer-overflow", "GlobalBufferOverflow", "Global buffer overflow.",
     "AddressSanitizer saw an access outside the bounds of a global variable.", MEMORY_HELP,
     "error", "9.0"},
    {"stack-use-after-return", "StackUseAfterReturn", "Use of a stack variable after return.",
     "AddressSanitizer saw an access to a local variable of a function that had returned.",
     MEMORY_HELP, "error", "8.0"},
    {"stack-use-after-scope", "StackUseAfterScope", "Use of a stack variable out of scope.",
     "AddressSanitizer saw an access to a local variable after its scope ended.", MEMORY_HELP,
     "error", "8.0"},
    {"container-overflow", "ContainerOverflow", "Container overflow.",
     "AddressSanitizer saw an access past the used part of an annotated container.", MEMORY_HELP,
     "error", "8.0"},
    {"use-after-poison", "UseAfterPoison", "Use of poisoned memory.",
     "AddressSanitizer saw an access to memory the program had marked as unusable.", MEMORY_HELP,
     "error", "8.0"},
    {"alloc-dealloc-mismatch", "AllocDeallocMismatch", "Mismatched allocation and release.",
     "AddressSanitizer saw memory released with a function that does not match the one that "
     "allocated it (malloc and delete, new[] and delete).",
     MEMORY_HELP, "error", "6.0"},
    {"memcpy-param-overlap", "MemcpyParamOverlap", "Overlapping memcpy arguments.",
     "AddressSanitizer saw memcpy (or a relative) called with overlapping source and "
     "destination.",
     MEMORY_HELP, "error", "5.0"},
    {"negative-size-param", "NegativeSizeParam", "Negative size argument.",
     "AddressSanitizer saw a memory function called with a negative size.", MEMORY_HELP, "error",
     "7.0"},
    {"null-deref", "NullDereference", "Null pointer dereference.",
     "The target read or wrote memory in the zero page: a pointer that was NULL (or NULL plus a "
     "small offset) was dereferenced.",
     MEMORY_HELP, "error", "5.0"},
    {"segv", "SegmentationFault", "Invalid memory access (SIGSEGV).",
     "The target accessed an address that is not mapped, or mapped without the access it "
     "tried: a wild or dangling pointer.",
     MEMORY_HELP, "error", "8.0"},
    {"asan", "AddressSanitizerError", "Memory error found by AddressSanitizer.",
     "AddressSanitizer reported a memory error of a type this version of snapfuzz has no "
     "rule of its own for; the message names it.",
     MEMORY_HELP, "error", "8.0"},
    {"use-of-uninitialized-value", "UseOfUninitializedValue", "Use of uninitialized memory.",
     "MemorySanitizer saw a branch, a system call or an address depend on memory that was "
     "never written.",
     MEMORY_HELP, "error", "7.0"},
    {"signed-integer-overflow", "SignedIntegerOverflow", "Signed integer overflow.",
     "UndefinedBehaviorSanitizer saw an arithmetic operation on signed integers overflow, "
     "which is undefined behavior in C and C++.",
     GENERIC_HELP, "error", "5.0"},
    {"division-by-zero", "DivisionByZero", "Division by zero.",
     "UndefinedBehaviorSanitizer saw an integer division or remainder by zero.", GENERIC_HELP,
     "error", "5.0"},
    {"shift-out-of-bounds", "ShiftOutOfBounds", "Shift out of bounds.",
     "UndefinedBehaviorSanitizer saw a shift by a negative amount or by at least the width of "
     "the type, or a shift of a negative value.",
     GENERIC_HELP, "error", "4.0"},
    {"misaligned-access", "MisalignedAccess", "Misaligned memory access.",
     "UndefinedBehaviorSanitizer saw a load, store or member access through a pointer not "
     "aligned for its type.",
     GENERIC_HELP, "error", "4.0"},
    {"index-out-of-bounds", "IndexOutOfBounds", "Array index out of bounds.",
     "UndefinedBehaviorSanitizer saw an array indexed outside its declared bounds.", MEMORY_HELP,
     "error", "8.0"},
    {"undefined-behavior", "UndefinedBehavior", "Undefined behavior.",
     "UndefinedBehaviorSanitizer reported undefined behavior of a type this version of "
     "snapfuzz has no rule of its own for; the message names it.",
     GENERIC_HELP, "error", "5.0"},
    {"stack-overflow", "StackOverflow", "Stack overflow.",
     "The target's stack grew past its limit: unbounded or too deep recursion on this input.",
     "Replay the crash (snapfuzz reproduce ID --out OUT): the stack shows the recursion. Bound "
     "the nesting depth the parser accepts, or make the recursion iterative.",
     "error", "6.0"},
    {"timeout", "Timeout", "The input made the target hang.",
     "One input ran longer than the timeout (--timeout): an infinite loop, or work that grows "
     "far faster than the input.",
     "Replay it with snapfuzz reproduce ID --out OUT; the stack is where the runner was "
     "stopped, usually inside the loop. A longer --timeout tells a slow input from a hang.",
     "warning", "4.0"},
    {"oom", "OutOfMemory", "The input made the target run out of memory.",
     "The target's resident memory went over --rss-limit-mb, or one allocation asked for "
     "more than --malloc-limit-mb: an allocation sized by the input without a bound.",
     "Replay it with snapfuzz reproduce ID --out OUT; bound the sizes the input can ask for "
     "before allocating.",
     "warning", "4.0"},
    {"leak", "MemoryLeak", "Memory leak.",
     "LeakSanitizer found memory that is no longer reachable after the input ran; the stack is "
     "where it was allocated.",
     "Free the allocation on every path out of the function that made it; snapfuzz reproduce "
     "ID --out OUT replays the leak.",
     "warning", "3.0"},
    {"sandbox-violation", "SandboxViolation", "The target made a system call the sandbox blocks.",
     "snapfuzz runs the target under a seccomp allowlist; this input made it call a system "
     "call outside it (the message names the call), such as execve, fork, or opening a file "
     "outside what the sandbox allows: a parser that should only compute did something else.",
     "Find why the target makes this call on this input (the stack shows where). If the call "
     "is legitimate, allow it with a --sandbox-policy file (the message says which rule).",
     "error", "7.0"},
    {"abort", "Abort", "The target aborted.",
     "The target called abort(): a failed assert(), or the C library found its heap "
     "corrupted (a double free, a write past an allocation).",
     GENERIC_HELP, "error", "5.0"},
    {"bus", "BusError", "Bus error (SIGBUS).",
     "The target accessed memory that cannot be backed: a mapped file beyond its end, or a "
     "misaligned access where the hardware forbids it.",
     MEMORY_HELP, "error", "6.0"},
    {"fpe", "ArithmeticError", "Arithmetic error (SIGFPE).",
     "The target raised SIGFPE: an integer division by zero or an overflowing division.",
     GENERIC_HELP, "error", "4.0"},
    {"ill", "IllegalInstruction", "Illegal instruction (SIGILL).",
     "The target executed an illegal instruction: a trap the compiler inserted for undefined "
     "behavior (__builtin_trap, unreachable code reached), or a jump to data.",
     GENERIC_HELP, "error", "6.0"},
    {"trap", "Trap", "Trap (SIGTRAP).", "The target stopped on a breakpoint or trap instruction.",
     GENERIC_HELP, "error", "4.0"},
    {"exit", "UnexpectedExit", "The target called exit().",
     "The target ended the process with exit() instead of returning from "
     "LLVMFuzzerTestOneInput; a library that exits on bad input cannot be embedded safely.",
     GENERIC_HELP, "warning", "2.0"},
    {"killed", "Killed", "The target was killed (SIGKILL).",
     "The runner was killed by SIGKILL from outside snapfuzz: the kernel's OOM killer, a "
     "person, or the target itself.",
     GENERIC_HELP, "warning", "3.0"},
    {"signal", "FatalSignal", "The target died by a signal.",
     "The target was ended by a signal other than the ones snapfuzz names a rule for; the "
     "message names it.",
     GENERIC_HELP, "error", "4.0"},
    {"overwrite-input", "OverwriteInput", "The target wrote into its const input.",
     "LLVMFuzzerTestOneInput's data is const; the target wrote into it, which a caller that "
     "reuses the buffer does not expect.",
     GENERIC_HELP, "warning", "3.0"},
    {"file-size", "FileSizeLimit", "The target wrote a file over the size limit (SIGXFSZ).",
     "The target tried to write a file larger than the runner's file size limit.", GENERIC_HELP,
     "warning", "3.0"},
    {"crash", "Crash", "The target crashed.",
     "The target crashed in a way this version of snapfuzz has no rule for; the message and "
     "the result's kind property name it.",
     GENERIC_HELP, "error", "5.0"},
    {NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

static const CrashRule *rule_by_id(const char *id)
{
        for (const CrashRule *r = crashreport_rules; r->id; r++)
                if (strcmp(r->id, id) == 0)
                        return r;
        return NULL;
}

/* The @n-th '|'-separated field of @sig into @buf ("" when absent). */
static void sig_field(const char *sig, int n, char *buf, size_t cap)
{
        for (int i = 0; i < n && sig; i++) {
                sig = strchr(sig, '|');
                if (sig)
                        sig++;
        }
        size_t len = sig ? strcspn(sig, "|") : 0;
        if (len >= cap)
                len = cap - 1;
        if (len)
                memcpy(buf, sig, len);
        buf[len] = 0;
}

/* Whether the address after "address " in @message is in the zero page. */
static bool message_null_page(const char *message)
{
        const char *p = strstr(message, "address ");
        if (!p)
                return false;
        p += strlen("address ");
        if (strncmp(p, "0x", 2) != 0)
                return false;
        char *end;
        errno = 0;
        unsigned long long a = strtoull(p + 2, &end, 16);
        return errno == 0 && end != p + 2 && a < CRASHREPORT_NULL_PAGE;
}

/* The rule of an AddressSanitizer report of bug type @type. */
static const CrashRule *rule_asan(const char *type, const char *message)
{
        /* "attempting double-free on ..." and "attempting free on address
         * which was not malloc()-ed": classify keeps the first word. */
        if (strcmp(type, "attempting") == 0)
                return rule_by_id(strstr(message, "double-free") ? "double-free" : "bad-free");
        if (strcmp(type, "SEGV") == 0)
                return rule_by_id(message_null_page(message) ? "null-deref" : "segv");
        if (strcmp(type, "BUS") == 0)
                return rule_by_id("bus");
        if (strcmp(type, "FPE") == 0)
                return rule_by_id("fpe");
        if (strcmp(type, "new-delete-type-mismatch") == 0)
                return rule_by_id("alloc-dealloc-mismatch");
        const CrashRule *r = rule_by_id(type);
        /* Only the memory-error rules above "null-deref" name ASan types. */
        if (r && r < rule_by_id("null-deref"))
                return r;
        return rule_by_id("asan");
}

/* The rule of an UndefinedBehaviorSanitizer report whose wording starts
 * with @type ("signed integer overflow", "shift exponent", ...). */
static const CrashRule *rule_ubsan(const char *type)
{
        static const struct {
                const char *prefix, *rule;
        } map[] = {
            {"signed integer overflow", "signed-integer-overflow"},
            {"negation of", "signed-integer-overflow"},
            {"division by zero", "division-by-zero"},
            {"division of", "division-by-zero"},
            {"shift exponent", "shift-out-of-bounds"},
            {"left shift", "shift-out-of-bounds"},
            {"load of misaligned", "misaligned-access"},
            {"store to misaligned", "misaligned-access"},
            {"member access within misaligned", "misaligned-access"},
            {"index", "index-out-of-bounds"},
            {"load of null pointer", "null-deref"},
            {"store to null pointer", "null-deref"},
            {"member access within null pointer", "null-deref"},
        };
        for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
                if (strncmp(type, map[i].prefix, strlen(map[i].prefix)) == 0)
                        return rule_by_id(map[i].rule);
        return rule_by_id("undefined-behavior");
}

const CrashRule *crashreport_rule(const char *kind, const char *signature, const char *message)
{
        char type[128];
        sig_field(signature ? signature : "", 1, type, sizeof(type));
        if (!message)
                message = "";
        if (strcmp(kind, "asan") == 0)
                return rule_asan(type, message);
        if (strcmp(kind, "ubsan") == 0)
                return rule_ubsan(type);
        if (strcmp(kind, "msan") == 0)
                return rule_by_id("use-of-uninitialized-value");
        if (strcmp(kind, "segv") == 0)
                return rule_by_id(message_null_page(message) ? "null-deref" : "segv");
        if (strcmp(kind, "null-deref") == 0)
                return rule_by_id("null-deref");
        if (strcmp(kind, "sandbox") == 0)
                return rule_by_id("sandbox-violation");
        const CrashRule *r = rule_by_id(kind);
        /* A kind named like a sanitizer's rule is not that rule. */
        if (r && r >= rule_by_id("stack-overflow"))
                return r;
        return rule_by_id("crash");
}

/* @s made inert and bounded (core/termsafe.h), malloc'd; NULL on ENOMEM. */
static char *safe_dup(const char *s)
{
        char buf[TERMSAFE_BUF];
        return strdup(termsafe_str(buf, sizeof(buf), s, TERMSAFE_MAX));
}

/* Whether termsafe leaves @s as it is (a path or token with nothing to
 * escape, at most TERMSAFE_MAX bytes). */
static bool is_plain(const char *s)
{
        char buf[TERMSAFE_BUF];
        return s && strlen(s) <= TERMSAFE_MAX &&
               strcmp(termsafe_str(buf, sizeof(buf), s, TERMSAFE_MAX), s) == 0;
}

/* Normalizes a path lexically in place: no empty or "." components, and
 * ".." removes the component before it ("/.." is "/"; a relative path
 * keeps the ".." it cannot remove). */
void crashreport_path_normalize(char *p)
{
        bool abs = p[0] == '/';
        char *out = p + abs; /* the normalized path so far ends here */
        char *in = p + abs;
        size_t lead = 0; /* bytes of leading "../" kept in a relative path */
        const char *end = p + strlen(p);

        /* Not "while (*in)": the '/' written after the last component is
         * where its NUL was. */
        while (in < end) {
                size_t n = strcspn(in, "/");
                /* Read before writing: out may be in. */
                size_t next = n + (in[n] == '/');
                bool dotdot = n == 2 && in[0] == '.' && in[1] == '.';
                /* Empty and "." components go, and so does ".." at the root
                 * ("/.." is "/"). */
                bool drop = n == 0 || (n == 1 && in[0] == '.') || (dotdot && abs);
                if (dotdot && out > p + abs + lead) {
                        out--; /* before the '/' that ends the last component */
                        while (out > p + abs + lead && out[-1] != '/')
                                out--;
                } else if (!drop) {
                        memmove(out, in, n);
                        out += n;
                        *out++ = '/';
                        if (dotdot)
                                lead = (size_t)(out - p);
                }
                in += next;
        }
        if (out > p + abs)
                out--; /* the last component's '/' */
        *out = 0;
}

/* @file relative to @root (both normalized, @root absolute), malloc'd, or
 * NULL when it is not under @root. A relative @file is taken as relative
 * to @root already, unless it climbs out of it. */
static char *path_under(const char *file, const char *root)
{
        if (file[0] != '/')
                return strncmp(file, "../", 3) == 0 || strcmp(file, "..") == 0 ? NULL
                                                                               : strdup(file);
        size_t n = strlen(root);
        if (n == 1) /* the root is "/" */
                return file[1] ? strdup(file + 1) : NULL;
        if (strncmp(file, root, n) == 0 && file[n] == '/' && file[n + 1])
                return strdup(file + n + 1);
        return NULL;
}

static void frame_deinit(CrashFrame *f)
{
        free(f->function);
        free(f->module);
        free(f->offset);
        free(f->file);
        free(f->rel);
}

/* One element of stack.frames into @f; false (and nothing held) when it
 * is not an object or memory runs out. */
static bool frame_load(const cJSON *j, const char *root, CrashFrame *f)
{
        memset(f, 0, sizeof(*f));
        if (!cJSON_IsObject(j))
                return false;
        const char *function = msg_str(j, "function", msg_str(j, "symbol", NULL));
        const char *module = msg_str(j, "module", NULL);
        const char *offset = msg_str(j, "offset", NULL);
        const char *file = msg_str(j, "file", NULL);
        int64_t line = msg_int(j, "line", 0);
        f->runtime = classify_frame_is_runtime(j);
        if ((function && !(f->function = safe_dup(function))) ||
            (module && !(f->module = safe_dup(module))) ||
            (offset && !(f->offset = safe_dup(offset))))
                goto fail;
        if (file && *file && is_plain(file)) {
                f->file = strdup(file);
                if (!f->file)
                        goto fail;
                crashreport_path_normalize(f->file);
                if (!f->file[0]) {
                        free(f->file);
                        f->file = NULL;
                        return true;
                }
                f->rel = path_under(f->file, root);
                /* Through symbolic links: the source root may be one. */
                char real[PATH_MAX];
                if (!f->rel && f->file[0] == '/' && realpath(f->file, real))
                        f->rel = path_under(real, root);
                f->line = line > 0 && line <= 100000000 ? (long)line : 0;
        }
        return true;
fail:
        frame_deinit(f);
        return false;
}

/* The frames of the stored stack, at most CRASHREPORT_MAX_FRAMES. */
static int frames_load(const cJSON *report, const char *root, CrashEntry *e)
{
        const cJSON *stack = cJSON_GetObjectItemCaseSensitive(report, "stack");
        const cJSON *frames =
            cJSON_IsObject(stack) ? cJSON_GetObjectItemCaseSensitive(stack, "frames") : NULL;
        const cJSON *f;
        e->top = -1;
        if (!cJSON_IsArray(frames))
                return 0;
        e->frames = calloc(CRASHREPORT_MAX_FRAMES, sizeof(*e->frames));
        if (!e->frames)
                return -ENOMEM;
        cJSON_ArrayForEach(f, frames)
        {
                if (e->n_frames == CRASHREPORT_MAX_FRAMES)
                        break;
                CrashFrame *cf = &e->frames[e->n_frames];
                if (!frame_load(f, root, cf))
                        continue;
                if (e->top < 0 && !cf->runtime && cf->rel && cf->line > 0)
                        e->top = (int)e->n_frames;
                e->n_frames++;
        }
        return 0;
}

const CrashFrame *crashreport_where(const CrashEntry *e)
{
        if (e->top >= 0)
                return &e->frames[e->top];
        for (size_t i = 0; i < e->n_frames; i++)
                if (!e->frames[i].runtime && e->frames[i].file)
                        return &e->frames[i];
        for (size_t i = 0; i < e->n_frames; i++)
                if (e->frames[i].file)
                        return &e->frames[i];
        return NULL;
}

void crashreport_frame_place(const CrashFrame *f, char *buf, size_t cap)
{
        if (!f->file)
                snprintf(buf, cap, "%s", "");
        else if (f->line > 0)
                snprintf(buf, cap, "%s:%ld", f->rel ? f->rel : f->file, f->line);
        else
                snprintf(buf, cap, "%s", f->rel ? f->rel : f->file);
}

char *crashreport_shell_quote(const char *s)
{
        bool plain = *s != 0;
        for (const char *p = s; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                            "_./-+=:,@%",
                            *p))
                        plain = false;
        if (plain)
                return strdup(s);
        size_t n = 2;
        for (const char *p = s; *p; p++)
                n += *p == '\'' ? 4 : 1;
        char *q = malloc(n + 1), *o = q;
        if (!q)
                return NULL;
        *o++ = '\'';
        for (const char *p = s; *p; p++) {
                if (*p == '\'') {
                        memcpy(o, "'\\''", 4);
                        o += 4;
                } else {
                        *o++ = *p;
                }
        }
        *o++ = '\'';
        *o = 0;
        return q;
}

static void entry_deinit(CrashEntry *e)
{
        for (size_t i = 0; i < e->n_frames; i++)
                frame_deinit(&e->frames[i]);
        free(e->frames);
        free(e->message);
        free(e->signature);
        free(e->target);
        free(e->first_seen);
        free(e->last_seen);
        free(e->input_path);
        free(e->minimized_path);
        free(e->reproduce);
}

/* A kind is a short token of lower-case letters, digits and '-'. */
static bool kind_valid(const char *k)
{
        size_t n = strlen(k);
        if (n == 0 || n >= sizeof(((CrashEntry *)0)->kind))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '-'))
                        return false;
        return true;
}

/* The paths of the entry's files and its reproduce command. */
static int entry_paths(CrashReport *r, CrashEntry *e)
{
        char path[PATH_MAX + 128];
        struct stat st;
        snprintf(path, sizeof(path), "%s/crashes/%s/input", r->out_dir, e->id);
        if (!(e->input_path = strdup(path)))
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/crashes/%s/minimized", r->out_dir, e->id);
        e->minimized_len = -1;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (!(e->minimized_path = strdup(path)))
                        return -ENOMEM;
                e->minimized_len = (int64_t)st.st_size;
        }
        char *out = crashreport_shell_quote(r->out_dir);
        if (!out)
                return -ENOMEM;
        snprintf(path, sizeof(path), "snapfuzz reproduce %s --out %s", e->id, out);
        free(out);
        return (e->reproduce = strdup(path)) ? 0 : -ENOMEM;
}

/* The fields of crash.json @report into @e. 0, -ENOMEM, or -EBADMSG with
 * the reason in @err. */
static int entry_fill(CrashReport *r, const cJSON *report, CrashEntry *e, char *err, size_t cap)
{
        const char *kind = msg_str(report, "kind", "");
        const char *sig = msg_str(report, "signature", NULL);
        if (!kind_valid(kind)) {
                snprintf(err, cap, "its kind is not a crash kind");
                return -EBADMSG;
        }
        if (!sig || !*sig) {
                snprintf(err, cap, "it has no signature");
                return -EBADMSG;
        }
        snprintf(e->kind, sizeof(e->kind), "%s", kind);
        const char *message = msg_str(report, "message", "");
        e->rule = crashreport_rule(kind, sig, message);
        e->sig_hash = hash64(sig, strlen(sig), UINT64_C(0x736e6170));
        e->count = msg_int(report, "count", 1);
        if (e->count < 1)
                e->count = 1;
        e->input_len = msg_int(report, "input_len", -1);
        e->reproduced = msg_bool(report, "reproduced", 0);
        const cJSON *rep = cJSON_GetObjectItemCaseSensitive(report, "reproduction");
        e->state_dependent = strcmp(msg_str(rep, "class", ""), "history") == 0;
        e->sequence_length = e->state_dependent ? msg_int(rep, "history_len", 0) : 0;
        if (e->sequence_length < 0)
                e->sequence_length = 0;
        if (!(e->message = safe_dup(message)) || !(e->signature = safe_dup(sig)) ||
            !(e->target = safe_dup(msg_str(report, "target", ""))) ||
            !(e->first_seen = safe_dup(msg_str(report, "first_seen", ""))) ||
            !(e->last_seen = safe_dup(msg_str(report, "last_seen", ""))))
                return -ENOMEM;
        int ret = frames_load(report, r->source_root, e);
        return ret < 0 ? ret : entry_paths(r, e);
}

/* Reads crash @id into @e. 0, -ENOMEM, or -EBADMSG with a reason. */
static int entry_load(CrashReport *r, int crashes_fd, const char *id, CrashEntry *e, char *err,
                      size_t cap)
{
        char path[128];
        uint8_t *text = NULL;
        size_t len;
        struct stat st;
        cJSON *report = NULL;

        memset(e, 0, sizeof(*e));
        snprintf(e->id, sizeof(e->id), "%s", id);
        snprintf(path, sizeof(path), "%s/input", id);
        if (fstatat(crashes_fd, path, &st, 0) < 0 || !S_ISREG(st.st_mode)) {
                snprintf(err, cap, "it has no input file");
                return -EBADMSG;
        }
        snprintf(path, sizeof(path), "%s/crash.json", id);
        /* Opening a FIFO would wait for a writer for ever. */
        if (fstatat(crashes_fd, path, &st, 0) < 0 || !S_ISREG(st.st_mode)) {
                snprintf(err, cap, "its crash.json is missing or not a regular file");
                return -EBADMSG;
        }
        int ret = fs_read_file(crashes_fd, path, CRASHREPORT_MAX_JSON, &text, &len);
        if (ret == -ENOMEM)
                return ret;
        if (ret < 0) {
                snprintf(err, cap, "cannot read crash.json: %s", strerror(-ret));
                return -EBADMSG;
        }
        ret = crashstore_report_parse(path, (const char *)text, len, &report, err, cap);
        free(text);
        if (ret < 0)
                return -EBADMSG;
        ret = entry_fill(r, report, e, err, cap);
        cJSON_Delete(report);
        if (ret < 0)
                entry_deinit(e);
        return ret;
}

static int report_init(CrashReport *r, const char *out_dir, const char *source_root)
{
        char real[PATH_MAX];
        struct stat st;
        if (stat(out_dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return -ENOENT;
        if (!realpath(source_root ? source_root : ".", real) || stat(real, &st) < 0 ||
            !S_ISDIR(st.st_mode))
                return -ENOTDIR;
        /* For paths shown in reports only (it is the user's own, but the
         * reports must be valid UTF-8). */
        r->out_dir = safe_dup(out_dir);
        r->source_root = is_plain(real) ? strdup(real) : NULL;
        if (!r->out_dir || (!r->source_root && is_plain(real)))
                return -ENOMEM;
        if (!r->source_root)
                return -ENOTDIR; /* a path that cannot go into a URI as it is */
        /* "out/" and "out" are one directory: no "out//crashes" in paths. */
        size_t n = strlen(r->out_dir);
        while (n > 1 && r->out_dir[n - 1] == '/')
                r->out_dir[--n] = 0;
        return 0;
}

int crashreport_load(const char *out_dir, const char *source_root, bool quiet, CrashReport **ret)
{
        CrashReport *r = calloc(1, sizeof(*r));
        char **ids = NULL;
        size_t n = 0;
        int crashes_fd = -1;
        int res;

        if (!r)
                return -ENOMEM;
        res = report_init(r, out_dir, source_root);
        if (res < 0)
                goto fail;
        res = crashstore_list(out_dir, &ids, &n);
        if (res == -ENOENT) {
                *ret = r; /* no crashes/ yet: nothing found */
                return 0;
        }
        if (res < 0)
                goto fail;
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/crashes", out_dir);
        crashes_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r->entries = calloc(n ? n : 1, sizeof(*r->entries));
        if (crashes_fd < 0) {
                res = -errno;
                goto fail_ids;
        }
        if (!r->entries) {
                res = -ENOMEM;
                goto fail_fd;
        }
        for (size_t i = 0; i < n; i++) {
                char err[512];
                res = entry_load(r, crashes_fd, ids[i], &r->entries[r->n], err, sizeof(err));
                if (res == -ENOMEM)
                        goto fail_fd;
                if (res == 0) {
                        r->n++;
                        continue;
                }
                r->skipped++;
                if (!quiet) {
                        char safe[TERMSAFE_BUF];
                        log_warn("skipped crash %s/crashes/%s: %s", out_dir, ids[i],
                                 termsafe_str(safe, sizeof(safe), err, 512));
                }
        }
        close(crashes_fd);
        crashstore_ids_free(ids, n);
        *ret = r;
        return 0;
fail_fd:
        close(crashes_fd);
fail_ids:
        crashstore_ids_free(ids, n);
fail:
        crashreport_free(r);
        return res;
}

void crashreport_free(CrashReport *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n; i++)
                entry_deinit(&r->entries[i]);
        free(r->entries);
        free(r->out_dir);
        free(r->source_root);
        free(r);
}
