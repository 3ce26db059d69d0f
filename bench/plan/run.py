#!/usr/bin/env python3
"""The advisor's plan applied to unmodified programs, measured end to end (docs/advisor.md,
"Plans, measured"). Run from the repository root after a release build:

    cmake --preset release && cmake --build --preset release \\
        --target rtmem_cli rtmem_trace rtmem_malloc rtmem_demo
    bench/plan/run.py                      # both parts, 5 runs per cell
    bench/plan/run.py --part programs -n 7 --only python3,sqlite3

Part "demo": examples/demo's baseline variant (rtmem_demo, which counts heap calls and, with
--profile, times each one) under glibc, under `rtmem run` (rt_heap alone), under `rtmem run
--plan` with a plan made from its own trace, and the hand-ported rtmem variant. The demo's
counting operator new is every allocation's first frame, so its sites are told apart only by
unwinding: two plans are run, the advisor's (defaults: it charges the walk, and may leave every
site on the heap) and one made with --plan-unwind-ns 0 (every site that pays, the walk free).

Part "programs": Debian programs nobody here wrote (python3, cc1plus, sqlite3, perl, xmllint,
jq, lua5.4, gawk; a missing one is skipped), each recorded on input A (bench/plan/inputs.py),
planned, tuned on input A (`rtmem tune`: the plan's sites timed in the program, only those
that measurably pay kept), and run on a different input B under glibc, mimalloc (LD_PRELOAD),
`rtmem run` (rt_heap alone), `rtmem run --plan` with the advisor's plan and with the tuned one
(when tune kept no site, the tuned column is rt_heap alone's runs: what tune says to run).
Outputs are checked identical across columns. A measurement of a program runs it as many times
as make it last --min-time (1 s) of CPU, times reported per run: short runs are the noisiest. Which library served malloc and operator new in each column
is read from the dynamic linker (LD_DEBUG=bindings), not assumed.

Beside each real run, the same plan replayed (`rtmem replay --plan`): for the demo the plan's
own trace, for the programs a trace of input B; the saving the replay measures (allocator time,
rt_heap alone minus the plan) against the one the real runs show (allocator time per frame for
the demo, CPU time for the programs). For the demo, the share of the hand-ported variant's
saving that the plan recovers is computed per round (all variants back to back), from the
timed allocator calls and from process CPU time, and reported as a median with its range.

Writes OUT/plan-bench.md (the tables) and OUT/plan-bench.json (every run).
"""
import argparse
import hashlib
import json
import math
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import inputs  # bench/plan/inputs.py

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- running one command -------------------------------------------------------------------

def run_once(cmd, env, cwd, stdin_path=None, out_files=()):
    """Wall and CPU seconds, peak RSS (MiB) and a digest of stdout + the output files."""
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    out = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=stdin, stdout=out, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    if stdin_path:
        stdin.close()
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{err[-2000:]}")
    digest = hashlib.sha256()
    out.seek(0)
    digest.update(out.read())
    for f in out_files:
        with open(os.path.join(cwd, f), "rb") as fh:
            digest.update(fh.read())
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024, "digest": digest.hexdigest()[:16], "stderr": err}


def run_measurement(k, cmd, env, cwd, stdin_path=None, out_files=()):
    """One measurement: the command run k times back to back; wall and CPU per run (the sums
    over k), the largest peak RSS, and the digest (every run must print the same)."""
    runs = [run_once(cmd, env, cwd, stdin_path, out_files) for _ in range(k)]
    digests = {r["digest"] for r in runs}
    if len(digests) != 1:
        raise RuntimeError(f"{' '.join(cmd)} printed different outputs in {k} runs")
    return {"wall_s": sum(r["wall_s"] for r in runs) / k,
            "cpu_s": sum(r["cpu_s"] for r in runs) / k,
            "rss_mib": max(r["rss_mib"] for r in runs), "digest": runs[0]["digest"],
            "stderr": runs[-1]["stderr"]}


def served_by(cmd, env, cwd, program, stdin_path=None):
    """The libraries `program`'s own references to malloc and operator new (_Znwm) were bound
    to by the dynamic linker ("-": the program makes no such reference, e.g. a C program, or
    one with a static libstdc++ whose operator new calls malloc). `program` is the executable,
    or the shared library that makes most of its heap calls (libxml2 for xmllint)."""
    with tempfile.TemporaryDirectory() as d:
        e = dict(env, LD_DEBUG="bindings", LD_DEBUG_OUTPUT=os.path.join(d, "ld"))
        try:
            run_once(cmd, e, cwd, stdin_path)
        except RuntimeError:
            return {"malloc": "?", "operator new": "?"}
        lines = []
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), errors="replace") as f:
                lines += f.readlines()
    found = {}
    pattern = re.compile(r"binding file (\S+) .*? to (\S+) .*?symbol `(malloc|_Znwm)'")
    for line in lines:
        m = pattern.search(line)
        if m and os.path.basename(m.group(1)) == os.path.basename(program):
            found[m.group(3)] = os.path.basename(m.group(2))
    return {"malloc": found.get("malloc", "-"), "operator new": found.get("_Znwm", "-")}


def summary(values):
    med = statistics.median(values)
    return {"median": med, "min": min(values), "max": max(values), "n": len(values)}


