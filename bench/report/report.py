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
        self.checks = []  # (target, number, met or None) for the "Targets" section

    def check(self, target, value, met, unit="x"):
        """A target as a ratio check: met / not met with the number (None: not measured)."""
        shown = "—" if value is None else (fmt(value) + unit)
        self.checks.append((target, shown, None if value is None else met))

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
    log2 = table.get('log2', '?')
    rep.p(f"Simulated caches as the thesis' machine ({table.get('caches', '')}); working set "
          f"2^{log2} bytes, four traversals. The thesis disabled the hardware "
          "prefetcher; a cache simulator has none. The thesis' read counts imply a 2^28-byte "
          "working set (32x its 8 MiB L3)" +
          ("." if log2 == 28 else f"; this run used 2^{log2} (QUICK), only "
           f"{2 ** (log2 - 23) if isinstance(log2, int) else '?'}x the simulated LL, so the "
           "shuffled pad-0 LL miss rate is lower than the thesis' and not comparable."))
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
    prefetcher_note(rep, table)


def prefetcher_note(rep, table):
    """Thesis Figs 3.7/3.8 (prefetcher off): MSR 0x1A4 cannot be written here (no root, a VM),
    so the prefetcher's effect is shown as the gap between misses and time."""
    rep.h("### Thesis Figs 3.7/3.8 — the prefetcher's effect, without switching it off")
    lin = {e["pad"]: e for e in table.get("rows", []) if e["layout"] == "linear"}
    t = lambda lay, pad: dict(list_series(rep, lay, pad)).get(  # noqa: E731  ns per node
        table.get("log2", 24))
    lines = ["The thesis switched the hardware prefetcher off (MSR 0x1A4) for Figs 3.7/3.8. "
             "Model-specific registers cannot be written on these machines (no root, a virtual "
             "CPU), so the effect is shown by two measurements of the same traversal: the cache "
             "simulation above, which has no prefetcher (what the thesis' prefetcher-off runs "
             "measured: every new line of the linear list is a miss), and the hardware timings "
             "of Figs 3.5/3.6, where the prefetcher is on."]
    if 63 in lin and t("linear", 63) and t("shuffled", 63):
        lines.append(
            f" At pad 63 every node is a new line in both layouts: the simulator counts the same "
            "misses per read for linear as for shuffled "
            f"({lin[63]['D1mr'] / max(lin[63]['Dr'], 1):.3f}), "
            f"yet on the hardware the linear walk costs {fmt(t('linear', 63))} ns per node "
            f"against {fmt(t('shuffled', 63))} ns shuffled "
            f"({fmtx(ratio(t('shuffled', 63), t('linear', 63)))}): that gap is what the "
            "prefetcher (and page locality) hides on a predictable stride.")
    rep.p("".join(lines))
    rep.p("")


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
        if n >= 2000:
            rows.append((f"speedup at {n}x{m}", "8x at 2000x1900", 8.0, ratio(a, b)))
        else:  # a smaller matrix than the seed's point: no ours/seed
            rows.append((f"speedup at {n}x{m} (largest run; seed's 8x is at 2000x1900)",
                         "8x at 2000x1900 (not this size)", None, ratio(a, b)))
    rep.seed_rows(rows, headline=tuple(r[0] for r in rows[-1:]))


