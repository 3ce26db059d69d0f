#!/usr/bin/env python3
"""Real programs under glibc, `rtmem run` (librtmem-malloc.so), mimalloc, jemalloc and tcmalloc
(LD_PRELOAD): wall time, CPU time (user + sys) and peak RSS from /usr/bin/time, medians of --reps
runs with the spread (min..max), runs interleaved across allocators so that load on the machine
hits them alike. Every run's output is checked identical to glibc's; a mismatch aborts.

  bench/malloc/run.py build/release/tools/cli/rtmem [--reps 5] [--programs python cc1plus sqlite]
      [--realtime 2G [--lock]]   (adds a row for `rtmem run --realtime 2G [--lock]`)

Workloads (Debian packages: python3, g++ (cc1plus), sqlite3; see scripts/packages/bench.txt):
  python   /usr/bin/python3: 300k dicts to JSON and back, a word Counter, a 500k-entry dict
  cc1plus  gcc's C++ front end at -O1 on a preprocessed tools/cli/record.cpp (CLI11 + the
           analyzer's headers, ~100k lines)
  sqlite   /usr/bin/sqlite3: 300k INSERT statements in one transaction into an indexed table

  bench/malloc/run.py RTMEM --redis [--reps 3] [--requests 100000]
redis-server (Debian package redis-server, which links jemalloc) driven by redis-benchmark on
loopback: requests/s of SET, GET, LPUSH, LPOP, INCR, HSET (50 clients) under the program's own
jemalloc, glibc (libc.so.6 preloaded, so its malloc comes first), `rtmem run` and mimalloc; the
server's peak RSS; a scripted session's replies checked identical across allocators.
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
                    "-I", os.path.join(ROOT, "tools/malloc/include"),
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


REDIS_TESTS = "set,get,lpush,lpop,incr,hset"
# A deterministic session whose replies must match under every allocator.
REDIS_SESSION = [["set", "a", "x" * 1000], ["append", "a", "y" * 5000], ["strlen", "a"],
                 ["rpush", "l"] + [str(i) for i in range(500)], ["lrange", "l", "100", "105"],
                 ["sort", "l", "desc", "limit", "0", "3"], ["hset", "h", "f1", "v1", "f2", "v2"],
                 ["hgetall", "h"], ["sadd", "s", "p", "q", "r"], ["scard", "s"], ["dbsize"]]


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_run(prefix, env_extra, requests, tmp):
    """Starts redis-server under `prefix`/`env_extra`, benchmarks it, runs the session, stops
    it. Returns ({test: requests/s}, peak RSS KiB, session replies, server stderr)."""
    import time
    port = free_port()
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(env_extra)
    times = os.path.join(tmp, "redis-time.txt")
    server = subprocess.Popen(
        ["/usr/bin/time", "-f", "%M", "-o", times] + prefix +
        ["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", tmp, "--daemonize", "no"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cli = ["redis-cli", "-p", str(port)]
    try:
        for _ in range(200):
            if subprocess.run(cli + ["ping"], capture_output=True).stdout.strip() == b"PONG":
                break
            time.sleep(0.05)
        else:
            sys.exit("redis-server did not start: " + server.stderr.read().decode(errors="replace"))
        bench = subprocess.run(["redis-benchmark", "-p", str(port), "-q", "--csv", "-n",
                                str(requests), "-t", REDIS_TESTS], capture_output=True, check=True)
        rps = {}
        for line in bench.stdout.decode().splitlines()[1:]:
            fields = [f.strip('"') for f in line.split(",")]
            rps[fields[0].split()[0]] = float(fields[1])
        subprocess.run(cli + ["flushall"], capture_output=True, check=True)
        replies = b"".join(subprocess.run(cli + cmd, capture_output=True, check=True).stdout
                           for cmd in REDIS_SESSION)
        subprocess.run(cli + ["shutdown", "nosave"], capture_output=True)
        _, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return rps, int(open(times).read().split()[-1]), replies, err.decode(errors="replace")


def redis_main(args):
    rows = [("jemalloc (Debian's build)", [], {}),
            ("glibc", [], {"LD_PRELOAD": os.path.join(LIBDIR, "libc.so.6")}),
            ("rtmem run", [args.rtmem, "run", "--stats", "--"], {})]
    if os.path.exists(os.path.join(LIBDIR, PEERS["mimalloc"])):
        rows.append(("mimalloc", [], {"LD_PRELOAD": os.path.join(LIBDIR, PEERS["mimalloc"])}))
    tmp = tempfile.mkdtemp(prefix="rtmem-redis-bench-")
    try:
        results = {name: [] for name, _, _ in rows}
        for _ in range(args.reps):
            for name, prefix, env in rows:  # interleaved: load hits every allocator alike
                results[name].append(redis_run(prefix, env, args.requests, tmp))
        reference = results[rows[0][0]][0][2]
        tests = list(results[rows[0][0]][0][0])
        base = {t: statistics.median(r[0][t] for r in results["glibc"]) for t in tests}
        print("| allocator | " + " | ".join(f"{t} req/s median (min..max)" for t in tests) +
              " | peak RSS MiB | vs glibc (geomean) | session replies |")
        print("|---" * (len(tests) + 4) + "|")
        for name, _, _ in rows:
            rs = results[name]
            if any(r[2] != reference for r in rs):
                sys.exit(f"redis under {name}: session replies differ")
            if name.startswith("rtmem") and "rt_heap" not in rs[-1][3]:
                sys.exit(f"redis under {name}: rt_heap did not report (not preloaded?)")
            cells, ratio = [], 1.0
            for t in tests:
                v = [r[0][t] for r in rs]
                m = statistics.median(v)
                ratio *= m / base[t]
                cells.append(f"{m:.0f} ({min(v):.0f}..{max(v):.0f})")
            rss = statistics.median(r[1] for r in rs) / 1024
            print(f"| {name} | " + " | ".join(cells) +
                  f" | {rss:.1f} | {ratio ** (1 / len(tests)):.2f}x | identical |", flush=True)
        for name, _, _ in rows:
            if name.startswith("rtmem"):
                print(f"\n{name}, last run: {results[name][-1][3].strip().splitlines()[-1]}")
    finally:
        shutil.rmtree(tmp)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rtmem", help="the rtmem CLI (its `run` command preloads librtmem-malloc.so)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--programs", nargs="+", default=["python", "cc1plus", "sqlite"])
    ap.add_argument("--realtime", help="also run `rtmem run --realtime SIZE`")
    ap.add_argument("--lock", action="store_true", help="with --realtime: mlock the heap too")
    ap.add_argument("--redis", action="store_true",
                    help="redis-server under redis-benchmark instead of the programs")
    ap.add_argument("--requests", type=int, default=100000, help="per redis-benchmark test")
    args = ap.parse_args()
    if args.redis:
        return redis_main(args)
    rows = [("glibc", [], {}), ("rtmem run", [args.rtmem, "run", "--stats", "--"], {})]
    if args.realtime:
        lock = ["--lock"] if args.lock else []
        rows.append((f"rtmem run --realtime {args.realtime}" + (" --lock" if args.lock else ""),
                     [args.rtmem, "run", "--stats", "--realtime", args.realtime] + lock + ["--"],
                     {}))
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
