#!/usr/bin/env python3
"""Writes REPORT.md and PNG plots for one results directory of `make bench`.

usage: report.py <results-dir> [--quick]

Every section puts the seed document's own figure, ours and the ratio ours/seed side by side.
Ratios are computed from medians of the repetitions in the JSON (docs/benchmarks.md).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import Results  # noqa: E402

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the report still has every table; plots need python3-matplotlib
    plt = None


def fmt(x, digits=2):
    if x is None:
        return "—"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def fmtx(x):
    return fmt(x) + "x" if x is not None else "—"


def ratio(a, b):
    return a / b if a is not None and b else None


class Report:
    def __init__(self, results, out_dir):
        self.r = results
        self.out = out_dir
        self.lines = []
        self.headline = []  # (claim, seed text, seed value, ours)
        self.plots = []
        self.origins = {}

    def malloc(self, program):
        """'malloc', or what malloc really was in that program when a peer replaced glibc's."""
        o = self.origins.get(program, "unknown")
        if o == "unknown" or o.startswith("libc.so"):
            return "malloc"
        return f"malloc (= {o.split('.so')[0].removeprefix('lib')})"

    def h(self, text):
        self.lines += ["", text, ""]

    def p(self, text):
        self.lines.append(text)

    def table(self, header, rows):
        self.lines.append("| " + " | ".join(header) + " |")
        self.lines.append("|" + "---|" * len(header))
        for row in rows:
            self.lines.append("| " + " | ".join(str(c) for c in row) + " |")
        self.lines.append("")

    def seed_rows(self, rows, headline=()):
        """rows: (comparison, seed text, seed ratio or None, our ratio or None)."""
        out = []
        for label, seed_text, seed, ours in rows:
            out.append([label, seed_text, fmtx(seed), fmtx(ours),
                        fmt(ratio(ours, seed)) if seed else "—"])
            if label in headline:
                self.headline.append((label, seed_text, seed, ours))
        self.table(["comparison", "seed figure", "seed ratio", "our ratio", "ours / seed"], out)

    def plot(self, filename, title, draw):
        if plt is None:
            return
        fig, ax = plt.subplots(figsize=(7, 4))
        draw(ax)
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(self.out, filename), dpi=80)
        plt.close(fig)
        self.p(f"![{title}]({filename})")
        self.p("")

    def missing(self, program):
        if program not in self.r.programs:
            self.p(f"*Not measured in this run: `rtmem_bench_{program}` produced no JSON.*")
            self.p("")
            return True
        return False


# ---- sections owned by this generator -----------------------------------------------------

def fig_2_2(rep):
    rep.h("## Thesis Fig 2.2 — 5000 `new Particle` vs a vector of values")
    if rep.missing("cache"):
        return
    new = rep.r.median("cache", "fig2_2/new_particle")
    values = rep.r.median("cache", "fig2_2/vector_of_values")
    rep.table(["variant", "median time (µs)"],
              [["new Particle (listing 2.2)", fmt(new and new / 1e3)],
               ["vector of values (listing 2.3)", fmt(values and values / 1e3)]])
    rep.seed_rows([("new Particle / vector of values", "2.66x faster", 2.66, ratio(new, values))],
                  headline=("new Particle / vector of values",))


def list_series(rep, layout, pad):
    pts = []
    for name in rep.r.names("cache"):
        m = re.fullmatch(rf"fig3_5_6/{layout}/pad:{pad}/ws:(\d+)", name)
        if m:
            ns = rep.r.counter("cache", name, "ns_per_node")
            if ns is None:
                t, n = rep.r.median("cache", name), rep.r.counter("cache", name, "nodes")
                ns = t / n if t and n else None
            if ns is not None:
                pts.append((int(m.group(1)), ns * (1e9 if ns < 1e-3 else 1)))
    return sorted(pts)


