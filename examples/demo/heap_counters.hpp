// Counts every heap call the demo makes, per thread, so the game loop can report heap calls and
// time spent allocating per frame. heap_counters.cpp replaces the global operator new/delete
// (all forms) to count them; the workload's raw-byte calls go through counted_malloc/free.
// Binaries linked with heap_counters_off.cpp (the one recorded by `rtmem record`) count nothing,
// so the tracer sees the program's own operator new calls.
#pragma once
#include <cstddef>
#include <cstdint>

namespace demo::heap {

/// Sums over all threads since the start of the program.
struct totals {
    std::uint64_t heap_calls = 0;    // malloc/free/new/delete (each call counts once)
    std::uint64_t heap_cycles = 0;   // time inside them (profiling mode only)
    std::uint64_t rtmem_calls = 0;   // calls into rtmem allocators (reported by the rtmem variant)
    std::uint64_t rtmem_cycles = 0;  // time inside them (profiling mode only)
    std::int64_t live_bytes = 0;     // heap bytes live now (profiling mode only)
    std::int64_t peak_bytes = 0;     // high-water mark of live_bytes (profiling mode only)
};

/// False in binaries built without the counting operator new (then every count stays 0).
bool available() noexcept;
/// Profiling mode times every call (TSC) and tracks live heap bytes; it costs ~20 ns per call,
/// so frame times are taken from runs without it.
void set_profiling(bool on) noexcept;
bool profiling() noexcept;
totals read() noexcept;

void* counted_malloc(std::size_t n) noexcept;
void counted_free(void* p) noexcept;

/// Lets the rtmem variant charge a call into one of its allocators (and its cycles).
void add_rtmem_call(std::uint64_t cycles) noexcept;

}  // namespace demo::heap
