#!/usr/bin/env python3
"""The tracer on eight programs nobody here wrote (docs/tracer.md, "Eight real programs").

For each program: the native run, `rtmem record` and heaptrack, each --runs times (medians of
wall and CPU time, CPU being the whole process tree: the tracer's writer thread and heaptrack's
interpreter included); whether the program's output was identical in all three; allocation
calls, peak, leak and temporaries by rtmem and by heaptrack; the trace's size; and the time
`rtmem report`, `rtmem advise` and `rtmem replay` take on the trace. Prints a Markdown table.

  bench/tracer/eight_programs.py [--rtmem build/release/tools/cli/rtmem] [--runs 3]
                                 [--only NAME[,NAME]] [--no-replay] [--replay-args "..."]

Needs heaptrack, python3, perl, cmake, sqlite3, git, g++ 12 (cc1plus), xz and make.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PYTHON = "d = {}\nfor i in range(300000):\n    d[str(i)] = [i] * (i % 7)\nprint(len(d), sum(len(v) for v in d.values()))\n"
PERL = 'my %h; for my $i (1..100000) { my $s = ""; $s .= "ab" x 4 for 1..6; $h{$i} = $s } print scalar(keys %h), "\\n";'
CMAKE_SCRIPT = 'set(l "")\nforeach(i RANGE 4000)\n  string(REPEAT "x" 20 s)\n  list(APPEND l "${s}${i}")\nendforeach()\nlist(LENGTH l n)\nmessage(STATUS "items ${n}")\n'
SQL = ("create table t(a integer primary key, b text, c real);\n"
       "with recursive n(i) as (select 1 union all select i + 1 from n where i < 60000)\n"
       "insert into t select i, printf('row %d %x', i, (i * 2654435761) % 1000003), i * 0.5 from n;\n"
       "create index tb on t(b);\n"
       "select count(*), sum(length(b)), max(c) from t where b like 'row 1%';\n")
CXX_SOURCE = r"""
#include <algorithm>
#include <map>
#include <string>
#include <vector>
template <int N> struct node { std::vector<std::string> names; std::map<int, node<N - 1>> kids; int f() const { return N + static_cast<int>(names.size()); } };
template <> struct node<0> { int f() const { return 0; } };
int run(int n) {
    node<6> root;
    std::vector<int> v(n);
    std::sort(v.begin(), v.end());
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < n; ++i) m[std::to_string(i)].push_back(i);
    return root.f() + static_cast<int>(m.size());
}
"""
# Each target runs a shell and cat; the output is printed once all are built (no ordering race).
MAKEFILE = "".join(f"t{i}.out:\n\t@printf 't{i}\\n' | cat > t{i}.out\n" for i in range(12))
MAKEFILE = ("all: " + " ".join(f"t{i}.out" for i in range(12)) + "\n\t@cat " +
            " ".join(f"t{i}.out" for i in range(12)) + "\n" + MAKEFILE)


def cc1plus():
    found = sorted(glob.glob("/usr/lib/gcc/x86_64-linux-gnu/*/cc1plus"))
    return found[-1] if found else "cc1plus"


def programs(work):
    """name, argv, output file compared besides stdout (or None), record flags."""
    with open(os.path.join(work, "f.cpp"), "w") as f:
        f.write(CXX_SOURCE)
    subprocess.run(["g++", "-E", "-o", os.path.join(work, "f.ii"), os.path.join(work, "f.cpp")], check=True)
    with open(os.path.join(work, "s.cmake"), "w") as f:
        f.write(CMAKE_SCRIPT)
    with open(os.path.join(work, "q.sql"), "w") as f:
        f.write(SQL)
    with open(os.path.join(work, "Makefile"), "w") as f:
        f.write(MAKEFILE)
    with open(os.path.join(work, "data"), "wb") as f:  # compressible: text with repeats
        for i in range(120000):
            f.write(b"line %d of the input, value %d\n" % (i, (i * 7919) % 1000))
    git = ROOT if os.path.isdir(os.path.join(ROOT, ".git")) or os.path.isfile(os.path.join(ROOT, ".git")) else None
    out = []
    # Debian's interpreter, not a version manager's shell shim found first on PATH.
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else "python3"
    out.append(("python3", [python, "-c", PYTHON], None, []))
    out.append(("perl", ["perl", "-e", PERL], None, []))
    out.append(("cmake -P", ["cmake", "-P", "s.cmake"], None, []))
    out.append(("sqlite3", ["sqlite3", ":memory:", ".read q.sql"], None, []))
    if git:
        out.append(("git log", ["git", "-C", git, "log", "--stat", "-n", "400"], None, []))
        out.append(("git grep (2 threads)", ["git", "-C", git, "grep", "-n", "--threads", "2", "-e", "alloc"], None, []))
    cc = cc1plus()
    out.append(("cc1plus -O0", [cc, "-quiet", "-O0", "f.ii", "-o", "f.s"], "f.s", []))
    out.append(("cc1plus -O2", [cc, "-quiet", "-O2", "f.ii", "-o", "f.s"], "f.s", []))
    out.append(("xz -T2", ["xz", "-T2", "-4", "-k", "-f", "data"], "data.xz", []))
    out.append(("make -j2 (--follow-fork)", ["make", "-s", "-j2", "-B"], None, ["--follow-fork"]))
    return out


def timed(argv, cwd):
    """(wall s, cpu s of the process tree, stdout bytes)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout, p.returncode


