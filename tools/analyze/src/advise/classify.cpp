// Streaming classifier: one pass for the trace duration, one pass on the decoder
// (decoder.hpp) that fills site profiles.
#include "rtmem/analyze/classify.hpp"

#include "named_fields.hpp"
#include "rtmem/analyze/decoder.hpp"
#include "rtmem/analyze/sample_weight.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <unordered_map>

namespace rtmem::analyze {

std::string_view to_string(site_class c) noexcept {
    switch (c) {
        case site_class::general:
            return "general";
        case site_class::stack:
            return "stack";
        case site_class::linear:
            return "linear";
        case site_class::pool:
            return "pool";
        case site_class::frame:
            return "frame";
        case site_class::long_lived:
            return "long-lived";
    }
    return "?";
}

namespace {

/// Per-site working state that does not belong in the published profile.
struct site_state {
    std::uint64_t live_count = 0, live_bytes = 0, live_bump = 0, since_drain = 0, run = 0,
                  run_start = 0;
    std::uint64_t last_drain = 0;
    bool drained_before = false;
    double mean = 0, m2 = 0;  // Welford over drain intervals
    std::uint64_t intervals = 0;
    std::uint64_t frame = 0, frame_bytes = 0;
    bool frame_seen = false;
    std::uint32_t first_thread = 0;
    std::uint64_t sizes[8] = {};
    std::uint64_t size_counts[8] = {};
};

/// The per-thread LIFO order of one site's live blocks, with lazy deletion of blocks freed
/// out of order (compacted when dead entries dominate).
struct lifo_stack {
    std::vector<std::uint64_t> seqs;
    std::uint64_t live = 0;
};

class live_bits {
  public:
    void set(std::uint64_t i) {
        if (i / 64 >= words_.size()) words_.resize(i / 64 + 1 + words_.size() / 2, 0);
        words_[i / 64] |= std::uint64_t{1} << (i % 64);
    }
    void clear(std::uint64_t i) noexcept { words_[i / 64] &= ~(std::uint64_t{1} << (i % 64)); }
    [[nodiscard]] bool test(std::uint64_t i) const noexcept {
        return (words_[i / 64] >> (i % 64)) & 1U;
    }

  private:
    std::vector<std::uint64_t> words_;
};

// The classifier's view of the decoded events (decoder.hpp): blocks carry their site id.
class classifier : public decode_handler {
  public:
    classifier(const site_map& sites, const thresholds& t, std::uint64_t duration,
               std::uint64_t sample_interval)
        : sites_(sites), t_(t), duration_(duration), interval_(sample_interval) {
        profiles_.resize(sites.size());
        state_.resize(sites.size());
        for (std::uint32_t i = 0; i < profiles_.size(); ++i) profiles_[i].site = i;
    }

    void on_event(const event&, std::uint64_t ns) {
        ++events_;
        recorded_ns_ += ns;
    }
    void on_frame(const event&) { ++frame_; }
    void on_allocation(const event& e, live_block& b, std::uint64_t) { acquire(e, b); }
    void on_free(const event& e, const live_block& b, std::uint64_t) { release(b, e.thread, e.time_ns); }
    void on_unknown_free(const event&, std::uint64_t) { ++unknown_frees_; }
    void on_realloc(const event& e, const live_block* old, live_block* fresh, std::uint64_t) {
        if (old != nullptr) release(*old, e.thread, e.time_ns);
        if (fresh != nullptr) {
            acquire(e, *fresh);
            ++profiles_[sites_.site_of(fresh->stack)].reallocs;
        }
    }

    classification finish(const live_blocks& live) {
        live.for_each([&](const live_block& b) {
            site_profile& p = profiles_[sites_.site_of(b.stack)];
            const std::uint64_t n = count_of(b);
            p.long_lived += n;
            p.live_at_end += n;
        });
        classification out;
        out.events = events_;
        out.frames = frame_;
        out.duration_ns = duration_;
        out.unknown_frees = unknown_frees_;
        out.recorded_ns = recorded_ns_;
        out.sample_interval = interval_;
        out.limits = t_;
        for (std::size_t i = 0; i < profiles_.size(); ++i) {
            site_profile& p = profiles_[i];
            if (p.allocations == 0) continue;
            finish_sizes(p, state_[i]);
            if (state_[i].intervals > 1 && state_[i].mean > 0) {
                p.period_ns = state_[i].mean;
                p.period_cv = std::sqrt(state_[i].m2 / static_cast<double>(state_[i].intervals)) /
                              state_[i].mean;
            }
            (void)decide(p, t_, frame_ > 0);
            out.allocations += p.allocations;
            out.frees += p.frees;
            out.sites.push_back(p);
        }
        return out;
    }

