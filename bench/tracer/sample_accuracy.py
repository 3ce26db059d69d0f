#!/usr/bin/env python3
"""How close sampled recording's estimates come to the exact trace (docs/tracer.md, "Sampled
recording, accuracy").

For each workload: records one deterministic run exactly twice (the second is the control: how
much the program itself differs between runs) and sampled with --seeds seeds
(RTMEM_TRACE_SEED=1..N) at each --interval; runs rtmem_bench_sample_accuracy on the traces
and prints, for the exact trace's top --top sites by bytes:
  - within 10%: the share of (site, seed) estimates of bytes (and of calls) within 10% of the
    exact figure; and the number of sites that allocated >= 384 x the interval, the minimum for
    10% at 95% (1.96 sqrt(T / B) <= 0.1), with their share within 10%;
  - coverage: the share of (site, seed) whose reported 95% interval holds the exact figure
    (calibrated: ~95%), beside that of the Wald interval y +- 1.96 sqrt(v), over the pairs where
    the site was recorded at all (an unrecorded site is absent from the report);
  - the same by site size (B / T buckets) over the top 200 sites;
  - error vs prediction: the RMS over sites and seeds of (estimate - exact) / (exact sqrt(T/B)),
    which is 1 when the errors are what byte sampling predicts; and the number of sites
    expected within 10% under that prediction;
  - totals: mean over seeds of the estimated bytes, allocations, peak live and leaked bytes
    against the exact ones (bias; with the standard error of that mean).
Sites are matched across traces by their symbolized frames (--match frames, the default) or by
their module+offset stacks (--match offsets); both are printed as a matched-site count.

  bench/tracer/sample_accuracy.py [--rtmem build/dev/tools/cli/rtmem]
      [--tool build/dev/bench/trace/rtmem_bench_sample_accuracy] [--seeds 5]
      [--interval 512K[,16K]] [--only NAME[,NAME]] [--top 20] [--keep DIR] [--json OUT]

Workloads (deterministic: PYTHONHASHSEED=0, address randomisation off through setarch -R):
  python3 short / long: a JSON round trip of a list of records, 8 / 300 rounds;
  cc1plus -O2: g++'s compiler proper on <bits/stdc++.h> plus some templates.
Needs python3, g++ 12 (cc1plus) and setarch. Make `rtmem_cli rtmem_trace
rtmem_bench_sample_accuracy` first, or run `make bench-sample-accuracy` (release build, all workloads, 512K and 16K; about an hour on a loaded 2-core machine, most of it the long python3 run).
"""
import argparse
import glob
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PYTHON = """import json, sys
rounds = int(sys.argv[1])
data = [{"id": i, "name": "item %d" % i, "tags": ["t%d" % (i % 13)] * (i % 7),
         "value": i * 0.5, "nested": {"a": [i] * (i % 11), "b": str(i) * (i % 5)}}
        for i in range(30000)]
total = 0
for r in range(rounds):
    text = json.dumps(data, sort_keys=(r % 2 == 0))
    back = json.loads(text)
    total += len(text) + len(back)
    data = back
print(total)
"""
CXX = r"""
#include <bits/stdc++.h>
template <int N> struct node { std::vector<std::string> names; std::map<int, node<N - 1>> kids; int f() const { return N + static_cast<int>(names.size()); } };
template <> struct node<0> { int f() const { return 0; } };
int run(int n) {
    node<7> root;
    std::vector<int> v(n);
    std::sort(v.begin(), v.end());
    std::unordered_map<std::string, std::vector<int>> m;
    for (int i = 0; i < n; ++i) m[std::to_string(i)].push_back(i);
    std::regex re("[a-z]+([0-9]*)");
    return root.f() + static_cast<int>(m.size()) + static_cast<int>(std::regex_match("ab1", re));
}
"""


def cc1plus():
    found = sorted(glob.glob("/usr/lib/gcc/x86_64-linux-gnu/*/cc1plus"))
    return found[-1] if found else "cc1plus"