def figs_3_5_3_6(rep):
    rep.h("## Thesis Figs 3.5/3.6 — linked-list traversal, node padding, linear vs shuffled")
    if rep.missing("cache"):
        return
    caches = rep.r.context.get("caches", [])
    ours = ", ".join(f"L{c['level']}{c['type'][0].lower()} {c['size'] // 1024} KiB"
                     for c in caches if c.get("type") != "Instruction")
    rep.p("Time per `next` dereference (ns) vs working set. The thesis (i7-6700k) saw steps at "
          f"2^15, 2^18 and 2^23 bytes (32 KiB L1d, 256 KiB L2, 8 MiB L3); this machine: {ours}.")
    rep.p("")
    pads = sorted({int(m.group(1)) for n in rep.r.names("cache")
                   if (m := re.fullmatch(r"fig3_5_6/linear/pad:(\d+)/ws:\d+", n))})
    series = {(lay, pad): list_series(rep, lay, pad)
              for lay in ("linear", "shuffled") for pad in pads}
    sizes = sorted({ws for s in series.values() for ws, _ in s})
    header = ["working set"] + [f"{lay} pad {pad}" for lay in ("linear", "shuffled") for pad in pads]
    rows = []
    for ws in sizes:
        row = [f"2^{ws}"]
        for lay in ("linear", "shuffled"):
            for pad in pads:
                row.append(fmt(dict(series[(lay, pad)]).get(ws)))
        rows.append(row)
    rep.table(header, rows)
    for lay, fig in (("linear", "3.5"), ("shuffled", "3.6")):
        def draw(ax, lay=lay):
            for pad in pads:
                s = series[(lay, pad)]
                ax.plot([w for w, _ in s], [v for _, v in s], marker=".", label=f"pad {pad}")
            for c in caches:
                if c.get("type") != "Instruction":
                    ax.axvline(c["size"].bit_length() - 1, color="grey", ls=":", lw=1)
            ax.set_xlabel("working set (log2 bytes)")
            ax.set_ylabel("ns per node")
            ax.set_yscale("log")
            ax.legend(fontsize=8)
        rep.plot(f"fig3_{'5' if lay == 'linear' else '6'}_list_{lay}.png",
                 f"Fig {fig}: {lay} list traversal", draw)
    if sizes:
        big = sizes[-1]
        rows = []
        for pad in pads:
            lin = dict(series[("linear", pad)]).get(big)
            shuf = dict(series[("shuffled", pad)]).get(big)
            rows.append((f"shuffled / linear, pad {pad}, 2^{big} B",
                         "random ≫ linear; pads equal when random", None, ratio(shuf, lin)))
        rep.seed_rows(rows)


def table_3_2(rep):
    rep.h("## Thesis Table 3.2 — cache miss rates (callgrind cache simulation)")
    path = os.path.join(rep.r.directory, "miss_table.json")
    if not os.path.exists(path):
        rep.p("*Not measured in this run (needs valgrind).*")
        return
    with open(path) as f:
        table = json.load(f)
    seed = {("linear", 0): (0.125, 0.125), ("linear", 7): (0.999, 0.999),
            ("linear", 15): (0.999, 0.999), ("linear", 31): (1.0, 1.0),
            ("linear", 63): (0.999, 0.999), ("shuffled", 0): (0.999, 0.969),
            ("shuffled", 7): (1.0, 1.0), ("shuffled", 15): (1.0, 1.0),
            ("shuffled", 31): (1.0, 1.0), ("shuffled", 63): (1.0, 1.0)}
    rep.p(f"Simulated caches as the thesis' machine ({table.get('caches', '')}); working set "
          f"2^{table.get('log2', '?')} bytes, four traversals. The thesis disabled the hardware "
          "prefetcher; a cache simulator has none.")
    rep.p("")
    rows = []
    for e in table["rows"]:
        key = (e["layout"], e["pad"])
        l1 = e["D1mr"] / e["Dr"] if e["Dr"] else None
        ll = e["DLmr"] / e["Dr"] if e["Dr"] else None
        s1, s2 = seed.get(key, (None, None))
        rows.append([e["layout"], e["pad"], f"{e['Dr']:,}", f"{e['D1mr']:,}", f"{e['DLmr']:,}",
                     f"{fmt(s1, 3)} / {fmt(s2, 3)}", f"{fmt(l1, 3)} / {fmt(ll, 3)}",
                     f"{fmt(ratio(l1, s1))} / {fmt(ratio(ll, s2))}"])
    rep.table(["layout", "pad", "reads", "L1d misses", "LL misses",
               "seed miss rate L1 / L2", "our miss rate L1 / LL", "ours / seed"], rows)


def figs_3_9_3_10(rep):
    rep.h("## Thesis Figs 3.9/3.10 — naive vs transposed matrix multiply")
    if rep.missing("matrix"):
        return
    pts = []
    for name in rep.r.names("matrix"):
        m = re.fullmatch(r"fig3_9/naive/(\d+)x(\d+)", name)
        if m:
            naive = rep.r.median("matrix", name)
            tr = rep.r.median("matrix", name.replace("naive", "transposed"))
            pts.append((int(m.group(1)), int(m.group(2)), naive, tr))
    pts.sort()
    rep.table(["N x M", "naive (ms)", "transposed (ms)", "speedup"],
              [[f"{n}x{m}", fmt(a / 1e6), fmt(b / 1e6), fmt(ratio(a, b))] for n, m, a, b in pts])

    def draw(ax):
        ax.plot([n for n, *_ in pts], [ratio(a, b) for *_, a, b in pts], marker="o", label="ours")
        ax.plot([200, 2000], [2.08, 8.0], "x--", label="thesis (end points)")
        ax.set_xlabel("N (matrix N x (N-100))")
        ax.set_ylabel("naive / transposed")
        ax.legend()
    rep.plot("fig3_10_matrix_speedup.png", "Fig 3.10: speedup of the transposed multiply", draw)
    rows = []
    if pts:
        n, m, a, b = pts[0]
        rows.append((f"speedup at {n}x{m}", "2.08x at 200x100", 2.08, ratio(a, b)))
        n, m, a, b = pts[-1]
        rows.append((f"speedup at {n}x{m} (largest run)", "8x at 2000x1900", 8.0, ratio(a, b)))
    rep.seed_rows(rows, headline=tuple(r[0] for r in rows[-1:]))


