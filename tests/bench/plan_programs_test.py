#!/usr/bin/env python3
"""bench/plan's program set: every input is generated the same way twice, input A is not input
B, the generated data parses, and each installed program runs its command on A and B (exit
status 0, output on stdout). A program that is not installed is reported and left out, as
run.py does."""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "plan"))
import run  # noqa: E402  (bench/plan/run.py)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def contents(work):
    out = {}
    for name in sorted(os.listdir(work)):
        with open(os.path.join(work, name), "rb") as f:
            out[name] = f.read()
    return out


def main():
    base = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "plan_programs")
    shutil.rmtree(base, ignore_errors=True)
    first, second = os.path.join(base, "1"), os.path.join(base, "2")
    os.makedirs(first)
    os.makedirs(second)
    programs = run.programs(first)
    expected = {"python3", "cc1plus", "sqlite3", "perl", "xmllint", "jq", "lua5.4", "gawk"}
    check(set(programs) == expected, f"program set {sorted(programs)}")
    data_only = ("xmllint", "jq", "lua5.4", "gawk", "python3", "perl", "sqlite3")
    for name in data_only:  # cc1plus's prep runs g++ -E: checked below with the commands
        programs[name]["prep"]()
        run.programs(second)[name]["prep"]()
    a, b = contents(first), contents(second)
    check(a == b, "inputs differ between two generations (seeds not fixed?)")
    pairs = [(x, x.replace("_A", "_B")) for x in a if "_A" in x]
    check(len(pairs) == 8, f"A/B input pairs: {pairs}")
    for x, y in pairs:
        check(y in a and a[x] != a[y], f"{x} and {y}: B missing or equal to A")
    for tag in "AB":
        root = ElementTree.parse(os.path.join(first, f"xml_{tag}.xml")).getroot()
        check(len(root) > 10000, f"xml_{tag}.xml: {len(root)} elements under the root")
        with open(os.path.join(first, f"jq_{tag}.json")) as f:
            check(len(json.load(f)) > 10000, f"jq_{tag}.json too short")

    for name, p in programs.items():  # each command, as run.py runs it, under glibc
        exe, package = p["needs"]
        if not shutil.which(exe):
            print(f"{name}: {exe} not installed (Debian package {package}): not run")
            continue
        if name not in data_only:
            p["prep"]()
        env = dict(os.environ, **p.get("env", {}))
        env.pop("LD_PRELOAD", None)
        for tag in "AB":
            stdin_path = p.get("stdin", lambda i: None)(tag)
            with open(stdin_path, "rb") if stdin_path else open(os.devnull, "rb") as stdin:
                r = subprocess.run(p["cmd"](tag), cwd=first, env=env, stdin=stdin,
                                   capture_output=True, timeout=60)
            outs = p.get("outputs", lambda i: [])(tag)
            produced = r.stdout or all(os.path.getsize(os.path.join(first, o)) for o in outs)
            check(r.returncode == 0 and produced,
                  f"{name} on input {tag}: exit {r.returncode}, {len(r.stdout)} bytes out, "
                  f"stderr {r.stderr[-300:]!r}")
            print(f"{name} {tag}: ok ({len(r.stdout)} bytes)")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("bench/plan program set: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
