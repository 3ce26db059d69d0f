// Site classification: what each allocation site's observed behaviour says about the allocator
// it could use. See docs/advisor.md for every class, threshold and number.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "rtmem/analyze/event.hpp"
#include "rtmem/analyze/site.hpp"

namespace rtmem::analyze {

enum class site_class : std::uint8_t {
    general,     ///< none of the patterns below
    stack,       ///< frees come in LIFO order per thread
    linear,      ///< blocks freed together in bulk; a bump allocator wastes little
    pool,        ///< one size (or a small spread) with churn and a bounded live count
    frame,       ///< lifetimes bounded by frames (markers) or by a detected period
    long_lived,  ///< allocated once, freed at exit or never
};
[[nodiscard]] std::string_view to_string(site_class c) noexcept;

/// Every number the classifier decides with. Defaults are documented in docs/advisor.md.
struct thresholds {
    std::uint64_t min_allocations = 8;  ///< fewer allocations: general (too little evidence)
    double stack_min_lifo = 0.95;       ///< LIFO frees / frees for a stack site
    std::uint64_t bulk_min_run = 4;  ///< frees in a row (no allocation between) that drain the site
    double bulk_min_density = 0.05;  ///< a bulk run's frees / all events during the run
    double bulk_min_fraction = 0.8;  ///< frees inside bulk runs / frees for a linear site
    double linear_min_efficiency = 0.5;    ///< peak live bytes / bump bytes: below is "linear bad"
    double linear_good_efficiency = 0.8;   ///< at or above: "linear good"; below: "satisfactory"
    double pool_max_spread = 0.25;         ///< (max size - min size) / max size for a pool site
    std::uint64_t pool_max_block = 4096;   ///< larger blocks are not pooled
    double pool_min_churn = 2.0;           ///< allocations / max live count for a pool site
    double pool_headroom = 0.0;            ///< capacity = ceil(max live * (1 + headroom))
    std::uint32_t frame_max_span = 3;      ///< frame_allocator<N> with N up to this
    double frame_min_fraction = 0.95;      ///< blocks freed within N frames / allocations
    std::uint64_t frame_min_frames = 3;    ///< the site must allocate in this many frames
    std::uint64_t period_min_drains = 8;   ///< drains needed to detect a period (no markers)
    double period_max_cv = 0.25;           ///< max coefficient of variation of drain intervals
    double long_lived_min_fraction = 0.9;  ///< long-lived blocks / allocations
    double long_lived_min_lifetime = 0.5;  ///< lifetime / trace duration (or never freed)
};

/// Everything observed about one site; the evidence behind its class.
struct site_profile {
    std::uint32_t site = 0;
    site_class cls = site_class::general;
    bool linear_bad = false;       ///< bulk-freed, but a bump allocator would hold too much
    bool linear_satisfactory = false;  ///< linear, but the bump allocator holds up to 2x live
    bool period_detected = false;  ///< frame class from drain periodicity, not markers

    std::uint64_t allocations = 0, frees = 0, reallocs = 0, bytes = 0;
    std::uint64_t min_size = 0, max_size = 0, mode_size = 0, max_align = 0;
    std::uint32_t distinct_sizes = 0;  ///< saturates at 9
    bool multi_thread = false;         ///< allocated on more than one thread
    std::uint64_t cross_thread_frees = 0;
    std::uint64_t max_live_count = 0, max_live_bytes = 0, live_at_end = 0;
    std::uint64_t max_live_bump = 0;  ///< peak live bytes counted in 16-byte granules

    std::uint64_t lifo_frees = 0;  ///< frees of the thread's most recent live block of the site
    std::uint64_t bulk_frees = 0, bulk_runs = 0;
    std::uint64_t drains = 0;     ///< times the live count fell to zero
    std::uint64_t bump_peak = 0;  ///< bytes a bump allocator holds at most (reset at each drain)
    double period_ns = 0, period_cv = 0;

    std::uint64_t frame_fit = 0;         ///< blocks freed within frame_max_span frames
    std::uint32_t frame_span = 0;        ///< N of frame_allocator<N> that holds the fitting blocks
    std::uint64_t frame_peak_bytes = 0;  ///< most bytes allocated in one frame (or period)
    std::uint64_t frames_used = 0;       ///< frames in which the site allocated
    std::uint64_t long_lived = 0;        ///< blocks never freed or living long (see thresholds)
    std::uint64_t lifetime_ns_sum = 0;

    [[nodiscard]] double ratio(std::uint64_t part, std::uint64_t whole) const noexcept {
        return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
    }
    /// Blocks cross threads: allocated on several, or freed by another than the allocating one.
    [[nodiscard]] bool shared_across_threads() const noexcept {
        return multi_thread || cross_thread_frees > 0;
    }
    [[nodiscard]] double lifo_fraction() const noexcept { return ratio(lifo_frees, frees); }
    [[nodiscard]] double bulk_fraction() const noexcept { return ratio(bulk_frees, frees); }
    [[nodiscard]] double mean_bulk_run() const noexcept { return ratio(bulk_frees, bulk_runs); }
    /// peak live bytes / bump peak: 1 means a bump allocator wastes nothing.
    [[nodiscard]] double linear_efficiency() const noexcept {
        return ratio(max_live_bytes, bump_peak);
    }
    [[nodiscard]] std::uint64_t linear_waste() const noexcept {
        return bump_peak > max_live_bytes ? bump_peak - max_live_bytes : 0;
    }
    [[nodiscard]] double churn() const noexcept { return ratio(allocations, max_live_count); }
    [[nodiscard]] double frame_fraction() const noexcept { return ratio(frame_fit, allocations); }
    [[nodiscard]] double long_lived_fraction() const noexcept {
        return ratio(long_lived, allocations);
    }
};

struct classification {
    std::vector<site_profile> sites;  ///< sites that allocated, in site id order
    std::uint64_t events = 0, allocations = 0, frees = 0, frames = 0, duration_ns = 0;
    std::uint64_t unknown_frees = 0;  ///< frees of pointers the trace never saw allocated
    /// Time in the allocator as the tracer timed it (the sum `rtmem report` shows as "time in
    /// the allocator"; an estimate when the trace timed 1 call in N). 0 when not timed.
    std::uint64_t recorded_ns = 0;
    /// A sampled trace's interval (bytes; 0: every call): the counts and bytes of the profiles
    /// are then estimates (each recorded block weighted by its inverse sampling probability)
    /// and the patterns are those of the sampled blocks.
    std::uint64_t sample_interval = 0;
    thresholds limits;
};

/// Bytes a block of `size` occupies in a bump allocator (16-byte granules, like malloc).
[[nodiscard]] constexpr std::uint64_t bump_bytes(std::uint64_t size) noexcept {
    return (size + 15) / 16 * 16 + (size == 0 ? 16 : 0);
}

/// Two streaming passes over the source (duration, then the profiles). Memory: O(live blocks +
/// sites), not O(events).
[[nodiscard]] classification classify(event_source& source, const site_map& sites,
                                      const thresholds& limits = {});

/// Sets one threshold by its field name (e.g. "stack_min_lifo"); false for an unknown name.
bool set_threshold(thresholds& t, std::string_view name, double value) noexcept;
/// The names set_threshold accepts, for help texts.
[[nodiscard]] std::vector<std::string_view> threshold_names();

/// Applies the thresholds to a filled profile (exposed for tests and for re-thresholding).
[[nodiscard]] site_class decide(site_profile& p, const thresholds& t, bool have_frames) noexcept;

}  // namespace rtmem::analyze
