#!/usr/bin/env python3
"""Calibrates `rtmem advise --plan`'s per-call costs (plan_costs, docs/advisor.md "What a site
saves against rt_heap"): runs plan_costs.cpp's loops under `rtmem run` (rt_heap alone) and
`rtmem run --plan` (a one-frame plan of the driver's own sites), interleaved, and counts their
instructions with callgrind; prints per pair ns (median, min-max of the runs) and instructions,
and the constants derived from them.

  bench/plan_run/plan_costs.py --build build/release [--runs 7] [--json out.json]

Needs the release build's rtmem_cli, rtmem_malloc (the preload library) and rtmem_plan_costs
targets, and valgrind for the instruction counts (--no-callgrind skips them)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

KINDS = ["pool", "burst16", "burst256", "one40", "large", "unplanned"]
STRATEGY = {"pool": "pool", "burst16": "region", "burst256": "region", "one40": "thread_stack",
            "large": "region", "unplanned": "(unplanned)"}
MODES = {"rt_heap": [], "plan": ["--plan"]}
LIST_BLOCKS = 32  # rt_heap's cache_depth: a burst of 256 misses on 224 of 256 calls each way


def run_ns(rtmem, driver, plan, pairs):
    out = {}
    for mode, flag in MODES.items():
        cmd = [rtmem, "run"] + (flag + [plan] if flag else []) + ["--", driver, "all", str(pairs)]
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        out[mode] = {k: float(v) for k, v in (line.split() for line in text.splitlines())}
    return out


def check_routing(rtmem, driver, plan):
    """The plan's figures are its strategies' only if every planned loop reached them."""
    r = subprocess.run([rtmem, "run", "--stats", "--plan", plan, "--", driver, "all", "2560",
                        "1"], capture_output=True, text=True, check=True)
    want = ("5 of 5 sites matched", "0 requests of planned sites to the general heap")
    if not all(w in r.stderr for w in want):
        sys.exit("plan_costs.py: the plan did not route every planned loop to its strategy:\n" +
                 r.stderr)


def callgrind_instructions(rtmem, driver, plan, pairs, workdir):
    """Instructions per pair of one counted pass (after a warm-up pass), whole path."""
    out = {mode: {} for mode in MODES}
    for mode, flag in MODES.items():
        for kind in KINDS:
            prefix = os.path.join(workdir, f"cg.{mode}.{kind}")
            cmd = ["valgrind", "--tool=callgrind", "--trace-children=yes",
                   f"--toggle-collect=measure_{kind}", f"--callgrind-out-file={prefix}.%p",
                   rtmem, "run"] + (flag + [plan] if flag else []) + \
                  ["--", driver, kind, str(pairs), "1"]
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            total = 0
            for name in os.listdir(workdir):
                if name.startswith(os.path.basename(prefix) + "."):
                    with open(os.path.join(workdir, name), errors="replace") as f:
                        for line in f:
                            if line.startswith(("summary:", "totals:")):
                                total += int(line.split()[1])
                                break
            out[mode][kind] = total / pairs
    return out


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def derive(ns):
    """The plan_costs constants, per call (half a pair), from the medians; the rows they come
    from are named in docs/advisor.md."""
    heap = {k: ns["rt_heap"][k]["median"] for k in KINDS}
    plan = {k: ns["plan"][k]["median"] for k in KINDS}
    list_ns = heap["pool"] / 2
    miss_share = (256 - LIST_BLOCKS) / 256
    # burst256 on rt_heap: a call is a list hit (1/8) or a miss (7/8).
    miss_ns = (heap["burst256"] / 2 - (1 - miss_share) * list_ns) / miss_share
    return {
        "plan_heap_list_ns": list_ns,
        "plan_heap_miss_ns": miss_ns,
        "plan_heap_large_ns": heap["large"] / 2,
        "plan_call_ns": plan["pool"] / 2,
        "plan_region_call_ns": plan["burst256"] / 2,
        "plan_probe_ns": max(0.0, (plan["unplanned"] - heap["unplanned"]) / 2),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--runs", type=int, default=7, help="interleaved runs of each mode (>= 7)")
    ap.add_argument("--pairs", type=int, default=1 << 20, help="pairs per timed pass")
    ap.add_argument("--cg-pairs", type=int, default=25600, help="pairs counted by callgrind")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    rtmem = os.path.join(args.build, "tools/cli/rtmem")
    driver = os.path.join(args.build, "bench/plan_run/rtmem_plan_costs")
    for path in (rtmem, driver):
        if not os.access(path, os.X_OK):
            sys.exit(f"plan_costs.py: {path} not built (targets rtmem_cli rtmem_malloc "
                     "rtmem_plan_costs)")
    pairs = max(256, args.pairs // 256 * 256)
    cg_pairs = max(256, args.cg_pairs // 256 * 256)
    work = tempfile.mkdtemp(prefix="plan-costs-")
    try:
        plan = os.path.join(work, "plan.json")
        subprocess.run([driver, "make-plan", plan], check=True)
        check_routing(rtmem, driver, plan)
        runs = [run_ns(rtmem, driver, plan, pairs) for _ in range(args.runs)]
        ns = {mode: {k: spread([r[mode][k] for r in runs]) for k in KINDS} for mode in MODES}
        instr = None
        if not args.no_callgrind and shutil.which("valgrind"):
            instr = callgrind_instructions(rtmem, driver, plan, cg_pairs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = os.getloadavg()[0]
    print(f"per malloc+free pair; ns: median (min-max) of {args.runs} interleaved runs of "
          f"{pairs} pairs (each the median of 5 passes), load average {load:.1f}; "
          f"instructions: callgrind, one pass of {cg_pairs} pairs")
    print(f"{'loop':<10} {'planned as':<13} {'rt_heap ns':>20} {'plan ns':>20} "
          f"{'rt_heap instr':>14} {'plan instr':>11}")
    for k in KINDS:
        def cell(mode):
            s = ns[mode][k]
            return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"
        ih = f"{instr['rt_heap'][k]:.1f}" if instr else "-"
        ip = f"{instr['plan'][k]:.1f}" if instr else "-"
        print(f"{k:<10} {STRATEGY[k]:<13} {cell('rt_heap'):>20} {cell('plan'):>20} "
              f"{ih:>14} {ip:>11}")
    costs = derive(ns)
    print("\nper call (plan_costs; docs/advisor.md):")
    for name, value in costs.items():
        print(f"  {name} = {value:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pairs": pairs, "runs": args.runs, "load": load, "ns": ns,
                       "instructions": instr, "costs": costs}, f, indent=1)


if __name__ == "__main__":
    main()
