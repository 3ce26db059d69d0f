// Per-thread streams of decoded chunks, windowed, merged into time order.
#include "reader/event_merge.hpp"

#include <algorithm>

#include "rtmem/format/packed.hpp"

namespace rtmem::analyze::reader {

event_merge::event_merge(trace_file& file, const std::vector<thread_chunks>& threads)
    : file_(file), streams_(threads.size()) {
    for (std::size_t i = 0; i < threads.size(); ++i) streams_[i].source = &threads[i];
}

// Whether chunk i of a thread can hold an event in the window. A thread's events are in time
// order across its chunks, so chunk i ends no later than chunk i + 1 begins.
bool event_merge::may_overlap_window(const stream& s, std::size_t i) const {
    const auto& chunks = s.source->chunks;
    const chunk_ref& c = chunks[i];
    if (c.first_time != unknown_time && c.first_time >= window_.to_ns) return false;
    if (i + 1 < chunks.size()) {
        std::uint64_t next_first = chunks[i + 1].first_time;
        if (next_first != unknown_time && next_first < window_.from_ns) return false;
    }
    return true;
}

// Loads the stream's next chunk with an event in the window, trimmed to the window; false
// when it has none left. Chunks the index places outside the window are not read.
bool event_merge::advance_chunk(stream& s) {
    const auto& chunks = s.source->chunks;
    for (;;) {
        s.events.clear();
        s.pos = 0;
        while (s.next_chunk < chunks.size() && !s.past_window &&
               !may_overlap_window(s, s.next_chunk)) {
            if (chunks[s.next_chunk].first_time >= window_.to_ns) s.past_window = true;
            ++s.next_chunk;
        }
        if (s.next_chunk == chunks.size() || s.past_window) {
            s.events.shrink_to_fit();
            return false;
        }
        const chunk_ref& c = chunks[s.next_chunk++];
        decode_chunk(s, c);
        if (c.first_time != unknown_time && s.events[0].time != c.first_time) {
            file_.fail(c.offset, "events chunk does not start at the time its index entry says");
        }
        trim_to_window(s);
        if (s.pos < s.events.size()) return true;
    }
}

void event_merge::decode_chunk(stream& s, const chunk_ref& c) {
    ++chunks_decoded_;
    s.events.resize(c.header.count);
    s.chunk_offset = c.offset;
    if ((c.header.flags & fmt::chunk_flag_packed) == 0) {
        file_.load_payload(c, s.events.data());
        return;
    }
    packed_.resize(c.header.raw_size);
    file_.load_payload(c, packed_.data());
    const char* error = fmt::packed::unpack(packed_.data(), packed_.size(), file_.header().version,
                                            s.events.data(), c.header.count);
    if (error != nullptr) file_.fail(c.offset, error);
}

// Skips events before the window and drops those at or after its end (the thread's later
// chunks are then all past it too).
void event_merge::trim_to_window(stream& s) {
    if (window_.from_ns == 0 && window_.to_ns == unknown_time) return;
    auto before = [](const fmt::raw_event& e, std::uint64_t t) { return e.time < t; };
    auto first = std::lower_bound(s.events.begin(), s.events.end(), window_.from_ns, before);
    auto last = std::lower_bound(first, s.events.end(), window_.to_ns, before);
    if (last != s.events.end()) {
        s.past_window = true;
        s.events.erase(last, s.events.end());
    }
    s.pos = static_cast<std::size_t>(first - s.events.begin());
}

bool event_merge::earlier(std::uint32_t a, std::uint32_t b) const {
    const auto& x = streams_[a].events[streams_[a].pos];
    const auto& y = streams_[b].events[streams_[b].pos];
    return x.time != y.time ? x.time < y.time : a < b;
}

void event_merge::sift_down(std::size_t i) {
    std::size_t n = heap_.size();
    for (;;) {
        std::size_t l = 2 * i + 1, best = i;
        if (l < n && earlier(heap_[l], heap_[best])) best = l;
        if (l + 1 < n && earlier(heap_[l + 1], heap_[best])) best = l + 1;
        if (best == i) return;
        std::swap(heap_[i], heap_[best]);
        i = best;
    }
}

void event_merge::restart(time_window w) {
    window_ = w;
    heap_.clear();
    for (std::uint32_t i = 0; i < streams_.size(); ++i) {
        streams_[i].next_chunk = 0;
        streams_[i].past_window = false;
        if (advance_chunk(streams_[i])) heap_.push_back(i);
    }
    for (std::size_t i = heap_.size(); i-- > 0;) sift_down(i);
}

bool event_merge::next(event& e, std::uint64_t& duration_ns) {
    if (heap_.empty()) return false;
    stream& s = streams_[heap_[0]];
    const fmt::raw_event& r = s.events[s.pos];
    if (r.kind >= op_count || r.align_log2 > 64) {
        file_.fail(s.chunk_offset, "corrupted event (kind " + std::to_string(r.kind) + ")");
    }
    e.time_ns = r.time;
    e.ptr = r.ptr;
    e.old_ptr = r.old_ptr;
    e.size = r.size;
    e.thread = s.source->thread;
    e.stack = r.stack;
    e.align = r.align_log2 == 0 || r.align_log2 > 32 ? 0 : 1u << (r.align_log2 - 1);
    e.kind = static_cast<op>(r.kind);
    if ((r.flags & fmt::event_flag::failed) != 0) {
        e.ptr = 0;
        e.old_ptr = 0;  // a failed realloc frees nothing
    }
    bool timed = file_.header().version == 1 || (r.flags & fmt::event_flag::timed) != 0;
    duration_ns = timed ? std::uint64_t{r.duration} * file_.timing_period() : 0;
    if (++s.pos == s.events.size() && !advance_chunk(s)) {
        heap_[0] = heap_.back();
        heap_.pop_back();
    }
    if (!heap_.empty()) sift_down(0);
    return true;
}

}  // namespace rtmem::analyze::reader
