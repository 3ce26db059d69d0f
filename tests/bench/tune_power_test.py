#!/usr/bin/env python3
"""bench/plan/tune_power.py runs end to end on a short command: one line per true effect with a
share between 0 and 100% (only the shape: three rounds are noise), and no command is a clear
error. Usage: tune_power_test.py RTMEM"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "bench", "plan", "tune_power.py")


def main():
    rtmem = sys.argv[1]
    busy = [sys.executable, "-c", "sum(range(3 * 10**5))"]
    r = subprocess.run([sys.executable, SCRIPT, "--rtmem", rtmem, "--rounds", "3", "--trials",
                        "50", "--"] + busy, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if l.startswith("true ratio")]
    assert len(lines) == 9, r.stdout
    for l in lines:
        share = float(re.search(r"kept in ([0-9.]+)%", l).group(1))
        assert 0 <= share <= 100, l
    assert "null paired ratios (3 rounds" in r.stdout, r.stdout
    none = subprocess.run([sys.executable, SCRIPT, "--rtmem", rtmem], capture_output=True,
                          text=True)
    assert none.returncode != 0 and "no command" in none.stderr, none.stderr
    print("tune_power: ok")


if __name__ == "__main__":
    main()