def fmt(stat, unit, digits=2):
    return f"{stat['median']:.{digits}f} {unit} ({stat['min']:.{digits}f}–{stat['max']:.{digits}f})"


# ---- tools ----------------------------------------------------------------------------------

def find_mimalloc():
    for c in ("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", "/usr/lib/x86_64-linux-gnu/libmimalloc.so",
              "/usr/lib/libmimalloc.so"):
        if os.path.exists(c):
            return c
    return None


def has_tune(rtmem):
    return subprocess.run([rtmem, "tune", "--help"], capture_output=True).returncode == 0


def has_plan_run(rtmem):
    help_text = subprocess.run([rtmem, "run", "--help"], capture_output=True, text=True).stdout
    return "--plan" in help_text


def columns(rtmem, plan, mimalloc, tuned=None):
    cols = [("glibc", [], {})]
    if mimalloc:
        cols.append(("mimalloc", [], {"LD_PRELOAD": mimalloc}))
    cols.append(("rt_heap", [rtmem, "run", "--"], {}))
    if plan and has_plan_run(rtmem):
        cols.append(("plan", [rtmem, "run", "--plan", plan, "--"], {}))
    if tuned and tuned["kept"]:
        cols.append(("tuned plan", [rtmem, "run", "--plan", tuned["path"], "--"], {}))
    return cols


def tune_plan(rtmem, plan, cmd, env, cwd, name, stdin_path=None):
    """`rtmem tune` of the plan on the recording input: NAME.tuned.json, how many of its
    planned sites it kept, and what it printed (None when the plan routes no site)."""
    tuned = os.path.join(cwd, name + ".tuned.json")
    tune = [rtmem, "tune", plan, "-o", tuned] + (["--stdin", stdin_path] if stdin_path else [])
    r = subprocess.run(tune + ["--"] + cmd, env=env, cwd=cwd, capture_output=True, text=True,
                       check=True)
    m = re.search(r"(\d+) of (\d+) planned sites? kept", r.stdout)
    if not m:
        return None
    return {"path": tuned, "kept": int(m.group(1)), "of": int(m.group(2)),
            "lines": r.stdout.strip().splitlines()}


def advise_summary(stdout):
    """advise --plan's summary line, and its count of sites planned only for placement."""
    lines = stdout.splitlines()
    if not lines:
        return ""
    placement = [x for x in lines[1:] if "planned only for where their blocks go" in x]
    if placement:
        count = placement[0].split()[1]
        return f"{lines[0]} ({count} of them only for placement: [placement])"
    return lines[0]


