#!/usr/bin/env python3
"""Runs rtmem_threads_stress for every heap x workload x thread count, one process per run, and
prints a Markdown table (medians of --reps runs; spread as min..max of wall time).

Peers are loaded with LD_PRELOAD, so malloc *and* operator new come from the peer; each row shows
the library the process reported for both (dladdr), and a row whose library is not the one asked
for is marked MISMATCH instead of being reported under the wrong name.

  bench/threads/run.py build/release/bench/threads/rtmem_threads_stress [--threads 1 2] [--reps 3]
"""
import argparse
import os
import statistics
import subprocess
import sys

LIBDIR = "/usr/lib/x86_64-linux-gnu"
PEERS = {  # name -> (preloaded library, what dladdr must report for malloc and operator new)
    # glibc has no operator new of its own: libstdc++'s calls malloc.
    "glibc": (None, ("libc.so.6", "libstdc++.so.6")),
    "mimalloc": ("libmimalloc.so.2", ("libmimalloc.so.2",) * 2),
    "jemalloc": ("libjemalloc.so.2", ("libjemalloc.so.2",) * 2),
    "tcmalloc": ("libtcmalloc_minimal.so.4", ("libtcmalloc_minimal.so.4",) * 2),
}
WORKLOADS = ["larson", "xmalloc", "cache_scratch", "mstress", "alloc_test"]


def run(binary, heap, workload, threads, scale, preload):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = os.path.join(LIBDIR, preload)
    out = subprocess.run([binary, heap, workload, str(threads), str(scale)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return dict(kv.split("=", 1) for kv in out.split())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workloads", nargs="+", default=WORKLOADS)
    args = ap.parse_args()
    heaps = [("rt_heap", "rt_heap", None, None), ("rt_heap_rt", "rt_heap_rt", None, None)]
    for name, (lib, expect) in PEERS.items():
        if lib is None or os.path.exists(os.path.join(LIBDIR, lib)):
            heaps.append((name, "malloc", lib, expect))
    print("| workload | T | heap | calls served by | malloc | operator new | wall ms (min..max) "
          "| cpu ms | peak RSS MiB (VmHWM) | p50 | p99 | p99.9 | p99.99 | max (ns) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for workload in args.workloads:
        for threads in args.threads:
            for name, heap, lib, expect in heaps:
                rows = [run(args.binary, heap, workload, threads, args.scale, lib)
                        for _ in range(args.reps)]
                served = rows[0]["calls"]
                if expect is not None and (rows[0]["malloc"], rows[0]["new"]) != expect:
                    served = f"MISMATCH ({expect[0]} asked)"
                med = lambda k: statistics.median(float(r[k]) for r in rows)
                walls = [float(r["wall_s"]) * 1e3 for r in rows]
                print(f"| {workload} | {threads} | {name} | {served} | {rows[0]['malloc']} | "
                      f"{rows[0]['new']} | {med('wall_s') * 1e3:.1f} ({min(walls):.1f}.."
                      f"{max(walls):.1f}) | {med('cpu_s') * 1e3:.1f} | "
                      f"{med('peak_rss_kb') / 1024:.1f} | {med('p50_ns'):.0f} | "
                      f"{med('p99_ns'):.0f} | {med('p999_ns'):.0f} | {med('p9999_ns'):.0f} | "
                      f"{med('max_ns'):.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