def lecture(rep):
    rep.h("## Lecture (zhiayang 2022) — arena, SSO, interning, AoS/SoA, branches, arrays")
    if rep.missing("lecture"):
        return
    m = lambda n: rep.r.median("lecture", "lecture/" + n)  # noqa: E731
    # The lecture's loop leaked every Big (each `new` on fresh pages); arena/new frees them
    # outside the timing so `new` reuses warm memory. Both are reported; the seed compares with
    # the leaking one.
    rows = [
        ("new (leaking, as the lecture) / lecture arena create<Big> (10,000)",
         "1,018,849 vs 68,247 ns", 14.93,
         ratio(m("arena/new_leaking"), m("arena/lecture_arena"))),
        ("new (leaking, as the lecture) / rtmem::arena (10,000)", "1,018,849 vs 68,247 ns",
         14.93, ratio(m("arena/new_leaking"), m("arena/rtmem_arena"))),
        ("new (freed outside the timing) / lecture arena create<Big> (10,000)",
         "— (the lecture leaked)", None, ratio(m("arena/new"), m("arena/lecture_arena"))),
        ("new (freed outside the timing) / rtmem::arena (10,000)", "— (the lecture leaked)",
         None, ratio(m("arena/new"), m("arena/rtmem_arena"))),
    ]
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
    rep.seed_rows(rows, headline=("new (leaking, as the lecture) / rtmem::arena (10,000)",
                                  "new (freed outside the timing) / rtmem::arena (10,000)"))
    rep.p("The lecture never shows `Big`; we assume 128 bytes (16 doubles). `new (p) Big()` "
          "zero-fills it with `rep stosq` in every variant, which narrows every arena ratio. "
          "With glibc's `new` the freed variant hands ~1.3 MB back to the kernel each "
          "iteration (trim), so it also faults pages; the leaking variant faults fresh pages "
          "on every `new`, as the lecture's did.")
    rep.p("")
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
    if m("temp/rtmem_temp_scope_std"):
        rows.insert(2, ("heap / rtmem temp_scope, std_allocator (no pmr)", "7-10x (VS 2015 heap)",
                        7.0, ratio(m("temp/heap"), m("temp/rtmem_temp_scope_std"))))
    rep.seed_rows(rows, headline=("heap / rtmem temp_scope",
                                  "heap / linear temp scope (OnTaskComplete)"))
    pair = rep.r.median("stack_ordered", "trub/malloc/8")  # 1000 malloc+free pairs of 8 B
    rep.p("The post's 7-10x was measured against the MSVC 2015 heap (~80 ns an allocate/free "
          "pair); glibc's pair is " + (f"{fmt(pair / 1000)} ns" if pair else "a few ns") +
          " here (`trub/malloc/8`), so the same scope saves far less: the ratio compares heaps "
          "as much as scopes.")
    rep.p("")
    hand = m("temp/linear_scope")
    rep.check("rtmem temp_scope (pmr) / hand-written scope <= 1.10x",
              ratio(m("temp/rtmem_temp_scope"), hand),
              (ratio(m("temp/rtmem_temp_scope"), hand) or 99) <= 1.10)
    rep.check("rtmem temp_scope (std_allocator) / hand-written scope <= 1.10x",
              ratio(m("temp/rtmem_temp_scope_std"), hand),
              (ratio(m("temp/rtmem_temp_scope_std"), hand) or 99) <= 1.10)
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
                "floor_bump", "linear", "frame", "stack", "arena", "c_arena", "malloc")])
        rep.p("ns per 1000 allocations (one iteration), medians of repetitions.")
        rep.p("")
        rep.table(["size", "floor bump", "linear", "frame", "stack", "arena", "C arena", "malloc"],
                  detail)
        rep.seed_rows(rows, headline=tuple(r[0] for r in rows if r[0].endswith(("8 B", "1 MiB"))))
        lin = ratio(m("table6_1/malloc/256"), m("table6_1/linear/256"))
        rep.check("malloc / linear at 256 B >= 40x", lin, (lin or 0) >= 40)
        # Issue 16 found the stack at 1.12-1.27x the floor: at the floor means <= 1.10x, as the
        # others (a 1.30x bound would have passed before the fix).
        for v, bound in (("linear", 1.10), ("frame", 1.10), ("stack", 1.10)):
            for token in ("8", "256"):
                r = ratio(m(f"table6_1/{v}/{token}"), m(f"table6_1/floor_bump/{token}"))
                rep.check(f"{v} / floor at {token} B <= {bound:.2f}x", r, (r or 99) <= bound)
        a = lambda n: rep.r.median("align_control", n)  # noqa: E731
        if "align_control" in rep.r.programs:
            rep.p("Loop-alignment control: the same loops built with `-falign-loops=64` "
                  "(`rtmem_bench_align_control`), ratio to that build's floor:")
            rep.p("")
            rows2 = []
            for v in ("linear", "frame", "stack"):
                for token in ("8", "256"):
                    rows2.append([f"{v}, {token} B",
                                  fmtx(ratio(m(f"table6_1/{v}/{token}"),
                                             m(f"table6_1/floor_bump/{token}"))),
                                  fmtx(ratio(a(f"table6_1/{v}/{token}"),
                                             a(f"table6_1/floor_bump/{token}")))])
            rep.table(["allocator", "/ floor (default build)", "/ floor (-falign-loops=64)"],
                      rows2)
            r = ratio(a("table6_1/linear/256"), a("table6_1/floor_bump/256"))
            rep.check("linear / floor at 256 B <= 1.10x with -falign-loops=64", r,
                      (r or 99) <= 1.10)

    rep.h("## Weaver — 5 KiB blocks, 100k calls (Linux table)")
    if not rep.missing("stack_ordered"):
        weaver(rep)

    rep.h("## Trub — ns per 8-byte allocate + release (1.7 GHz)")
    if not rep.missing("stack_ordered"):
        trub(rep)

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
        r = ratio(m("table6_2/pool"), m("table6_2/floor"))
        rep.check("pool / floor (Table 6.2) <= 1.05x", r, (r or 99) <= 1.05)
        r = ratio(m("table6_2/pool"), m("table6_2/boost_pool"))
        rep.check("pool / Boost.Pool (Table 6.2) <= 1.00x", r, (r or 99) <= 1.00)

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
            adj = ratio(pts.get("adjacent", {}).get(top), pts.get("adjacent", {}).get(1))
            rep.seed_rows([
                (f"speedup, adjacent counters, {top} threads",
                 "below 1 for 2-15 threads (1.4x only at 24 cores)", None, adj),
                (f"speedup, padded counters, {top} threads", "linear (= thread count)",
                 float(top), ratio(pts.get("padded", {}).get(top),
                                   pts.get("padded", {}).get(1)))])
        rep.p("This machine has few cores; the seed's curve went to 24. At 2-15 threads the "
              "seed's adjacent-counter speedup is below 1 (its 1.4x is the 24-core end point), "
              "so the comparable check is the direction: " +
              ("ours is below 1 too." if adj is not None and adj < 1 else
               "ours is not below 1." if adj is not None else "not measured."))
        if top:
            rep.check(f"adjacent counters, {top} threads: speedup < 1 (seed: < 1 at 2-15)", adj,
                      adj is not None and adj < 1)

    rep.h("## Coherent Labs — std::mutex vs a hand-made lock")
    if not rep.missing("mutex"):
        m = lambda n: rep.r.median("mutex", n)  # noqa: E731
        rep.seed_rows([("std::mutex (glibc pthread) / rtmem::spin_mutex, uncontended",
                        "MSVC 2015 std::mutex 30-40% slower than SRWLOCK / CRITICAL_SECTION "
                        "(a different pair)", None,
                        ratio(m("uncontended<std::mutex>"), m("uncontended<rtmem::spin_mutex>")))])
        rep.p("The post compared MSVC 2015's `std::mutex` with the Windows SRWLOCK and "
              "CRITICAL_SECTION; here glibc's pthread mutex (`std::mutex`) meets a spin lock. "
              "Neither side is the seed's, so there is no ours/seed.")


