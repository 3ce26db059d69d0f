// The streaming analysis behind `rtmem report`, on the decoder (decoder.hpp): per-site and
// per-thread counters, and a timeline whose resolution halves whenever it fills up.
#include "rtmem/analyze/report.hpp"

#include <algorithm>
#include <bit>

#include "rtmem/analyze/decoder.hpp"
#include "rtmem/analyze/sample_weight.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze {

void log2_histogram::add(std::uint64_t v, std::uint64_t count) noexcept {
    buckets[static_cast<std::size_t>(std::bit_width(v))] += count;
}
std::uint64_t log2_histogram::upper_bound(std::size_t bucket) noexcept {
    return bucket == 0 ? 0 : bucket >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bucket) - 1;
}

namespace {

// The report's view of the decoded events: counters, per-site and per-thread statistics, the
// timeline. The live blocks are the decoder's.
class analyzer : public decode_handler {
  public:
    analyzer(const report_options& opts, const event_source& source, std::uint64_t origin = 0)
        : origin_(origin), interval_(source.sample_interval()) {
        r_.timing_period = source.timing_period();
        r_.sample_interval = interval_;
        r_.timeline.resize(std::max<std::size_t>(opts.timeline_points, 2));
        r_.timeline_step_ns = 1000;  // 1 us to start; doubles as the trace gets longer
        r_.timeline_origin_ns = origin;
        r_.duration_ns = origin;
    }

    // The window opens: what is live now is its starting level and first peak.
    void open_window(const live_blocks& live) {
        r_.live_at_start_included = true;
        r_.live_at_start_bytes = live_bytes_;
        r_.live_at_start_blocks = live.size();
        for (std::uint32_t id = 0; id < live_by_site_.size(); ++id) {
            if (live_by_site_[id] != 0) touch(id);
        }
        new_peak(origin_);
        live_before_ = live_bytes_;
        r_.timeline[0].live_bytes = live_bytes_;
    }

    void on_event(const event& e, std::uint64_t ns) {
        live_before_ = live_bytes_;
        ++r_.events;
        ++r_.calls[static_cast<std::size_t>(e.kind)];
        r_.duration_ns = std::max(r_.duration_ns, e.time_ns);
        r_.time_ns += ns;
        current_ = &thread(e.thread);
        current_->time_ns += ns;
    }
    void on_allocation(const event& e, live_block& b, std::uint64_t ns) { allocate(e, b, ns); }
    void on_failed(const event&, std::uint64_t) { ++r_.failed; }
    void on_free(const event& e, const live_block& b, std::uint64_t ns) { release(e, b, ns); }
    void on_unknown_free(const event&, std::uint64_t) { ++r_.unknown_frees; }
    // realloc releases the old block and allocates the new one (in place or not), as heaptrack
    // counts it: a block reallocated right after its allocation is a temporary.
    void on_realloc(const event& e, const live_block* old, live_block* fresh, std::uint64_t ns) {
        if (old != nullptr) release(e, *old, 0);
        if (old != nullptr && fresh != nullptr && e.ptr == e.old_ptr) ++r_.reallocs_in_place;
        if (fresh != nullptr) {
            allocate(e, *fresh, ns);
        } else if (e.size != 0) {
            ++r_.failed;
        }
        if (e.ptr == 0 && e.old_ptr == 0) ++r_.failed;
    }
    void after_event(const event& e) { note_timeline(e.time_ns - std::min(e.time_ns, origin_)); }

