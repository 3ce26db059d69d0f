// Bridges between rtmem allocators and std::pmr: resource<A> lets every pmr container use any
// rtmem allocator (std::pmr::vector<float> stays one type whatever the allocator), and
// resource_allocator lets any std::pmr::memory_resource serve as an rtmem upstream.
#pragma once
#include <cstddef>
#include <memory_resource>
#include <string_view>

#include "rtmem/adapt/out_of_memory.hpp"
#include "rtmem/core/allocator.hpp"

namespace rtmem {

/// A std::pmr::memory_resource over an rtmem allocator it refers to (which must outlive it).
/// Exhaustion throws std::bad_alloc, as memory_resource requires (without exceptions: the
/// out-of-memory handler, then abort). Equality is identity of the resource object, like the
/// standard resources: memory from one resource<A> is freed through the same one.
template <allocator A>
class resource final : public std::pmr::memory_resource {
  public:
    explicit resource(A& a) noexcept : a_(&a) {}
    resource(const resource&) = delete;
    resource& operator=(const resource&) = delete;

    [[nodiscard]] A& underlying() const noexcept { return *a_; }

  private:
    void* do_allocate(std::size_t bytes, std::size_t align) override {
        void* p = a_->allocate(bytes, align);
        if (p == nullptr) [[unlikely]]
            detail::out_of_memory_throw_or_die(bytes, align);
        return p;
    }

    void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
        a_->deallocate(p, bytes, align);
    }

    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return this == &other;
    }

    A* a_;
};

/// Any std::pmr::memory_resource as an rtmem allocator: e.g. a std::pmr::monotonic_buffer_resource
/// or synchronized_pool_resource as the upstream of an rtmem allocator. The resource must outlive
/// it. A throwing resource becomes nullptr (rtmem allocators never throw).
class resource_allocator {
  public:
    static constexpr std::string_view name = "resource_allocator";

    explicit resource_allocator(
        std::pmr::memory_resource* r = std::pmr::get_default_resource()) noexcept
        : r_(r) {}

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align = default_alignment) noexcept {
        if (!is_pow2(align)) [[unlikely]] {
            report_violation(violation_kind::bad_alignment, name, nullptr, size,
                             "alignment %zu is not a power of two", align);
            return nullptr;
        }
        // Size 0 asks for 1 byte: rtmem promises a unique pointer, pmr resources do not.
#if RTMEM_HAS_EXCEPTIONS
        try {
            return r_->allocate(size == 0 ? 1 : size, align);
        } catch (...) {
            return nullptr;
        }
#else
        return r_->allocate(size == 0 ? 1 : size, align);
#endif
    }

    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
        if (p == nullptr) return;
        r_->deallocate(p, size == 0 ? 1 : size, align);
    }

    [[nodiscard]] std::pmr::memory_resource* resource() const noexcept {
        return r_;
    }

    friend bool operator==(const resource_allocator& a, const resource_allocator& b) noexcept {
        return a.r_->is_equal(*b.r_);
    }

  private:
    std::pmr::memory_resource* r_;
};

}  // namespace rtmem
