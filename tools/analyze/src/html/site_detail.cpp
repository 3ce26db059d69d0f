// Per-site histograms and memory over time for the HTML report (site_detail.hpp).
#include "html/site_detail.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "rtmem/analyze/decoder.hpp"

namespace rtmem::analyze {

namespace {

struct site_series {
    log2_histogram sizes, lifetimes;
    std::uint64_t live = 0;
    std::vector<std::uint64_t> high;  // highest live bytes in each interval
    std::vector<std::uint64_t> last;  // live bytes at the end of each interval it touched
    std::vector<char> touched;
};

class detail_pass : public decode_handler {
  public:
    detail_pass(const report_data& r, std::span<const std::uint32_t> stacks, std::size_t points)
        : t0_(r.timeline_origin_ns), points_(std::max<std::size_t>(points, 2)) {
        const std::uint64_t span = r.duration_ns > t0_ ? r.duration_ns - t0_ : 1;
        step_ = std::max<std::uint64_t>(1, (span + points_ - 1) / points_);
        for (std::uint32_t s : stacks) {
            if (s >= index_.size()) index_.resize(s + 1, -1);
            if (index_[s] >= 0) continue;
            index_[s] = static_cast<std::int64_t>(series_.size());
            series_.push_back({{}, {}, 0, std::vector<std::uint64_t>(points_, 0),
                               std::vector<std::uint64_t>(points_, 0),
                               std::vector<char>(points_, 0)});
            stacks_.push_back(s);
        }
    }

    void on_allocation(const event& e, live_block& b, std::uint64_t) { grow(e, b); }
    void on_free(const event& e, const live_block& b, std::uint64_t) { shrink(e, b); }
    void on_realloc(const event& e, const live_block* old, live_block* fresh, std::uint64_t) {
        if (old != nullptr) shrink(e, *old);
        if (fresh != nullptr) grow(e, *fresh);
    }

    nlohmann::json finish() const {
        nlohmann::json sites = nlohmann::json::object();
        for (std::size_t i = 0; i < series_.size(); ++i) {
            const site_series& s = series_[i];
            nlohmann::json m = nlohmann::json::array();
            std::uint64_t level = 0;  // an interval without events keeps the level before it
            for (std::size_t p = 0; p < points_; ++p) {
                m.push_back(s.touched[p] != 0 ? std::max(s.high[p], level) : level);
                if (s.touched[p] != 0) level = s.last[p];
            }
            sites[std::to_string(stacks_[i])] = {
                {"s", compact_histogram(s.sizes)}, {"l", compact_histogram(s.lifetimes)}, {"m", m}};
        }
        return {{"t0", t0_}, {"step", step_}, {"sites", sites}};
    }

  private:
    site_series* find(std::uint32_t stack) {
        if (stack >= index_.size() || index_[stack] < 0) return nullptr;
        return &series_[static_cast<std::size_t>(index_[stack])];
    }
    void note(site_series& s, std::uint64_t time_ns, std::uint64_t before) {
        const std::uint64_t t = time_ns > t0_ ? time_ns - t0_ : 0;
        const std::size_t p = std::min<std::size_t>(points_ - 1, static_cast<std::size_t>(t / step_));
        if (s.touched[p] == 0) s.high[p] = before;  // the level the interval opened with
        s.touched[p] = 1;
        s.high[p] = std::max(s.high[p], s.live);
        s.last[p] = s.live;
    }
    void grow(const event& e, const live_block& b) {
        site_series* s = find(b.stack);
        if (s == nullptr) return;
        s->sizes.add(b.size);
        const std::uint64_t before = s->live;
        s->live += b.size;
        note(*s, e.time_ns, before);
    }
    void shrink(const event& e, const live_block& b) {
        site_series* s = find(b.stack);
        if (s == nullptr) return;
        s->lifetimes.add(e.time_ns - std::min(e.time_ns, b.time_ns));
        const std::uint64_t before = s->live;
        s->live -= std::min(s->live, b.size);
        note(*s, e.time_ns, before);
    }

    std::uint64_t t0_, step_ = 1;
    std::size_t points_;
    std::vector<std::int64_t> index_;  // stack -> series, -1: not detailed
    std::vector<site_series> series_;
    std::vector<std::uint32_t> stacks_;
};

}  // namespace

nlohmann::json compact_histogram(const log2_histogram& h) {
    std::size_t first = h.buckets.size(), last = 0;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
        if (h.buckets[i] == 0) continue;
        first = std::min(first, i);
        last = i;
    }
    nlohmann::json a = nlohmann::json::array();
    if (first == h.buckets.size()) return a;
    a.push_back(first);
    for (std::size_t i = first; i <= last; ++i) a.push_back(h.buckets[i]);
    return a;
}

nlohmann::json site_details(event_source& source, const report_data& r,
                            std::span<const std::uint32_t> stacks, std::size_t points) {
    detail_pass pass(r, stacks, points);
    source.rewind();
    decoder d;
    d.run(source, pass);
    return pass.finish();
}

}  // namespace rtmem::analyze
