// Per-thread event buffers and the writer thread. The allocating thread only stores a 48-byte
// event into its current block: no lock, no atomic read-modify-write, no packing, no
// compression. A full block is sealed and handed to a writer thread, which packs, compresses
// and writes it. When the writer is behind (or disabled, or not running in this process) the
// owner writes its own sealed blocks, so nothing is ever lost to a slow writer.
//
// Ending the trace while other threads still record: the owner sets `busy` around each store
// and then reads g_stopped; the finisher sets g_stopped, runs membarrier() (a full fence on
// every running thread, so the hot path needs only a compiler barrier), then waits for `busy`
// to clear. Either the owner sees g_stopped and drops its event (counted), or the finisher
// sees `busy` and waits for the event to be published. Without membarrier the owner uses a
// real fence.
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "recorder_internal.hpp"

namespace rtmem::trace {

constinit thread_local std::uint32_t tl_timing_countdown
    __attribute__((tls_model("initial-exec"))) = 1;
constinit thread_local std::uint32_t tl_timing_random __attribute__((tls_model("initial-exec"))) =
    0;
constinit thread_local thread_fast_state tl_fast __attribute__((tls_model("initial-exec"))) = {
    .gate = {.reason = {0, 1, 0, 0}},  // closed
    .redraws = 0,
    .sample_left = {},  // no countdown drawn
    .calls = {},
    .bytes = {},
    .countdown_base = {},
    .counters = nullptr};

}  // namespace rtmem::trace

namespace rtmem::trace::internal {

namespace {

constexpr std::uint32_t blocks_per_thread = 16;  // ~1.5 MiB virtual, touched as filled
constexpr long writer_idle_ms = 100;  // also how stale a partial block may get (SIGKILL loses it)

struct event_block {
    std::atomic<std::uint32_t> count;    // owner publishes each event with a release store
    std::atomic<bool> sealed;            // owner: no more events go in
    std::atomic<bool> free;              // all written; the owner may take it again
    std::atomic<std::uint32_t> written;  // events already in the file (claim holder)
    std::uint32_t thread;                // thread number of the owner that filled it
    fmt::raw_event events[block_events];
};

struct thread_buffer {
    thread_buffer* next;  // registry, never unlinked
    std::atomic<bool> in_use;
    std::atomic<bool> claim;  // held by whoever writes this buffer's blocks
    std::atomic<int> busy;    // owner is storing an event
    std::uint32_t thread;
    std::uint32_t cur;                      // block being filled (owner)
    std::atomic<std::uint32_t> next_write;  // oldest block not known free (claim holder)
    std::atomic<std::uint64_t> recorded;    // events stored (owner), for the end record
    call_counters counts;                   // the counts of its exited owners (fold_counts)
    spin_lock gate_lock;                    // guards `fast` against the owner's exit
    thread_fast_state* fast;                // the owner's, while registered (pauses, counts)
    stack_cache stacks;
    event_block blocks[blocks_per_thread];
};

std::atomic<thread_buffer*> g_buffers{nullptr};
thread_local thread_buffer* tl_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local std::uint32_t tl_thread __attribute__((tls_model("initial-exec"))) = 0;
thread_local bool tl_has_thread __attribute__((tls_model("initial-exec"))) = false;
std::atomic<std::uint32_t> g_next_thread{1};
pthread_key_t g_thread_key;

bool g_asymmetric = false;  // membarrier registered: the hot path needs no hardware fence
// Contexts for owners (and the finisher) writing their own blocks: a few, so two threads
// falling back at once do not queue behind each other's compression.
constexpr std::size_t fallback_contexts = 4;
struct fallback_context {
    spin_lock lock;
    flush_context context;
};
fallback_context g_fallback[fallback_contexts];
flush_context g_signal_context;  // the one finisher in a signal handler: raw chunks

std::atomic<pid_t> g_writer_pid{0};  // process the writer thread runs in (0: none)
std::atomic<bool> g_writer_stop{false};
std::atomic<bool> g_writer_done{false};  // the writer has left its loop
std::atomic<std::uint32_t> g_wake{0};    // futex word
std::atomic<bool> g_writer_sleeping{false};

long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value,
           const timespec* timeout) noexcept {
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr,
                   0);
}