def make_plan(rtmem, trace_cmd, env, cwd, name, site_depth, stdin_path=None, extra=()):
    """Records trace_cmd, writes NAME.plan.json; returns (plan path, advise's summary line)."""
    trace = os.path.join(cwd, name + ".rtt")
    plan = os.path.join(cwd, name + ".plan.json")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    subprocess.run([rtmem, "record", "-o", trace, "--"] + trace_cmd, env=env, cwd=cwd,
                   stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    if stdin_path:
        stdin.close()
    cmd = [rtmem, "advise", trace, "--plan", plan]
    if site_depth:
        cmd += ["--site-depth", str(site_depth)]
    cmd += list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return plan, advise_summary(r.stdout)


def replay_plan(rtmem, plan, trace, repetitions):
    """`rtmem replay --plan` of a trace: allocator time (ns, median of the repetitions, with
    min-max) under rt_heap alone and under the plan in front of it, and how much was served."""
    r = subprocess.run([rtmem, "replay", "--plan", plan, "--json", "-r", str(repetitions), trace],
                       capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    out = {"served": j.get("served", 0), "plan_sites_matched": j.get("plan_sites_matched", 0)}
    for res in j["results"]:
        key = "plan" if res["name"].startswith("plan") else "rt_heap"
        out[key] = summary(res["repetition_ns"])
    return out


EMPTY_PLAN = {"format": "rtmem-plan", "version": 1, "program": "", "trace": "",
              "frame_markers": False, "depth": 0, "sites": []}


def callgrind_total(out_glob_dir, prefix):
    """Instructions in every callgrind output file DIR/PREFIX.* (all processes of one run)."""
    total = 0
    for name in os.listdir(out_glob_dir):
        if not name.startswith(prefix + "."):
            continue
        with open(os.path.join(out_glob_dir, name), errors="replace") as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total += int(line.split()[1])
                    break
    return total


def callgrind_savings(rtmem, plan, cmd, env, cwd, trace, stdin_path=None, passes=3):
    """Load-free: the instructions the plan saves in the real run (the whole process under
    `rtmem run --plan` against `rtmem run`) and in the replay of `trace` (the plan's backend
    against the same backend with an empty plan, so both carry the replay's own routing; with
    -r 1 a replay makes a footprint, an untimed and a timed pass: per pass)."""
    d = tempfile.mkdtemp(prefix="cg-", dir=cwd)
    vg = ["valgrind", "--tool=callgrind", "--trace-children=yes"]
    real = {}
    for col, prefix in (("rt_heap", [rtmem, "run", "--"]),
                        ("plan", [rtmem, "run", "--plan", plan, "--"])):
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        subprocess.run(vg + [f"--callgrind-out-file={d}/real.{col}.%p"] + prefix + cmd, env=env,
                       cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        if stdin_path:
            stdin.close()
        real[col] = callgrind_total(d, f"real.{col}")
    empty = os.path.join(d, "empty.plan.json")
    with open(empty, "w") as f:
        json.dump(EMPTY_PLAN, f)
    # The replay re-executes itself once for jemalloc's static TLS unless this is set.
    e = dict(env, GLIBC_TUNABLES="glibc.rtld.optional_static_tls=65536")
    replayed = {}
    for col, p in (("rt_heap", empty), ("plan", plan)):
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=*plan_backend::*",
                        f"--callgrind-out-file={d}/replay.{col}.out", rtmem, "replay", "-r", "1",
                        "--plan", p, trace], env=e, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        replayed[col] = callgrind_total(d, f"replay.{col}") / passes
    shutil.rmtree(d, ignore_errors=True)
    out = {"real_instructions": real, "replayed_instructions": replayed,
           "real_saving": real["rt_heap"] - real["plan"],
           "replayed_saving": replayed["rt_heap"] - replayed["plan"]}
    out["factor"] = saving_factor(out["real_saving"], out["replayed_saving"])
    return out


def saving_factor(real, replayed):
    """The real saving over the replayed one (None when the replay saw none)."""
    return real / replayed if replayed else None


# ---- part (b): programs nobody here wrote -------------------------------------------------

def programs(work):
    """name -> how to prepare, run on an input, and compare; "needs": the executable and the
    Debian package it comes in (scripts/packages/bench.txt), so a missing one is skipped."""
    cc1plus = None
    gcc_dir = "/usr/lib/gcc/x86_64-linux-gnu"
    for d in sorted(os.listdir(gcc_dir) if os.path.isdir(gcc_dir) else [], reverse=True):
        c = f"{gcc_dir}/{d}/cc1plus"
        if os.path.exists(c):
            cc1plus = c
            break

    def path(name):
        return os.path.join(work, name)

    def write(name, text):
        with open(path(name), "w") as f:
            f.write(text)

    def prep_cxx():
        for tag, src in (("A", inputs.CXX_A), ("B", inputs.CXX_B)):
            write(f"cxx_{tag}.cpp", src)
            subprocess.run(["g++", "-std=c++20", "-E", f"cxx_{tag}.cpp", "-o", f"cxx_{tag}.ii"],
                           cwd=work, check=True)

    xpath = {"A": "sum(//item/@price)", "B": "count(//order[line/@qty > 6])"}
    return {
        "python3": {
            "needs": ("/usr/bin/python3", "python3"),
            "prep": lambda: (write("py_A.py", inputs.PY_A), write("py_B.py", inputs.PY_B)),
            "cmd": lambda i: ["/usr/bin/python3", f"py_{i}.py"],
            "env": {"PYTHONMALLOC": "malloc"},  # every object through malloc, not pymalloc
            "what": "CPython: JSON of 40k dicts (A); 25k objects sorted, grouped, JSON (B); "
                    "PYTHONMALLOC=malloc",
        },
        "cc1plus": {
            "needs": (cc1plus or "cc1plus", "g++"),
            "prep": prep_cxx,
            "cmd": lambda i: [cc1plus, "-quiet", "-O1", "-std=c++20", f"cxx_{i}.ii", "-o",
                              f"cxx_{i}.s"],
            "outputs": lambda i: [f"cxx_{i}.s"],
            "what": "GCC's C++ compiler at -O1 on a preprocessed TU: <map>+<set>+<memory> (A); "
                    "<iostream>+<variant>+<unordered_map> (B)",
        },
        "sqlite3": {
            "needs": ("sqlite3", "sqlite3"),
            "prep": lambda: (write("sql_A.sql", inputs.SQL_A), write("sql_B.sql", inputs.SQL_B)),
            "cmd": lambda i: ["sqlite3", ":memory:"],
            "stdin": lambda i: path(f"sql_{i}.sql"),
            "what": "SQLite in memory: 60k rows, index, group by (A); two tables joined, "
                    "group_concat (B)",
        },
        "perl": {
            "needs": ("perl", "perl"),
            "prep": lambda: (write("pl_A.pl", inputs.PL_A), write("pl_B.pl", inputs.PL_B)),
            "cmd": lambda i: ["perl", f"pl_{i}.pl"],
            "what": "Perl: 150k-key hash, sort, regex (A); 120k records grouped, sorted, "
                    "split (B)",
        },
        "xmllint": {
            "needs": ("xmllint", "libxml2-utils"),
            "prep": lambda: (inputs.xml_catalog(path("xml_A.xml")),
                             inputs.xml_orders(path("xml_B.xml"))),
            "cmd": lambda i: ["xmllint", "--xpath", xpath[i], f"xml_{i}.xml"],
            "heap_user": "libxml2.so.2",
            "what": "libxml2 parsing a generated document into a DOM, one XPath over it, the DOM "
                    "freed: 11 MiB catalog of 40k items, sum of prices (A); 10 MiB of 30k orders "
                    "with 1-8 lines, orders with a line of quantity > 6 (B)",
        },
        "jq": {
            "needs": ("jq", "jq"),
            "prep": lambda: (inputs.json_users(path("jq_A.json")),
                             inputs.json_events(path("jq_B.json"))),
            "cmd": lambda i: ["jq", "-c", {"A": inputs.JQ_A, "B": inputs.JQ_B}[i], f"jq_{i}.json"],
            "heap_user": "libjq.so.1",
            "what": "jq 1.6 (reference-counted values, one heap block each): 40k user records "
                    "grouped, max and unique per group (A); 30k events filtered, grouped by "
                    "region, sums and unique words per group (B)",
        },
        "lua5.4": {
            "needs": ("lua5.4", "lua5.4"),
            "prep": lambda: (write("lua_A.lua", inputs.LUA_A), write("lua_B.lua", inputs.LUA_B)),
            "cmd": lambda i: ["lua5.4", f"lua_{i}.lua"],
            "what": "Lua 5.4 (every object through realloc/free, collected incrementally): "
                    "120k points bucketed by label, each bucket sorted (A); 150k records sorted by "
                    "name, grouped, joined (B)",
        },
        "gawk": {
            "needs": ("gawk", "gawk"),
            "prep": lambda: (write("awk_A.awk", inputs.AWK_A), write("awk_B.awk", inputs.AWK_B),
                             inputs.log_lines(path("awk_A.txt")),
                             inputs.table_rows(path("awk_B.txt"))),
            "cmd": lambda i: ["gawk", "-f", f"awk_{i}.awk", f"awk_{i}.txt"],
            "what": "GNU awk building associative arrays: 200k log lines counted by host, page "
                    "and status (A); 250k rows, five arrays, a report string (B)",
        },
    }


def bench_programs(args, rtmem, mimalloc, out):
    work = os.path.join(out, "programs")
    os.makedirs(work, exist_ok=True)
    results = {}
    base_env = dict(os.environ)
    base_env.pop("LD_PRELOAD", None)
    known = programs(work)
    unknown = sorted(set(args.only or []) - set(known))
    if unknown:
        sys.exit(f"bench/plan: --only {','.join(unknown)}: no such program "
                 f"(known: {', '.join(known)})")
    for name, p in known.items():
        if args.only and name not in args.only:
            continue
        exe, package = p["needs"]
        if not shutil.which(exe):
            print(f"== {name}: {exe} not installed (Debian package {package}; scripts/setup "
                  f"installs it), skipped", file=sys.stderr)
            continue
        p["prep"]()
        env = dict(base_env, **p.get("env", {}))
        stdin = p.get("stdin", lambda i: None)
        outs = p.get("outputs", lambda i: [])
        print(f"== {name}: recording input A, planning", file=sys.stderr)
        plan, plan_line, tuned = None, "", None
        try:
            plan, plan_line = make_plan(rtmem, p["cmd"]("A"), env, work, name, args.site_depth,
                                        stdin("A"))
            if has_tune(rtmem):
                print(f"== {name}: rtmem tune on input A", file=sys.stderr)
                tuned = tune_plan(rtmem, plan, p["cmd"]("A"), env, work, name, stdin("A"))
        except subprocess.CalledProcessError as e:
            print(f"   record/advise/tune failed: {e}\n{e.stderr or ''}", file=sys.stderr)
        cols = columns(rtmem, plan, mimalloc, tuned)
        row = {"what": p["what"], "plan": plan_line, "tuned": tuned, "columns": {}}
        served, matched, runs = {}, {}, {col: [] for col, _, _ in cols}
        # Runs per measurement: enough for --min-time by a warm-up run under glibc (short runs
        # are the noisiest here: 0.15 s of python3 varies by +-25% from run to run).
        warm = run_once(p["cmd"]("B"), env, work, stdin("B"), outs("B"))
        reps = max(1, min(50, math.ceil(args.min_time / max(warm["cpu_s"], 1e-3))))
        row["runs_per_measurement"] = reps
        for col, prefix, extra in cols:
            e = dict(env, **extra)
            served[col] = served_by(prefix + p["cmd"]("B"), e, work,
                                    p.get("heap_user", p["cmd"]("B")[0]), stdin("B"))
            matched[col] = ""
            if col == "plan":  # one extra run for the exit summary: how many sites matched
                stats = run_once(prefix[:2] + ["--stats"] + prefix[2:] + p["cmd"]("B"), e, work,
                                 stdin("B"))
                lines = [l for l in stats["stderr"].splitlines() if "sites matched" in l]
                matched[col] = re.sub(r"^rtmem run: pid \d+: ", "", lines[0]) if lines else ""
        # Round-robin: the machine's slow spells hit every column alike.
        for k in range(args.runs):
            for col, prefix, extra in cols:
                print(f"   {name} B under {col}: run {k + 1}/{args.runs}", file=sys.stderr)
                runs[col].append(run_measurement(reps, prefix + p["cmd"]("B"), dict(env, **extra),
                                                 work, stdin("B"), outs("B")))
        for col, _, _ in cols:
            rs = runs[col]
            # Per-round ratios: the columns of one round ran back to back, so a slow spell of
            # the machine (this VM's CPU time wanders by 25% from run to run) cancels in them.
            paired = {f"cpu_vs_{ref}": summary([r["cpu_s"] / b["cpu_s"] for r, b in
                                                zip(rs, runs[ref])])
                      for ref in ("glibc", "rt_heap") if ref in runs}
            row["columns"][col] = {
                **paired,
                "served_by": served[col],
                "plan_summary": matched[col],
                "wall_s": summary([r["wall_s"] for r in rs]),
                "cpu_s": summary([r["cpu_s"] for r in rs]),
                "rss_mib": summary([r["rss_mib"] for r in rs]),
                "digests": sorted({r["digest"] for r in rs}),
                "stderr_tail": rs[-1]["stderr"][-400:],
            }
        if tuned and not tuned["kept"]:  # what tune says to run: rt_heap alone, same runs
            row["columns"]["tuned plan"] = dict(row["columns"]["rt_heap"], same_as="rt_heap")
        digests = {d for c in row["columns"].values() for d in c["digests"]}
        row["outputs_identical"] = len(digests) == 1
        if plan and "plan" in row["columns"]:
            row["replay"] = replay_beside_real(rtmem, plan, p["cmd"]("B"), env, work, name,
                                               stdin("B"), row["columns"], args.runs)
            if args.callgrind:
                print(f"   {name}: callgrind, real and replayed", file=sys.stderr)
                row["replay"]["callgrind"] = callgrind_savings(
                    rtmem, plan, p["cmd"]("B"), env, work, os.path.join(work, name + ".B.rtt"),
                    stdin("B"))
        results[name] = row
    return results


def replay_beside_real(rtmem, plan, cmd, env, work, name, stdin_path, cols, runs):
    """Input B recorded and replayed with the plan: the saving the replay promises (allocator
    time, rt_heap alone minus the plan) beside the one the real runs showed (CPU time)."""
    trace = os.path.join(work, name + ".B.rtt")
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    subprocess.run([rtmem, "record", "-o", trace, "--"] + cmd, env=env, cwd=work, stdin=stdin,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    if stdin_path:
        stdin.close()
    r = replay_plan(rtmem, plan, trace, runs)
    real_rt, real_plan = cols["rt_heap"]["cpu_s"]["median"], cols["plan"]["cpu_s"]["median"]
    r["replayed_saving_ms"] = (r["rt_heap"]["median"] - r["plan"]["median"]) / 1e6
    r["real_saving_ms"] = (real_rt - real_plan) * 1e3
    r["replayed_ratio"] = r["plan"]["median"] / r["rt_heap"]["median"]
    r["real_ratio"] = real_plan / real_rt
    r["factor"] = saving_factor(r["real_saving_ms"], r["replayed_saving_ms"])
    # Minima: the least disturbed run of each (under load a median still carries preemption).
    r["factor_min"] = saving_factor((cols["rt_heap"]["cpu_s"]["min"] - cols["plan"]["cpu_s"]["min"]) * 1e3,
                                    (r["rt_heap"]["min"] - r["plan"]["min"]) / 1e6)
    return r


def replay_table(results):
    lines = ["| program | replay: allocator time, rt_heap → plan | replayed saving | real: CPU, "
             "rt_heap → plan | real saving | real / replayed saving (medians; minima; "
             "--callgrind: instructions saved, replay per pass, real whole process) |",
             "|---|---|---|---|---|---|"]
    for name, row in results.items():
        r = row.get("replay")
        if not r:
            continue
        c = row["columns"]
        factor = "; ".join(f"{r[k]:.2f}" if r.get(k) is not None else "-"
                           for k in ("factor", "factor_min"))
        cg = r.get("callgrind")
        if cg:
            factor += (f"; instructions: replayed {cg['replayed_saving'] / 1e6:+.1f} M, real "
                       f"{cg['real_saving'] / 1e6:+.1f} M"
                       + (f" ({cg['factor']:.2f})" if cg["factor"] is not None else ""))
        lines.append(
            f"| {name} | {r['rt_heap']['median'] / 1e6:.1f} → {r['plan']['median'] / 1e6:.1f} ms "
            f"({r['replayed_ratio']:.2f}x) | {r['replayed_saving_ms']:+.1f} ms | "
            f"{c['rt_heap']['cpu_s']['median'] * 1e3:.0f} → {c['plan']['cpu_s']['median'] * 1e3:.0f} ms "
            f"({r['real_ratio']:.2f}x) | {r['real_saving_ms']:+.1f} ms | {factor} |")
    return "\n".join(lines)


def ratio_cell(stat):
    return f"{stat['median']:.2f}x ({stat['min']:.2f}–{stat['max']:.2f})" if stat else "-"


def programs_table(results):
    lines = ["| program | column | malloc / operator new served by | wall (median, min–max) | "
             "CPU | CPU vs glibc, per round | CPU vs rt_heap, per round | peak RSS | output |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, row in results.items():
        for col, c in row["columns"].items():
            same = "identical" if row["outputs_identical"] else "DIFFERS"
            served = f"{c['served_by']['malloc']} / {c['served_by']['operator new']}"
            if c.get("same_as"):
                kept = row["tuned"]
                lines.append(f"| {name} | {col} | = {c['same_as']} alone (tune kept 0 of "
                             f"{kept['of']} sites) | | | {ratio_cell(c.get('cpu_vs_glibc'))} | "
                             f"1.00x | | {same} |")
                continue
            lines.append(f"| {name} | {col} | {served} | {fmt(c['wall_s'], 's')} | "
                         f"{fmt(c['cpu_s'], 's')} | {ratio_cell(c.get('cpu_vs_glibc'))} | "
                         f"{ratio_cell(c.get('cpu_vs_rt_heap'))} | "
                         f"{fmt(c['rss_mib'], 'MiB', 1)} | {same} |")
    return "\n".join(lines)


# ---- part (a): the demo ---------------------------------------------------------------------

def bench_demo(args, rtmem, build, out):
    demo = os.path.join(build, "examples/demo/rtmem_demo")
    if not os.path.exists(demo):
        print(f"== demo: {demo} not built, skipped", file=sys.stderr)
        return None
    work = os.path.join(out, "demo")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    common = ["--frames", str(args.frames), "--entities", str(args.entities), "--no-progress"]
    print("== demo: recording the baseline, planning", file=sys.stderr)
    # --profile times every heap call through another operator new, so its allocations come
    # from other return addresses: the profiled runs get a plan from a profiled trace (the
    # same frames, entities and seed), or the plan would match nothing there.
    plan, plan_line, profile_plan, advised_line = None, "", None, ""
    trace_cmd = [demo, "--variant", "baseline", "--frames", str(args.trace_frames),
                 "--entities", str(args.entities), "--no-progress"]
    try:
        plan, plan_line = make_plan(rtmem, trace_cmd, env, work, "demo", 0,
                                    extra=["--plan-unwind-ns", "0"])
        profile_plan, _ = make_plan(rtmem, trace_cmd + ["--profile"], env, work, "demo-profile",
                                    0, extra=["--plan-unwind-ns", "0"])
        # The advisor's own plan (the walk charged) from the same traces.
        for name, trace in (("demo-advised", "demo.rtt"), ("demo-advised-profile",
                                                           "demo-profile.rtt")):
            r = subprocess.run([rtmem, "advise", os.path.join(work, trace), "--plan",
                                os.path.join(work, name + ".plan.json")],
                               capture_output=True, text=True, check=True)
            if name == "demo-advised":
                advised_line = advise_summary(r.stdout)
    except subprocess.CalledProcessError as e:
        print(f"   record/advise failed: {e}", file=sys.stderr)
    advised = os.path.join(work, "demo-advised.plan.json")
    profile_of = {plan: profile_plan, advised: os.path.join(work, "demo-advised-profile.plan.json")}
    variants = [("baseline, glibc", [], "baseline"),
                ("baseline, rtmem run (rt_heap)", [rtmem, "run", "--"], "baseline")]
    if plan and has_plan_run(rtmem):
        variants.append(("baseline, rtmem run --plan (the advisor's)",
                         [rtmem, "run", "--plan", advised, "--"], "baseline"))
        variants.append((FORCED, [rtmem, "run", "--plan", plan, "--"], "baseline"))
    variants.append(("hand-ported rtmem variant", [], "rtmem"))
    timed = {label: [] for label, _, _ in variants}
    profiled = {label: [] for label, _, _ in variants}
    for k in range(args.demo_runs):  # round-robin: slow spells hit every variant alike
        for label, prefix, variant in variants:
            print(f"   demo {label}: run {k + 1}/{args.demo_runs}", file=sys.stderr)
            for profile, sink in ((False, timed[label]), (True, profiled[label])):
                j = os.path.join(work, f"run.{'p' if profile else 't'}.json")
                pre = [profile_of.get(x, x) for x in prefix] if profile else prefix
                cmd = pre + [demo, "--variant", variant, "--json", j] + common
                if profile:
                    cmd.append("--profile")
                subprocess.run(cmd, env=env, cwd=work, stdout=subprocess.DEVNULL, check=True)
                with open(j) as f:
                    sink.append(json.load(f))
    rows = {}
    for label, _, _ in variants:
        t, pr = timed[label], profiled[label]
        rows[label] = {
            "p50_ms": summary([x["frame_ms"]["p50"] for x in t]),
            "p99_ms": summary([x["frame_ms"]["p99"] for x in t]),
            "max_ms": summary([x["frame_ms"]["max"] for x in t]),
            "alloc_us_per_frame": summary([x.get("alloc_us_per_frame", 0) for x in pr]),
            "alloc_us_frame_p50": summary([x.get("alloc_us_frame_p50", 0) for x in pr]),
            "cpu_us_per_frame": summary([x["process_cpu_ms"] * 1e3 / x["frames"] for x in t]),
            "rss_mib": summary([x["peak_rss_mib"] for x in t]),
            "checksums": sorted({x["checksum"] for x in t}),
        }
    recovered = recovered_by_round(variants, timed, profiled)
    matched = ""
    if plan and has_plan_run(rtmem):  # the exit summaries: how many sites matched, each mode
        for p, extra in ((plan, []), (profile_plan, ["--profile"])):
            r = subprocess.run([rtmem, "run", "--stats", "--plan", p, "--", demo, "--variant",
                                "baseline"] + common + extra, env=env, cwd=work,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            lines = [l for l in r.stderr.splitlines() if "sites matched" in l]
            matched += (("; with --profile: " if extra else "") +
                        (re.sub(r"^rtmem run: pid \d+: ", "", lines[0]) if lines else ""))
    replay = None
    if plan and has_plan_run(rtmem):  # the plan's trace replayed: allocator time per frame
        replay = replay_plan(rtmem, profile_plan, os.path.join(work, "demo-profile.rtt"),
                             args.demo_runs)
        per_frame = lambda ns: ns / 1e3 / args.trace_frames
        real = {k: rows[label]["alloc_us_per_frame"]["median"] for k, label in
                (("rt_heap", "baseline, rtmem run (rt_heap)"), ("plan", FORCED))}
        replay["replayed_us_per_frame"] = {k: per_frame(replay[k]["median"]) for k in ("rt_heap", "plan")}
        replay["real_us_per_frame"] = real
        replay["replayed_ratio"] = replay["plan"]["median"] / replay["rt_heap"]["median"]
        replay["real_ratio"] = real["plan"] / real["rt_heap"]
        replay["replayed_saving_us"] = (replay["replayed_us_per_frame"]["rt_heap"] -
                                        replay["replayed_us_per_frame"]["plan"])
        replay["real_saving_us"] = real["rt_heap"] - real["plan"]
        replay["factor"] = saving_factor(replay["real_saving_us"], replay["replayed_saving_us"])
        if args.callgrind:  # load-free: instructions saved per frame, real and replayed
            print("   demo: callgrind, real and replayed", file=sys.stderr)
            cmd = [demo, "--variant", "baseline", "--frames", str(args.callgrind_frames),
                   "--entities", str(args.entities), "--no-progress"]
            cg = callgrind_savings(rtmem, plan, cmd, env, work, os.path.join(work, "demo.rtt"))
            cg["real_saving_per_frame"] = cg["real_saving"] / args.callgrind_frames
            cg["replayed_saving_per_frame"] = cg["replayed_saving"] / args.trace_frames
            cg["factor"] = saving_factor(cg["real_saving_per_frame"],
                                         cg["replayed_saving_per_frame"])
            replay["callgrind"] = cg
    return {"plan": f"the advisor's: {advised_line}; every site (--plan-unwind-ns 0): {plan_line}",
            "rows": rows, "plan_summary": matched, "recovered": recovered,
            "replay": replay}


# The demo's plan made with the walk free (every site that pays by its calls is planned).
FORCED = "baseline, rtmem run --plan, every site (--plan-unwind-ns 0)"


def recovered_by_round(variants, timed, profiled):
    """The share of the hand-ported variant's saving over glibc that each other variant
    recovers, per round (each round ran every variant back to back, so a slow spell of the
    machine hits a round's variants alike): from the allocator time of the median frame and
    the mean allocator time per frame of the --profile runs (a call preempted by the host adds
    its whole time slice to the mean; the median frame does not see it), and from the process
    CPU time per frame of the timed runs (the game's work is the same in every variant, so the
    CPU time differences are the allocation work)."""
    labels = [label for label, _, _ in variants]
    base, hand = labels[0], labels[-1]
    out = {}
    for label in labels[1:-1]:
        by = {"alloc_time_p50": [], "alloc_time": [], "cpu_time": []}
        for k in range(len(timed[base])):
            m = [profiled[x][k].get("alloc_us_frame_p50", 0) for x in (base, label, hand)]
            a = [profiled[x][k].get("alloc_us_per_frame", 0) for x in (base, label, hand)]
            c = [timed[x][k]["process_cpu_ms"] for x in (base, label, hand)]
            for key, (g, v, h) in (("alloc_time_p50", m), ("alloc_time", a), ("cpu_time", c)):
                if g != h:
                    by[key].append((g - v) / (g - h))
        out[label] = {key: summary(v) for key, v in by.items() if v}
    return out


def demo_table(d):
    lines = ["| | frame p50 | frame p99 | frame max | allocator time, median frame | "
             "allocator time / frame (mean) | CPU / frame | peak RSS |",
             "|---|---|---|---|---|---|---|---|"]
    first = next(iter(d["rows"].values()))
    base = first["alloc_us_per_frame"]["median"]
    base_p50 = first.get("alloc_us_frame_p50", {}).get("median")
    for label, r in d["rows"].items():
        a, m = r["alloc_us_per_frame"], r.get("alloc_us_frame_p50")
        ratio = f" ({a['median'] / base:.2f}x)" if base else ""
        mid = (f"{fmt(m, 'us', 0)} ({m['median'] / base_p50:.2f}x)" if m and base_p50 else "-")
        lines.append(f"| {label} | {fmt(r['p50_ms'], 'ms')} | {fmt(r['p99_ms'], 'ms')} | "
                     f"{fmt(r['max_ms'], 'ms')} | {mid} | {fmt(a, 'us', 0)}{ratio} | "
                     f"{fmt(r['cpu_us_per_frame'], 'us', 0)} | {fmt(r['rss_mib'], 'MiB', 1)} |")
    for label, rec in d.get("recovered", {}).items():
        parts = [f"{what}: {v['median'] * 100:.0f}% ({v['min'] * 100:.0f}–{v['max'] * 100:.0f}%, "
                 f"{v['n']} rounds)" for what, v in
                 (("allocator time of the median frame", rec.get("alloc_time_p50")),
                  ("mean allocator time", rec.get("alloc_time")),
                  ("CPU time", rec.get("cpu_time"))) if v]
        lines.append(f"\n{label}: share of the hand-ported variant's saving over glibc recovered, "
                     f"per round — " + "; ".join(parts))
    r = d.get("replay")
    if r:
        factor = f"{r['factor']:.2f}" if r["factor"] is not None else "-"
        lines.append(
            f"\nReplayed (`rtmem replay --plan` of the plan's {r['served']}-allocation trace) "
            f"against real (`--profile` runs), allocator time per frame, rt_heap alone → plan: "
            f"replayed {r['replayed_us_per_frame']['rt_heap']:.0f} → "
            f"{r['replayed_us_per_frame']['plan']:.0f} us ({r['replayed_ratio']:.2f}x, saving "
            f"{r['replayed_saving_us']:+.0f} us); real {r['real_us_per_frame']['rt_heap']:.0f} → "
            f"{r['real_us_per_frame']['plan']:.0f} us ({r['real_ratio']:.2f}x, saving "
            f"{r['real_saving_us']:+.0f} us); real / replayed saving {factor}")
        cg = r.get("callgrind")
        if cg:
            lines.append(
                f"\nInstructions saved per frame (callgrind, load-free), rt_heap alone → plan: "
                f"replayed {cg['replayed_saving_per_frame'] / 1e6:+.2f} M, real (whole process) "
                f"{cg['real_saving_per_frame'] / 1e6:+.2f} M; real / replayed "
                + (f"{cg['factor']:.2f}" if cg["factor"] is not None else "-"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build/release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build/bench-plan"))
    ap.add_argument("--part", choices=["all", "demo", "programs"], default="all")
    ap.add_argument("-n", "--runs", type=int, default=5, help="runs per program and column")
    ap.add_argument("--only", type=lambda s: s.split(","), help="programs, comma-separated")
    ap.add_argument("--min-time", type=float, default=1.0,
                    help="programs: a measurement runs the program as many times as make it "
                         "last this many seconds (CPU, by a warm-up run under glibc); times are "
                         "reported per run")
    ap.add_argument("--site-depth", type=int, default=2,
                    help="advise --site-depth for programs (2, the best measured: sites behind "
                         "one wrapper such as xmalloc are told apart by a one-frame stack walk; "
                         "1: by their first frame alone, which hides every wrapper site)")
    ap.add_argument("--demo-runs", type=int, default=5)
    ap.add_argument("--callgrind", action="store_true",
                    help="also count, with callgrind, the instructions the plan saves in the real "
                         "run and in the replay (load-free; minutes per program)")
    ap.add_argument("--callgrind-frames", type=int, default=60,
                    help="demo frames of the --callgrind runs")
    ap.add_argument("--frames", type=int, default=900)
    ap.add_argument("--trace-frames", type=int, default=300)
    ap.add_argument("--entities", type=int, default=2000)
    args = ap.parse_args()
    args.out, args.build = os.path.abspath(args.out), os.path.abspath(args.build)
    rtmem = os.path.join(args.build, "tools/cli/rtmem")
    if not os.path.exists(rtmem):
        sys.exit(f"bench/plan: {rtmem} is not built (see the header of this script)")
    os.makedirs(args.out, exist_ok=True)
    mimalloc = find_mimalloc()
    report = {"machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at start",
              "plan_column": has_plan_run(rtmem)}
    md = [f"Machine: {report['machine']}; `rtmem run --plan` "
          f"{'available' if report['plan_column'] else 'not built yet: no plan column'}."]
    if args.part in ("all", "demo"):
        report["demo"] = bench_demo(args, rtmem, args.build, args.out)
        if report["demo"]:
            md += ["", f"Demo ({args.frames} frames, {args.entities} entities, "
                       f"{args.demo_runs} runs each; plan: {report['demo']['plan']})", "",
                   demo_table(report["demo"])]
            if report["demo"]["plan_summary"]:
                md += ["", "Plan run summary (the every-site plan; the advisor's is in its line "
                           f"above): {report['demo']['plan_summary']}"]
    if args.part in ("all", "programs"):
        report["programs"] = bench_programs(args, rtmem, mimalloc, args.out)
        md += ["", f"Programs (input B, {args.runs} rounds, every column once a round; medians "
                   "with min–max; the ratios are taken per round, then their median):", "",
               programs_table(report["programs"]), "",
               "Replayed against real savings (input B recorded and replayed with the plan; "
               "replay: allocator time in calls, medians; real: CPU time, medians):", "",
               replay_table(report["programs"]), ""]
        for name, row in report["programs"].items():
            md.append(f"- {name}: {row['what']}. A measurement: {row['runs_per_measurement']} "
                      f"run(s) of input B. Plan from input A: {row['plan']}")
            if row.get("tuned"):
                md.append("  `rtmem tune` on input A: " + " / ".join(
                    l.strip() for l in row["tuned"]["lines"][1:]))
            summary_b = row["columns"].get("plan", {}).get("plan_summary")
            if summary_b:
                md.append(f"  On input B: {summary_b}")
    with open(os.path.join(args.out, "plan-bench.json"), "w") as f:
        json.dump(report, f, indent=1)
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, "plan-bench.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
