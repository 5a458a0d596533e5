/*
 * Reads only the ELF identification and header: class, byte order,
 * machine and type. ET_DYN covers shared objects and position-independent
 * executables; both can be dlopen()ed if they export the entry point, which
 * the worker checks after loading.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/elfcheck.h"

#include "snapfuzz/banned.h"

#if defined(__x86_64__)
#define ELF_NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define ELF_NATIVE_MACHINE EM_AARCH64
#else
#define ELF_NATIVE_MACHINE EM_NONE
#endif

int elf_check_shared_object(const char *path, char *why, size_t whylen)
{
        Elf64_Ehdr eh;
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                snprintf(why, whylen, "cannot open the target: %s", strerror(e));
                return -e;
        }
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                snprintf(why, whylen, "the target is not a regular file");
                return -EINVAL;
        }
        ssize_t n = read(fd, &eh, sizeof(eh));
        close(fd);
        if (n < (ssize_t)EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
                snprintf(why, whylen,
                         "not an ELF file; build the harness as a shared object with "
                         "clang -fsanitize=fuzzer-no-link -fPIC -shared -o target.so harness.c");
                return -ENOEXEC;
        }
        if (n < (ssize_t)sizeof(eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_ident[EI_DATA] != ELFDATA2LSB ||
            (ELF_NATIVE_MACHINE != EM_NONE && eh.e_machine != ELF_NATIVE_MACHINE)) {
                snprintf(why, whylen, "an ELF file for another machine; rebuild it for this one");
                return -ENOEXEC;
        }
        if (eh.e_type != ET_DYN) {
                snprintf(why, whylen, "an ELF %s, not a shared object; build it with -fPIC -shared",
                         eh.e_type == ET_EXEC  ? "executable"
                         : eh.e_type == ET_REL ? "object file"
                                               : "file");
                return -ENOEXEC;
        }
        return 0;
}
