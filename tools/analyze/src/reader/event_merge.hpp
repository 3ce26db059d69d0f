// The events of a trace in time order: one decoded chunk per thread at a time, merged with a
// min-heap, restricted to a time window (chunks the index places outside it are not read).
#pragma once
#include <cstdint>
#include <vector>

#include "reader/trace_catalog.hpp"
#include "rtmem/analyze/event.hpp"

namespace rtmem::analyze::reader {

class event_merge {
  public:
    /// `threads` (from the catalog) must outlive the merge.
    event_merge(trace_file& file, const std::vector<thread_chunks>& threads);

    /// Back to the first event of `w`.
    void restart(time_window w);
    /// The next event; false at the end. `duration_ns`: the allocator time it stands for.
    bool next(event& e, std::uint64_t& duration_ns);
    [[nodiscard]] std::uint64_t chunks_decoded() const noexcept { return chunks_decoded_; }

  private:
    struct stream {
        const thread_chunks* source = nullptr;
        std::size_t next_chunk = 0;
        std::vector<fmt::raw_event> events;
        std::size_t pos = 0;
        std::uint64_t chunk_offset = 0;
        bool past_window = false;  // an event at or after the window's end was seen
    };

    bool may_overlap_window(const stream& s, std::size_t i) const;
    bool advance_chunk(stream& s);
    void decode_chunk(stream& s, const chunk_ref& c);
    void trim_to_window(stream& s);
    bool earlier(std::uint32_t a, std::uint32_t b) const;
    void sift_down(std::size_t i);

    trace_file& file_;
    std::vector<stream> streams_;
    std::vector<std::uint32_t> heap_;  // stream indices, min-heap on the next event's time
    std::vector<unsigned char> packed_;
    time_window window_;
    std::uint64_t chunks_decoded_ = 0;
};

}  // namespace rtmem::analyze::reader
