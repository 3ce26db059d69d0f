// cache_aligned<T>: a value alone on its cache line(s), so writes to it never slow down a
// neighbouring value used by another thread (false sharing).
#pragma once
#include <cstddef>
#include <utility>

namespace rtmem {

/// Distance that keeps two independently written objects from interfering. 128 on x86-64, not
/// 64: Intel CPUs since Sandy Bridge fetch cache lines in adjacent pairs (the spatial / adjacent
/// line prefetcher), so two counters 64 bytes apart still ping-pong between cores. Apple M-series
/// cores have 128-byte lines. We do not use std::hardware_destructive_interference_size: GCC warns
/// that its value may change between compiler versions, which would change rtmem's ABI.
#if defined(__x86_64__) || defined(_M_X64) || (defined(__aarch64__) && defined(__APPLE__))
inline constexpr std::size_t destructive_interference_size = 128;
#else
inline constexpr std::size_t destructive_interference_size = 64;
#endif

/// A T aligned (and therefore padded) to destructive_interference_size. Arrays of cache_aligned<T>
/// put each element on its own line pair.
template <class T>
struct alignas(destructive_interference_size) cache_aligned {
    T value{};

    cache_aligned() = default;
    template <class... Args>
    explicit cache_aligned(std::in_place_t, Args&&... args) : value(std::forward<Args>(args)...) {}

    T& operator*() noexcept { return value; }
    const T& operator*() const noexcept { return value; }
    T* operator->() noexcept { return &value; }
    const T* operator->() const noexcept { return &value; }
};

static_assert(sizeof(cache_aligned<char>) == destructive_interference_size);

}  // namespace rtmem
