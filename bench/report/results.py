"""Reading Google Benchmark JSON: every repetition of every benchmark, medians of them."""
import glob
import json
import os
import re
import statistics

_UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# Suffixes Google Benchmark appends to names; the report names benchmarks without them.
_SUFFIX = re.compile(r"(/(min_time|repeats|iterations):[^/]*)+$")


def clean_name(name):
    return _SUFFIX.sub("", name)


def _salvage(text):
    """The benchmarks a crashed program finished: cut after the last complete entry."""
    cut = text.rfind("\n    },")
    if cut < 0:
        return None
    try:
        return json.loads(text[: cut + 6] + "\n  ]\n}")
    except ValueError:
        return None


class Run:
    """One benchmark: per-repetition times (ns per iteration) and counters."""

    def __init__(self, name):
        self.name = name
        self.times = []
        self.counters = {}
        self.median_aggregate = None

    def median(self):
        if self.times:
            return statistics.median(self.times)
        return self.median_aggregate

    def counter(self, key):
        values = self.counters.get(key)
        return statistics.median(values) if values else None


class Results:
    """All JSON files of one results directory, keyed by program (file stem) then name."""

    def __init__(self, directory):
        self.directory = directory
        self.programs = {}
        self.context = {}
        self.contexts = {}  # per program: the JSON context (process_malloc among others)
        self.partial = []  # files cut short by a crash; their finished benchmarks still count
        self.used = set()  # (program, name) pairs a section reported; the rest go to the appendix
        for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
            try:
                with open(path) as f:
                    text = f.read()
                data = json.loads(text)
            except OSError:
                continue
            except ValueError:
                data = _salvage(text)  # a program that crashed mid-run left a partial file
                if data is None:
                    continue
                self.partial.append(os.path.basename(path))
            if "benchmarks" not in data:
                continue
            # <program>.json, and <program>.<n>.json for the cases scripts/bench ran alone.
            stem = os.path.basename(path)[: -len(".json")]
            program = stem.split(".", 1)[0].replace("rtmem_bench_", "")
            self.context = self.context or data.get("context", {})
            self.contexts.setdefault(program, data.get("context", {}))
            runs = self.programs.setdefault(program, {})
            for b in data["benchmarks"]:
                name = clean_name(b.get("run_name", b["name"]))
                run = runs.setdefault(name, Run(name))
                scale = _UNIT_NS.get(b.get("time_unit", "ns"), 1.0)
                # CPU time of the measuring thread: on a shared machine the wall clock also
                # counts the time the thread waited for a core. Multi-threaded benchmarks and
                # those that ask for it (UseRealTime: "/real_time" in the name) keep wall time.
                key = ("real_time" if "/real_time" in b.get("name", "") or
                       b.get("threads", 1) > 1 else "cpu_time")
                if b.get("run_type") == "aggregate":
                    if b.get("aggregate_name") == "median":
                        run.median_aggregate = b[key] * scale
                    continue
                if b.get("error_occurred"):
                    continue
                run.times.append(b[key] * scale)
                for key, value in b.items():
                    if isinstance(value, (int, float)) and key not in (
                        "real_time", "cpu_time", "iterations", "repetitions",
                        "repetition_index", "threads", "family_index",
                        "per_family_instance_index"):
                        run.counters.setdefault(key, []).append(float(value))

    def run(self, program, name):
        r = self.programs.get(program, {}).get(name)
        if r is not None:
            self.used.add((program, name))
        return r

    def median(self, program, name):
        r = self.run(program, name)
        return r.median() if r else None

    def counter(self, program, name, key):
        r = self.run(program, name)
        return r.counter(key) if r else None

    def find(self, include, exclude=(), programs=None):
        """First benchmark whose lower-cased name contains every `include` token and no
        `exclude` token (for programs whose names this generator does not own)."""
        for program in programs or sorted(self.programs):
            for name in self.programs.get(program, {}):
                low = name.lower()
                if all(t in low for t in include) and not any(t in low for t in exclude):
                    return program, name
        return None

    def names(self, program):
        return list(self.programs.get(program, {}))
