// The one decoding layer of the analyses (report, classify/advise, replay, diff): reads an
// event_source and says what each event means, with the live blocks it implies.
//
// A handler derives from decode_handler and hides the calls it cares about:
//   on_event(e, ns)          every event, before the calls below (ns: allocator time it stands for)
//   on_thread(id)            a thread's first event
//   on_frame(e)              a frame marker
//   on_allocation(e, b, ns)  a block allocated (malloc family, new); `b` is in the live set
//   on_failed(e, ns)         an allocation returned null
//   on_free(e, b, ns)        a live block freed (free, delete); `b` has left the live set
//   on_unknown_free(e, ptr)  a free (or realloc) of an address not live in the trace
//   on_realloc(e, old, fresh, ns)  realloc: `old` the block given up (null: none or unknown),
//                            `fresh` the new block (null: realloc(p, 0) or a failed call)
//   after_event(e)           every event, after the calls above
// Frees of null call nothing but on_event/after_event.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "rtmem/analyze/event.hpp"
#include "rtmem/analyze/live_blocks.hpp"

namespace rtmem::analyze {

struct decode_handler {
    void on_event(const event&, std::uint64_t) {}
    void on_thread(std::uint32_t) {}
    void on_frame(const event&) {}
    void on_allocation(const event&, live_block&, std::uint64_t) {}
    void on_failed(const event&, std::uint64_t) {}
    void on_free(const event&, const live_block&, std::uint64_t) {}
    void on_unknown_free(const event&, std::uint64_t) {}
    void on_realloc(const event&, const live_block*, live_block*, std::uint64_t) {}
    void after_event(const event&) {}
};

/// Holds the live blocks across passes (a windowed report primes them with the events before
/// the window, then reads the window with another handler).
class decoder {
  public:

    /// Reads `source` from where it stands to its end.
    template <class Handler>
    void run(event_source& source, Handler& h) {
        event e;
        while (source.next(e)) step(e, source.last_duration_ns(), h);
    }

    /// Interprets one event.
    template <class Handler>
    void step(const event& e, std::uint64_t ns, Handler& h) {
        h.on_event(e, ns);
        if constexpr (wants_threads<Handler>) {  // the check costs on every event: only if asked
            if (e.thread >= threads_seen_.size() || threads_seen_[e.thread] == 0) {
                if (e.thread >= threads_seen_.size()) threads_seen_.resize(e.thread + 1, 0);
                threads_seen_[e.thread] = 1;
                h.on_thread(e.thread);
            }
        }
        if (is_allocation(e.kind)) {
            if (e.ptr == 0) {
                h.on_failed(e, ns);
            } else {
                h.on_allocation(e, hold(e), ns);
            }
        } else if (is_deallocation(e.kind)) {
            live_block b;
            if (e.ptr == 0) {
            } else if (live_.take(e.ptr, b)) {
                h.on_free(e, b, ns);
            } else {
                h.on_unknown_free(e, e.ptr);
            }
        } else if (e.kind == op::realloc) {
            live_block old;
            bool had_old = false;
            if (e.old_ptr != 0) {
                had_old = live_.take(e.old_ptr, old);
                if (!had_old) h.on_unknown_free(e, e.old_ptr);
            }
            h.on_realloc(e, had_old ? &old : nullptr, e.ptr != 0 ? &hold(e) : nullptr, ns);
        } else if (e.kind == op::frame) {
            ++frames_;
            h.on_frame(e);
        }
        h.after_event(e);
    }

    [[nodiscard]] const live_blocks& live() const noexcept { return live_; }
    [[nodiscard]] std::uint64_t allocations() const noexcept { return seq_; }
    [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }

  private:
    /// The handler hides decode_handler::on_thread.
    template <class Handler>
    static constexpr bool wants_threads =
        !std::is_same_v<decltype(&Handler::on_thread), decltype(&decode_handler::on_thread)>;

    live_block& hold(const event& e) {
        live_block b;
        b.ptr = e.ptr;
        b.size = e.size;
        b.time_ns = e.time_ns;
        b.seq = seq_++;
        b.frame = static_cast<std::uint32_t>(frames_);
        b.stack = e.stack;
        b.thread = e.thread;
        return live_.insert(b);
    }

    live_blocks live_;
    std::vector<std::uint8_t> threads_seen_;
    std::uint64_t seq_ = 0, frames_ = 0;
};

}  // namespace rtmem::analyze
