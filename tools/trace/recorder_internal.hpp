// State and helpers shared by the parts of librtmem-trace.so: global settings, raw file
// output, the stack table and the per-thread event buffers. Nothing here allocates through
// malloc: memory comes from mmap, output goes out with pwrite.
#pragma once
#include <pthread.h>
#include <sched.h>
#include <zstd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "recorder.hpp"
#include "rtmem/format/contract.hpp"
#include "rtmem/format/layout.hpp"
#include "rtmem/format/packed.hpp"

namespace rtmem::trace::internal {

namespace fmt = rtmem::trace_format;

constexpr int max_depth = fmt::contract::max_depth;
constexpr std::uint32_t block_events = 2048;  ///< events per buffer block (one chunk when full)
constexpr std::size_t max_index = 1u << 21;

void* map_memory(std::size_t n) noexcept;
bool write_all_at(int fd, const void* data, std::size_t n, std::uint64_t offset) noexcept;
void write_stderr(const char* s) noexcept;

class spin_lock {
  public:
    void lock() noexcept {
        while (flag_.exchange(true, std::memory_order_acquire)) sched_yield();
    }
    bool try_lock() noexcept { return !flag_.exchange(true, std::memory_order_acquire); }
    bool try_lock_for(int spins) noexcept {
        for (int i = 0; i < spins; ++i) {
            if (try_lock()) return true;
            sched_yield();
        }
        return false;
    }
    void unlock() noexcept { flag_.store(false, std::memory_order_release); }
    void reset() noexcept { flag_.store(false, std::memory_order_relaxed); }