def lecture(rep):
    rep.h("## Lecture (zhiayang 2022) — arena, SSO, interning, AoS/SoA, branches, arrays")
    if rep.missing("lecture"):
        return
    m = lambda n: rep.r.median("lecture", "lecture/" + n)  # noqa: E731
    rows = [
        ("new / lecture arena create<Big> (10,000)", "1,018,849 vs 68,247 ns", 14.93,
         ratio(m("arena/new"), m("arena/lecture_arena"))),
    ]
    if m("arena/rtmem_arena"):
        rows.append(("new / rtmem::arena (10,000)", "1,018,849 vs 68,247 ns", 14.93,
                     ratio(m("arena/new"), m("arena/rtmem_arena"))))
    rows += [
        ("no-SSO / SSO, short string", "79.9 vs 1.08 ns", 73.98,
         ratio(m("sso/short/simple_string"), m("sso/short/std_string"))),
        ("no-SSO / SSO, long string", "79.2 vs 79.6 ns", 0.995,
         ratio(m("sso/long/simple_string"), m("sso/long/std_string"))),
        ("std::string / interned, count", "4,465,814 vs 952,879 ns", 4.69,
         ratio(m("intern/count/std_string"), m("intern/count/intern_string"))),
        ("std::string / interned, copy", "14,882,987 vs 1,338,165 ns", 11.12,
         ratio(m("intern/copy/std_string"), m("intern/copy/intern_string"))),
        ("std::string / interned, hash", "9,775,822 vs 997,586 ns", 9.80,
         ratio(m("intern/hash/std_string"), m("intern/hash/intern_string"))),
        ("AoS / SoA enemies", "84,158 vs 22,886 ns", 3.68,
         ratio(m("enemies/aos"), m("enemies/soa"))),
        ("unpredictable / predictable branch", "427.4 vs 241.8 ms", 1.77,
         ratio(m("branch/unpredictable"), m("branch/predictable"))),
        ("branch / branch-free count", "179.6 vs 38.7 ms", 4.64,
         ratio(m("branchless/branch"), m("branchless/branch_free"))),
        ("column- / row-major 4096x4096", "172.0 vs 31.3 ms", 5.49,
         ratio(m("array/column_major"), m("array/row_major"))),
    ]
    rep.seed_rows(rows, headline=("new / lecture arena create<Big> (10,000)",
                                  "new / rtmem::arena (10,000)"))
    rep.p("The lecture timed whole processes with hyperfine for the branch and array pairs (so "
          "its row-major figure includes start-up and page faults); these rows time only the "
          "loops, and the next section times the same pairs as whole processes with hyperfine.")


def trub_growing_stack(rep):
    rep.h("## Trub — his stack allocator grows by chunks (8100 B) from malloc")
    if rep.missing("growing_stack"):
        return
    m = lambda n: rep.r.median("growing_stack", n)  # noqa: E731
    rep.table(["operation", "seed (ns)", "ours (ns per 1000 ops)"],
              [[v, s, fmt(m(f"trub_growing/{k}/8"))] for v, s, k in (
                  ("malloc", "80-90", "malloc"), ("stack_allocator (fixed)", "—", "stack"),
                  ("growing_stack_allocator", "30-40", "growing_stack"))])
    mal = rep.malloc("growing_stack")
    rep.seed_rows([
        (f"{mal} / growing stack, 8 B", "80-90 vs 30-40 ns", 85 / 35,
         ratio(m("trub_growing/malloc/8"), m("trub_growing/growing_stack/8"))),
        (f"{mal} / growing stack, 4096 pushed then popped (crosses chunks)", "—", None,
         ratio(m("trub_growing_deep/malloc/8"), m("trub_growing_deep/growing_stack/8"))),
        ("growing / fixed stack, 4096 pushed then popped", "—", None,
         ratio(m("trub_growing_deep/growing_stack/8"), m("trub_growing_deep/stack/8"))),
    ])


def hyperfine_pair(rep, slow):
    """Median seconds of (slow, fast) from one hyperfine JSON of scripts/bench, or (None, None)."""
    try:
        with open(os.path.join(rep.out, "hyperfine", slow + ".json")) as f:
            results = json.load(f)["results"]
        return results[0]["median"], results[1]["median"]
    except (OSError, ValueError, KeyError, IndexError):
        return None, None


