// pooled_ptr<T>: owns one object acquired from an object_pool and gives it back when destroyed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "rtmem/containers/pool_handle.hpp"
#include "rtmem/core/alignment.hpp"

namespace rtmem {

namespace detail {

struct pool_core_base;

/// Bookkeeping stored right after each pooled object in its slot.
struct pool_slot_header {
    pool_core_base* owner;
    pool_slot_header* next_free;  ///< free list link (objects stay constructed, so not in T)
    std::uint32_t generation;     ///< odd while the object is acquired
    std::uint32_t index;          ///< slot number, for handles
};

/// The type-independent face of a pool that a pooled_ptr needs: where to give objects back.
struct pool_core_base {
    void (*give_back)(pool_core_base* self, void* object) noexcept;
};

/// Slot layout for T: the object at offset 0, then its header.
template <class T>
struct pool_slot_layout {
    static constexpr std::size_t header_offset = align_up(sizeof(T), alignof(pool_slot_header));
    static constexpr std::size_t alignment = alignof(T) > alignof(pool_slot_header)
                                                 ? alignof(T)
                                                 : alignof(pool_slot_header);
    static constexpr std::size_t stride =
        align_up(header_offset + sizeof(pool_slot_header), alignment);

    static pool_slot_header* header(const T* object) noexcept {
        auto* bytes = static_cast<std::byte*>(static_cast<void*>(const_cast<T*>(object)));
        return static_cast<pool_slot_header*>(static_cast<void*>(bytes + header_offset));
    }
    static T* object(pool_slot_header* h) noexcept {
        auto* bytes = static_cast<std::byte*>(static_cast<void*>(h)) - header_offset;
        return static_cast<T*>(static_cast<void*>(bytes));
    }
};

}  // namespace detail

/// Move-only owner of a pooled object, one pointer wide (the pool is found through the slot
/// header, so no deleter is stored — unlike unique_ptr with a stateful deleter). Destroying it,
/// or calling release(), returns the object to its pool; the object is not destroyed.
template <class T>
class pooled_ptr {
  public:
    pooled_ptr() noexcept = default;
    pooled_ptr(std::nullptr_t) noexcept {}  // NOLINT: like unique_ptr
    pooled_ptr(pooled_ptr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    pooled_ptr& operator=(pooled_ptr&& o) noexcept {
        if (this != &o) {
            release();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    pooled_ptr(const pooled_ptr&) = delete;
    pooled_ptr& operator=(const pooled_ptr&) = delete;
    ~pooled_ptr() { release(); }

    /// Takes ownership of an object acquired from an object_pool (e.g. one given up by detach).
    [[nodiscard]] static pooled_ptr adopt(T* object) noexcept { return pooled_ptr(object); }

    /// Returns the object to its pool now. (Unlike unique_ptr::release, the object goes back.)
    void release() noexcept {
        if (p_ == nullptr) return;
        detail::pool_core_base* owner = layout::header(p_)->owner;
        owner->give_back(owner, std::exchange(p_, nullptr));
    }
    void reset() noexcept { release(); }

    /// Gives up ownership without returning the object; hand it back later with
    /// object_pool::release(p) or pooled_ptr::adopt(p).
    [[nodiscard]] T* detach() noexcept { return std::exchange(p_, nullptr); }

    /// A weak, generation-checked handle to the object (empty for an empty pointer).
    [[nodiscard]] pool_handle<T> handle() const noexcept {
        if (p_ == nullptr) return {};
        const auto* h = layout::header(p_);
        return {h->index, h->generation};
    }

    [[nodiscard]] T* get() const noexcept { return p_; }
    T& operator*() const noexcept { return *p_; }
    T* operator->() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    friend bool operator==(const pooled_ptr& a, std::nullptr_t) noexcept { return a.p_ == nullptr; }

  private:
    using layout = detail::pool_slot_layout<T>;
    explicit pooled_ptr(T* p) noexcept : p_(p) {}
    T* p_ = nullptr;
};

}  // namespace rtmem
