#!/usr/bin/env python3
"""Prints the demo's side-by-side table from the JSON files rtmem_demo wrote.

usage: summarize.py OUT_DIR LABEL [LABEL...]   (reads OUT_DIR/LABEL.json and LABEL.profile.json)
Writes OUT_DIR/summary.md (the same table in markdown). Exits 1 when the variants' final-state
checksums differ (the comparison would not be fair).
"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def mib(v):
    return f"{v:.1f} MiB"


def main():
    out, labels = sys.argv[1], sys.argv[2:]
    runs = []
    for label in labels:
        timing = load(os.path.join(out, label + ".json"))
        if timing is None:
            continue
        profile = load(os.path.join(out, label + ".profile.json")) or {}
        runs.append((label, timing, profile))
    if not runs:
        print("demo: no results to summarise", file=sys.stderr)
        return 1
    base = runs[0][1]

    def ratio(v, b):
        return f" ({v / b:.2f}x)" if b else ""

    rows = [
        ("frame time p50", lambda t, p: f"{t['frame_ms']['p50']:.2f} ms", lambda t: t["frame_ms"]["p50"]),
        ("frame time p99", lambda t, p: f"{t['frame_ms']['p99']:.2f} ms", lambda t: t["frame_ms"]["p99"]),
        ("frame time max", lambda t, p: f"{t['frame_ms']['max']:.2f} ms", lambda t: t["frame_ms"]["max"]),
        ("game-thread CPU / frame", lambda t, p: f"{t['game_cpu_ms_per_frame']:.2f} ms",
         lambda t: t["game_cpu_ms_per_frame"]),
        ("time in allocators / frame", lambda t, p: f"{p.get('alloc_us_per_frame', 0):.0f} us" if p else "-", None),
        ("heap calls / frame", lambda t, p: f"{t['heap_calls_per_frame']:,.0f}" if t["heap_counting"] else "n/a", None),
        ("rtmem allocator calls / frame", lambda t, p: f"{t['rtmem_calls_per_frame']:,.0f}", None),
        ("peak RSS", lambda t, p: mib(t["peak_rss_mib"]), None),
        ("peak live heap bytes", lambda t, p: mib(p["peak_heap_mib"]) if p else "-", None),
        ("final-state checksum", lambda t, p: t["checksum"], None),
    ]
    header = ["", *[label for label, _, _ in runs]]
    table = []
    for name, fmt, metric in rows:
        line = [name]
        for i, (label, t, p) in enumerate(runs):
            cell = fmt(t, p)
            if metric and i > 0:
                cell += ratio(metric(t), metric(base))
            line.append(cell)
        table.append(line)
    widths = [max(len(r[i]) for r in [header] + table) for i in range(len(header))]
    fmt_row = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    print(fmt_row(header))
    for r in table:
        print(fmt_row(r))
    print(f"({base['frames']} frames, {base['entities']} entities, seed {base['seed']}; frame times from runs "
          "without instrumentation, allocator time and live bytes from a second, profiled run; "
          "(x) = ratio to the first column)")
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in table]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    for label, t, _ in runs:
        if t.get("tags"):
            print(f"\nmemory by tag ({label}): bytes each subsystem holds from the system")
            w = max(len(x["tag"]) for x in t["tags"])
            print(f"  {'tag'.ljust(w)}  {'live':>10}  {'peak':>10}  {'calls':>8}  detail")
            for x in t["tags"]:
                print(f"  {x['tag'].ljust(w)}  {x['live'] / 1048576:8.2f} MiB  {x['peak'] / 1048576:8.2f} MiB"
                      f"  {x['calls']:>8}  {x.get('detail', '')}")
    sums = {t["checksum"] for _, t, _ in runs} | {p["checksum"] for _, _, p in runs if p}
    if len(sums) != 1:
        print("\ndemo: the variants' final-state checksums DIFFER: the comparison is not fair", file=sys.stderr)
        return 1
    print("\nall runs reached the same final state (same checksum): same work, different memory source")
    return 0


if __name__ == "__main__":
    sys.exit(main())
