// `rtmem report`: one streaming pass over an event_source computes totals, per-site and
// per-thread statistics, histograms and a memory timeline. Memory: the live blocks, one entry
// per site and a fixed number of timeline points, never the events.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "rtmem/analyze/event.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze {

/// Log2 buckets: bucket 0 holds the value 0, bucket i holds [2^(i-1), 2^i).
struct log2_histogram {
    std::array<std::uint64_t, 65> buckets{};
    void add(std::uint64_t v, std::uint64_t count = 1) noexcept;
    [[nodiscard]] static std::uint64_t upper_bound(std::size_t bucket) noexcept;
};

/// One allocation site = one recorded call stack.
struct site_stats {
    std::uint32_t stack = 0;
    std::uint64_t calls = 0;       ///< allocations (realloc included)
    std::uint64_t bytes = 0;       ///< requested bytes
    std::uint64_t peak_bytes = 0;  ///< live bytes of this site at the global peak
    std::uint64_t live_bytes = 0;  ///< at the end of the trace (leaked)
    std::uint64_t live_blocks = 0;
    std::uint64_t time_ns = 0;  ///< in the allocator: its allocations and their frees
    std::uint64_t temporaries = 0;
    std::uint64_t cross_thread_frees = 0;
    /// Sampled traces: the variance estimates of calls and bytes (confidence95 gives their
    /// 95% intervals; sample_weight.hpp).
    double calls_variance = 0, bytes_variance = 0;
};

struct thread_stats {
    std::uint32_t thread = 0;
    std::uint64_t allocations = 0;
    std::uint64_t deallocations = 0;
    std::uint64_t bytes_allocated = 0;
    std::uint64_t bytes_freed = 0;
    std::uint64_t time_ns = 0;
};

struct timeline_point {
    std::uint64_t time_ns = 0;      ///< start of the interval
    std::uint64_t live_bytes = 0;   ///< maximum during the interval
    std::uint64_t allocations = 0;  ///< during the interval
};

struct report_data {
    std::uint64_t events = 0;
    std::array<std::uint64_t, op_count> calls{};
    std::uint64_t allocations = 0;
    std::uint64_t deallocations = 0;
    std::uint64_t bytes_allocated = 0;
    std::uint64_t peak_live_bytes = 0;
    std::uint64_t peak_time_ns = 0;
    std::uint64_t duration_ns = 0;  ///< time of the last event
    std::uint64_t leaked_blocks = 0;
    std::uint64_t leaked_bytes = 0;
    /// Blocks freed or reallocated by their thread right after it allocated them: no other
    /// allocation or release by that thread between (heaptrack's definition, per thread).
    std::uint64_t temporaries = 0;
    std::uint64_t cross_thread_frees = 0;
    std::uint64_t cross_thread_bytes = 0;
    std::uint64_t unknown_frees = 0;  ///< pointers not allocated during the trace
    std::uint64_t failed = 0;         ///< allocations that returned null
    std::uint64_t reallocs_in_place = 0;  ///< realloc calls that returned the block they got
    std::uint64_t time_ns = 0;        ///< total time in the allocator (0 if unknown)
    /// One call in this many was timed; time_ns values are estimates (each timed call counts
    /// this many times) unless it is 1.
    std::uint32_t timing_period = 1;
    /// Sampled trace (`record --sample`): the mean sampling interval in bytes, else 0. Then
    /// every count and byte figure above (totals, sites, threads, histograms, timeline) is an
    /// estimate: each recorded block of size s stands for w = 1 / (1 - exp(-s / interval))
    /// blocks (its inverse sampling probability; counts are rounded stochastically, bytes to
    /// the nearest byte), and the *_variance fields give their Horvitz-Thompson variance
    /// estimates, sum of w (w - 1) x^2 over recorded blocks (confidence95 makes the 95% interval).
    /// `calls` then holds the exact counts from the trace's counts chunk (when it has one),
    /// `events` the events recorded; temporaries cannot be told (unrecorded allocations).
    std::uint64_t sample_interval = 0;
    bool exact_calls = false;  ///< `calls` are the tracer's exact counts (not decoded events)
    std::array<std::uint64_t, op_count> exact_bytes{};  ///< requested bytes per op (exact)
    double allocations_variance = 0, bytes_allocated_variance = 0, peak_live_variance = 0,
           leaked_bytes_variance = 0;
    log2_histogram sizes, lifetimes_ns, lifetimes_allocs;
    std::vector<site_stats> sites;  ///< only sites with calls, any order
    std::vector<thread_stats> threads;
    std::vector<timeline_point> timeline;
    std::uint64_t timeline_step_ns = 0;
    std::uint64_t timeline_origin_ns = 0;  ///< time of timeline[0] (the window's start)
    /// Set by analyze_window. In a window, "leaked" means still live when the window closes.
    bool windowed = false;
    time_window window;
    /// Whether the blocks live when the window opened were counted (a pass over the events
    /// before it); then live_at_start_* describe them and the peak includes them.
    bool live_at_start_included = false;
    std::uint64_t live_at_start_bytes = 0;
    std::uint64_t live_at_start_blocks = 0;
};

struct report_options {
    std::size_t timeline_points = 512;
};

/// Streams `source` once from its start (calls rewind()).
[[nodiscard]] report_data analyze_events(event_source& source, const report_options& opts = {});

/// The events of `window` only (the reader is left windowed, for later passes such as HTML
/// sections). Without `live_at_start`, blocks allocated before the window are unknown to the
/// report: their frees count as frees of unknown pointers and the peak is that of the memory
/// allocated within the window. With it, the events before the window are read once more
/// (only the live blocks are tracked) so the peak, the site peaks and the frees are exact.
[[nodiscard]] report_data analyze_window(trace_reader& reader, time_window window,
                                         bool live_at_start, const report_options& opts = {});

/// Sites sorted by a key, largest first, at most `n`.
enum class site_order { calls, bytes, peak, time, leaked };
[[nodiscard]] std::vector<site_stats> top_sites(const report_data& r, site_order by, std::size_t n);

}  // namespace rtmem::analyze
