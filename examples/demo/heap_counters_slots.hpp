// Per-thread counter slots shared by heap_counters.cpp, heap_counters_common.cpp and metered.hpp.
// Each thread owns one slot and is its only writer (relaxed load + store, no locked instruction
// on the counting path); readers sum all slots.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "heap_counters.hpp"

namespace demo::heap::detail {

struct alignas(128) slot {  // 128: adjacent-line prefetch makes 64-byte neighbours share
    std::atomic<std::uint64_t> heap_calls{0}, heap_cycles{0}, rtmem_calls{0}, rtmem_cycles{0};
    void bump(std::atomic<std::uint64_t>& c, std::uint64_t by) noexcept {
        c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }
};

inline constexpr int max_threads = 64;
inline slot slots[max_threads];
inline std::atomic<int> used_slots{0};
inline slot overflow_slot;  // shared by threads beyond max_threads (counts may then be lost)
inline std::atomic<bool> profiling_on{false};
inline std::atomic<std::int64_t> live{0}, peak{0};

inline slot& mine() noexcept {
    static thread_local slot* s = nullptr;
    if (s == nullptr) [[unlikely]] {
        const int i = used_slots.fetch_add(1, std::memory_order_relaxed);
        s = i < max_threads ? &slots[i] : &overflow_slot;
    }
    return *s;
}

inline void add_live(std::int64_t delta) noexcept {
    const std::int64_t now = live.fetch_add(delta, std::memory_order_relaxed) + delta;
    std::int64_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {
    }
}

inline totals sum() noexcept {
    totals t;
    const int n = std::min(used_slots.load(std::memory_order_relaxed), max_threads);
    auto add = [&](const slot& s) {
        t.heap_calls += s.heap_calls.load(std::memory_order_relaxed);
        t.heap_cycles += s.heap_cycles.load(std::memory_order_relaxed);
        t.rtmem_calls += s.rtmem_calls.load(std::memory_order_relaxed);
        t.rtmem_cycles += s.rtmem_cycles.load(std::memory_order_relaxed);
    };
    for (int i = 0; i < n; ++i) add(slots[i]);
    add(overflow_slot);
    t.live_bytes = live.load(std::memory_order_relaxed);
    t.peak_bytes = peak.load(std::memory_order_relaxed);
    return t;
}

}  // namespace demo::heap::detail