bool membarrier_all() noexcept {
    return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}
bool register_membarrier() noexcept {
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

bool try_claim(thread_buffer* b) noexcept {
    return !b->claim.load(std::memory_order_relaxed) &&
           !b->claim.exchange(true, std::memory_order_acquire);
}
void release_claim(thread_buffer* b) noexcept {
    b->claim.store(false, std::memory_order_release);
}

// Writes b's sealed blocks in fill order (so a thread's chunks stay in time order in the file)
// and, with `partial`, what the current block holds so far. Caller holds b->claim. True when
// something was written.
bool write_blocks(thread_buffer* b, flush_context& c, bool compress, bool partial,
                  std::uint32_t max_blocks = blocks_per_thread) noexcept {
    bool wrote = false;
    for (std::uint32_t k = 0; k < max_blocks; ++k) {
        std::uint32_t i = b->next_write.load(std::memory_order_relaxed);
        event_block& blk = b->blocks[i];
        if (blk.free.load(std::memory_order_acquire)) break;
        bool sealed = blk.sealed.load(std::memory_order_acquire);
        if (!sealed && !partial) break;
        std::uint32_t n = blk.count.load(std::memory_order_acquire);
        std::uint32_t done = blk.written.load(std::memory_order_relaxed);
        if (n > done) {
            write_events(c, compress, blk.thread, blk.events + done, n - done);
            blk.written.store(n, std::memory_order_relaxed);
            wrote = true;
        }
        if (!sealed) break;
        blk.free.store(true, std::memory_order_release);
        b->next_write.store((i + 1) % blocks_per_thread, std::memory_order_relaxed);
    }
    return wrote;
}

bool has_sealed_work() noexcept {
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        if (b->claim.load(std::memory_order_relaxed)) continue;  // its owner is writing it
        const event_block& blk = b->blocks[b->next_write.load(std::memory_order_relaxed)];
        if (!blk.free.load(std::memory_order_acquire) &&
            blk.sealed.load(std::memory_order_acquire)) {
            return true;
        }
    }
    return false;
}

void* writer_main(void*) {
    guard_scope writer_guard;  // the writer's own allocations (zstd) pass through unrecorded
    static flush_context context;
    context = {};
    std::uint64_t last_partial = now_ns();
    while (!g_writer_stop.load(std::memory_order_acquire)) {
        bool partial = now_ns() - last_partial >= writer_idle_ms * 1000000;
        if (partial) last_partial = now_ns();
        bool worked = false;
        for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr;
             b = b->next) {
            if (g_writer_stop.load(std::memory_order_relaxed)) break;
            if (!try_claim(b)) continue;
            worked |= write_blocks(b, context, true, partial);
            release_claim(b);
        }
        if (partial && !g_writer_stop.load(std::memory_order_acquire)) flush_stacks(false);
        if (worked) continue;
        std::uint32_t seen = g_wake.load(std::memory_order_seq_cst);
        g_writer_sleeping.store(true, std::memory_order_seq_cst);
        if (!has_sealed_work() && !g_writer_stop.load(std::memory_order_acquire)) {
            timespec idle{0, writer_idle_ms * 1000000};
            futex(&g_wake, FUTEX_WAIT_PRIVATE, seen, &idle);
        }
        g_writer_sleeping.store(false, std::memory_order_relaxed);
    }
    g_writer_done.store(true, std::memory_order_release);
    return nullptr;
}

