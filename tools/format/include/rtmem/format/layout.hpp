// The on-disk layout of an rtmem trace (.rtt), shared by the preload library that writes it
// and the reader. Documented in docs/trace-format.md; bump `trace_version` on any change.
// Packed events chunks (what the tracer writes) are encoded and decoded in packed.hpp.
#pragma once
#include <cstddef>
#include <cstdint>

namespace rtmem::trace_format {

inline constexpr char magic[8] = {'R', 'T', 'M', 'T', 'R', 'A', 'C', 'E'};
inline constexpr std::uint32_t trace_version = 3;
inline constexpr std::uint32_t oldest_trace_version = 1;   ///< still read
inline constexpr std::uint32_t chunk_magic = 0x4b435452;   // "RTCK" little endian
inline constexpr std::uint32_t max_chunk_raw = 16u << 20;  // reader's sanity bound

/// First 64 bytes of the file.
struct file_header {
    char magic[8];
    std::uint32_t version;
    std::uint32_t header_size;     ///< sizeof(file_header); chunks start here
    std::uint64_t start_realtime;  ///< CLOCK_REALTIME ns when recording started
    std::uint64_t start_mono;      ///< CLOCK_MONOTONIC ns; event times are relative to it
    std::uint32_t pid;
    std::uint32_t stack_depth;
    std::uint32_t timing_period;  ///< v2: one call in this many is timed (0 in v1: every call)
    std::uint32_t reserved0;
    /// v3: mean sampling interval in bytes (`record --sample`); 0 = every call recorded.
    std::uint64_t sample_interval;
    std::uint64_t reserved;
};
static_assert(sizeof(file_header) == 64);

enum class chunk_type : std::uint8_t {
    meta = 1,     ///< text "key=value\n" lines (program, pid, ppid, argv)
    events = 2,   ///< raw_event[count] of one thread, in time order
    stacks = 3,   ///< stack records: u32 id, u32 depth, u64 ip[depth]
    modules = 4,  ///< module records: u64 start, u64 end, u64 bias, u32 len, char path[len]
    end = 5,      ///< end_record then index_entry[count]
    counts = 6,   ///< v3: call_counts, written just before the end chunk
};
enum class codec : std::uint8_t { raw = 0, zstd = 1 };

/// Precedes every chunk payload. `check` = header_check() of the first 24 bytes.
struct chunk_header {
    std::uint32_t magic;
    chunk_type type;
    codec coding;
    std::uint16_t flags;
    std::uint32_t thread;       ///< events: small thread number
    std::uint32_t count;        ///< records in the payload
    std::uint32_t raw_size;     ///< payload size after decompression
    std::uint32_t stored_size;  ///< payload bytes following this header
    std::uint32_t check;
    std::uint32_t reserved;
};
static_assert(sizeof(chunk_header) == 32);

/// FNV-1a over the header's first 24 bytes (up to `check`): detects torn or corrupted chunk
/// headers.
inline std::uint32_t header_check(const chunk_header& h) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(&h);
    std::uint32_t x = 2166136261u;
    for (int i = 0; i < 24; ++i) x = (x ^ p[i]) * 16777619u;
    return x;
}

/// One call of the traced program, as stored.
struct raw_event {
    std::uint64_t time;  ///< CLOCK_MONOTONIC ns (allocations: after the call; frees: before)
    std::uint64_t ptr;
    std::uint64_t old_ptr;
    std::uint64_t size;
    std::uint32_t stack;      ///< 0 = not captured
    std::uint32_t duration;   ///< ns spent in the underlying allocator (saturated), if timed
    std::uint8_t kind;        ///< op (op.hpp)
    std::uint8_t align_log2;  ///< 0 = no alignment requested, else log2(align) + 1
    std::uint8_t flags;       ///< event_flag bits
    std::uint8_t pad[5];
};
static_assert(sizeof(raw_event) == 48);
enum event_flag : std::uint8_t {
    failed = 1,  ///< the allocation returned null
    timed = 2,   ///< `duration` was measured (a sample of calls is; v1: every call)
};

/// chunk_header.flags for events chunks: the payload is packed (packed.hpp), not raw_event[].
inline constexpr std::uint16_t chunk_flag_packed = 1;

/// exec: the image was replaced; dump: a snapshot written by rtmem_trace_dump() while the
/// program went on.
enum class end_reason : std::uint32_t { exit = 1, quick_exit = 2, signal = 3, exec = 4, dump = 5 };
struct end_record {
    std::uint32_t reason;  ///< end_reason
    std::uint32_t signal;
    std::uint64_t events;   ///< events recorded by the process
    std::uint64_t time;     ///< CLOCK_MONOTONIC ns
    std::uint64_t dropped;  ///< events lost (e.g. recorded after the end)
};
/// Exact counts of every call made while recording was on, recorded or not (a sampled trace
/// records only some): per op (op.hpp, index = kind), calls and requested bytes (allocations:
/// the size asked for; realloc: the new size; frees: the size given to sized delete, else 0).
inline constexpr std::size_t counted_ops = 16;
struct call_counts {
    std::uint64_t calls[counted_ops];
    std::uint64_t bytes[counted_ops];
};
static_assert(sizeof(call_counts) == 256);

/// The index: one entry per events chunk, for seeking without a scan.
struct index_entry {
    std::uint64_t offset;
    std::uint64_t first_time;
    std::uint32_t thread;
    std::uint32_t count;
};

}  // namespace rtmem::trace_format
