#!/usr/bin/env python3
"""Splits a perf profile of one fuzzer run into where an execution's time goes.

    perf script -F comm,pid,ip,sym,dso -i perf.data |
        profile.py TOOL EXECS PERIOD_NS [--target-syms F] [--target-imports F]
                   [--mutator-syms F] [--target-dso SO]

Reads `perf script` output (one sample: a "comm pid" line, then its call
chain, leaf first, one frame a line) of a run recorded with a fixed period
(`perf record -e cpu-clock -c PERIOD_NS --call-graph dwarf`), so that every
sample stands for PERIOD_NS of CPU time. Each sample goes to one category:

  target       the target's own code: LLVMFuzzerTestOneInput and the functions
               of the target (--target-syms: a file naming them, one a line),
               and the libc functions they call (--target-imports: the
               target's undefined symbols, one a line)
  hooks        the entry of a __sanitizer_cov_* callback the target called,
               the sample's leaf: snapfuzz's fast path (a load and a branch
               when nothing records) and the bare loop's no-ops, the call a
               target built this way pays in any loop; libFuzzer's hooks do
               their recording inline, so for libFuzzer this holds some of it
  callbacks    work below a callback (snapfuzz's recording of operands,
               libFuzzer's out-of-line recording)
  mutation     the fuzzer's mutator (--mutator-syms: more functions that belong
               to it, such as static helpers whose inlined frames show up
               without their caller)
  feedback     reading the coverage counters after an execution
  loop         the rest of the fuzzing loop in user space (copies, checks,
               bookkeeping, corpus management, whatever is not named above)
  batch        starting and ending a batch: fork, the sandbox's filter, exit
               (snapfuzz forks one runner per batch of executions)
  kernel       in the kernel, outside the above (page faults, syscalls)
  other        other processes and start-up: snapfuzz's coordinator, the worker
               supervising its runners, the recovery helper; taskset, loading

The attribution is approximate: it is as good as perf's unwinding (see
LOST_CALLER below) and has the sampling error of a few thousand samples.

Prints one tab-separated line: tool, execs, CPU ms, then for every category
its CPU ms. With PROFILE_TOP=N in the environment, also prints to stderr the
N hottest leaf functions of each category. Standard library only.
"""

import argparse
import collections
import os
import sys

CATEGORIES = ["target", "hooks", "callbacks", "mutation", "feedback", "loop", "batch", "kernel", "other"]

MUTATION = ("mutator_mutate", "MutationDispatcher", "LLVMFuzzerMutate")
FEEDBACK = ("coverage_scan", "coverage_clear", "TracePC", "CollectFeatures", "AddFeature",
            "UpdateFeatureFrequency", "ValueProfileMap")
# snapfuzz's hooks tail-call their recording (cmp_int_slow and the inline
# cmplog_int...), so the hook's own frame is gone from those samples.
CALLBACKS = ("__sanitizer_cov_", "fuzzer::TracePC::HandleCmp", "cmp_int_slow", "cmp1_slow",
             "switch_slow", "cmplog_int", "cmplog_mem", "cmplog_vp", "cmplog_record_take",
             "cmplog_slot", "record_bytes", "record_strings", "record_needle")
BATCH = ("fork", "_Fork", "sandbox_apply", "runner_map_guarded", "runner_install_handlers",
         "do_exit", "do_group_exit", "exit_mmap", "ret_from_fork", "schedule_tail")
# snapfuzz's coordinator and recovery helper keep the executable's name; its
# workers and runners, started through /proc/self/exe, are "exe".
OTHER_COMMS = ("snapfuzz", "taskset")
OTHER_ROOTS = ("coordinator_run", "recovery_main", "_dl_start", "_dl_init", "dl_main")

# perf's DWARF unwinder sometimes loses the caller of a frameless leaf
# function (a libc string function such as memcpy or memcmp, a coverage
# callback): the chain goes on at the caller's caller. Callbacks are only
# ever called by the target, so they need nothing more. A libc string
# function the target does not import (--target-imports) is the fuzzer's own
# call; one that only the target calls is the target's. For the few that both
# call on every execution (AMBIGUOUS), the frame after the leaf decides:
# runner_batch (snapfuzz), bare_loop's main and libFuzzer's ExecuteCallback
# call the target, so when one of them follows the leaf, the lost frame was
# most likely the target; a string function that runner_batch or
# ExecuteCallback call themselves shows their own caller when the frame is
# lost (runner_main; RunOne), or them when it is not (then counted as the
# target: the error this rule can make).
AMBIGUOUS = {"memcpy", "memcmp"}
LOST_CALLER = [
    ("runner_batch", "target"),
    ("main", "target"),
    ("fuzzer::Fuzzer::ExecuteCallback", "target"),
    ("runner_main", "loop"),
    ("fuzzer::Fuzzer::RunOne", "loop"),
]

TOOL = ""
TARGET_DSO = None
TARGET_SYMS = {"LLVMFuzzerTestOneInput"}
TARGET_IMPORTS = set()
MUTATOR_SYMS = set()


def frames(lines):
    """(symbol, dso) of each frame, leaf first; "@plt" stubs count as their function."""
    out = []
    for ln in lines:
        parts = ln.strip().split(None, 1)
        if len(parts) < 2:
            continue
        rest = parts[1]
        dso = ""
        if rest.endswith(")") and " (" in rest:
            rest, dso = rest.rsplit(" (", 1)
            dso = dso[:-1]
        out.append((rest.strip().split("@")[0], dso))
    return out


def libc_base(name):
    """memcpy for __memcpy_avx512_unaligned_erms, memcpy@GLIBC_2.14 and memmove."""
    base = name.split("@")[0].lstrip("_").split("_")[0]
    return "memcpy" if base == "memmove" else base


