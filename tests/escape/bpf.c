/*
 * Loads a BPF program into the kernel.
 */
#include <linux/bpf.h>
#include <sys/syscall.h>

#include "escape.h"

static void escape_attempt(void)
{
        struct bpf_insn insns[] = {
            {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
            {.code = BPF_JMP | BPF_EXIT},
        };
        union bpf_attr attr;

        memset(&attr, 0, sizeof(attr));
        attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
        attr.insn_cnt = 2;
        attr.insns = (uint64_t)(uintptr_t)insns;
        attr.license = (uint64_t)(uintptr_t) "GPL";
        syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}