  private:
    std::atomic<bool> flag_{false};
};

// ---- settings and process-wide state (recorder.cpp)
// ----------------------------------------------

extern int g_fd;
extern std::atomic<std::uint64_t> g_file_offset;
extern std::uint64_t g_start_mono;
extern int g_depth;
extern int g_zstd_level;
extern bool g_use_writer;  ///< a writer thread packs, compresses and writes full blocks
extern char g_exe[4096];
extern std::uintptr_t g_self_begin, g_self_end;  ///< this library's mapping (skipped frames)
extern std::atomic<std::uint64_t> g_dropped;
extern fmt::index_entry* g_index;
extern std::atomic<std::uint64_t> g_index_count;

/// Trace time (ns since start_mono) of a value returned by ticks().
std::uint64_t to_trace_ns(std::uint64_t t) noexcept;
/// A duration in ticks as ns, saturated to 32 bits.
std::uint32_t to_duration_ns(std::uint64_t t) noexcept;

// ---- chunk output (chunk_writer.cpp)
// -------------------------------------------------------------

/// Writes one chunk at a freshly reserved offset. Compresses with `cctx` into `scratch` when
/// given and smaller; otherwise stores raw (the signal path passes no context). Returns the
/// chunk's offset.
std::uint64_t write_chunk(fmt::chunk_type type, std::uint32_t thread, std::uint32_t count,
                          const void* payload, std::size_t raw_size, ZSTD_CCtx* cctx, void* scratch,
                          std::size_t scratch_cap, std::uint16_t flags = 0) noexcept;
ZSTD_CCtx* make_cctx() noexcept;

/// What a thread needs to turn events into a chunk: a pack buffer and, to compress, a zstd
/// context and its output buffer. Created lazily from mmap; one per writer.
struct flush_context {
    ZSTD_CCtx* cctx = nullptr;
    unsigned char* packed = nullptr;
    char* scratch = nullptr;
    std::size_t scratch_cap = 0;
};
/// False when memory ran out; `compress` false leaves cctx and scratch alone (signal path).
bool prepare(flush_context& c, bool compress) noexcept;
/// Packs, converts times and writes `n` events of `thread` as one events chunk, then indexes it.
void write_events(flush_context& c, bool compress, std::uint32_t thread, fmt::raw_event* events,
                  std::uint32_t n) noexcept;

// ---- stack table and module map (stack_table.cpp)
// -------------------------------------------------

struct cache_slot {
    std::uint64_t hash;
    std::uint32_t id;
};
constexpr std::size_t stack_cache_size = 4096;  ///< per thread, direct mapped
constexpr int fast_depth_max = 32;
constexpr std::size_t fast_entries = 512;

/// A stack seen before, recognised without unwinding: the return address into the program
/// sits in the same stack slot (`slot[0]`) and every deeper return-address slot of the cached
/// unwind still holds the same return address. A different call chain changes at least one
/// of those slots (each return address fixes the next frame's function and call site), so a
/// match costs `depth` loads instead of a DWARF unwind (~15 ns a frame).
struct fast_stack {
    std::uint32_t id;
    std::uint32_t depth;
    std::uint32_t misses;  ///< refills back off exponentially (a refill unwinds slowly)
    std::uint32_t pad;
    std::uint64_t slot[fast_depth_max];
    std::uint64_t ip[fast_depth_max];
};

/// Per-thread memo of stacks. The fast path reads only this thread's own stack, between
/// `stack_lo` and `stack_hi` (other stacks, e.g. fibers or sigaltstack, take the slow path).
struct stack_cache {
    std::uintptr_t stack_lo, stack_hi;
    cache_slot by_hash[stack_cache_size];
    fast_stack fast[fast_entries];
};

/// Clears `c` and finds the calling thread's stack bounds.
void reset_stack_cache(stack_cache& c) noexcept;
/// The calling thread's stack (frames of this library removed) as a stack id; 0 when depth is 0.
std::uint32_t capture_stack(stack_cache& c) noexcept;
extern bool g_fast_stacks;  ///< RTMEM_TRACE_FAST_STACKS (default 1)
/// Writes the pending stack records. `in_signal`: raw, try-lock only.
void flush_stacks(bool in_signal) noexcept;
/// Records modules loaded since the last scan (try-lock: someone else is already scanning).
void refresh_modules(bool patient) noexcept;
/// own_libstdcxx.cpp: whether libstdc++ was loaded for the tracer alone (then its start-up
/// calls are not recorded: tracers_own_call), until end_own_libstdcxx_start(); at exit, the
/// pool of a program's own libstdc++ is freed (recorded).
void find_own_libstdcxx() noexcept;
void end_own_libstdcxx_start() noexcept;
void free_libstdcxx_pool() noexcept;
void stacks_before_fork() noexcept;
void stacks_after_fork_parent() noexcept;
/// The child's trace needs every stack and module again.
void stacks_after_fork_child(bool tracing) noexcept;
bool stacks_init() noexcept;

// ---- per-thread event buffers and the writer thread (event_buffers.cpp) -------------------------

/// Writes every buffered event (writer thread included) and stops the writer; called once by
/// whoever ends the trace, after g_stopped is set. `in_signal`: bounded waits, no compression.
void drain_all_buffers(bool in_signal) noexcept;
/// Total events ever recorded (end record).
std::uint64_t recorded_events() noexcept;
/// Writes what every buffer holds so far, sealed or not, and the pending stacks, while
/// recording goes on (rtmem_trace_dump).
void flush_all_buffers() noexcept;
/// The exact call counts of every thread so far (counts chunk).
fmt::call_counts counted_calls() noexcept;
/// Bytes of the counts and end chunks with `index_count` index entries.
inline std::uint64_t end_chunks_size(std::uint64_t index_count) noexcept {
    return 2 * sizeof(fmt::chunk_header) + sizeof(fmt::call_counts) + sizeof(fmt::end_record) +
           index_count * sizeof(fmt::index_entry);
}
/// The counts chunk then the end chunk (record, and `index_count` entries of g_index) at the
/// end of the file `fd`, reserving from `offset` (advanced).
void write_end_chunks(int fd, std::uint64_t& offset, fmt::end_reason reason, int sig,
                      std::uint64_t events, std::uint64_t dropped, std::uint64_t index_count) noexcept;
void buffers_after_fork_child(bool tracing) noexcept;
/// Registers the calling thread's gate (its buffer acquired), so that pauses reach it; false
/// when no buffer could be mapped.
bool register_gate() noexcept;
/// Sets g_paused and the paused byte of every registered gate (rtmem_trace_start/stop).
void set_paused(bool paused) noexcept;
bool buffers_init() noexcept;
/// Starts the writer thread in this process if it is enabled and not running yet.
void start_writer() noexcept;

}  // namespace rtmem::trace::internal