// Starts the writer in this process: from the library's constructor (libc is initialised by
// then; never from inside the first malloc, which may run before that), or in a followed fork
// child on its first sealed block. All signals stay blocked in it, so the program's signals
// still reach the program's threads.
// Called on every sealed block: no syscall unless the writer must start (a fork child finds
// g_writer_pid reset to 0).
void ensure_writer() noexcept {
    pid_t running = g_writer_pid.load(std::memory_order_acquire);
    if (!g_use_writer || running != 0) return;
    if (!g_writer_pid.compare_exchange_strong(running, getpid())) return;
    g_writer_done.store(false);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t{};
    int rc = pthread_create(&t, nullptr, writer_main, nullptr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        g_use_writer = false;  // owners write their own blocks
        g_writer_done.store(true);
        return;
    }
    pthread_detach(t);
}

void wake_writer() noexcept {
    ensure_writer();
    g_wake.fetch_add(1, std::memory_order_seq_cst);
    if (g_writer_sleeping.load(std::memory_order_seq_cst)) {
        futex(&g_wake, FUTEX_WAKE_PRIVATE, 1, nullptr);
    }
}

// The owner writes its own sealed blocks (writer behind, absent or stopping): only the oldest
// when it just needs room, so a lagging writer costs the program one block's worth of
// compression (~50 us) at a time, not a backlog.
void write_own_blocks(thread_buffer* b, bool all) noexcept {
    fallback_context* f = nullptr;
    for (auto& candidate : g_fallback) {
        if (candidate.lock.try_lock()) {
            f = &candidate;
            break;
        }
    }
    if (f == nullptr) {  // all busy: queue on this thread's own
        f = &g_fallback[b->thread % fallback_contexts];
        f->lock.lock();
    }
    write_blocks(b, f->context, true, all, all ? blocks_per_thread : 1);
    f->lock.unlock();
}

void take_block(thread_buffer* b, std::uint32_t i) noexcept {
    event_block& blk = b->blocks[i];
    blk.count.store(0, std::memory_order_relaxed);
    blk.written.store(0, std::memory_order_relaxed);
    blk.sealed.store(false, std::memory_order_relaxed);
    blk.thread = b->thread;
    blk.free.store(false, std::memory_order_release);
    b->cur = i;
}

// Seals the full current block and moves to the next. False when the trace has ended.
bool next_block(thread_buffer* b) noexcept {
    b->blocks[b->cur].sealed.store(true, std::memory_order_release);
    if (g_use_writer) wake_writer();
    std::uint32_t next = (b->cur + 1) % blocks_per_thread;
    while (!b->blocks[next].free.load(std::memory_order_acquire)) {
        if (try_claim(b)) {
            write_own_blocks(b, false);
            release_claim(b);
        } else {
            sched_yield();  // the writer or the finisher is writing this buffer right now
        }
        if (g_stopped.load(std::memory_order_relaxed)) return false;
    }
    take_block(b, next);
    return true;
}

std::uint32_t current_thread_number() noexcept {
    if (!tl_has_thread) {
        tl_has_thread = true;
        tl_thread = static_cast<pid_t>(syscall(SYS_gettid)) == getpid()
                        ? 0
                        : g_next_thread.fetch_add(1, std::memory_order_relaxed);
    }
    return tl_thread;
}