def weaver(rep):
    c = lambda n, k: rep.r.counter("stack_ordered", n, k)  # noqa: E731
    rep.p("Weaver reported the mean and standard deviation of 100,000 calls and discarded runs "
          "with high deviation. Per-call timers here step by the counter's resolution, and "
          "one 3 ms outlier (a page fault, a preemption) moves a 100k-call mean by 30 ns, so "
          "the robust figure is the median of 100 batch means (1000 calls each, one timer "
          "pair per batch; p10-p90 beside it). The malloc cases ran each in a process of their "
          "own (glibc's thresholds depend on what ran before).")
    rep.p("")
    rows = []
    for label, name in (("malloc", "weaver/malloc/5KiB"), ("free", "weaver/free/5KiB"),
                        ("linear alloc", "weaver/linear_alloc/5KiB"),
                        ("C arena alloc (_Walloc)", "weaver/c_arena_alloc/5KiB"),
                        ("C arena mark (_Wmempoint)", "weaver/c_arena_mark"),
                        ("C arena rewind (_Wtrash)", "weaver/c_arena_rewind")):
        batch = c(name, "batch_median_ns")
        spread = (f"{fmt(c(name, 'batch_p10_ns'))}-{fmt(c(name, 'batch_p90_ns'))}"
                  if batch is not None else "—")
        rows.append([label, fmt(batch), spread, fmt(c(name, "mean_ns")),
                     fmt(c(name, "stddev_ns")), fmt(c(name, "p99_ns")), fmt(c(name, "max_ns"))])
    rep.table(["call", "batch median (ns)", "batch p10-p90", "per-call mean", "std dev", "p99",
               "max"], rows)
    b = lambda n: c(n, "batch_median_ns")  # noqa: E731
    label = f"{rep.malloc('stack_ordered')} / arena alloc (batch median)"
    unit_label = "malloc+free / mempoint+alloc+trash (Weaver's method)"
    unit = lambda n: c(n, "unit_ns")  # noqa: E731
    rep.seed_rows([
        (label, "2.712 vs 0.768 µs (_Walloc)", 2.712 / 0.7675,
         ratio(b("weaver/malloc/5KiB"), b("weaver/c_arena_alloc/5KiB"))),
        (unit_label, "2.712+0.878 vs 0.756+0.768+0.756 µs", (2.7125 + 0.8776) /
         (0.7561 + 0.7675 + 0.7558),
         ratio(unit("weaver_unit/malloc/5KiB"), unit("weaver_unit/c_arena/5KiB"))),
    ], headline=(label, unit_label))
    rep.p(f"Weaver's method: one unit is `_Wmempoint + _Walloc + _Wtrash` against `malloc + "
          f"free`, timed as a unit in 1000 runs of 100 units; runs slower than twice the "
          f"median run were discarded ({fmt(c('weaver_unit/c_arena/5KiB', 'discarded_runs'), 0)}"
          f" for the arena, {fmt(c('weaver_unit/malloc/5KiB', 'discarded_runs'), 0)} for "
          f"malloc) and the rest averaged: {fmt(unit('weaver_unit/c_arena/5KiB'))} ns against "
          f"{fmt(unit('weaver_unit/malloc/5KiB'))} ns. The seed's unit ratio adds its "
          "separately measured means. With one block live, glibc serves 5 KiB from its top "
          "chunk without a system call; with 1000 live (the per-call rows) it grows its heap "
          "by `brk` for every batch and trims it when the batch is freed, so each call pays "
          "page faults.")
    rep.p("")