def lecture_tables(rep):
    rep.h("## Lecture (zhiayang 2022) — the measured tables: traversal, reserve, false sharing, "
          "prefetch, L1 array, skewed branch, pass by value, interning's generate step")
    if not rep.missing("lecture_tables"):
        m = lambda n: rep.r.median("lecture_tables", "lecture_tables/" + n)  # noqa: E731
        rep.p("Loops timed in-process (Google Benchmark, medians of repetitions):")
        rep.p("")
        rep.seed_rows([
            ("std::list / std::vector traversal (100,000 ints)", "326,960 vs 65,263 ns", 5.01,
             ratio(m("traversal/list"), m("traversal/vector"))),
            ("no reserve / reserve (2^22 push_back)", "79.2 vs 64.5 ms (process)", 1.23,
             ratio(m("reserve/none"), m("reserve/reserve"))),
            ("adjacent / alignas(64) counters, 2 threads", "49.9 vs 12.1 ms (process)", 4.13,
             ratio(m("false_sharing/adjacent/real_time"), m("false_sharing/alignas/real_time"))),
            ("random / sequential index (2^20)", "1,887,808 vs 622,632 ns", 3.03,
             ratio(m("prefetch/random"), m("prefetch/sequential"))),
            ("row / column, 96x96 shorts, no SIMD", "50.3 vs 49.8 ms (process)", 1.01,
             ratio(m("l1_array/row"), m("l1_array/column"))),
            ("branch-free / branch, skewed data", "75.4 vs 74.8 ms (process)", 1.01,
             ratio(m("skewed_branch/branchless"), m("skewed_branch/branch"))),
            ("by reference / by value (string_view, size_t)", "3,767 vs 3,151 ns", 1.20,
             ratio(m("pass/by_ref"), m("pass/by_value"))),
            ("std::string / interned, generate 1,000,000", "29,867,194 vs 65,877,516 ns", 0.45,
             ratio(m("intern_generate/std_string"), m("intern_generate/intern_string"))),
        ])
        if "false_sharing" in rep.r.programs:
            rate = lambda layout: items_rate(  # noqa: E731
                rep, "false_sharing", f"per_thread_counters<{layout}>/real_time/threads:2")
            rep.p("The lecture's false-sharing figure beside bench/false_sharing.cpp (the thesis "
                  "Figs 7.1/7.2 sweep), read at 2 threads: the same alignas(64) layout, per-thread "
                  "throughput instead of a process's time.")
            rep.p("")
            rep.seed_rows([("alignas(64) / adjacent counters, items/s at 2 threads "
                            "(false_sharing.cpp)", "49.9 vs 12.1 ms", 4.13,
                            ratio(rate("padded_64"), rate("adjacent")))])
    rows = []
    for slow, fast, label, seed_text, seed in (
            ("reserve_none", "reserve", "no reserve / reserve", "79.2 vs 64.5 ms", 1.23),
            ("false_sharing", "false_sharing_alignas", "adjacent / alignas(64), 2 threads",
             "49.9 vs 12.1 ms", 4.13),
            ("l1_row", "l1_column", "row / column, 96x96 shorts, no SIMD", "50.3 vs 49.8 ms",
             1.01),
            ("skewed_branchless", "skewed_branch", "branch-free / branch, skewed data",
             "75.4 vs 74.8 ms", 1.01),
            ("predict_random", "predict_sorted", "unpredictable / predictable branch",
             "427.4 vs 241.8 ms", 1.77),
            ("branch", "branchless", "branch / branch-free count", "179.6 vs 38.7 ms", 4.64),
            ("array_column", "array_row", "column- / row-major 4096x4096", "172.0 vs 31.3 ms",
             5.49)):
        a, b = hyperfine_pair(rep, slow)
        if a is not None:
            rows.append((f"{label} (`--program {slow}` / `{fast}`)", seed_text, seed,
                         ratio(a, b)))
    rep.p("Whole processes timed with hyperfine (`--warmup 1`, medians), as the lecture timed "
          "them: start-up, data generation and page faults included.")
    rep.p("")
    if rows:
        rep.seed_rows(rows)
    else:
        rep.p("*Not measured in this run: no hyperfine JSON (hyperfine missing, or "
              "rtmem_bench_lecture_tables filtered out).*")
        rep.p("")