    report_data finish(const live_blocks& live) {
        for (std::size_t i = 0; i < sites_.size(); ++i) sites_[i].peak_bytes = peak_by_site_[i];
        double var_leaked = 0;
        live.for_each([&](const live_block& b) {
            const weight w = weigh(b.size, b.ptr, b.time_ns);
            r_.leaked_blocks += w.count;
            r_.leaked_bytes += w.bytes;
            var_leaked += w.var_bytes;
            site_stats& s = site(b.stack);
            s.live_bytes += w.bytes;
            s.live_blocks += w.count;
        });
        r_.leaked_bytes_variance = var_leaked;
        r_.allocations_variance = var_allocations_;
        r_.bytes_allocated_variance = var_bytes_;
        for (std::size_t i = 0; i < sites_.size(); ++i) {
            sites_[i].calls_variance = var_by_site_[i].first;
            sites_[i].bytes_variance = var_by_site_[i].second;
        }
        for (auto& s : sites_) {  // (sites without calls: blocks live when a window opened)
            if (s.calls != 0 || s.live_bytes != 0 || s.peak_bytes != 0) r_.sites.push_back(s);
        }
        for (auto& t : threads_) {
            if (t.allocations + t.deallocations != 0) r_.threads.push_back(t);
        }
        std::size_t used = std::min(
            r_.timeline.size(),
            static_cast<std::size_t>((r_.duration_ns - origin_) / r_.timeline_step_ns + 1));
        r_.timeline.resize(used);
        for (std::size_t i = 0; i < r_.timeline.size(); ++i)
            r_.timeline[i].time_ns = origin_ + i * r_.timeline_step_ns;
        return std::move(r_);
    }

  private:
    // What a recorded block stands for: itself, or in a sampled trace its inverse sampling
    // probability (sample_weight.hpp), the same at its allocation and at its free.
    struct weight {
        std::uint64_t count, bytes;
        double var_count, var_bytes;  // w (w - 1) x^2: this block's share of the variance
    };
    [[nodiscard]] weight weigh(std::uint64_t size, std::uint64_t ptr, std::uint64_t time) const {
        if (interval_ == 0) return {1, size, 0, 0};
        double w = sample_weight(size, interval_);
        double v = w * (w - 1), x = static_cast<double>(size);
        return {weighted_count(w, ptr, time), weighted_bytes(w, size), v, v * x * x};
    }

    site_stats& site(std::uint32_t id) {
        if (id >= sites_.size()) {
            std::size_t old = sites_.size();
            sites_.resize(std::max<std::size_t>(id + 1, sites_.size() * 2));
            live_by_site_.resize(sites_.size());
            var_by_site_.resize(sites_.size());
            peak_by_site_.resize(sites_.size());
            in_dirty_.resize(sites_.size());
            for (std::size_t i = old; i < sites_.size(); ++i)
                sites_[i].stack = static_cast<std::uint32_t>(i);
        }
        return sites_[id];
    }
    thread_stats& thread(std::uint32_t id) {
        if (id >= threads_.size()) {
            std::size_t old = threads_.size();
            threads_.resize(id + 1);
            last_alloc_.resize(id + 1, ~std::uint64_t{0});
            for (std::size_t i = old; i < threads_.size(); ++i)
                threads_[i].thread = static_cast<std::uint32_t>(i);
        }
        return threads_[id];
    }

    // Site live bytes change: remember the site so its value can be captured at a new peak.
    void touch(std::uint32_t id) {
        if (!in_dirty_[id]) {
            in_dirty_[id] = 1;
            dirty_.push_back(id);
        }
    }
    void new_peak(std::uint64_t time) {
        r_.peak_live_bytes = live_bytes_;
        r_.peak_live_variance = var_live_;
        r_.peak_time_ns = time;
        for (std::uint32_t id : dirty_) {
            peak_by_site_[id] = live_by_site_[id];
            in_dirty_[id] = 0;
        }
        dirty_.clear();
    }

    void allocate(const event& e, const live_block& b, std::uint64_t dur) {
        const weight w = weigh(b.size, b.ptr, b.time_ns);
        r_.allocations += w.count;
        r_.bytes_allocated += w.bytes;
        var_allocations_ += w.var_count;
        var_bytes_ += w.var_bytes;
        r_.sizes.add(e.size, w.count);
        thread_stats& t = *current_;
        t.allocations += w.count;
        t.bytes_allocated += w.bytes;
        site_stats& s = site(e.stack);
        s.calls += w.count;
        s.bytes += w.bytes;
        var_by_site_[e.stack].first += w.var_count;
        var_by_site_[e.stack].second += w.var_bytes;
        s.time_ns += dur;
        last_alloc_[e.thread] = b.seq;
        live_bytes_ += w.bytes;
        var_live_ += w.var_bytes;
        live_by_site_[e.stack] += w.bytes;
        touch(e.stack);
        if (live_bytes_ > r_.peak_live_bytes) new_peak(e.time_ns);
        ++interval_allocs_;
    }

