// Recommendations: per classified site, an rtmem allocator with a concrete configuration, a
// code sketch with the matching adapter, and the expected saving; ranked by time saved.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rtmem/analyze/classify.hpp"
#include "rtmem/analyze/spread.hpp"
#include "rtmem/analyze/units.hpp"

namespace rtmem::analyze {

/// Estimated cost of one call, in ns, used to rank sites before a replay measures them.
/// Defaults are glibc malloc/free on small blocks and rtmem fast paths (docs/advisor.md).
struct cost_model {
    double malloc_ns = 20, free_ns = 15;  ///< baseline
    double bump_ns = 2;                   ///< linear/arena/frame allocate; free is a no-op
    double stack_ns = 3, stack_free_ns = 2;
    double pool_ns = 3, pool_free_ns = 2;
    double tlsf_ns = 15, tlsf_free_ns = 15;
};

struct recommendation {
    std::uint32_t site = 0;
    site_class cls = site_class::general;
    std::string allocator;            ///< e.g. "pool_allocator"
    std::string config;               ///< e.g. "block 48 B, capacity 3,200"
    std::string evidence;             ///< the numbers behind the class
    std::string sketch;               ///< how to apply it, with the adapter
    std::uint64_t calls = 0;          ///< calls the site makes to malloc/free today
    std::uint64_t calls_saved = 0;    ///< calls that no longer reach malloc/free
    std::uint64_t frees_removed = 0;  ///< frees that become no-ops (linear, frame, long-lived)
    double baseline_ns = 0, advised_ns = 0;  ///< cost model estimates
    [[nodiscard]] double saved_ns() const noexcept { return baseline_ns - advised_ns; }
    /// Set by rank_by_replay (replay.hpp): the saving a replay measured at this site (baseline
    /// allocator's median time minus the advised allocator's, with their range).
    bool measured = false;
    spread measured_saved_ns;

    // The configuration as numbers (for --json and for the mixed replay).
    std::uint64_t capacity_bytes = 0;   ///< linear/stack/arena/tlsf bytes, frame bytes per frame
    std::uint64_t capacity_blocks = 0;  ///< pool
    std::uint64_t block_size = 0, block_align = 0;  ///< pool
    std::uint32_t frames = 0;                       ///< frame_allocator<N>
};

/// How a replay measured the advice (rank_by_replay); absent: the ranking is the cost model's.
struct advice_measurement {
    std::string baseline;       ///< the allocator of the unadvised replay, e.g. "glibc"
    unsigned repetitions = 0;   ///< medians of this many
    std::size_t applied = 0;    ///< sites whose advised allocator the replay ran
    spread baseline_ns;         ///< the baseline replay's time in calls, whole program
    spread dispatch_ns;         ///< the mixed dispatch with no site advised
    spread advised_ns;          ///< the mixed replay: advised sites on their allocators
};

struct advice {
    classification result;
    /// Every site that allocated, largest saving first: the cost model's saving, or the
    /// replay's measured one once rank_by_replay ran (sites it measured first).
    std::vector<recommendation> ranked;
    double baseline_ns = 0, saved_ns = 0;  ///< cost model estimates, whole trace
    bool measured = false;                 ///< ranked by a replay's measurement
    advice_measurement measurement;
};

/// pool_headroom: capacity = ceil(max live * (1 + headroom)) (thresholds::pool_headroom).
[[nodiscard]] recommendation recommend(const site_profile& p, const cost_model& cost = {},
                                       double pool_headroom = 0);
[[nodiscard]] advice advise(classification c, const cost_model& cost = {});

/// Names a site for humans (the CLI passes a symbolizer; the default prints frame addresses).
using site_namer = std::function<std::string(std::uint32_t site)>;
[[nodiscard]] site_namer address_namer(const site_map& sites);
class symbolizer;
/// "f (file:line) < caller (file:line)": the site's `frames` innermost frames, symbolised.
[[nodiscard]] site_namer symbol_namer(const site_map& sites, symbolizer& sym,
                                      std::size_t frames = 3);

struct format_options {
    std::size_t top = 10;  ///< sites listed in detail (0 = all)
    bool include_general = false;
    bool wrap = true;  ///< HTML: own <section> and heading (false inside the report's section)
};
/// Sets one cost by its field name (e.g. "malloc_ns"); false for an unknown name.
bool set_cost(cost_model& c, std::string_view name, double value) noexcept;
/// The names set_cost accepts, for help texts.
[[nodiscard]] std::vector<std::string_view> cost_names();
[[nodiscard]] std::string format_text(const advice& a, const site_namer& name,
                                      const format_options& o = {});
[[nodiscard]] std::string format_json(const advice& a, const site_namer& name);
/// A self-contained <section> for the report's HTML page (no scripts needed).
[[nodiscard]] std::string format_html(const advice& a, const site_namer& name,
                                      const format_options& o = {});


}  // namespace rtmem::analyze