def trub(rep):
    m = lambda n: rep.r.median("stack_ordered", n)  # noqa: E731
    c = lambda n, k: rep.r.counter("stack_ordered", n, k)  # noqa: E731
    per = lambda n: m(n) / 1000 if m(n) else None  # noqa: E731  (1000 pairs per iteration)
    rep.p("Trub timed each call with `clock_gettime`; its ~20 ns cost is inside every sample "
          "and compresses the ratios. Both ways here: the loop time divided by its 1000 pairs, "
          "and each pair timed with `clock_gettime(CLOCK_MONOTONIC)` (median of 100k; this "
          "machine's clock steps by 10 ns, so those medians are coarse).")
    rep.p("")
    rows = []
    for label, seed, name in (("malloc", "80-90", "malloc"), ("stack", "30-40", "stack"),
                              ("linear", "22-27", "linear")):
        rows.append([label, seed, fmt(per(f"trub/{name}/8")),
                     fmt(c(f"trub_clock/{name}/8", "median_ns")),
                     fmt(c(f"trub_clock/{name}/8", "clock_ns"))])
    rep.table(["operation", "seed (ns, clock_gettime per call)", "ours: loop (ns per pair)",
               "ours: clock_gettime per pair (median ns)", "empty clock_gettime pair (ns)"], rows)
    ck = lambda n: c(f"trub_clock/{n}/8", "median_ns")  # noqa: E731
    rep.seed_rows([("malloc / stack (per-call clock_gettime, as Trub)", "80-90 vs 30-40 ns",
                    85 / 35, ratio(ck("malloc"), ck("stack"))),
                   ("malloc / linear (per-call clock_gettime, as Trub)", "80-90 vs 22-27 ns",
                    85 / 24.5, ratio(ck("malloc"), ck("linear"))),
                   ("malloc / stack (loop)", "80-90 vs 30-40 ns", 85 / 35,
                    ratio(per("trub/malloc/8"), per("trub/stack/8"))),
                   ("malloc / linear (loop)", "80-90 vs 22-27 ns", 85 / 24.5,
                    ratio(per("trub/malloc/8"), per("trub/linear/8")))])