def coherent(rep):
    rep.h("## Coherent Labs — temporary-allocation scope vs heap; unique values")
    if rep.missing("coherent"):
        return
    m = lambda n: rep.r.median("coherent", "coherent/" + n)  # noqa: E731
    rows = [("heap / linear temp scope (OnTaskComplete)", "7-10x (VS 2015 heap)", 7.0,
             ratio(m("temp/heap"), m("temp/linear_scope"))),
            ("heap / pmr monotonic (same loop)", "—", None,
             ratio(m("temp/heap"), m("temp/pmr_monotonic")))]
    if m("temp/rtmem_temp_scope"):
        rows.insert(1, ("heap / rtmem temp_scope", "7-10x (VS 2015 heap)", 7.0,
                        ratio(m("temp/heap"), m("temp/rtmem_temp_scope"))))
    rep.seed_rows(rows, headline=("heap / rtmem temp_scope",
                                  "heap / linear temp scope (OnTaskComplete)"))
    seed = {1: (236.609, 133.017, 66.078, 234.986), 2: (133.731, 129.611, 58.664, 131.001),
            4: (71.606, 116.688, 51.306, 77.66)}
    rows = []
    for dup in (1, 2, 4):
        s = m(f"unique/unordered_set/dup:{dup}")
        v = m(f"unique/vector_sort_unique/dup:{dup}")
        n = m(f"unique/vector_no_unique/dup:{dup}")
        a = m(f"unique/absl_flat_hash_set/dup:{dup}")
        ss, sv, sn, sg = seed[dup]
        rows += [(f"unordered_set / vector+sort+unique, dup {dup}", f"{ss} vs {sv}", ss / sv,
                  ratio(s, v)),
                 (f"unordered_set / vector no uniqueness, dup {dup}", f"{ss} vs {sn}", ss / sn,
                  ratio(s, n)),
                 (f"unordered_set / dense hash set, dup {dup}", f"{ss} vs {sg} (dense_hash_set)",
                  ss / sg, ratio(s, a))]
    rep.seed_rows(rows)
    rep.p("Our dense hash set is absl::flat_hash_set (Debian libabsl-dev); the post used "
          "Google's dense_hash_set. Seed times for 'no uniqueness' come from its second run.")


# ---- sections fed by the other benchmark programs (their names, as they register them) ----

def items_rate(rep, program, name):
    """items_per_second (median over repetitions), for thread-scaling benchmarks."""
    return rep.r.counter(program, name, "items_per_second")