  private:
    // In a sampled trace a recorded block stands for 1 / (its sampling probability) blocks
    // (sample_weight.hpp): every count and byte figure is weighted, so the volumes are
    // estimates and the fractions are those of the sampled blocks, weighted.
    [[nodiscard]] std::uint64_t count_of(const live_block& b) const noexcept {
        return interval_ == 0 ? 1 : weighted_count(sample_weight(b.size, interval_), b.ptr, b.time_ns);
    }
    [[nodiscard]] std::uint64_t bytes_of(const live_block& b) const noexcept {
        return interval_ == 0 ? b.size : weighted_bytes(sample_weight(b.size, interval_), b.size);
    }

    void acquire(const event& e, const live_block& b) {
        const std::uint32_t site = sites_.site_of(e.stack);
        site_profile& p = profiles_[site];
        site_state& s = state_[site];
        if (p.allocations == 0) {
            p.min_size = e.size;
            s.first_thread = e.thread;
        }
        const std::uint64_t n = count_of(b), bytes = bytes_of(b);
        p.allocations += n;
        p.bytes += bytes;
        p.min_size = std::min(p.min_size, e.size);
        p.max_size = std::max(p.max_size, e.size);
        p.max_align = std::max<std::uint64_t>(p.max_align, e.align);
        if (e.thread != s.first_thread) p.multi_thread = true;
        count_size(p, s, e.size);

        const std::uint64_t bump = bump_bytes(e.size) * n;
        s.live_count += n;
        s.live_bytes += bytes;
        s.live_bump += bump;
        p.max_live_bump = std::max(p.max_live_bump, s.live_bump);
        s.since_drain += bump;
        s.run = 0;
        p.max_live_count = std::max(p.max_live_count, s.live_count);
        p.max_live_bytes = std::max(p.max_live_bytes, s.live_bytes);
        p.bump_peak = std::max(p.bump_peak, s.since_drain);

        if (!s.frame_seen || s.frame != frame_) {
            s.frame_seen = true;
            s.frame = frame_;
            s.frame_bytes = 0;
            ++p.frames_used;
        }
        s.frame_bytes += bump;
        p.frame_peak_bytes = std::max(p.frame_peak_bytes, s.frame_bytes);

        bits_.set(b.seq);
        lifo_stack& st = stacks_[key(site, e.thread)];
        st.seqs.push_back(b.seq);
        ++st.live;
    }

    void release(const live_block& b, std::uint32_t thread, std::uint64_t time) {
        const std::uint32_t site = sites_.site_of(b.stack);
        site_profile& p = profiles_[site];
        site_state& s = state_[site];
        const std::uint64_t n = count_of(b);
        p.frees += n;

        lifo_stack& st = stacks_[key(site, b.thread)];
        if (thread != b.thread) p.cross_thread_frees += n;
        while (!st.seqs.empty() && !bits_.test(st.seqs.back())) st.seqs.pop_back();
        if (thread == b.thread && !st.seqs.empty() && st.seqs.back() == b.seq) {
            p.lifo_frees += n;
            st.seqs.pop_back();
        }
        bits_.clear(b.seq);
        --st.live;
        if (st.seqs.size() > 64 && st.seqs.size() > 4 * st.live) {
            std::erase_if(st.seqs, [this](std::uint64_t q) { return !bits_.test(q); });
        }

        const std::uint64_t lifetime = time >= b.time_ns ? time - b.time_ns : 0;
        p.lifetime_ns_sum += lifetime;
        if (duration_ > 0 && static_cast<double>(lifetime) >=
                                 t_.long_lived_min_lifetime * static_cast<double>(duration_)) {
            p.long_lived += n;
        }
        const std::uint32_t span = static_cast<std::uint32_t>(frame_) - b.frame;  // mod 2^32
        if (span < t_.frame_max_span) {
            p.frame_fit += n;
            p.frame_span = std::max(p.frame_span, static_cast<std::uint32_t>(span + 1));
        }

        if (s.run == 0) s.run_start = events_;
        s.live_count -= std::min(s.live_count, n);
        s.live_bytes -= std::min(s.live_bytes, bytes_of(b));
        s.live_bump -= std::min(s.live_bump, bump_bytes(b.size) * n);
        s.run += n;
        if (s.live_count == 0) {
            ++p.drains;
            const double density =
                static_cast<double>(s.run) / static_cast<double>(events_ - s.run_start + 1);
            if (s.run >= t_.bulk_min_run && density >= t_.bulk_min_density) {
                p.bulk_frees += s.run;
                ++p.bulk_runs;
            }
            if (s.drained_before) {
                const double x = static_cast<double>(time - s.last_drain);
                ++s.intervals;
                const double d = x - s.mean;
                s.mean += d / static_cast<double>(s.intervals);
                s.m2 += d * (x - s.mean);
            }
            s.drained_before = true;
            s.last_drain = time;
            s.since_drain = 0;
        }
    }

    static void count_size(site_profile& p, site_state& s, std::uint64_t size) noexcept {
        for (std::size_t i = 0; i < 8; ++i) {
            if (s.size_counts[i] != 0 && s.sizes[i] == size) {
                ++s.size_counts[i];
                return;
            }
            if (s.size_counts[i] == 0) {
                s.sizes[i] = size;
                s.size_counts[i] = 1;
                p.distinct_sizes = static_cast<std::uint32_t>(i + 1);
                return;
            }
        }
        p.distinct_sizes = 9;  // more than eight sizes
    }