    void release(const event& e, const live_block& b, std::uint64_t dur) {
        const weight w = weigh(b.size, b.ptr, b.time_ns);
        thread_stats& t = *current_;
        r_.deallocations += w.count;
        t.deallocations += w.count;
        t.bytes_freed += w.bytes;
        r_.lifetimes_ns.add(e.time_ns - std::min(e.time_ns, b.time_ns), w.count);
        r_.lifetimes_allocs.add(allocations_ - b.seq - 1, w.count);
        site_stats& s = site(b.stack);
        s.time_ns += dur;
        if (b.thread != e.thread) {
            r_.cross_thread_frees += w.count;
            r_.cross_thread_bytes += w.bytes;
            s.cross_thread_frees += w.count;
        } else if (interval_ == 0 && last_alloc_[e.thread] == b.seq) {
            ++r_.temporaries;  // (a sampled trace cannot tell: the allocations between are unseen)
            ++s.temporaries;
        }
        // heaptrack's "temporary": released with no allocation and no other release between
        // (any release ends the candidate), counted per thread here.
        last_alloc_[e.thread] = ~std::uint64_t{0};
        live_bytes_ -= w.bytes;
        var_live_ -= w.var_bytes;
        live_by_site_[b.stack] -= w.bytes;
        touch(b.stack);
    }

    void note_timeline(std::uint64_t time) {
        if (time >= bucket_begin_ && time < bucket_end_) {  // the common case: same interval
            auto& p = r_.timeline[last_bucket_];
            p.live_bytes = std::max(p.live_bytes, live_bytes_);
            p.allocations += interval_allocs_;
            interval_allocs_ = 0;
            return;
        }
        while (time / r_.timeline_step_ns >= r_.timeline.size()) {  // halve the resolution
            auto& tl = r_.timeline;
            for (std::size_t i = 0; i < tl.size() / 2; ++i) {
                tl[i].live_bytes = std::max(tl[2 * i].live_bytes, tl[2 * i + 1].live_bytes);
                tl[i].allocations = tl[2 * i].allocations + tl[2 * i + 1].allocations;
            }
            for (std::size_t i = tl.size() / 2; i < tl.size(); ++i) tl[i] = {};
            r_.timeline_step_ns *= 2;
            last_bucket_ /= 2;
        }
        std::size_t bucket = time / r_.timeline_step_ns;
        // Intervals without events keep the level the memory had.
        for (std::size_t i = last_bucket_ + 1; i < bucket; ++i) {
            r_.timeline[i].live_bytes = std::max(r_.timeline[i].live_bytes, live_before_);
        }
        if (bucket > last_bucket_) {
            r_.timeline[bucket].live_bytes = std::max(r_.timeline[bucket].live_bytes, live_before_);
            last_bucket_ = bucket;
        }
        if (bucket == last_bucket_) {
            bucket_begin_ = bucket * r_.timeline_step_ns;
            bucket_end_ = bucket_begin_ + r_.timeline_step_ns;
        }
        auto& p = r_.timeline[bucket];
        p.live_bytes = std::max(p.live_bytes, live_bytes_);
        p.allocations += interval_allocs_;
        interval_allocs_ = 0;
    }

  public:
    std::uint64_t allocations_ = 0;  // the decoder's count, for lifetimes in allocations

  private:
    std::uint64_t origin_;  // the timeline starts here (a window's start)
    report_data r_;
    thread_stats* current_ = nullptr;  // the thread of the event being decoded
    std::vector<site_stats> sites_;
    std::vector<std::uint64_t> live_by_site_, peak_by_site_;
    std::uint64_t interval_;  // sampling interval (0: every call recorded)
    std::vector<std::pair<double, double>> var_by_site_;  // variance of calls, bytes
    double var_allocations_ = 0, var_bytes_ = 0, var_live_ = 0;
    std::vector<std::uint8_t> in_dirty_;  // not vector<bool>: this is the hot path
    std::vector<std::uint32_t> dirty_;
    std::vector<thread_stats> threads_;
    std::vector<std::uint64_t> last_alloc_;
    std::uint64_t live_bytes_ = 0;
    std::uint64_t live_before_ = 0;
    std::size_t last_bucket_ = 0;
    std::uint64_t bucket_begin_ = 0, bucket_end_ = 0;  // [begin, end) of last_bucket_
    std::uint64_t interval_allocs_ = 0;

