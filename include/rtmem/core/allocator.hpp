// The allocator concept every rtmem allocator models; README.md explains it with the
// capabilities an allocator may add (core/capabilities.hpp).
#pragma once
#include <concepts>
#include <cstddef>

#include "rtmem/core/alignment.hpp"
#include "rtmem/core/capabilities.hpp"
#include "rtmem/core/config.hpp"
#include "rtmem/core/stats.hpp"
#include "rtmem/core/violation.hpp"

namespace rtmem {

/// Alignment used when the caller does not say: enough for any scalar type.
inline constexpr std::size_t default_alignment = alignof(std::max_align_t);

/// allocate(size, align) returns nullptr when exhausted and never throws; align is a power of
/// two; size may be 0 (a valid, unique pointer comes back). deallocate(nullptr, ...) does
/// nothing; size and align are passed back (sized deallocation).
template <class A>
concept allocator = requires(A& a, std::size_t size, std::size_t align, void* p) {
    { a.allocate(size, align) } noexcept -> std::same_as<void*>;
    { a.deallocate(p, size, align) } noexcept -> std::same_as<void>;
};

}  // namespace rtmem