    static void finish_sizes(site_profile& p, const site_state& s) noexcept {
        std::uint64_t best = 0;
        for (std::size_t i = 0; i < 8; ++i) {
            if (s.size_counts[i] > best) {
                best = s.size_counts[i];
                p.mode_size = s.sizes[i];
            }
        }
    }

    static std::uint64_t key(std::uint32_t site, std::uint32_t thread) noexcept {
        return (std::uint64_t{site} << 32) | thread;
    }

    const site_map& sites_;
    thresholds t_;
    std::uint64_t duration_;
    std::uint64_t recorded_ns_ = 0;
    std::uint64_t interval_;  // sampling interval of the trace (0: every call recorded)
    std::vector<site_profile> profiles_;
    std::vector<site_state> state_;
    std::unordered_map<std::uint64_t, lifo_stack> stacks_;
    live_bits bits_;
    std::uint64_t frame_ = 0, events_ = 0, unknown_frees_ = 0;
};

}  // namespace

site_class decide(site_profile& p, const thresholds& t, bool have_frames) noexcept {
    p.linear_bad = false;
    p.linear_satisfactory = false;
    p.period_detected = false;
    p.cls = [&] {
        if (p.allocations < t.min_allocations) return site_class::general;
        if (p.long_lived_fraction() >= t.long_lived_min_fraction) return site_class::long_lived;
        if (have_frames && p.frames_used >= t.frame_min_frames &&
            p.frame_fraction() >= t.frame_min_fraction) {
            return site_class::frame;
        }
        const bool bulk = p.frees > 0 && p.bulk_fraction() >= t.bulk_min_fraction;
        if (bulk && !have_frames && p.drains >= t.period_min_drains && p.period_ns > 0 &&
            p.period_cv <= t.period_max_cv) {
            p.period_detected = true;
            return site_class::frame;
        }
        if (bulk) {
            // Trub's three linear grades: good (little waste), satisfactory (linear still pays,
            // but holds up to 1 / linear_min_efficiency x the live bytes), bad (try others).
            if (p.linear_efficiency() >= t.linear_min_efficiency) {
                p.linear_satisfactory = p.linear_efficiency() < t.linear_good_efficiency;
                return site_class::linear;
            }
            p.linear_bad = true;
        }
        if (p.frees > 0 && p.lifo_fraction() >= t.stack_min_lifo) return site_class::stack;
        const double spread = p.max_size == 0 ? 0.0
                                              : static_cast<double>(p.max_size - p.min_size) /
                                                    static_cast<double>(p.max_size);
        if (p.max_size <= t.pool_max_block && spread <= t.pool_max_spread &&
            p.churn() >= t.pool_min_churn) {
            return site_class::pool;
        }
        return site_class::general;
    }();
    if (p.period_detected) {
        p.frame_span = 1;
        p.frame_peak_bytes = p.bump_peak;
    }
    return p.cls;
}

namespace {

template <class F>
void for_each_threshold(thresholds& t, F&& f) {
    f("min_allocations", t.min_allocations);
    f("stack_min_lifo", t.stack_min_lifo);
    f("bulk_min_run", t.bulk_min_run);
    f("bulk_min_density", t.bulk_min_density);
    f("bulk_min_fraction", t.bulk_min_fraction);
    f("linear_min_efficiency", t.linear_min_efficiency);
    f("linear_good_efficiency", t.linear_good_efficiency);
    f("pool_max_spread", t.pool_max_spread);
    f("pool_max_block", t.pool_max_block);
    f("pool_min_churn", t.pool_min_churn);
    f("pool_headroom", t.pool_headroom);
    f("frame_max_span", t.frame_max_span);
    f("frame_min_fraction", t.frame_min_fraction);
    f("frame_min_frames", t.frame_min_frames);
    f("period_min_drains", t.period_min_drains);
    f("period_max_cv", t.period_max_cv);
    f("long_lived_min_fraction", t.long_lived_min_fraction);
    f("long_lived_min_lifetime", t.long_lived_min_lifetime);
}

}  // namespace

bool set_threshold(thresholds& t, std::string_view name, double value) noexcept {
    return detail::set_field([&](auto&& f) { for_each_threshold(t, f); }, name, value);
}

std::vector<std::string_view> threshold_names() {
    thresholds t;
    return detail::field_names([&](auto&& f) { for_each_threshold(t, f); });
}

classification classify(event_source& source, const site_map& sites, const thresholds& limits) {
    event e;
    std::uint64_t first = 0, last = 0;
    bool any = false;
    source.rewind();
    while (source.next(e)) {
        if (!any) first = e.time_ns;
        any = true;
        last = e.time_ns;
    }
    classifier c(sites, limits, last - first, source.sample_interval());
    decoder d;
    source.rewind();
    d.run(source, c);
    return c.finish(d.live());
}

}  // namespace rtmem::analyze
