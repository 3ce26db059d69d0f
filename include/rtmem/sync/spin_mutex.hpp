// A spin lock for very short critical sections (an allocator's fast path): test-and-test-and-set
// with a CPU pause and exponential backoff, then yielding so an oversubscribed machine still
// makes progress.
#pragma once
#include <atomic>
#include <thread>

#include "rtmem/core/config.hpp"

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <intrin.h>
#endif

namespace rtmem {

namespace detail {
/// Tells the CPU we are spinning (saves power, frees the sibling hyper-thread).
RTMEM_ALWAYS_INLINE void cpu_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
    asm volatile("yield" ::: "memory");
#endif
}
}  // namespace detail

/// Meets the Lockable requirements (std::lock_guard, std::unique_lock, locked<A, spin_mutex>).
/// Not recursive, not fair. Prefer std::mutex when a critical section can take long or block:
/// a spinning waiter burns its core until the holder is scheduled again.
class spin_mutex {
  public:
    spin_mutex() noexcept = default;
    spin_mutex(const spin_mutex&) = delete;
    spin_mutex& operator=(const spin_mutex&) = delete;

    void lock() noexcept {
        // Fast path: one atomic exchange when the lock is free.
        if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]]
            return;
        lock_slow();
    }

    [[nodiscard]] bool try_lock() noexcept {
        // Read first: a failed exchange would still take the cache line exclusively.
        return !locked_.load(std::memory_order_relaxed) &&
               !locked_.exchange(true, std::memory_order_acquire);
    }

    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  private:
    static constexpr unsigned max_pauses = 64;  // ~ a few hundred ns on current x86

    RTMEM_NOINLINE void lock_slow() noexcept {
        unsigned pauses = 1;
        for (;;) {
            // Spin on a plain load (the line stays shared) until the lock looks free.
            while (locked_.load(std::memory_order_relaxed)) {
                if (pauses <= max_pauses) {
                    for (unsigned i = 0; i < pauses; ++i) detail::cpu_pause();
                    pauses *= 2;
                } else {
                    std::this_thread::yield();  // the holder may not be running
                }
            }
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
        }
    }

    std::atomic<bool> locked_{false};
};

}  // namespace rtmem