thread_buffer* acquire_buffer() noexcept {
    thread_buffer* b = nullptr;
    for (thread_buffer* it = g_buffers.load(std::memory_order_acquire); it != nullptr;
         it = it->next) {
        bool expected = false;
        if (!it->in_use.load(std::memory_order_relaxed) &&
            it->in_use.compare_exchange_strong(expected, true)) {
            b = it;
            break;
        }
    }
    bool fresh = b == nullptr;
    if (fresh) {
        b = static_cast<thread_buffer*>(map_memory(sizeof(thread_buffer)));
        if (b == nullptr) return nullptr;
        for (auto& blk : b->blocks) blk.free.store(true, std::memory_order_relaxed);
        b->in_use.store(true, std::memory_order_relaxed);
    }
    reset_stack_cache(b->stacks);  // a reused buffer serves a thread with another stack
    b->thread = current_thread_number();
    take_block(b, b->next_write.load(std::memory_order_relaxed));  // all blocks are free
    if (fresh) {
        thread_buffer* head = g_buffers.load(std::memory_order_relaxed);
        do {
            b->next = head;
        } while (!g_buffers.compare_exchange_weak(head, b, std::memory_order_release));
    }
    tl_buffer = b;
    b->gate_lock.lock();
    b->fast = &tl_fast;
    tl_fast.counters = &b->counts;
    b->gate_lock.unlock();
    pthread_setspecific(g_thread_key, b);
    return b;
}

// Adds the calling thread's counts to its buffer's and clears them (the caller holds the
// buffer's gate_lock).
void fold_counts(thread_buffer* b) noexcept {
    for (std::size_t i = 0; i < counted_kinds; ++i) {
        b->counts.calls[i] += tl_fast.calls[i];
        b->counts.bytes[i] += tl_fast.bytes[i];
        tl_fast.calls[i] = 0;
        tl_fast.bytes[i] = 0;
    }
    for (std::size_t i = 0; i < countdown_kinds; ++i) {
        b->counts.bytes[i] += tl_fast.countdown_base[i] - tl_fast.sample_left[i];
        tl_fast.countdown_base[i] = tl_fast.sample_left[i];
    }
}

// Thread exit: write this thread's events and hand the buffer to the next new thread. A later
// TLS destructor that allocates acquires a buffer again (pthread re-runs destructors for keys
// set again).
void release_buffer(void* p) {
    guard_scope g;
    auto* b = static_cast<thread_buffer*>(p);
    b->gate_lock.lock();  // its TLS goes away: no pause may write into it after this
    set_gate(gate_closed, gate_closed_for_good);
    fold_counts(b);  // nor may counted_calls read it
    b->fast = nullptr;
    tl_fast.counters = nullptr;
    b->gate_lock.unlock();
    b->blocks[b->cur].sealed.store(true, std::memory_order_release);
    while (!try_claim(b)) sched_yield();
    write_own_blocks(b, true);
    release_claim(b);
    tl_buffer = nullptr;
    b->in_use.store(false, std::memory_order_release);
}

// Bounded wait: a signal handler must not wait long, and nothing may hang the exit of the
// program (a thread that left record() by longjmp from a signal handler never clears `busy`).
template <class Ready>
bool wait_for(Ready ready, bool in_signal) noexcept {
    std::uint64_t limit = in_signal ? 50000000ull : 2000000000ull;  // 50 ms, 2 s
    std::uint64_t start = now_ns();
    while (!ready()) {
        if (now_ns() - start > limit) return false;
        sched_yield();
    }
    return true;
}

}  // namespace

void drain_all_buffers(bool in_signal) noexcept {
    // The writer goes first, so nothing it writes can land after the end chunk.
    g_writer_stop.store(true, std::memory_order_release);
    g_wake.fetch_add(1, std::memory_order_seq_cst);
    futex(&g_wake, FUTEX_WAKE_PRIVATE, 1, nullptr);
    if (g_writer_pid.load() == getpid()) {
        wait_for([] { return g_writer_done.load(std::memory_order_acquire); }, in_signal);
    }
    if (g_asymmetric && !membarrier_all()) {
        std::atomic_thread_fence(std::memory_order_seq_cst);  // best effort
    }
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        // A signal may have interrupted this very thread inside record(): it cannot finish.
        if (!(in_signal && b == tl_buffer)) {
            wait_for([b] { return b->busy.load(std::memory_order_acquire) == 0; }, in_signal);
        }
        if (!wait_for([b] { return try_claim(b); }, in_signal)) {
            continue;  // held by the interrupted thread itself: its blocks are lost
        }
        if (in_signal) {
            write_blocks(b, g_signal_context, false, true);
        } else {
            write_own_blocks(b, true);
        }
        release_claim(b);
    }
    flush_stacks(in_signal);
}

