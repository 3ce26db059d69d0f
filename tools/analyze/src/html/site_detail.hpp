// The per-site view of the HTML report: for chosen sites, their size and lifetime histograms
// and their live bytes over time, from one pass over the events (the report keeps only
// per-site totals).
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>

#include "rtmem/analyze/event.hpp"
#include "rtmem/analyze/report.hpp"

namespace rtmem::analyze {

/// A log2 histogram as the page reads it: [first non-empty bucket, its count, the next
/// bucket's, ... the last non-empty one's] ([] when empty).
[[nodiscard]] nlohmann::json compact_histogram(const log2_histogram& h);

/// {"t0": first time (ns), "step": ns per point, "sites": {"<stack>": {"s": sizes, "l":
/// lifetimes in ns — each [first log2 bucket, counts...] — "m": highest live bytes of the
/// site in each of `points` intervals}}}. Rewinds `source` and reads it to its end (a
/// windowed reader: the window). Memory: the live blocks, and `points` numbers per site.
[[nodiscard]] nlohmann::json site_details(event_source& source, const report_data& r,
                                          std::span<const std::uint32_t> stacks,
                                          std::size_t points = 120);

}  // namespace rtmem::analyze
