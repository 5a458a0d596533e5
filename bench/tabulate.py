#!/usr/bin/env python3
"""Turns the raw figures of bench/execs.sh and bench/recovery.sh into markdown.

    tabulate.py execs RAW.tsv [--meta key=value ...]
    tabulate.py recovery RAW.tsv [--meta key=value ...]

RAW.tsv is the tab-separated file the script wrote (a header line, then one
line per run). The report goes to stdout: the run's metadata, the summary
table, and every raw line, so that a results file can be checked by hand.
Standard library only.
"""

import argparse
import csv
import statistics
import sys


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def fmt_rate(v):
    if v is None:
        return "–"
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e4:
        return f"{v / 1e3:.0f} k"
    return f"{v:.0f}"


def fmt_ratio(values):
    """Median of per-trial ratios, with the smallest and largest after it."""
    if not values:
        return "–"
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def meta_block(meta):
    out = []
    for item in meta:
        key, _, value = item.partition("=")
        out.append(f"- {key}: `{value}`")
    return "\n".join(out)


EXEC_TOOLS = ["snapfuzz-strict", "snapfuzz-off", "libfuzzer", "bare"]


def execs_report(rows, meta):
    targets = []
    rate = {}  # (target, tool, trial) -> exec/s
    cpu_rate = {}  # (target, tool, trial) -> exec per CPU-second
    share = {}  # (target, tool, trial) -> CPU time / wall time
    for r in rows:
        if r["target"] not in targets:
            targets.append(r["target"])
        key = (r["target"], r["tool"], r["trial"])
        elapsed = float(r["elapsed_s"])
        cpu = float(r["user_s"]) + float(r["sys_s"])
        wall = float(r["wall_s"])
        rate[key] = float(r["execs"]) / elapsed if elapsed > 0 else 0.0
        cpu_rate[key] = float(r["execs"]) / cpu if cpu > 0 else 0.0
        share[key] = cpu / wall if wall > 0 else 0.0
    trials = sorted({r["trial"] for r in rows}, key=int)

    def per_trial_ratio(t, num, den, table=rate):
        out = []
        for tr in trials:
            a, b = table.get((t, num, tr)), table.get((t, den, tr))
            if a is not None and b:
                out.append(a / b)
        return out

    lines = ["# Execution speed: snapfuzz, libFuzzer and a bare loop", ""]
    lines.append(meta_block(meta))
    lines += [
        "",
        "Executions per second on one pinned core, median over the trials.",
        "Ratios are the median of the per-trial ratios (runs of the same trial",
        "ran one after the other), with the smallest and largest in brackets.",
        "",
        "| target | snapfuzz | snapfuzz `--sandbox off` | libFuzzer | bare loop "
        "| snapfuzz / libFuzzer | snapfuzz / bare | strict / off |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in targets:
        med = []
        for tool in EXEC_TOOLS:
            vals = [rate[(t, tool, tr)] for tr in trials if (t, tool, tr) in rate]
            med.append(fmt_rate(statistics.median(vals)) if vals else "–")
        lines.append(
            f"| {t} | "
            + " | ".join(med)
            + f" | {fmt_ratio(per_trial_ratio(t, 'snapfuzz-strict', 'libfuzzer'))}"
            + f" | {fmt_ratio(per_trial_ratio(t, 'snapfuzz-strict', 'bare'))}"
            + f" | {fmt_ratio(per_trial_ratio(t, 'snapfuzz-strict', 'snapfuzz-off'))} |"
        )
    lines += [
        "",
        "## Per CPU-second",
        "",
        "The same runs, as executions per second of CPU time (user + sys of the whole",
        "process tree: for snapfuzz the coordinator, worker, runners and recovery helper",
        "too). On a shared machine a pinned run does not get its core to itself; this",
        "figure does not depend on how much of the core the run was given, only on what",
        "one execution costs. The last column is the share of the core the strict",
        "snapfuzz runs got (CPU time / wall time), a gauge of the noise.",
        "",
        "| target | snapfuzz | snapfuzz `--sandbox off` | libFuzzer | bare loop "
        "| snapfuzz / libFuzzer | snapfuzz / bare | strict / off | core share |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in targets:
        med = []
        for tool in EXEC_TOOLS:
            vals = [cpu_rate[(t, tool, tr)] for tr in trials if (t, tool, tr) in cpu_rate]
            med.append(fmt_rate(statistics.median(vals)) if vals else "–")
        shares = [share[(t, "snapfuzz-strict", tr)] for tr in trials if (t, "snapfuzz-strict", tr) in share]
        lines.append(
            f"| {t} | "
            + " | ".join(med)
            + f" | {fmt_ratio(per_trial_ratio(t, 'snapfuzz-strict', 'libfuzzer', cpu_rate))}"
            + f" | {fmt_ratio(per_trial_ratio(t, 'snapfuzz-strict', 'bare', cpu_rate))}"
            + f" | {fmt_ratio(per_trial_ratio(t, 'snapfuzz-strict', 'snapfuzz-off', cpu_rate))}"
            + f" | {fmt_ratio(shares)} |"
        )
    lines += [
        "",
        "## Every run",
        "",
        "exec/s is execs / elapsed: snapfuzz's `stats.json` (`execs`, `elapsed_s`, from",
        "the coordinator's start to its exit), libFuzzer's `stat::number_of_executed_units`",
        "over the wall time of its process, the bare loop's own count and clock. wall, user",
        "and sys are the shell's timing of the whole process tree; corpus is the number",
        "of files in the output corpus (for the bare loop: the inputs it cycled over).",
        "",
        "| trial | target | tool | execs | elapsed s | exec/s | wall s | user s | sys s "
        "| exec/CPU-s | corpus |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        key = (r["target"], r["tool"], r["trial"])
        lines.append(
            f"| {r['trial']} | {r['target']} | {r['tool']} | {r['execs']} | "
            f"{float(r['elapsed_s']):.2f} | {rate[key]:.0f} | {r['wall_s']} | {r['user_s']} | "
            f"{r['sys_s']} | {cpu_rate[key]:.0f} | {r['corpus']} |"
        )
    return "\n".join(lines) + "\n"


def num(v):
    return None if v in ("", "None", None) else float(v)


def med_worst(values):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    return f"{statistics.median(values):.0f} / {max(values):.0f}"


def recovery_report(rows, meta):
    targets = []
    for r in rows:
        if r["target"] not in targets:
            targets.append(r["target"])
    lines = ["# Crash recovery: time to find, rebuild and verify", ""]
    lines.append(meta_block(meta))
    lines += [
        "",
        "Median / worst over the runs, in milliseconds (time to find in seconds).",
        "",
        "| target | kind | runs | found | reproduced | time to find s | death → verified ms "
        "| rebuild ms | verify ms | --timeout |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in targets:
        rs = [r for r in rows if r["target"] == t]
        found = [r for r in rs if r["kind"]]
        kinds = sorted({r["kind"] for r in found})
        ttf = [num(r["elapsed_s"]) for r in found]
        ttf_s = "–"
        if ttf:
            ttf_s = f"{statistics.median(ttf):.2f} / {max(ttf):.2f}"
        lines.append(
            f"| {t} | {', '.join(kinds) or '–'} | {len(rs)} | {len(found)} | "
            f"{sum(1 for r in found if r['reproduced'] == 'True')} | {ttf_s} | "
            f"{med_worst(num(r['death_to_verified_ms']) for r in found)} | "
            f"{med_worst(num(r['rebuild_ms']) for r in found)} | "
            f"{med_worst(num(r['verify_ms']) for r in found)} | {rs[0]['timeout_s']} |"
        )
    lines += [
        "",
        "## Every run",
        "",
        "| target | seed | exit | kind | reproduced | time to find s | death → verified ms "
        "| rebuild ms | verify ms | execs | input bytes |",
        "|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['target']} | {r['seed']} | {r['exit']} | {r['kind'] or '–'} | "
            f"{r['reproduced'] or '–'} | {float(r['elapsed_s']):.2f} | "
            f"{r['death_to_verified_ms'] or '–'} | {r['rebuild_ms'] or '–'} | "
            f"{r['verify_ms'] or '–'} | {r['execs']} | {r['input_len'] or '–'} |"
        )
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("which", choices=["execs", "recovery"])
    p.add_argument("raw")
    p.add_argument("--meta", action="append", default=[])
    a = p.parse_args()
    rows = read_rows(a.raw)
    if a.which == "execs":
        sys.stdout.write(execs_report(rows, a.meta))
    else:
        sys.stdout.write(recovery_report(rows, a.meta))


if __name__ == "__main__":
    main()
