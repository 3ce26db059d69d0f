#!/usr/bin/env python3
"""How often `rtmem tune` keeps a plan, given this machine's noise (docs/advisor.md, "Tuning a
plan by timing it"). Measures paired rounds of two *identical* runs (`rtmem run -- CMD` twice,
order alternating as tune does), then draws rounds from those null ratios (and their inverses:
with the order alternating, no effect is symmetric) times an effect and
applies tune's rule (analyze::judge_rounds: at least 5 rounds; kept when the one-sided sign test
reaches 5% and the median ratio is <= 0.95; given up when even winning every round up to 15
could not reach 5%). Prints the share of simulated tunes that keep a plan of each true effect.

    bench/plan/tune_power.py --build build/release --rounds 40 -- lua5.4 lua_A.lua
"""
import argparse
import math
import os
import random
import subprocess

MIN_ROUNDS, MAX_ROUNDS, ALPHA, MARGIN = 5, 15, 0.05, 0.05


def cpu_seconds(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"tune_power: {' '.join(cmd)} failed")
    return usage.ru_utime + usage.ru_stime


def sign_p(wins, rounds):
    return sum(math.comb(rounds, k) for k in range(wins, rounds + 1)) / 2 ** rounds


def kept(null_logs, effect, rng):
    """One simulated tune: True when the rule keeps the candidate."""
    logs = []
    for n in range(1, MAX_ROUNDS + 1):
        logs.append(rng.choice(null_logs) + math.log(effect))
        if n < MIN_ROUNDS:
            continue
        s = sorted(logs)
        median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
        wins = sum(1 for x in logs if x < 0)
        if sign_p(wins, n) <= ALPHA and math.exp(median) <= 1 - MARGIN:
            return True
        left = MAX_ROUNDS - n
        if sign_p(wins + left, n + left) > ALPHA:
            return False
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build/release")
    ap.add_argument("--rtmem", help="the rtmem executable (default: BUILD/tools/cli/rtmem)")
    ap.add_argument("--rounds", type=int, default=40, help="null rounds to measure")
    ap.add_argument("--trials", type=int, default=4000, help="simulated tunes per effect")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        raise SystemExit("tune_power: no command (… -- PROGRAM ARGS)")
    run = [a.rtmem or os.path.join(a.build, "tools/cli/rtmem"), "run", "--"] + cmd
    null_logs = []
    for k in range(a.rounds):
        first, second = cpu_seconds(run), cpu_seconds(run)
        if min(first, second) <= 0:
            raise SystemExit(f"tune_power: {' '.join(cmd)} took no measurable CPU time: time a "
                             "command that runs for a while")
        null_logs.append(math.log(second / first) if k % 2 == 0 else math.log(first / second))
    # Under no effect, which run of a round is the candidate is a coin flip (tune alternates
    # the order), so the null is symmetric: use each measured ratio and its inverse; 40 rounds
    # alone are lopsided by chance, and the rule's wins would follow that.
    null_logs += [-x for x in null_logs]
    q = sorted(math.exp(x) for x in null_logs)
    print(f"null paired ratios ({a.rounds} rounds of two identical runs, and their inverses): "
          f"10th percentile {q[len(q) // 10]:.3f}, 90th {q[len(q) * 9 // 10]:.3f}")
    rng = random.Random(1)
    for effect in (1.05, 1.02, 1.0, 0.98, 0.95, 0.92, 0.90, 0.85, 0.80):
        share = sum(kept(null_logs, effect, rng) for _ in range(a.trials)) / a.trials
        print(f"true ratio {effect:.2f}: kept in {share * 100:.1f}% of simulated tunes")


if __name__ == "__main__":
    main()