void flush_all_buffers() noexcept {
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        if (!wait_for([b] { return try_claim(b); }, false)) continue;
        write_own_blocks(b, true);
        release_claim(b);
    }
    flush_stacks(false);
}

call_counters* acquire_counters() noexcept {
    thread_buffer* b = tl_buffer != nullptr ? tl_buffer : acquire_buffer();
    return b != nullptr ? &b->counts : nullptr;
}

// A running thread's counts are read while it adds to them (plain adds by the owner; an aligned
// 64-bit load never tears on the targets): a sum as of some moment during the read. The lock
// keeps an exiting thread's TLS alive until its counts are folded into its buffer's; a thread
// stopped holding it (ending in a signal handler on that very thread) is left out after a while.
// A countdown and its base are read under the thread's sequence lock (`redraws`, odd while
// the slow path moves both), retried a bounded number of times for the same reason.
fmt::call_counts counted_calls() noexcept {
    static_assert(fmt::counted_ops == counted_kinds);
    fmt::call_counts out{};
    auto load = [](const std::uint64_t& v) { return __atomic_load_n(&v, __ATOMIC_RELAXED); };
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        if (!b->gate_lock.try_lock_for(1000)) continue;
        for (std::size_t i = 0; i < fmt::counted_ops; ++i) {
            out.calls[i] += load(b->counts.calls[i]);
            out.bytes[i] += load(b->counts.bytes[i]);
        }
        if (const thread_fast_state* f = b->fast) {
            for (std::size_t i = 0; i < counted_kinds; ++i) {
                out.calls[i] += load(f->calls[i]);
                out.bytes[i] += load(f->bytes[i]);
            }
            std::uint64_t counted_down[countdown_kinds] = {};
            for (int attempt = 0; attempt < 1000; ++attempt) {  // bounded: see the comment above
                std::uint32_t before = __atomic_load_n(&f->redraws, __ATOMIC_ACQUIRE);
                for (std::size_t i = 0; i < countdown_kinds; ++i) {
                    counted_down[i] = load(f->countdown_base[i]) - load(f->sample_left[i]);
                }
                std::atomic_thread_fence(std::memory_order_acquire);
                if ((before & 1) == 0 && __atomic_load_n(&f->redraws, __ATOMIC_RELAXED) == before) {
                    break;
                }
                sched_yield();
            }
            for (std::size_t i = 0; i < countdown_kinds; ++i) out.bytes[i] += counted_down[i];
        }
        b->gate_lock.unlock();
    }
    return out;
}

std::uint64_t recorded_events() noexcept {
    std::uint64_t total = 0;
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        total += b->recorded.load(std::memory_order_relaxed);
    }
    return total;
}

void buffers_after_fork_child(bool tracing) noexcept {
    // The parent writes every event buffered before the fork, this thread's included.
    g_writer_pid.store(0);
    g_writer_stop.store(!tracing);
    g_writer_sleeping.store(false);
    for (auto& f : g_fallback) {  // another thread may have been inside one: leak, not reuse
        f.lock.reset();
        f.context = {};
    }
    tl_has_thread = false;
    g_next_thread.store(1);
    for (thread_buffer* b = g_buffers.load(); b != nullptr; b = b->next) {
        b->claim.store(false);
        b->busy.store(0);
        b->recorded.store(0);
        b->counts = {};
        b->gate_lock.reset();
        if (b != tl_buffer) b->fast = nullptr;  // its thread does not exist here
        b->next_write.store(0);
        for (auto& blk : b->blocks) blk.free.store(true);
        if (b != tl_buffer) b->in_use.store(false);
    }
    for (std::size_t i = 0; i < counted_kinds; ++i) tl_fast.calls[i] = tl_fast.bytes[i] = 0;
    for (std::size_t i = 0; i < countdown_kinds; ++i) {
        tl_fast.countdown_base[i] = tl_fast.sample_left[i];
    }
    if (tl_buffer != nullptr) {
        tl_buffer->thread = current_thread_number();
        take_block(tl_buffer, 0);
    }
    if (tracing && g_asymmetric) g_asymmetric = register_membarrier();
}

