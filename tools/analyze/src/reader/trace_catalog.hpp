// What one pass over the chunk headers learns about a trace: metadata, stacks, modules, the
// end record, and where each thread's events chunks are (their payloads stay unread).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reader/trace_file.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze::reader {

/// One thread's events chunks, in time order.
struct thread_chunks {
    std::uint32_t thread = 0;
    std::vector<chunk_ref> chunks;
};

struct trace_catalog {
    std::string program, command;
    std::vector<module> modules;  ///< sorted by start address
    std::vector<std::uint64_t> ips;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> stacks;  ///< id -> (first ip, depth)
    std::vector<thread_chunks> threads;
    std::uint64_t events = 0;  ///< from the chunk headers
    bool complete = false;     ///< the end chunk is the last chunk
    trace_end end = trace_end::unknown;
    int end_signal = 0;
    std::uint64_t dropped = 0, recorded = 0;
    bool indexed = false;  ///< the end chunk's index gives every events chunk's first time
    bool has_counts = false;  ///< v3: the counts chunk was read
    call_counts counts;
};

/// Reads every chunk header of `file` (and the payloads of all but events chunks).
[[nodiscard]] trace_catalog scan(trace_file& file);

}  // namespace rtmem::analyze::reader