def workloads(work):
    """name -> argv (run in `work`)."""
    with open(os.path.join(work, "j.py"), "w") as f:
        f.write(PYTHON)
    with open(os.path.join(work, "f.cpp"), "w") as f:
        f.write(CXX)
    subprocess.run(["g++", "-std=c++17", "-E", "-o", os.path.join(work, "f.ii"),
                    os.path.join(work, "f.cpp")], check=True)
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    return {
        "python3 short": [python, "j.py", "8"],
        "python3 long": [python, "j.py", "300"],
        "cc1plus -O2": [cc1plus(), "-quiet", "-O2", "f.ii", "-o", "f.s"],
    }


def parse_bytes(text):
    text = text.strip().upper()
    for suffix, scale in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if text.endswith(suffix):
            return int(float(text[:-1]) * scale)
    return int(text)


def human(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(b) >= scale:
            return f"{b / scale:.1f} {unit}"
    return f"{b:.0f} B"


def record(rtmem, argv, out, work, interval=None, seed=None):
    cmd = [rtmem, "record", "-o", out]
    if interval:
        cmd += ["--sample", str(interval)]
    cmd += ["--"] + argv
    if shutil.which("setarch"):
        cmd = ["setarch", os.uname().machine, "-R"] + cmd
    env = dict(os.environ, PYTHONHASHSEED="0")
    if seed is not None:
        env["RTMEM_TRACE_SEED"] = str(seed)
    t0 = time.monotonic()
    subprocess.run(cmd, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.monotonic() - t0


Z = 1.959963984540054


def score_interval(y, v):
    """sample_weight.hpp's confidence95."""
    if v <= 0 or y <= 0:
        return y, y
    c = v / y
    centre = y + c * Z * Z / 2
    half = Z * math.sqrt(v + c * c * Z * Z / 4)
    if y / c < 2.5:
        return 0.0, centre + half
    return max(0.0, centre - half), centre + half


def site_rows(sites, interval, first, last, what):
    """Per (site, seed) of sampled traces first..last-1: relative error, coverage flags."""
    rows = []
    for s in sites:
        exact = s[what]
        if exact <= 0:
            continue
        for e in s["estimates"][first:last]:
            y, v = e[what], e[what + "_variance"]
            lo, hi = score_interval(y, v)
            wald = Z * math.sqrt(max(v, 0))
            rows.append({"exact": exact, "bytes": s["bytes"], "est": y, "recorded": e["calls"] > 0,
                         "rel": (y - exact) / exact,
                         "score": lo <= exact <= hi, "wald": abs(y - exact) <= wald,
                         "pred": math.sqrt(interval / s["bytes"])})
    return rows


def share(rows, key):
    return sum(1 for r in rows if r[key]) / len(rows) if rows else float("nan")


def covered(rows, key):
    """Coverage over the (site, seed) pairs where the site was recorded at all: a site with no
    sample is absent from the sampled report, with no interval to judge."""
    return share([r for r in rows if r["recorded"]], key)


def summarize(name, data, interval, first, last, top, match):
    sites = data["sites_by_" + match][:top]
    seeds = last - first
    out = {"workload": name, "interval": interval, "seeds": seeds}
    for what in ("bytes", "calls"):
        rows = site_rows(sites, interval, first, last, what)
        for r in rows:
            r["within"] = abs(r["rel"]) <= 0.1
        big = [r for r in rows if r["bytes"] >= 384 * interval]
        out[what] = {
            "within_10": share(rows, "within"),
            "coverage": covered(rows, "score"),
            "coverage_wald": covered(rows, "wald"),
            "recorded": share(rows, "recorded"),
            "rms_vs_prediction": math.sqrt(statistics.fmean((r["rel"] / r["pred"]) ** 2 for r in rows)),
            "expected_within_10": statistics.fmean(math.erf(0.1 / (r["pred"] * math.sqrt(2))) for r in rows),
            "mean_rel": statistics.fmean(r["rel"] for r in rows),
            "mean_rel_sem": statistics.stdev(r["rel"] for r in rows) / math.sqrt(len(rows)),
            "sites_over_384T": len(big) // max(seeds, 1),
            "within_10_over_384T": share(big, "within"),
        }
    ex = data["exact"]
    totals = {}
    for key in ("bytes_allocated", "allocations", "peak_live_bytes", "leaked_bytes"):
        rel = [(s[key] - ex[key]) / ex[key] for s in data["sampled"][first:last] if ex[key]]
        totals[key] = {"exact": ex[key], "mean_rel": statistics.fmean(rel) if rel else 0,
                       "sem": statistics.stdev(rel) / math.sqrt(len(rel)) if len(rel) > 1 else 0}
    out["totals"] = totals
    # Every site of the top 200, by its bytes in intervals: how the error follows B / T.
    buckets = []
    rows = site_rows(data["sites_by_" + match], interval, first, last, "bytes")
    for lo, hi in ((0, 24), (24, 96), (96, 384), (384, float("inf"))):
        sel = [r for r in rows if lo * interval <= r["bytes"] < hi * interval]
        for r in sel:
            r["within"] = abs(r["rel"]) <= 0.1
        buckets.append({"from": lo, "to": hi, "sites": len(sel) // max(seeds, 1),
                        "within_10": share(sel, "within"), "coverage": covered(sel, "score"),
                        "coverage_wald": covered(sel, "wald"), "recorded": share(sel, "recorded"),
                        "expected_within_10": statistics.fmean(math.erf(0.1 / (r["pred"] * math.sqrt(2))) for r in sel) if sel else float("nan")})
    out["by_size"] = buckets
    out["smallest_top_site"] = sites[-1]["bytes"] if sites else 0
    out["top_site"] = sites[0]["bytes"] if sites else 0
    out["matched"] = {m: sum(1 for s in data["sites_by_" + m][:top]
                             for e in s["estimates"][first:last] if e["calls"] > 0) / seeds
                      for m in ("frames", "offsets")}
    return out


def control(data, top, match):
    """The second exact trace against the first: the largest |difference| in the top sites."""
    sites = data["sites_by_" + match][:top]
    return max((abs(s["estimates"][0]["bytes"] - s["bytes"]) / s["bytes"] for s in sites), default=0)


def pct(x):
    return "n/a" if x != x else f"{100 * x:.0f}%"


def print_tables(results):
    print("Per site (the exact trace's top sites by bytes; each figure over sites x seeds):\n")
    print("| run (bytes allocated) | interval | top sites, largest … smallest | sites ≥ 384 × interval "
          "| bytes within 10% (expected) | … of sites ≥ 384 × interval | 95% interval covers (Wald's), of those recorded "
          "| error / √(T/B), RMS | mean error (bias) | calls within 10% | calls covered (Wald's) "
          "| calls mean error | matched, frames / offsets | exact vs exact, worst site |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        b, c = r["bytes"], r["calls"]
        print(f"| {r['workload']} ({human(r['totals']['bytes_allocated']['exact'])}) | {human(r['interval'])} "
              f"| {human(r['top_site'])} … {human(r['smallest_top_site'])} | {b['sites_over_384T']} "
              f"| {pct(b['within_10'])} ({pct(b['expected_within_10'])}) | {pct(b['within_10_over_384T'])} "
              f"| {pct(b['coverage'])} ({pct(b['coverage_wald'])}) | {b['rms_vs_prediction']:.2f} "
              f"| {100 * b['mean_rel']:+.1f}% ± {196 * b['mean_rel_sem']:.1f} | {pct(c['within_10'])} "
              f"| {pct(c['coverage'])} ({pct(c['coverage_wald'])}) | {100 * c['mean_rel']:+.1f}% ± {196 * c['mean_rel_sem']:.1f} "
              f"| {r['matched']['frames']:.1f} / {r['matched']['offsets']:.1f} | {100 * r['control_worst_site']:.1f}% |")
    print("\nAll sites of the top 200 by their bytes B in intervals T (bytes within 10%, with the share "
          "expected from a relative error of √(T/B); the share of (site, seed) recorded at all, and of those the 95% interval's coverage, Wald's in brackets):\n")
    print("| run | interval | B < 24 T | 24–96 T | 96–384 T | ≥ 384 T |")
    print("|---|---|---|---|---|---|")
    for r in results:
        cells = []
        for b in r["by_size"]:
            cells.append("—" if b["sites"] == 0 else
                         f"{b['sites']} sites: {pct(b['within_10'])} (exp. {pct(b['expected_within_10'])}); "
                         f"recorded {pct(b['recorded'])}, of which covered {pct(b['coverage'])} ({pct(b['coverage_wald'])})")
        print(f"| {r['workload']} | {human(r['interval'])} | " + " | ".join(cells) + " |")
    print("\nTotals (mean over seeds of estimate / exact - 1, ± 1.96 standard errors of that mean):\n")
    print("| run | interval | seeds | bytes allocated | allocations | peak live | leaked bytes (exact) |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        t = r["totals"]
        def tot(key):
            return f"{100 * t[key]['mean_rel']:+.1f}% ± {196 * t[key]['sem']:.1f}"
        print(f"| {r['workload']} | {human(r['interval'])} | {r['seeds']} | {tot('bytes_allocated')} "
              f"| {tot('allocations')} | {tot('peak_live_bytes')} "
              f"| {tot('leaked_bytes')} ({human(t['leaked_bytes']['exact'])}) |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtmem", default=os.path.join(ROOT, "build/dev/tools/cli/rtmem"))
    ap.add_argument("--tool", default=os.path.join(ROOT, "build/dev/bench/trace/rtmem_bench_sample_accuracy"))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--interval", default="512K")
    ap.add_argument("--only", default="")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--match", choices=("frames", "offsets"), default="frames")
    ap.add_argument("--keep", help="keep the traces in this directory")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: analyse the traces already there instead of recording")
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    for path in (a.rtmem, a.tool):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path} not built (cmake --build --preset dev --target rtmem_cli rtmem_trace "
                     "rtmem_bench_sample_accuracy)")
    intervals = [parse_bytes(x) for x in a.interval.split(",")]
    work = a.keep or tempfile.mkdtemp(prefix="rtmem-sample-accuracy-")
    os.makedirs(work, exist_ok=True)
    wanted = [x.strip() for x in a.only.split(",") if x.strip()]
    results = []
    try:
        for name, argv in workloads(work).items():
            if wanted and not any(w in name for w in wanted):
                continue
            slug = name.replace(" ", "_").replace("-", "")
            exact = [os.path.join(work, f"{slug}.exact{i}.rtt") for i in (1, 2)]
            for path in exact:
                if not (a.reuse and os.path.exists(path)):
                    record(a.rtmem, argv, path, work)
            sampled = []
            for t in intervals:
                for seed in range(1, a.seeds + 1):
                    path = os.path.join(work, f"{slug}.{t}.{seed}.rtt")
                    if not (a.reuse and os.path.exists(path)):
                        record(a.rtmem, argv, path, work, t, seed)
                    sampled.append(path)
            text = subprocess.run([a.tool, "--top", str(max(a.top, 200)), exact[0], exact[1]] + sampled,
                                  check=True, stdout=subprocess.PIPE, text=True).stdout
            data = json.loads(text)
            ctrl = control(data, a.top, a.match)
            for i, t in enumerate(intervals):
                first = 1 + i * a.seeds
                r = summarize(name, data, t, first, first + a.seeds, a.top, a.match)
                r["control_worst_site"] = ctrl
                results.append(r)
                print(f"{name} at {human(t)}: done", file=sys.stderr)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_tables(results)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