def is_libc_string(frame):
    """glibc's string functions, by the names of their variants (__memcpy_avx512_...)."""
    sym, dso = frame
    if "libc.so" not in dso and dso != "inlined":
        return False
    return sym.lstrip("_").startswith(("mem", "str", "wmem"))


# glibc's allocator, getenv and stdio, whose frames perf also shows as
# "inlined" (their __GI_ aliases and static helpers) instead of naming libc.
ALLOC_ENV = ("getenv", "malloc", "free", "calloc", "realloc", "int_", "unlink_chunk", "tcache_",
             "checked_request2size", "alloc_perturb", "libc_malloc", "libc_free", "libc_calloc",
             "libc_realloc", "IO_", "vfprintf", "printf", "fprintf", "fwrite", "fputs")


def is_alloc_env(frame):
    """A frame of glibc's allocator, getenv or stdio."""
    sym, dso = frame
    name = sym.lstrip("_")
    name = name[3:].lstrip("_") if name.startswith("GI_") else name
    return ("libc.so" in dso or dso == "inlined") and name.startswith(ALLOC_ENV)


def is_libc_frame(frame):
    """A frame perf names as libc's, or an "inlined" one of its allocator, getenv or stdio."""
    return "libc.so" in frame[1] or is_alloc_env(frame)


def classify(chain, comm):
    syms = [s for s, _ in chain]
    if comm in OTHER_COMMS or any(s.startswith(OTHER_ROOTS) for s in syms):
        return "other"
    if syms and syms[0].startswith("__sanitizer_cov_"):
        return "hooks"
    if any(s.startswith(CALLBACKS) for s in syms):
        return "callbacks"
    if any(s in TARGET_SYMS for s in syms):
        return "target"
    # A frame of the target's shared object whose symbol perf could not
    # name (snapfuzz and the bare loop load the target as one).
    if TARGET_DSO and any(d == TARGET_DSO for _, d in chain):
        return "target"
    if any(any(m in s for m in MUTATION) or s in MUTATOR_SYMS for s in syms):
        return "mutation"
    if any(any(m in s for m in FEEDBACK) for s in syms):
        return "feedback"
    if len(chain) > 1 and is_libc_string(chain[0]):
        base = libc_base(chain[0][0])
        if base not in TARGET_IMPORTS:
            return "loop"
        if base not in AMBIGUOUS:
            return "target"
        parent, parent_dso = chain[1]
        for prefix, cat in LOST_CALLER:
            if parent.startswith(prefix) and (prefix != "main" or parent_dso.endswith("bare_loop")):
                return cat
    # An allocator, getenv or stdio leaf straight under snapfuzz's
    # runner_batch, which calls none of them per execution: the target did.
    if len(chain) > 1 and TOOL == "snapfuzz" and is_alloc_env(chain[0]) and chain[1][0] == "runner_batch":
        return "target"
    if any(s.startswith(BATCH) for s in syms):
        return "batch"
    # A chain that never leaves libc lost its caller in libc's allocator,
    # getenv or stdio (perf's unwinder gives up there now and then). snapfuzz's
    # runner and the bare loop call no such function per execution outside
    # frames of their own executable: the target called it.
    if chain and is_libc_frame(chain[0]) and TOOL in ("snapfuzz", "bare") and all(
            "libc.so" in d or d == "inlined" for _, d in chain if not d.startswith("[unknown")):
        return "target"
    if any(s.startswith("worker_main") for s in syms) and "runner_main" not in syms:
        return "other"
    if chain and chain[0][1] == "[kernel.kallsyms]":
        return "kernel"
    return "loop"


def read_names(path):
    with open(path) as f:
        return {ln.strip() for ln in f if ln.strip()}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tool")
    p.add_argument("execs", type=int)
    p.add_argument("period_ns", type=int)
    p.add_argument("--target-syms")
    p.add_argument("--mutator-syms")
    p.add_argument("--target-imports")
    p.add_argument("--target-dso")
    a = p.parse_args()
    global TOOL, TARGET_DSO
    TOOL = a.tool
    TARGET_DSO = os.path.realpath(a.target_dso) if a.target_dso else None
    if a.target_imports:
        TARGET_IMPORTS.update(libc_base(n) for n in read_names(a.target_imports))
    if a.target_syms:
        TARGET_SYMS.update(read_names(a.target_syms))
    if a.mutator_syms:
        MUTATOR_SYMS.update(read_names(a.mutator_syms))

    counts = dict.fromkeys(CATEGORIES, 0)
    leaves = {c: collections.Counter() for c in CATEGORIES}
    block = []

    def flush():
        if block:
            chain = frames(block[1:])
            head = block[0].split()
            cat = classify(chain, head[0] if head else "")
            counts[cat] += 1
            leaves[cat][chain[0][0] if chain else "?"] += 1
        block.clear()

    for line in sys.stdin:
        if not line.strip():
            flush()
            continue
        if not line[0].isspace():
            flush()
        block.append(line)
    flush()

    ms = [counts[c] * a.period_ns / 1e6 for c in CATEGORIES]
    top = int(os.environ.get("PROFILE_TOP", "0"))
    for c in CATEGORIES if top else []:
        total = sum(leaves[c].values()) or 1
        hot = ", ".join(f"{sym} {n * 100 / total:.0f}%" for sym, n in leaves[c].most_common(top))
        print(f"{a.tool} {c}: {hot}", file=sys.stderr)
    print("\t".join([a.tool, str(a.execs), f"{sum(ms):.1f}"] + [f"{m:.1f}" for m in ms]))


if __name__ == "__main__":
    main()
