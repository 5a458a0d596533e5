/*
 * Reads only the ELF identification and header: class, byte order,
 * machine and type. ET_DYN covers shared objects and position-independent
 * executables; both can be dlopen()ed if they export the entry point, which
 * the worker checks after loading.
 *
 * elf_find_section() also reads the section headers and their names, for
 * sections a loaded target marks by name only (libFuzzer's extra
 * counters). The file is untrusted: every offset and size is checked
 * against the file and against fixed caps before it is used.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
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

/* The section-name table read at most: more than any real object has,
 * little enough to read whole (e_shnum, 16 bits, bounds the headers). */
#define ELF_MAX_SHSTRTAB (1u << 20)

/* Reads @len bytes at @off of @fd into a new buffer in *ret. */
static int elf_read_at(int fd, uint64_t off, size_t len, uint64_t file_size, void **ret)
{
        if (len == 0 || off > file_size || len > file_size - off)
                return -ENOEXEC;
        void *buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        if (pread(fd, buf, len, (off_t)off) != (ssize_t)len) {
                free(buf);
                return -EIO;
        }
        *ret = buf;
        return 0;
}

/* The section in @sh (@n headers, names in @names of @names_len bytes)
 * called @name that takes memory when loaded; NULL when there is none. */
static const Elf64_Shdr *elf_section_named(const Elf64_Shdr *sh, size_t n, const char *names,
                                           size_t names_len, const char *name)
{
        size_t want = strlen(name);

        for (size_t i = 0; i < n; i++) {
                if (!(sh[i].sh_flags & SHF_ALLOC) || sh[i].sh_name >= names_len)
                        continue;
                const char *s = names + sh[i].sh_name;
                size_t room = names_len - sh[i].sh_name;
                if (room > want && memcmp(s, name, want) == 0 && s[want] == 0)
                        return &sh[i];
        }
        return NULL;
}

int elf_find_section(const char *path, const char *name, uint64_t *ret_addr, uint64_t *ret_size)
{
        Elf64_Ehdr eh;
        struct stat st;
        Elf64_Shdr *sh = NULL;
        char *names = NULL;
        int r = -ENOEXEC;

        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
                goto close_fd;
        if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
            eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum)
                goto close_fd;
        r = elf_read_at(fd, eh.e_shoff, (size_t)eh.e_shnum * sizeof(Elf64_Shdr),
                        (uint64_t)st.st_size, (void **)&sh);
        if (r < 0)
                goto close_fd;
        const Elf64_Shdr *strtab = &sh[eh.e_shstrndx];
        r = -ENOEXEC;
        if (strtab->sh_size > ELF_MAX_SHSTRTAB)
                goto free_headers;
        r = elf_read_at(fd, strtab->sh_offset, (size_t)strtab->sh_size, (uint64_t)st.st_size,
                        (void **)&names);
        if (r < 0)
                goto free_headers;
        const Elf64_Shdr *found =
            elf_section_named(sh, eh.e_shnum, names, (size_t)strtab->sh_size, name);
        r = -ENOENT;
        if (found) {
                *ret_addr = found->sh_addr;
                *ret_size = found->sh_size;
                r = 0;
        }
        free(names);
free_headers:
        free(sh);
close_fd:
        close(fd);
        return r;
}
