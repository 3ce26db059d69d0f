// The process heap: built at the first call, glibc behind it for what it does not serve, fork
// handlers, and the figures printed at exit (RTMEM_MALLOC_STATS=1).
#include "process_heap.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "rtmem/malloc/contract.hpp"

namespace rtmem::malloc_shim {

std::atomic<rt_heap*> g_heap{nullptr};
bool g_realtime = false;
std::size_t g_largest = 0;
constinit thread_local bool tl_attached __attribute__((tls_model("initial-exec"))) = false;

namespace {

// Outside real-time mode, blocks above a segment come from glibc (which maps them and gives
// them back on free): rt_heap keeps every segment it ever used.
constexpr std::size_t largest_outside_real_time = std::size_t{1} << 20;
constexpr unsigned max_threads = 128;

alignas(rt_heap) unsigned char g_storage[sizeof(rt_heap)];
std::atomic<int> g_init{0};  // 0 not started, 1 under way, 2 done
std::atomic<std::size_t> g_fallbacks{0};
int g_stats_fd = -1;  // stderr as it was at start (coreutils close fd 2 before atexit ends)

// Environment numbers without the C library (strtoull may consult the locale).
std::size_t parse_bytes(const char* s) noexcept {
    std::size_t v = 0;
    for (; s != nullptr && *s >= '0' && *s <= '9'; ++s) v = v * 10 + static_cast<std::size_t>(*s - '0');
    return v;
}

bool env_flag(const char* name) noexcept {
    const char* v = std::getenv(name);
    return v != nullptr && v[0] == '1';
}

void say(const char* text) noexcept {
    (void)!write(2, text, std::strlen(text));
}

void print_stats() {
    rt_heap* heap = g_heap.load(std::memory_order_acquire);
    if (heap == nullptr) return;
    const rtmem::stats s = heap->stats();
    char line[320];
    std::snprintf(line, sizeof line,
                  "rtmem run: pid %d: rt_heap%s: %zu of %zu segments, %zu bytes used (peak <= "
                  "%zu), %zu live blocks, %zu allocations; %zu calls served by glibc\n",
                  static_cast<int>(getpid()), g_realtime ? " (real-time)" : "",
                  heap->segments_used(), heap->segment_count(), s.used, s.peak, s.live_count,
                  s.total_count, g_fallbacks.load(std::memory_order_relaxed));
    (void)!write(g_stats_fd, line, std::strlen(line));
}

void build_heap() noexcept {
    const std::size_t realtime_bytes = parse_bytes(std::getenv(malloc_contract::env_realtime));
    rt_heap_options options;
    if (realtime_bytes != 0)
        options = rt_heap_options::real_time_with(realtime_bytes, env_flag(malloc_contract::env_lock));
    options.max_threads = max_threads;
    auto* heap = new (g_storage) rt_heap(options);
    if (!heap->ready()) {
        if (realtime_bytes != 0) {  // the user asked for a guarantee we cannot give
            char line[200];
            std::snprintf(line, sizeof line,
                          "rtmem run: cannot reserve, commit%s %zu bytes for the real-time heap\n",
                          options.lock ? " and lock" : " and prefault", realtime_bytes);
            say(line);
            real.exit_now != nullptr ? real.exit_now(127) : std::abort();
        }
        say("rtmem run: cannot reserve the heap's address space; glibc serves every call\n");
        return;
    }
    g_realtime = realtime_bytes != 0;
    g_largest = g_realtime ? tlsf_allocator::max_pool_bytes : largest_outside_real_time;
    g_heap.store(heap, std::memory_order_release);
}

// Thread exit and binding take rt_heap's registry lock: hold it across fork so the child never
// inherits it locked by a thread that does not exist there.
void before_fork() { rt_heap::lock_for_fork(); }
void after_fork() { rt_heap::unlock_after_fork(); }

void* real_allocate(std::size_t size, std::size_t align) noexcept {
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
    return align <= 16 ? real.malloc(size) : real.memalign(align, size);
}

}  // namespace

bool initialise() noexcept {
    if (g_heap.load(std::memory_order_acquire) != nullptr) return true;
    int expected = 0;
    if (!g_init.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) return false;
    {
        interpose::guard_scope guard;  // dlsym's and atexit's allocations: bootstrap / glibc
        interpose::resolve_real();
        build_heap();
        pthread_atfork(before_fork, after_fork, after_fork);
        if (env_flag(malloc_contract::env_stats)) {
            g_stats_fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
            if (g_stats_fd >= 0) std::atexit(print_stats);
        }
    }
    g_init.store(2, std::memory_order_release);
    return g_heap.load(std::memory_order_acquire) != nullptr;
}

void attach_thread() noexcept {
    tl_attached = true;
    interpose::guard_scope guard;
    g_heap.load(std::memory_order_acquire)->attach();
}

void* allocate_slow(std::size_t size, std::size_t align) noexcept {
    if (tl_guard > 0 || !initialise()) {  // inside the library, or the heap is not there yet
        if (interpose::real_resolved()) return real_allocate(size, align);
        return interpose::bootstrap_alloc(size, align == 0 ? 16 : align);
    }
    if (!tl_attached) {
        attach_thread();
        return allocate(size, align);
    }
    // rt_heap could not serve it (or it is too large for rt_heap outside real-time mode).
    if (g_realtime && g_heap.load(std::memory_order_relaxed)->attach()) {
        errno = ENOMEM;  // a bound thread of a real-time heap never waits for the OS
        return nullptr;
    }
    return real_allocate(size, align);
}

void* allocate_zeroed(std::size_t total) noexcept {
    if (total > g_largest && !g_realtime && tl_guard == 0 && initialise()) {
        g_fallbacks.fetch_add(1, std::memory_order_relaxed);
        return real.calloc(total, 1);
    }
    void* p = allocate(total, 0);
    if (p != nullptr) std::memset(p, 0, total);
    return p;
}

void release_foreign(void* p) noexcept {
    if (interpose::is_bootstrap(p)) return;  // never reused
    if (!interpose::real_resolved()) initialise();
    if (real.free != nullptr) real.free(p);
}

void* reallocate(void* p, std::size_t size) noexcept {
    if (p == nullptr) return allocate(size, 0);
    if (size == 0) {  // glibc: frees and returns nullptr
        release(p);
        return nullptr;
    }
    if (tl_guard == 0 && !tl_attached && initialise()) attach_thread();
    rt_heap* heap = g_heap.load(std::memory_order_acquire);
    if (heap != nullptr && heap->owns(p)) {
        const std::size_t old = rt_heap::usable_size(p);
        if (tl_guard == 0 && size <= g_largest)
            if (void* q = heap->reallocate(p, old, size)) return q;
        void* q = allocate(size, 0);  // glibc for large blocks, or nullptr with ENOMEM
        if (q == nullptr) return nullptr;
        std::memcpy(q, p, std::min(old, size));
        heap->deallocate(p, old);
        return q;
    }
    if (interpose::is_bootstrap(p)) {  // move out of the bootstrap buffer
        void* q = allocate(size, 0);
        if (q != nullptr) std::memcpy(q, p, std::min(interpose::bootstrap_size(p), size));
        return q;
    }
    if (!interpose::real_resolved()) initialise();
    return real.realloc(p, size);  // glibc's block stays glibc's
}

std::size_t usable_size(const void* p) noexcept {
    if (p == nullptr) return 0;
    rt_heap* heap = g_heap.load(std::memory_order_acquire);
    if (heap != nullptr && heap->owns(p)) return rt_heap::usable_size(p);
    if (interpose::is_bootstrap(p)) return interpose::bootstrap_size(p);
    if (!interpose::real_resolved()) initialise();
    return real.malloc_usable_size != nullptr ? real.malloc_usable_size(const_cast<void*>(p)) : 0;
}

}  // namespace rtmem::malloc_shim
