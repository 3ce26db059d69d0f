// per_thread<T>: one cache-aligned slot per thread (hashed by a small thread index), so counters
// bumped by many threads never share a line. Read by combining every slot.
#pragma once
#include <array>
#include <atomic>
#include <cstddef>

#include "rtmem/sync/cache_aligned.hpp"

namespace rtmem {

/// A small dense index for the calling thread (0, 1, 2, ... in order of first use). Never reused.
[[nodiscard]] inline std::size_t thread_index() noexcept {
    static std::atomic<std::size_t> next{0};
    thread_local const std::size_t index = next.fetch_add(1, std::memory_order_relaxed);
    return index;
}

/// Slots slots of T, each on its own cache line pair. local() is the calling thread's slot; with
/// more threads than slots, threads share slots (thread_index() % Slots), so T must tolerate
/// concurrent updates: use atomics updated with relaxed ordering (cheap when the line is not
/// shared). for_each() visits every slot to combine them.
template <class T, std::size_t Slots = 16>
class per_thread {
  public:
    static_assert(Slots > 0);
    static constexpr std::size_t slot_count = Slots;

    per_thread() = default;
    per_thread(const per_thread&) = delete;
    per_thread& operator=(const per_thread&) = delete;

    [[nodiscard]] T& local() noexcept { return slots_[thread_index() % Slots].value; }
    [[nodiscard]] T& slot(std::size_t i) noexcept { return slots_[i].value; }
    [[nodiscard]] const T& slot(std::size_t i) const noexcept { return slots_[i].value; }

    template <class F>
    void for_each(F&& f) const {
        for (const auto& s : slots_) f(s.value);
    }
    template <class F>
    void for_each(F&& f) {
        for (auto& s : slots_) f(s.value);
    }

  private:
    std::array<cache_aligned<T>, Slots> slots_{};
};

}  // namespace rtmem
