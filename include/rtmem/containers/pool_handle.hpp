// pool_handle<T>: a weak, generation-checked reference to an object in an object_pool.
#pragma once
#include <cstdint>

namespace rtmem {

/// Slot index plus the slot's generation when the handle was taken. The pool bumps a slot's
/// generation every time its object is acquired or released, so a handle kept past a release
/// no longer matches: object_pool::resolve reports stale_handle instead of returning an object
/// that now belongs to someone else. (Generations wrap after 2^31 reuses of one slot.)
template <class T>
struct pool_handle {
    std::uint32_t index = ~std::uint32_t{0};
    std::uint32_t generation = 0;  ///< odd for a live object; 0 = empty handle

    [[nodiscard]] explicit operator bool() const noexcept { return generation != 0; }
    friend bool operator==(pool_handle, pool_handle) noexcept = default;
};

}  // namespace rtmem