def allocator_tables(rep):
    rep.h("## Thesis Table 6.1 — linear allocator vs malloc, 1000 allocations")
    if not rep.missing("stack_ordered"):
        m = lambda n: rep.r.median("stack_ordered", n)  # noqa: E731
        rows, detail = [], []
        for size, token, seed in (("8 B", "8", 5.85), ("256 B", "256", 20.14),
                                  ("8 KiB", "8192", 357.88), ("1 MiB", "1048576", 494.48)):
            mal, lin = m(f"table6_1/malloc/{token}"), m(f"table6_1/linear/{token}")
            rows.append((f"{rep.malloc('stack_ordered')} / linear, {size}", f"M/L = {seed}", seed,
                         ratio(mal, lin)))
            detail.append([size] + [fmt(m(f"table6_1/{v}/{token}")) for v in (
                "floor_bump", "linear", "arena", "c_arena", "malloc")])
        rep.table(["size", "floor bump (ns)", "linear", "arena", "C arena", "malloc"], detail)
        rep.seed_rows(rows, headline=tuple(r[0] for r in rows if r[0].endswith(("8 B", "1 MiB"))))

    rep.h("## Weaver — per-call latency, 5 KiB x 100k (Linux table)")
    if not rep.missing("stack_ordered"):
        rows = []
        for label, name in (("malloc", "weaver/malloc/5KiB"), ("free", "weaver/free/5KiB"),
                            ("linear alloc", "weaver/linear_alloc/5KiB"),
                            ("C arena alloc", "weaver/c_arena_alloc/5KiB"),
                            ("C arena mark", "weaver/c_arena_mark"),
                            ("C arena rewind", "weaver/c_arena_rewind")):
            c = lambda k: rep.r.counter("stack_ordered", name, k)  # noqa: E731
            rows.append([label, fmt(c("mean_ns")), fmt(c("stddev_ns")), fmt(c("p99_ns")),
                         fmt(c("max_ns"))])
        rep.table(["call", "mean (ns)", "std dev (ns)", "p99 (ns)", "max (ns)"], rows)
        mean = lambda n: rep.r.counter("stack_ordered", n, "mean_ns")  # noqa: E731
        label = f"{rep.malloc('stack_ordered')} / arena alloc (mean)"
        rep.seed_rows([
            (label, "2.712 vs 0.768 µs (_Walloc)", 2.712 / 0.7675,
             ratio(mean("weaver/malloc/5KiB"), mean("weaver/c_arena_alloc/5KiB"))),
            ("free / arena rewind (mean)", "0.878 vs 0.756 µs (_Wtrash)", 0.8776 / 0.7558,
             ratio(mean("weaver/free/5KiB"), mean("weaver/c_arena_rewind"))),
        ], headline=(label,))

    rep.h("## Trub — ns per 8-byte operation (1.7 GHz)")
    if not rep.missing("stack_ordered"):
        m = lambda n: rep.r.median("stack_ordered", n)  # noqa: E731
        rep.table(["operation", "seed (ns)", "ours (ns per iteration)"],
                  [["malloc", "80-90", fmt(m("trub/malloc/8"))],
                   ["stack", "30-40", fmt(m("trub/stack/8"))],
                   ["linear", "22-27", fmt(m("trub/linear/8"))]])
        rep.seed_rows([("malloc / stack", "80-90 vs 30-40 ns", 85 / 35,
                        ratio(m("trub/malloc/8"), m("trub/stack/8"))),
                       ("malloc / linear (Trub)", "80-90 vs 22-27 ns", 85 / 24.5,
                        ratio(m("trub/malloc/8"), m("trub/linear/8")))])

    rep.h("## Thesis Table 6.2 — pool vs malloc (2000 alloc, 1000 random free, 1000 alloc, "
          "2000 random free; 256 B)")
    if not rep.missing("pool_freelist_tlsf"):
        m = lambda n: rep.r.median("pool_freelist_tlsf", n)  # noqa: E731
        rep.table(["allocator", "median (µs)"],
                  [[v, fmt((m(f"table6_2/{v}") or 0) / 1e3)] for v in (
                      "floor", "pool", "glibc", "foonathan_memory_pool", "boost_pool")
                   if m(f"table6_2/{v}")])
        label = "glibc / pool (Table 6.2)"  # the program calls libc.so.6's malloc by dlsym
        rep.seed_rows([(label, "942,902 vs 187,642 cycles", 5.02,
                        ratio(m("table6_2/glibc"), m("table6_2/pool")))], headline=(label,))

    rep.h("## Thesis Fig 6.6 — free list vs malloc as live blocks grow (1000..4000)")
    if not rep.missing("pool_freelist_tlsf"):
        series = {}
        for name in rep.r.names("pool_freelist_tlsf"):
            mm = re.fullmatch(r"fig6_6/(\w+)/(\w+)/(\d+)", name)
            if mm:
                series.setdefault((mm.group(1), mm.group(2)), []).append(
                    (int(mm.group(3)), rep.r.median("pool_freelist_tlsf", name)))
        ops = sorted({op for op, _ in series})
        allocs = sorted({a for _, a in series})
        counts = sorted({n for s in series.values() for n, _ in s})
        rows = []
        for op in ops:
            for a in allocs:
                d = dict(series.get((op, a), []))
                if d:
                    rows.append([op, a] + [fmt(d.get(n) and d.get(n) / 1e3) for n in counts])
        rep.table(["pattern", "allocator"] + [f"{n} (µs)" for n in counts], rows)
        last = counts[-1] if counts else None
        seed_rows = []
        for op in ops:
            fl = dict(series.get((op, "free_list_first_fit"), [])).get(last)
            gl = dict(series.get((op, "glibc"), [])).get(last)
            seed_rows.append((f"free list first fit / glibc, {op}, {last}",
                              "free list lost to malloc as live grew", None, ratio(fl, gl)))
        rep.seed_rows(seed_rows)

        def draw(ax):
            for (op, a), pts in sorted(series.items()):
                if op != "random":
                    continue
                pts.sort()
                ax.plot([n for n, _ in pts], [v / 1e3 for _, v in pts], marker=".", label=a)
            ax.set_xlabel("blocks")
            ax.set_ylabel("µs per pattern (random frees)")
            ax.set_yscale("log")
            ax.legend(fontsize=7)
        rep.plot("fig6_6_free_list.png", "Fig 6.6: random pattern, free list vs peers", draw)

    rep.h("## Thesis Fig 6.9 — SoA vs AoS (part of the structure used)")
    if not rep.missing("soa"):
        m = lambda n: rep.r.median("soa", n)  # noqa: E731
        rows = []
        for n in (5000, 1000000):
            for variant in ("hand_soa", "soa_columns", "soa_rows", "soa_range_for"):
                rows.append((f"AoS / {variant}, {n:,}", "SoA faster", None,
                             ratio(m(f"BM_aos_vector/{n}"), m(f"BM_{variant}/{n}"))))
        rep.seed_rows(rows, headline=("AoS / soa_columns, 1,000,000",))

    rep.h("## Thesis Figs 7.1/7.2 — false sharing (speedup over one thread)")
    if not rep.missing("false_sharing"):
        rows, pts = [], {}
        for name in rep.r.names("false_sharing"):
            mm = re.fullmatch(r"per_thread_counters<(\w+)>/real_time/threads:(\d+)", name)
            if mm:
                pts.setdefault(mm.group(1), {})[int(mm.group(2))] = \
                    items_rate(rep, "false_sharing", name)
        for layout, d in sorted(pts.items()):
            one = d.get(1)
            for t in sorted(d):
                rows.append([layout, t, fmt(ratio(d[t], one))])
        rep.table(["layout", "threads", "speedup over 1 thread (items/s)"], rows)
        top = max((t for d in pts.values() for t in d), default=None)
        if top:
            rep.seed_rows([
                (f"speedup, adjacent counters, {top} threads",
                 "~1.4x at best (24 cores); below 1 for 2-15 threads", 1.4,
                 ratio(pts.get("adjacent", {}).get(top), pts.get("adjacent", {}).get(1))),
                (f"speedup, padded counters, {top} threads", "linear (= thread count)",
                 float(top), ratio(pts.get("padded", {}).get(top),
                                   pts.get("padded", {}).get(1)))])
        rep.p("This machine has few cores; the seed's curve went to 24.")

    rep.h("## Coherent Labs — std::mutex vs a hand-made lock")
    if not rep.missing("mutex"):
        m = lambda n: rep.r.median("mutex", n)  # noqa: E731
        rep.seed_rows([("std::mutex / rtmem::spin_mutex, uncontended",
                        "std::mutex 30-40% slower than SRWLOCK (MSVC 2015)", 1.35,
                        ratio(m("uncontended<std::mutex>"), m("uncontended<rtmem::spin_mutex>")))])