def heaptrack_stdout(raw):
    """The program's own output: heaptrack's lines before it (up to "starting application...")
    and after it (from "Heaptrack finished!") removed."""
    start = b"starting application, this might take some time...\n"
    at = raw.find(start)
    if at >= 0:
        raw = raw[at + len(start):]
    end = raw.rfind(b"Heaptrack finished!")
    return raw[:end] if end >= 0 else raw


def digest(data, cwd, out_file):
    h = hashlib.sha256(data)
    if out_file:
        with open(os.path.join(cwd, out_file), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def heaptrack_numbers(data_file):
    text = subprocess.run(["heaptrack_print", "-f", data_file, "--print-peaks=0",
                           "--print-allocators=0", "--print-temporary=0", "--print-leaks=0"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout

    def after(label):
        m = re.search(re.escape(label) + r"\s*([0-9.]+)([KMG]?)", text)
        if not m:
            return None
        return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
    return {"calls": after("calls to allocation functions:"),
            "temporaries": after("temporary memory allocations:"),
            "peak": after("peak heap memory consumption:"),
            "leaked": after("total memory leaked:")}


def human(n):
    if n is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def med(values):
    return statistics.median(values) if values else float("nan")


def spread(values):
    return f"{min(values):.2f}–{max(values):.2f}" if len(values) > 1 else ""


def measure(name, argv, out_file, flags, rtmem, runs, work, replay_args):
    row = {"name": name}
    native, traced, heap = [], [], []
    digests = set()
    trace = os.path.join(work, "t.rtt")
    for _ in range(runs):
        w, c, out, _rc = timed(argv, work)
        native.append((w, c))
        digests.add(("native", digest(out, work, out_file)))
        for f in glob.glob(trace + "*"):
            os.remove(f)
        w, c, out, _rc = timed([rtmem, "record", "-o", trace] + flags + ["--"] + argv, work)
        traced.append((w, c))
        digests.add(("rtmem", digest(out, work, out_file)))
        for f in glob.glob(os.path.join(work, "h.*")):
            os.remove(f)
        w, c, out, _rc = timed(["heaptrack", "-o", os.path.join(work, "h")] + argv, work)
        heap.append((w, c))
        digests.add(("heaptrack", digest(heaptrack_stdout(out), work, out_file)))
    row["identical"] = len({d for _, d in digests}) == 1
    if not row["identical"]:
        print(f"{name}: outputs differ: {sorted(digests)}", file=sys.stderr)
    for key, series in (("native", native), ("rtmem", traced), ("heaptrack", heap)):
        row[key + "_wall"] = med([w for w, _ in series])
        row[key + "_cpu"] = med([c for _, c in series])
        row[key + "_cpu_spread"] = spread([c for _, c in series])
    row["trace_bytes"] = sum(os.path.getsize(f) for f in glob.glob(trace + "*"))
    row["traces"] = len(glob.glob(trace + "*"))
    report = json.loads(subprocess.run([rtmem, "report", trace, "--json"], stdout=subprocess.PIPE,
                                       check=True).stdout)["totals"]
    row["rtmem"] = {"calls": report["allocations"] + report["failed"], "peak": report["peak_live_bytes"],
                    "leaked": report["leaked_bytes"], "temporaries": report["temporaries"]}
    data = glob.glob(os.path.join(work, "h.*"))
    row["heaptrack"] = heaptrack_numbers(data[0]) if data else {}
    for tool, args in (("report", [rtmem, "report", trace]), ("advise", [rtmem, "advise", trace])) + (
            (("replay", [rtmem, "replay", trace] + replay_args),) if replay_args is not None else ()):
        w, c, _out, rc = timed(args, work)
        row[tool] = w if rc == 0 else None
    return row


def table(rows, runs, replay_args):
    print(f"Runs per program: {runs} (medians; CPU = whole process tree, in seconds).")
    if replay_args is not None:
        print(f"Replay: `rtmem replay TRACE {' '.join(replay_args)}`.")
    print()
    print("| program | native CPU s | rtmem CPU (x native) | heaptrack CPU (x native) | rtmem / heaptrack | "
          "output identical | calls rtmem / heaptrack | peak rtmem / heaptrack | leaked rtmem / heaptrack | "
          "temporaries rtmem / heaptrack | trace | report s | advise s | replay s |")
    print("|" + "---|" * 15)
    for r in rows:
        n, t, h = r["native_cpu"], r["rtmem_cpu"], r["heaptrack_cpu"]
        rt, ht = r["rtmem"], r["heaptrack"]
        def pair(key, fmt):
            return f"{fmt(rt.get(key))} / {fmt(ht.get(key))}"
        count = lambda v: "?" if v is None else f"{v:,.0f}"
        secs = lambda v: "failed" if v is None else f"{v:.2f}"
        traces = f" ({r['traces']} files)" if r["traces"] > 1 else ""
        print(f"| {r['name']} | {n:.2f} | {t:.2f} ({t / n:.1f}x) | {h:.2f} ({h / n:.1f}x) | {t / h:.2f} | "
              f"{'yes' if r['identical'] else 'NO'} | {pair('calls', count)} | {pair('peak', human)} | "
              f"{pair('leaked', human)} | {pair('temporaries', count)} | {human(r['trace_bytes'])}{traces} | "
              f"{secs(r['report'])} | {secs(r['advise'])} | {secs(r.get('replay')) if 'replay' in r else '—'} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtmem", default=os.path.join(ROOT, "build/release/tools/cli/rtmem"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-replay", action="store_true")
    ap.add_argument("--replay-args", default="-r 3")
    ap.add_argument("--json", help="also write the rows here")
    a = ap.parse_args()
    a.rtmem = os.path.abspath(a.rtmem)
    for tool in ("heaptrack", "heaptrack_print", a.rtmem):
        if shutil.which(tool) is None and not os.access(tool, os.X_OK):
            sys.exit(f"eight_programs: {tool} not found")
    replay_args = None if a.no_replay else a.replay_args.split()
    rows = []
    with tempfile.TemporaryDirectory(prefix="rtmem_eight_") as work:
        for name, argv, out_file, flags in programs(work):
            if a.only and not any(name.startswith(o.strip()) for o in a.only.split(",")):
                continue
            if shutil.which(argv[0]) is None and not os.access(argv[0], os.X_OK):
                print(f"skipped {name}: {argv[0]} not found", file=sys.stderr)
                continue
            print(f"measuring {name} ...", file=sys.stderr)
            rows.append(measure(name, argv, out_file, flags, a.rtmem, a.runs, work, replay_args))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    table(rows, a.runs, replay_args)


if __name__ == "__main__":
    main()
