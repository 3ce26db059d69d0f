// From a site profile to a recommendation: allocator, configuration, sketch, expected saving.
#include "rtmem/analyze/advise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "named_fields.hpp"

namespace rtmem::analyze {

namespace {

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) {
    return (std::max<std::uint64_t>(v, 1) + to - 1) / to * to;
}

std::string percent(double f) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%", f * 100);
    return buf;
}

std::string fixed(double v, int digits = 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

/// Size expressions in sketches: "64 * 1024" reads better than 65536.
std::string size_expr(std::uint64_t bytes) {
    if (bytes % (1024 * 1024) == 0) return std::to_string(bytes / (1024 * 1024)) + " * 1024 * 1024";
    if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " * 1024";
    return std::to_string(bytes);
}

std::string common_evidence(const site_profile& p) {
    std::string s = with_commas(p.allocations) + " allocations, " + with_commas(p.frees) + " frees";
    if (p.min_size == p.max_size)
        s += ", all " + with_commas(p.max_size) + " B";
    else
        s += ", " + with_commas(p.min_size) + ".." + with_commas(p.max_size) + " B";
    s += ", max live " + with_commas(p.max_live_count) + " blocks / " +
         human_bytes(p.max_live_bytes);
    if (p.multi_thread) s += ", several threads";
    return s;
}

/// Bump allocators (linear, frame, arena): every call moves off malloc, frees disappear and an
/// allocation costs a pointer bump.
void bump_savings(recommendation& r, const site_profile& p, const cost_model& cost) {
    r.calls_saved = r.calls;
    r.frees_removed = p.frees;
    r.advised_ns = static_cast<double>(p.allocations) * cost.bump_ns;
}

/// A general site whose blocks cross threads gets rt_heap: per-thread TLSF heaps, a free from
/// another thread is a wait-free push (docs/rt-heap.md). A bound per call, no saving claimed.
void shared_heap(recommendation& r, const site_profile& p, const cost_model& cost) {
    r.allocator = "rt_heap";
    r.capacity_bytes = round_up(p.max_live_bump * 2, 1024 * 1024);
    r.config = "shared by the site's threads, " + human_bytes(r.capacity_bytes) +
               " per thread heap in real-time mode";
    r.evidence += "; shared across threads: " + with_commas(p.cross_thread_frees) + " of " +
                  with_commas(p.frees) + " frees by another thread than the allocating one" +
                  (p.multi_thread ? ", allocated on several threads" : "");
    r.sketch =
        "static rtmem::rt_heap shared_heap;   // per-thread heaps, bounded per call\n"
        "void* p = shared_heap.allocate(n, alignof(T));   // was malloc(n), any thread\n"
        "shared_heap.deallocate(p, n, alignof(T));        // was free(p), any thread\n"
        "// real-time: rtmem::rt_heap shared_heap{rtmem::rt_heap_options::real_time_with(" +
        size_expr(r.capacity_bytes) +
        " * THREADS)}; and shared_heap.attach() at each thread's start\n"
        "// pmr containers: rtmem::resource<rtmem::rt_heap> res{shared_heap};";
    r.calls_saved = 0;
    r.advised_ns = std::max(static_cast<double>(p.allocations) * cost.tlsf_ns +
                                static_cast<double>(p.frees) * cost.tlsf_free_ns,
                            r.baseline_ns);  // no saving is claimed
}

}  // namespace

