#!/usr/bin/env python3
"""Frame-time plot of the demo's variants: per-frame time over the run and its distribution.

usage: plot_frames.py OUT.png LABEL=FILE.csv [LABEL=FILE.csv ...]
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    out, series = sys.argv[1], []
    for arg in sys.argv[2:]:
        label, path = arg.split("=", 1)
        with open(path) as f:
            series.append((label, [float(r["frame_ms"]) for r in csv.DictReader(f)]))
    fig, (over_time, dist) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [2.2, 1]})
    for label, ms in series:
        over_time.plot(range(len(ms)), ms, linewidth=0.7, label=label)
        s = sorted(ms)
        dist.plot([100.0 * (i + 1) / len(s) for i in range(len(s))], s, label=label)
    over_time.set(title="Frame time per frame", xlabel="frame", ylabel="ms")
    # Scale to the 99.9th percentile: one descheduled frame on a shared machine would flatten the rest.
    top = max(sorted(ms)[max(0, int(len(ms) * 0.999) - 1)] for _, ms in series) * 1.3
    over_time.set_ylim(bottom=0, top=top)
    over_time.legend(loc="upper right")
    dist.set(title="Frame time percentiles", xlabel="percentile", ylabel="ms")
    dist.set_xlim(50, 100)
    dist.set_ylim(bottom=0, top=top)
    dist.grid(alpha=0.3)
    dist.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