    friend class primer;
};

// Before a window: only the live bytes are followed (no counters), so that the window starts
// from the memory really live then.
class primer : public decode_handler {
  public:
    explicit primer(analyzer& a) : a_(a) {}
    void on_allocation(const event& e, live_block& b, std::uint64_t) { hold(e, b); }
    void on_free(const event&, const live_block& b, std::uint64_t) { drop(b); }
    void on_realloc(const event& e, const live_block* old, live_block* fresh, std::uint64_t) {
        if (old != nullptr) drop(*old);
        if (fresh != nullptr) hold(e, *fresh);
    }

  private:
    void hold(const event& e, const live_block& b) {
        a_.site(e.stack);
        a_.thread(e.thread);
        a_.last_alloc_[e.thread] = b.seq;
        const auto w = a_.weigh(b.size, b.ptr, b.time_ns);
        a_.live_bytes_ += w.bytes;
        a_.var_live_ += w.var_bytes;
        a_.live_by_site_[e.stack] += w.bytes;
    }
    void drop(const live_block& b) {
        const auto w = a_.weigh(b.size, b.ptr, b.time_ns);
        a_.live_bytes_ -= w.bytes;
        a_.var_live_ -= w.var_bytes;
        a_.live_by_site_[b.stack] -= w.bytes;
    }
    analyzer& a_;
};

}  // namespace

// A sampled trace's calls are the tracer's exact counts of every call, not its events.
report_data with_exact_counts(report_data r, const event_source& source) {
    const call_counts* exact = source.exact_counts();
    if (source.sample_interval() == 0 || exact == nullptr) return r;
    for (std::size_t k = 0; k < op_count; ++k) {
        if (static_cast<op>(k) == op::frame) continue;  // frames are all recorded
        r.calls[k] = exact->calls[k];
        r.exact_bytes[k] = exact->bytes[k];
    }
    r.exact_calls = true;
    return r;
}

// The decoder's allocation count before each event, for lifetimes counted in allocations.
template <class Handler>
void run(decoder& d, event_source& source, analyzer& a, Handler& h) {
    event e;
    while (source.next(e)) {
        a.allocations_ = d.allocations();
        d.step(e, source.last_duration_ns(), h);
    }
}

report_data analyze_events(event_source& source, const report_options& opts) {
    source.rewind();
    analyzer a(opts, source);
    decoder d;
    run(d, source, a, a);
    return with_exact_counts(a.finish(d.live()), source);
}

report_data analyze_window(trace_reader& reader, time_window window, bool live_at_start,
                           const report_options& opts) {
    analyzer a(opts, reader, window.from_ns);
    decoder d;
    if (live_at_start) {
        primer p(a);
        reader.set_window({0, window.from_ns});
        run(d, reader, a, p);
    }
    reader.set_window(window);
    if (live_at_start) a.open_window(d.live());
    run(d, reader, a, a);
    report_data r = a.finish(d.live());  // (a window's calls are its events: no exact counts)
    r.windowed = true;
    r.window = window;
    return r;
}

std::vector<site_stats> top_sites(const report_data& r, site_order by, std::size_t n) {
    auto key = [by](const site_stats& s) {
        switch (by) {
            case site_order::calls:
                return s.calls;
            case site_order::bytes:
                return s.bytes;
            case site_order::peak:
                return s.peak_bytes;
            case site_order::time:
                return s.time_ns;
            case site_order::leaked:
                return s.live_bytes;
        }
        return s.calls;
    };
    std::vector<site_stats> out;
    for (const auto& s : r.sites) {
        if (key(s) != 0) out.push_back(s);
    }
    std::sort(out.begin(), out.end(), [&](const site_stats& a, const site_stats& b) {
        return key(a) != key(b) ? key(a) > key(b) : a.stack < b.stack;
    });
    if (out.size() > n) out.resize(n);
    return out;
}

}  // namespace rtmem::analyze