recommendation recommend(const site_profile& p, const cost_model& cost, double pool_headroom) {
    recommendation r;
    r.site = p.site;
    r.cls = p.cls;
    r.calls = p.allocations + p.frees;
    const double allocs = static_cast<double>(p.allocations);
    const double frees = static_cast<double>(p.frees);
    r.baseline_ns = allocs * cost.malloc_ns + frees * cost.free_ns;
    r.evidence = common_evidence(p);
    switch (p.cls) {
        case site_class::stack: {
            r.allocator = "stack_allocator";
            // 32 B per live block for the allocator's header and alignment padding
            r.capacity_bytes = round_up(p.max_live_bump + 32 * p.max_live_count, 4096);
            r.config = human_bytes(r.capacity_bytes) + (p.multi_thread ? " per thread" : "") +
                       " (peak depth " + with_commas(p.max_live_count) + " blocks)";
            r.evidence +=
                "; " + percent(p.lifo_fraction()) + " of frees were the thread's most recent block";
            r.sketch =
                std::string(p.multi_thread ? "thread_local " : "static ") +
                "rtmem::stack_allocator site_stack{" + size_expr(r.capacity_bytes) +
                "};\n"
                "void* p = site_stack.allocate(n, alignof(T));   // was malloc(n)\n"
                "site_stack.deallocate(p, n, alignof(T));        // was free(p): LIFO, checked\n"
                "// containers: std::vector<T, rtmem::std_allocator<T, rtmem::stack_allocator>> "
                "v{site_stack};";
            r.calls_saved = r.calls;
            r.advised_ns = allocs * cost.stack_ns + frees * cost.stack_free_ns;
            break;
        }
        case site_class::linear: {
            r.allocator = "linear_allocator";
            r.capacity_bytes = round_up(p.bump_peak, 4096);
            r.config = human_bytes(r.capacity_bytes) + ", reset() after each bulk free (" +
                       with_commas(p.drains) + " times)";
            r.evidence += "; " + percent(p.bulk_fraction()) + " of frees in " +
                          with_commas(p.bulk_runs) + " bulk runs of " + fixed(p.mean_bulk_run()) +
                          " on average; a bump allocator holds " + human_bytes(p.bump_peak) +
                          " at most for " + human_bytes(p.max_live_bytes) + " live (" +
                          percent(p.linear_efficiency()) + " used: linear " +
                          (p.linear_satisfactory ? "satisfactory" : "good") + ")";
            r.sketch =
                "rtmem::linear_allocator site_arena{" + size_expr(r.capacity_bytes) +
                "};\n"
                "void* p = site_arena.allocate(n, alignof(T));   // was malloc(n)\n"
                "// free(p): remove; when the batch is done: site_arena.reset();\n"
                "// pmr containers: rtmem::resource<rtmem::linear_allocator> res{site_arena};\n"
                "//                 std::pmr::vector<T> v{&res};   (or rtmem::arena to grow by "
                "chunks)";
            bump_savings(r, p, cost);
            break;
        }
        case site_class::pool: {
            r.allocator = "pool_allocator";
            r.block_align = std::max<std::uint64_t>(p.max_align, p.max_size >= 16 ? 16 : 8);
            r.block_size = round_up(p.max_size, r.block_align);
            r.capacity_blocks = static_cast<std::uint64_t>(
                std::ceil(static_cast<double>(p.max_live_count) * (1.0 + pool_headroom)));
            r.capacity_bytes = r.block_size * r.capacity_blocks;
            r.config = "block " + with_commas(r.block_size) + " B, capacity " +
                       with_commas(r.capacity_blocks);
            r.evidence += "; " + fixed(p.churn()) + " allocations per live block (churn)";
            r.sketch = "rtmem::pool_allocator site_pool{" + std::to_string(r.block_size) + ", " +
                       std::to_string(r.block_align) + ", " + std::to_string(r.capacity_blocks) +
                       "};   // block, align, blocks per chunk\n"
                       "void* p = site_pool.allocate(" +
                       std::to_string(r.block_size) +
                       ", alignof(T));   // O(1)\n"
                       "site_pool.deallocate(p, " +
                       std::to_string(r.block_size) +
                       ", alignof(T));\n"
                       "// node containers: std::list<T, rtmem::std_allocator<T, "
                       "rtmem::pool_allocator>> l{site_pool};\n"
                       "// objects: rtmem::object_pool<T> objects{" +
                       std::to_string(r.capacity_blocks) + "};";
            r.calls_saved = r.calls;
            r.advised_ns = allocs * cost.pool_ns + frees * cost.pool_free_ns;
            break;
        }
        case site_class::frame: {
            r.frames = std::max<std::uint32_t>(p.frame_span, 1);
            r.allocator = "frame_allocator<" + std::to_string(r.frames) + ">";
            r.capacity_bytes = round_up(p.frame_peak_bytes, 4096);
            r.config = human_bytes(r.capacity_bytes) + " per frame";
            if (p.period_detected) {
                r.evidence += "; drained every " + human_ns(p.period_ns) +
                              " (period detected, variation " + percent(p.period_cv) + ")";
            } else {
                r.evidence += "; " + percent(p.frame_fraction()) + " of blocks freed within " +
                              std::to_string(r.frames) + " frame(s), " +
                              with_commas(p.frames_used) + " frames";
            }
            r.sketch = "rtmem::frame_allocator<" + std::to_string(r.frames) + "> site_frames{" +
                       size_expr(r.capacity_bytes) +
                       "};\n"
                       "void* p = site_frames.allocate(n, alignof(T));   // was malloc(n); "
                       "free(p): remove\n"
                       "site_frames.next_frame();   // at each frame boundary (where "
                       "rtmem_trace_frame() is)";
            bump_savings(r, p, cost);
            break;
        }
        case site_class::long_lived: {
            r.allocator = "arena";
            r.capacity_bytes = round_up(std::min<std::uint64_t>(p.bump_peak, 1024 * 1024), 4096);
            r.config = "chunks of " + human_bytes(r.capacity_bytes) + ", never rewound (" +
                       human_bytes(p.max_live_bytes) + " live at peak)";
            r.evidence += "; " + percent(p.long_lived_fraction()) + " of blocks live to the end (" +
                          with_commas(p.live_at_end) + " never freed)";
            r.sketch = "static rtmem::arena permanent{" + size_expr(r.capacity_bytes) +
                       "};   // grows by chunks\n"
                       "void* p = permanent.allocate(n, alignof(T));   // was malloc(n); free at "
                       "exit: remove";
            bump_savings(r, p, cost);
            break;
        }
        case site_class::general: {
            if (p.shared_across_threads()) {
                shared_heap(r, p, cost);
                break;
            }
            r.allocator = "tlsf_allocator";
            r.capacity_bytes = round_up(p.max_live_bump * 2, 64 * 1024);
            r.config =
                "pool of " + human_bytes(r.capacity_bytes) + " (only for a bounded worst case)";
            if (p.allocations < 8) r.evidence += "; too few allocations to classify";
            if (p.linear_bad) {
                r.evidence += "; bulk freed (" + percent(p.bulk_fraction()) +
                              ") but a bump allocator would hold " + human_bytes(p.bump_peak) +
                              " for " + human_bytes(p.max_live_bytes) + " live (linear bad)";
            }
            r.sketch = "rtmem::tlsf_allocator site_tlsf{" + size_expr(r.capacity_bytes) +
                       "};   // O(1), no speed-up over malloc expected";
            r.advised_ns = allocs * cost.tlsf_ns + frees * cost.tlsf_free_ns;
            r.calls_saved = 0;
            r.advised_ns = std::max(r.advised_ns, r.baseline_ns);  // no saving is claimed
            break;
        }
    }
    return r;
}

