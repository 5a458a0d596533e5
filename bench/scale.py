#!/usr/bin/env python3
"""Summarizes one bench/scale.sh run: the coordinator's stats.json and the
simulated workers' log lines (bench/simworker.c). Prints one markdown table
row, or the header with --header."""
import json
import sys

COLS = ["workers", "finds model", "elapsed s", "batches/s", "finds", "coord CPU %",
        "coord µs/event", "loop µs/event", "worker idle %", "mean wait ms", "max wait ms", "sim execs/s"]

def main():
    if sys.argv[1] == "--header":
        print("| " + " | ".join(COLS) + " |")
        print("|" + "|".join("---:" if i else "---" for i in range(len(COLS))) + "|")
        return
    stats_path, log_path, label = sys.argv[1], sys.argv[2], sys.argv[3]
    st = json.load(open(stats_path))
    rows = [json.loads(l) for l in open(log_path) if l.strip()]
    el = st["elapsed_s"]
    batches = sum(r["batches"] for r in rows)
    busy = sum(r["busy_ms"] for r in rows)
    idle = sum(r["idle_ms"] for r in rows)
    maxw = max((r["max_idle_ms"] for r in rows), default=0)
    ev = st.get("worker_events", 0)
    cpu = st.get("coordinator_cpu_s", 0)
    out = [
        str(st["workers"]), label, "%.1f" % el, "%.0f" % (batches / el),
        str(st["corpus"]), "%.1f" % (100 * cpu / el),
        "%.0f" % (1e6 * cpu / ev if ev else 0),
        "%.0f" % (1e6 * st.get("coordinator_loop_cpu_s", 0) / ev if ev else 0),
        "%.1f" % (100 * idle / (idle + busy) if idle + busy else 0),
        "%.2f" % (idle / batches if batches else 0), "%.0f" % maxw,
        "%.0fM" % (st["execs"] / el / 1e6),
    ]
    print("| " + " | ".join(out) + " |")

main()
