#!/usr/bin/env python3
"""Real programs under glibc, `rtmem run` (librtmem-malloc.so), mimalloc, jemalloc and tcmalloc
(LD_PRELOAD): wall time, CPU time (user + sys) and peak RSS from /usr/bin/time, medians of --reps
runs with the spread (min..max), runs interleaved across allocators so that load on the machine
hits them alike. Every run's output is checked identical to glibc's; a mismatch aborts.

  bench/malloc/run.py build/release/tools/cli/rtmem [--reps 5] [--programs python cc1plus sqlite]
      [--realtime 2G]   (adds a row for `rtmem run --realtime 2G`)

Workloads (Debian packages: python3, g++ (cc1plus), sqlite3; see scripts/packages/bench.txt):
  python   /usr/bin/python3: 300k dicts to JSON and back, a word Counter, a 500k-entry dict
  cc1plus  gcc's C++ front end at -O1 on a preprocessed tools/cli/record.cpp (CLI11 + the
           analyzer's headers, ~100k lines)
  sqlite   /usr/bin/sqlite3: 300k INSERT statements in one transaction into an indexed table
"""
import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

LIBDIR = "/usr/lib/x86_64-linux-gnu"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PEERS = {"mimalloc": "libmimalloc.so.2", "jemalloc": "libjemalloc.so.2",
         "tcmalloc": "libtcmalloc_minimal.so.4"}
CC1PLUS = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus"

PYTHON_SCRIPT = r"""
import collections, json, re
d = [{'k': i, 'v': str(i) * (i % 40), 'l': list(range(i % 30))} for i in range(300000)]
s = json.dumps(d)
back = json.loads(s)
c = collections.Counter(re.findall(r'\w+', s[:5000000]))
t = {}
for i in range(500000):
    t[str(i)] = (i, str(i * 2))
print(len(s), len(back), len(c), c.most_common(2), len(t))
"""


def prepare(tmp):
    """Writes the inputs; returns name -> (argv, stdin path or None, output file or None)."""
    work = {}
    py = os.path.join(tmp, "alloc_heavy.py")
    with open(py, "w") as f:
        f.write(PYTHON_SCRIPT)
    work["python"] = (["/usr/bin/python3", py], None, None)
    ii = os.path.join(tmp, "record.ii")
    subprocess.run(["g++", "-std=c++20", "-E", "-o", ii,
                    "-I", os.path.join(ROOT, "tools/cli"),
                    "-I", os.path.join(ROOT, "tools/analyze/include"),
                    "-I", os.path.join(ROOT, "tools/format/include"),
                    "-I", os.path.join(ROOT, "include"),
                    os.path.join(ROOT, "tools/cli/record.cpp")], check=True)
    asm = os.path.join(tmp, "record.s")
    work["cc1plus"] = ([CC1PLUS, "-fpreprocessed", "-quiet", "-O1", "-std=c++20", ii, "-o", asm],
                       None, asm)
    sql = os.path.join(tmp, "inserts.sql")
    with open(sql, "w") as f:
        f.write("create table t(a integer, b text, c real);\ncreate index tb on t(b);\nbegin;\n")
        for i in range(300000):
            f.write(f"insert into t values({i}, 'row {i * 7919 % 300000}', {i / 3});\n")
        f.write("commit;\nselect count(*), sum(a), max(b), round(sum(c), 2) from t;\n")
    db = os.path.join(tmp, "bench.db")
    work["sqlite"] = (["/usr/bin/sqlite3", db], sql, None)
    return work, db


def measure(prefix, env_extra, argv, stdin, outfile, db, tmp):
    if os.path.exists(db):
        os.remove(db)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(env_extra)
    times = os.path.join(tmp, "time.txt")
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", times] + prefix + argv
    inp = open(stdin) if stdin else None
    try:
        r = subprocess.run(cmd, env=env, stdin=inp or subprocess.DEVNULL, capture_output=True,
                           check=True)
    finally:
        if inp:
            inp.close()
    wall, user, sys_, rss = open(times).read().split()[-4:]
    out = r.stdout
    if outfile:
        out += open(outfile, "rb").read()
    return float(wall), float(user) + float(sys_), int(rss), hashlib.sha256(out).hexdigest(), r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rtmem", help="the rtmem CLI (its `run` command preloads librtmem-malloc.so)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--programs", nargs="+", default=["python", "cc1plus", "sqlite"])
    ap.add_argument("--realtime", help="also run `rtmem run --realtime SIZE`")
    args = ap.parse_args()
    rows = [("glibc", [], {}), ("rtmem run", [args.rtmem, "run", "--stats", "--"], {})]
    if args.realtime:
        rows.append((f"rtmem run --realtime {args.realtime}",
                     [args.rtmem, "run", "--stats", "--realtime", args.realtime, "--"], {}))
    for name, lib in PEERS.items():
        if os.path.exists(os.path.join(LIBDIR, lib)):
            rows.append((name, [], {"LD_PRELOAD": os.path.join(LIBDIR, lib)}))
    tmp = tempfile.mkdtemp(prefix="rtmem-malloc-bench-")
    try:
        work, db = prepare(tmp)
        print("| program | allocator | wall s median (min..max) | CPU s median (min..max) "
              "| peak RSS MiB median | vs glibc wall | output |")
        print("|---|---|---|---|---|---|---|")
        for prog in args.programs:
            argv, stdin, outfile = work[prog]
            results = {name: [] for name, _, _ in rows}
            served = {}
            for _ in range(args.reps):
                for name, prefix, env in rows:  # interleaved: load hits every allocator alike
                    results[name].append(measure(prefix, env, argv, stdin, outfile, db, tmp))
                    if name.startswith("rtmem"):
                        served[name] = results[name][-1][4].decode(errors="replace")
            reference = results["glibc"][0][3]
            base = statistics.median(r[0] for r in results["glibc"])
            for name, _, _ in rows:
                rs = results[name]
                same = all(r[3] == reference for r in rs)
                if not same:
                    sys.exit(f"{prog} under {name}: output differs from glibc's")
                if name.startswith("rtmem") and "rt_heap" not in served[name]:
                    sys.exit(f"{prog} under {name}: rt_heap did not report (not preloaded?)")
                wall = [r[0] for r in rs]
                cpu = [r[1] for r in rs]
                rss = statistics.median(r[2] for r in rs) / 1024
                print(f"| {prog} | {name} | {statistics.median(wall):.2f} ({min(wall):.2f}.."
                      f"{max(wall):.2f}) | {statistics.median(cpu):.2f} ({min(cpu):.2f}.."
                      f"{max(cpu):.2f}) | {rss:.0f} | {statistics.median(wall) / base:.2f}x "
                      f"| identical |", flush=True)
        for name, text in served.items():  # the last run's figures: who served the calls
            for line in text.splitlines()[-1:]:
                print(f"\n{name}, last run: {line}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