def perf_budgets(rep):
    """Instruction counts of the fast paths (callgrind, tests/perf), as scripts/bench ran them."""
    path = os.path.join(rep.r.directory, "perf_budgets.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        budgets = json.load(f)
    rep.h("## Fast paths — instructions per operation (callgrind, load-independent)")
    rep.p("`ctest -L perf` in the release build: each case is one out-of-line call with constant "
          "arguments; the floors are the hand-written bump and free list (bench/floors.hpp).")
    rep.p("")
    rep.table(["case", "instructions", "budget"],
              [[b["case"], fmt(b["instructions"]), b["bound"]] for b in budgets])
    by = {b["case"]: b["instructions"] for b in budgets}
    for case, target in (("rtmem_perf_frame_allocate (frame_allocate)", 12),
                         ("rtmem_perf_pool_allocate + rtmem_perf_pool_deallocate (pool_pair)", 8),
                         ("rtmem_perf_fixed_pool_allocate + rtmem_perf_fixed_pool_deallocate "
                          "(fixed_pool_pair)", 8),
                         ("rtmem_perf_temp_scope_allocate (temp_scope_allocate)", 15),
                         ("rtmem_perf_temp_resource_allocate (temp_resource_allocate)", 15)):
        if case in by:
            rep.check(f"{case} <= {target} instructions", by[case], by[case] <= target, unit="")


def targets(rep):
    if not rep.checks:
        return
    rep.h("## Targets (issue 16) — ratio checks")
    rep.table(["target", "measured", "status"],
              [[t, v, "—" if ok is None else ("met" if ok else "**not met**")]
               for t, v, ok in rep.checks])


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


def heap_origin_lines(origins, new_origins):
    """Which libraries served `malloc` and `operator new` in each program (bench/heap_origin.cpp
    checks both at start-up with dladdr and refuses to run on a peer's heap)."""
    pairs = {}
    for p in sorted(origins):
        pairs.setdefault((origins[p], new_origins.get(p, "unknown")), []).append(p)
    lines = ["", "Heap served, per program (dladdr on the resolved `malloc` and `operator new`, "
             "checked at start-up; a peer linked first would serve every `new`, see "
             "docs/benchmarks.md): " +
             "; ".join(f"`malloc` {m}, `new` {n}: " + ", ".join(ps)
                       for (m, n), ps in sorted(pairs.items())) + "."]
    odd = [p for p in origins
           if not (origins[p].startswith("libc.so") and
                   new_origins.get(p, "").startswith(("libstdc++.so", "libc++.so")))]
    if odd:
        lines += ["", "**Caution:** in " + ", ".join(sorted(odd)) + " `malloc` or `operator new` "
                  "is not glibc's (or was not recorded), so their malloc/new rows may measure "
                  "another library."]
    return lines


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
    new_origins = {p: c.get("process_operator_new", "unknown")
                   for p, c in results.contexts.items()}
    if results.partial:
        print("report: partial JSON (program crashed): " + ", ".join(results.partial))
    body_start = len(rep.lines)
    for section in (fig_2_2, figs_3_5_3_6, table_3_2, figs_3_9_3_10, allocator_tables,
                    trub_growing_stack, coherent, lecture, lecture_tables, frame_budget, scaling,
                    fragmentation, perf_budgets, targets, appendix):
        section(rep)
    body = rep.lines[body_start:]
    rep.lines = [
        "# rtmem benchmark report", "",
        f"Host `{ctx.get('host_name', '?')}`, {ctx.get('num_cpus', '?')} CPUs at "
        f"{ctx.get('mhz_per_cpu', '?')} MHz, {ctx.get('date', '?')}, release build"
        f"{', QUICK mode' if quick else ''}. "
        "Method and how to read each table: docs/benchmarks.md. Ratios are slower / faster "
        "from medians of repetitions in one run; `ours / seed` compares our ratio with the "
        "seed document's. Times are the measuring thread's CPU time (wall time for "
        "multi-threaded benchmarks); the latency counters (Weaver, Trub, frame percentiles) "
        "are wall-clock samples.", "",
        "## Headline", "",
        "| claim | seed | ours |", "|---|---|---|",
    ]
    for label, seed_text, seed, ours in rep.headline:
        seed_cell = f"{fmtx(seed)} ({seed_text})" if seed else seed_text
        rep.lines.append(f"| {label} | {seed_cell} | {fmtx(ours)} |")
    try:  # scripts/bench: the CPU model and the load average before and after the run
        with open(os.path.join(out, "machine.txt")) as f:
            rep.lines += ["", "Machine and load: " + "; ".join(
                line.strip() for line in f if line.strip()) + ". The machine was shared while "
                "this ran: trust ratios measured side by side in one run, not absolute times."]
    except OSError:
        pass
    if origins:
        rep.lines += heap_origin_lines(origins, new_origins)
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