namespace {

// Every cost by name, the same way as the thresholds (classify.cpp): one list serves setting
// and listing.
template <class F>
void for_each_cost(cost_model& c, F&& f) {
    f("malloc_ns", c.malloc_ns);
    f("free_ns", c.free_ns);
    f("bump_ns", c.bump_ns);
    f("stack_ns", c.stack_ns);
    f("stack_free_ns", c.stack_free_ns);
    f("pool_ns", c.pool_ns);
    f("pool_free_ns", c.pool_free_ns);
    f("tlsf_ns", c.tlsf_ns);
    f("tlsf_free_ns", c.tlsf_free_ns);
}

}  // namespace

bool set_cost(cost_model& c, std::string_view name, double value) noexcept {
    return detail::set_field([&](auto&& f) { for_each_cost(c, f); }, name, value);
}

std::vector<std::string_view> cost_names() {
    cost_model c;
    return detail::field_names([&](auto&& f) { for_each_cost(c, f); });
}

advice advise(classification c, const cost_model& cost) {
    advice a;
    for (const auto& p : c.sites) {
        a.ranked.push_back(recommend(p, cost, c.limits.pool_headroom));
        a.baseline_ns += a.ranked.back().baseline_ns;
        if (p.cls != site_class::general) a.saved_ns += a.ranked.back().saved_ns();
    }
    std::stable_sort(a.ranked.begin(), a.ranked.end(),
                     [](const recommendation& x, const recommendation& y) {
                         return x.saved_ns() > y.saved_ns();
                     });
    a.result = std::move(c);
    return a;
}

}  // namespace rtmem::analyze