bool register_gate() noexcept {
    thread_buffer* b = tl_buffer != nullptr ? tl_buffer : acquire_buffer();
    if (b == nullptr) return false;
    b->gate_lock.lock();
    b->fast = &tl_fast;
    set_gate(gate_paused, g_paused.load(std::memory_order_seq_cst) ? 1 : 0);
    if (gate_value(gate_closed) == gate_not_set_up) set_gate(gate_closed, 0);
    b->gate_lock.unlock();
    return true;
}

void set_paused(bool paused) noexcept {
    g_paused.store(paused, std::memory_order_seq_cst);
    for (thread_buffer* b = g_buffers.load(std::memory_order_acquire); b != nullptr; b = b->next) {
        b->gate_lock.lock();
        if (b->fast != nullptr) {  // the latest value, should two threads pause and resume at once
            __atomic_store_n(&b->fast->gate.reason[gate_paused],
                             g_paused.load(std::memory_order_seq_cst) ? 1 : 0, __ATOMIC_RELAXED);
        }
        b->gate_lock.unlock();
    }
}

void start_writer() noexcept {
    guard_scope g;  // pthread_create allocates
    ensure_writer();
}

bool buffers_init() noexcept {
    g_asymmetric = register_membarrier();
    return pthread_key_create(&g_thread_key, release_buffer) == 0;
}

}  // namespace rtmem::trace::internal

namespace rtmem::trace {

using namespace internal;

void record(op kind, std::uint64_t size, std::size_t align, const void* ptr, const void* old_ptr,
            std::uint64_t time, std::uint64_t duration, bool timed, bool failed) noexcept {
    thread_buffer* b = tl_buffer;
    if (b == nullptr) b = acquire_buffer();
    if (b == nullptr) {
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    // Deallocations carry no stack: the report charges them to the allocating site, and
    // skipping the unwind halves the cost of a malloc/free pair.
    bool with_stack = trace_format::is_allocation(kind) || kind == op::realloc;
    std::uint32_t stack = with_stack ? capture_stack(b->stacks) : 0;
    b->busy.store(1, std::memory_order_relaxed);
    if (g_asymmetric) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    if (g_stopped.load(std::memory_order_relaxed)) {
        b->busy.store(0, std::memory_order_release);
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    event_block& blk = b->blocks[b->cur];
    std::uint32_t n = blk.count.load(std::memory_order_relaxed);
    if (n >= block_events) [[unlikely]] {  // no block to move to: the trace is ending
        b->busy.store(0, std::memory_order_release);
        g_dropped.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    fmt::raw_event& e = blk.events[n];
    e.time = time;
    e.ptr = reinterpret_cast<std::uintptr_t>(ptr);
    e.old_ptr = reinterpret_cast<std::uintptr_t>(old_ptr);
    e.size = size;
    e.stack = stack;
    e.duration = duration > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(duration);
    e.kind = static_cast<std::uint8_t>(kind);
    e.align_log2 = align == 0 ? 0 : static_cast<std::uint8_t>(__builtin_ctzll(align) + 1);
    e.flags = static_cast<std::uint8_t>((failed ? fmt::event_flag::failed : 0) |
                                        (timed ? fmt::event_flag::timed : 0));
    blk.count.store(n + 1, std::memory_order_release);
    b->recorded.store(b->recorded.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    b->busy.store(0, std::memory_order_release);
    if (n + 1 == block_events) next_block(b);
}

}  // namespace rtmem::trace