# ---- beyond the seeds ----------------------------------------------------------------------

def frame_budget(rep):
    rep.h("## Real-time view — per-frame allocation time under each strategy")
    if rep.missing("frame_budget"):
        return
    rows, names, p99s = [], [], []
    for name in rep.r.names("frame_budget"):
        c = lambda k: rep.r.counter("frame_budget", name, k)  # noqa: E731
        rows.append([name.split("/", 1)[1], fmt(c("p50_us")), fmt(c("p99_us")), fmt(c("p999_us")),
                     fmt(c("max_us")), fmt(c("allocs_per_frame"), 0)])
        names.append(name.split("/", 1)[1])
        p99s.append((c("p50_us") or 0, c("p99_us") or 0, c("max_us") or 0))
    rep.p("Each frame: temporary containers (freed in scope), per-frame scratch (freed at frame "
          "end), pooled 64 B objects (spawn/despawn) and long-lived 1-16 KiB blocks (live ~120 "
          "frames). Parameters: docs/benchmarks.md. Times are per frame, medians over "
          "repetitions of each percentile.")
    rep.p("")
    rep.table(["strategy", "p50 (µs)", "p99 (µs)", "p99.9 (µs)", "max (µs)", "allocations/frame"],
              rows)
    base = next((r for r in rows if r[0] == "malloc"), None)
    best = next((r for r in rows if r[0].startswith("rtmem")), None) or \
        next((r for r in rows if r[0].startswith("floor")), None)
    if base and best:
        rep.headline.append((f"frame p99: malloc / {best[0]}", "—", None,
                             ratio(float(base[2].replace(',', '')),
                                   float(best[2].replace(',', '')))))

    def draw(ax):
        xs = range(len(names))
        ax.bar([x - 0.25 for x in xs], [v[0] for v in p99s], 0.25, label="p50")
        ax.bar(list(xs), [v[1] for v in p99s], 0.25, label="p99")
        ax.bar([x + 0.25 for x in xs], [v[2] for v in p99s], 0.25, label="max")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("µs per frame (allocation work)")
        ax.set_yscale("log")
        ax.legend()
    rep.plot("frame_budget.png", "Frame budget: allocation time per frame", draw)


def scaling(rep):
    rep.h("## Scaling view — cost per free+allocate as live blocks grow")
    if rep.missing("scaling"):
        return
    series = {}
    for name in rep.r.names("scaling"):
        m = re.fullmatch(r"scaling/([^/]+)/live:(\d+)", name)
        if m:
            series.setdefault(m.group(1), []).append((int(m.group(2)),
                                                      rep.r.median("scaling", name)))
    lives = sorted({n for s in series.values() for n, _ in s})
    rows = []
    for alloc, pts in sorted(series.items()):
        d = dict(pts)
        first, last = d.get(lives[0]), d.get(lives[-1])
        rows.append([alloc] + [fmt(d.get(n)) for n in lives] + [fmt(ratio(last, first))])
    d = {a: dict(p) for a, p in series.items()}
    top = lives[-1] if lives else None
    for a in ("rtmem_pool_64B", "rtmem_tlsf"):
        if top and d.get("malloc", {}).get(top) and d.get(a, {}).get(top):
            rep.headline.append((f"free+allocate at {top:,} live: malloc / {a}", "—", None,
                                 ratio(d["malloc"][top], d[a][top])))
    rep.p("ns per (free a random live block + allocate one), median of repetitions.")
    rep.p("")
    rep.table(["allocator"] + [f"{n:,} live" for n in lives] + ["growth"], rows)

    def draw(ax):
        for alloc, pts in sorted(series.items()):
            pts.sort()
            ax.plot([n for n, _ in pts], [v for _, v in pts], marker=".", label=alloc)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("live blocks")
        ax.set_ylabel("ns per free+allocate")
        ax.legend(fontsize=7, ncol=2)
    rep.plot("scaling.png", "Scaling: cost per operation vs live blocks", draw)


def fragmentation(rep):
    rep.h("## Fragmentation view — peak footprint / peak live bytes")
    if rep.missing("fragmentation"):
        return
    rows = []
    for name in rep.r.names("fragmentation"):
        c = lambda k: rep.r.counter("fragmentation", name, k)  # noqa: E731
        rows.append([name.split("/", 1)[1], fmt(c("peak_live_MiB")), fmt(c("footprint_MiB")),
                     fmt(c("footprint_over_live"))])
    rep.p("Footprint is the resident-set high-water mark the workload added (VmHWM, measured in a "
          "forked child per allocator); live is the peak sum of requested bytes.")
    rep.p("")
    rep.table(["allocator", "peak live (MiB)", "peak footprint (MiB)", "footprint / live"], rows)
    for r in rows:
        if r[0] in ("malloc", "rtmem_tlsf"):
            rep.headline.append((f"footprint / live, {r[0]} (fragmenting workload)", "—", None,
                                 float(r[3]) if r[3] != "—" else None))


def appendix(rep):
    rep.h("## Appendix — every other benchmark (medians of repetitions)")
    rep.p("Benchmarks no section above reported (object pools, contended locks, tail latency "
          "...). `vs first` divides each median by the first benchmark of its group (the name "
          "up to its last `/`).")
    for program in sorted(rep.r.programs):
        runs = [n for n in rep.r.names(program) if (program, n) not in rep.r.used]
        if not runs:
            continue
        rep.h(f"### {program}")
        groups = {}
        for n in runs:
            groups.setdefault(n.rsplit("/", 1)[0] if "/" in n else "", []).append(n)
        rows = []
        for g, names in groups.items():
            first = rep.r.programs[program][names[0]].median()
            for n in names:
                run = rep.r.programs[program][n]
                extra = ", ".join(f"{k}={fmt(run.counter(k))}" for k in sorted(run.counters)
                                  if k not in ("items_per_second", "bytes_per_second"))
                rows.append([n, fmt(run.median()), fmt(ratio(run.median(), first)), extra])
        rep.table(["benchmark", "median ns/iter", "vs first", "counters (medians)"], rows)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    quick = "--quick" in sys.argv
    results = Results(out)
    rep = Report(results, out)
    ctx = results.context
    linked = {}  # from scripts/bench: the needed-library order of each program
    try:
        with open(os.path.join(out, "malloc_origin.txt")) as f:
            linked = dict(line.split(maxsplit=1) for line in f if line.strip())
    except OSError:
        pass
    origins = {p: c.get("process_malloc") or linked.get(p, "unknown").strip()
               for p, c in results.contexts.items()}
    rep.origins = origins
    if results.partial:
        print("report: partial JSON (program crashed): " + ", ".join(results.partial))
    body_start = len(rep.lines)
    for section in (fig_2_2, figs_3_5_3_6, table_3_2, figs_3_9_3_10, allocator_tables,
                    trub_growing_stack, coherent,
                    lecture, lecture_tables, frame_budget, scaling, fragmentation, appendix):
        section(rep)
    body = rep.lines[body_start:]
    rep.lines = [
        "# rtmem benchmark report", "",
        f"Host `{ctx.get('host_name', '?')}`, {ctx.get('num_cpus', '?')} CPUs at "
        f"{ctx.get('mhz_per_cpu', '?')} MHz, {ctx.get('date', '?')}, release build"
        f"{', QUICK mode' if quick else ''}. "
        "Method and how to read each table: docs/benchmarks.md. Ratios are slower / faster "
        "from medians of repetitions in one run; `ours / seed` compares our ratio with the "
        "seed document's.", "",
        "## Headline", "",
        "| claim | seed | ours |", "|---|---|---|",
    ]
    for label, seed_text, seed, ours in rep.headline:
        seed_cell = f"{fmtx(seed)} ({seed_text})" if seed else seed_text
        rep.lines.append(f"| {label} | {seed_cell} | {fmtx(ours)} |")
    if origins:
        rep.lines += ["", "`malloc` resolves to, per program (a peer that exports `malloc` and is "
                      "linked first replaces glibc's for every `new`; see docs/benchmarks.md): " +
                      ", ".join(f"{p}: `{o}`" for p, o in sorted(origins.items())) + "."]
        odd = [p for p, o in origins.items() if o != "unknown" and not o.startswith("libc.so")]
        if odd:
            rep.lines += ["", "**Caution:** in " + ", ".join(sorted(odd)) + " `malloc` is not "
                          "glibc's, so their malloc/new figures measure that library."]
    if results.partial:
        rep.lines += ["", "**Partial:** " + ", ".join(f"`{p}`" for p in results.partial) +
                      " ended early (the program crashed); only the benchmarks it finished are "
                      "reported."]
    rep.lines += body
    with open(os.path.join(out, "REPORT.md"), "w") as f:
        f.write("\n".join(rep.lines) + "\n")
    print(f"report: {os.path.join(out, 'REPORT.md')}"
          f"{'' if plt else ' (no plots: python3-matplotlib missing)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
