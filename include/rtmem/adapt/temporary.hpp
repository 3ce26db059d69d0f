// Thread-local temporaries: a per-thread arena for short-lived data (temporary STL containers
// in a function called every frame), freed by scope instead of one free per element.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory_resource>
#include <new>

#include "rtmem/adapt/out_of_memory.hpp"
#include "rtmem/alloc/arena.hpp"
#include "rtmem/detail/thread_exit.hpp"

namespace rtmem {

/// This thread's temporary arena: 64 KiB chunks growing geometrically to 16 MiB, chunks kept on
/// rewind so a warm thread makes no heap call. Only use it inside a temp_scope, so everything
/// comes back when the scope ends.
[[nodiscard]] inline arena& temporary_allocator() noexcept {
    constexpr arena_options options{.chunk_size = 64 * 1024,
                                    .growth = arena_growth::geometric,
                                    .max_chunk_size = std::size_t{16} << 20,
                                    .keep_chunks = true};
#ifdef RTMEM_THREAD_EXIT_CALLBACK
    // No thread_local destructor (see core/config.hpp): the arena lives on the heap and is
    // destroyed by the thread-exit callback. Without memory for it the thread cannot proceed.
    thread_local arena* a = nullptr;
    if (a == nullptr) [[unlikely]] {
        void* storage = std::malloc(sizeof(arena));
        if (storage == nullptr) detail::out_of_memory_fatal(sizeof(arena), alignof(arena));
        a = ::new (storage) arena{options};
        detail::at_thread_exit(
            [](void* p) {
                static_cast<arena*>(p)->~arena();
                std::free(p);
            },
            a);
    }
    return *a;
#else
    thread_local arena a{options};
    return a;
#endif
}

namespace detail {

/// std::pmr view of this thread's temporary arena: deallocate does nothing (the scope frees).
/// Exhaustion throws std::bad_alloc, as the memory_resource contract requires. The resource is
/// thread_local too, so it caches its thread's arena: no thread-local lookup per allocation.
class temporary_resource final : public std::pmr::memory_resource {
  public:
    temporary_resource() noexcept : arena_(&temporary_allocator()) {}

  private:
    // The same-chunk bump inline and everything else in one out-of-line call made as a tail
    // call, so the fast path has no stack frame and no second test of the result. bytes - 1
    // sends a zero size (which must still get a unique block) out of line with the sizes too
    // large to bump, in the one test fits() needs on the size anyway: its sign (a user-space
    // address on x86-64 is below 2^56, so start + last cannot wrap for last < 2^63). At check
    // level 0 only: with checks on, every call goes through arena::allocate, which validates
    // the alignment.
    void* do_allocate(std::size_t bytes, std::size_t align) override {
#if defined(__x86_64__) || defined(_M_X64)
        if constexpr (check_level == 0) {
            arena& a = *arena_;
            const auto t = reinterpret_cast<std::uintptr_t>(a.top_);
            const auto start = (t + align - 1) & ~(std::uintptr_t{align} - 1);
            const std::size_t last = bytes - 1;  // the block's last byte is start + last
            if (static_cast<std::int64_t>(last) >= 0 &&
                start + last < reinterpret_cast<std::uintptr_t>(a.end_)) [[likely]] {
                std::byte* p = a.top_ + (start - t);
                a.top_ = p + bytes;
                detail::unpoison(p, bytes);
                ++a.total_;
                return p;
            }
        }
#endif
        return allocate_slow(bytes, align);
    }
    RTMEM_NOINLINE void* allocate_slow(std::size_t bytes, std::size_t align) {
        void* p = arena_->allocate(bytes, align);
        if (p == nullptr) [[unlikely]]
            throw_bad_alloc();
        return p;
    }
    [[noreturn]] RTMEM_NOINLINE static void throw_bad_alloc() {
        throw std::bad_alloc();
    }
    void do_deallocate(void*, std::size_t, std::size_t) override {}
    [[nodiscard]] bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override {
        return this == &o;
    }
    arena* arena_;
};

struct temp_scope_link {
    void* innermost = nullptr;
};
inline temp_scope_link& temp_scopes() noexcept {
    thread_local temp_scope_link link;
    return link;
}

}  // namespace detail

/// This thread's temporary arena as a std::pmr::memory_resource.
[[nodiscard]] inline std::pmr::memory_resource* temporary_resource() noexcept {
#ifdef RTMEM_THREAD_EXIT_CALLBACK
    // Never destroyed (it owns nothing), so no thread_local destructor is registered.
    alignas(detail::temporary_resource) thread_local unsigned char
        storage[sizeof(detail::temporary_resource)];
    thread_local detail::temporary_resource* r = nullptr;
    if (r == nullptr) [[unlikely]]
        r = ::new (static_cast<void*>(storage)) detail::temporary_resource;
    return r;
#else
    thread_local detail::temporary_resource r;
    return &r;
#endif
}

/// Marks this thread's temporary arena on construction and rewinds it on destruction. Scopes
/// nest; they must end innermost first. Ending a scope while a scope opened inside it is still
/// alive is a lifo_order violation: that rewind is skipped (memory is freed later, by an outer
/// scope) so the inner scope's blocks stay valid.
///
///     void update() {
///         rtmem::temp_scope scope;
///         std::pmr::vector<int> visible{scope.resource()};   // no heap call once warm
///         int* ids = static_cast<int*>(scope.allocate(64 * sizeof(int)));  // no virtual call
///     }
///
/// The scope holds its thread's arena: allocate() and allocator() (an rtmem::arena&, for
/// std_allocator or any allocator-aware code) are the non-pmr path, an inlined bump.
class temp_scope {
  public:
    static constexpr std::string_view name = "temp_scope";

    temp_scope() noexcept
        : arena_(&temporary_allocator()),
          marker_(arena_->marker()),
          outer_(detail::temp_scopes().innermost) {
        detail::temp_scopes().innermost = this;
    }
    ~temp_scope() {
        auto& link = detail::temp_scopes();
        if (link.innermost != this) [[unlikely]] {
            report_violation(violation_kind::lifo_order, name, this, 0,
                             "temp_scope %p ended while a scope opened inside it is still alive",
                             static_cast<const void*>(this));
            unlink();
            return;
        }
        link.innermost = outer_;
        arena_->rewind(marker_);
    }
    temp_scope(const temp_scope&) = delete;
    temp_scope& operator=(const temp_scope&) = delete;

    [[nodiscard]] arena& allocator() const noexcept { return *arena_; }
    [[nodiscard]] std::pmr::memory_resource* resource() const noexcept {
        return temporary_resource();
    }
    /// Shortcut: size bytes from the thread's arena (nullptr when the upstream is exhausted).
    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) const noexcept {
        return arena_->allocate(size, align);
    }

  private:
    // Removes this scope from the chain without rewinding (out-of-order end).
    void unlink() noexcept {
        auto& link = detail::temp_scopes();
        for (void* s = link.innermost; s != nullptr;) {
            auto* scope = static_cast<temp_scope*>(s);
            if (scope->outer_ == this) {
                scope->outer_ = outer_;
                return;
            }
            s = scope->outer_;
        }
    }

    arena* arena_;  // this thread's temporary arena, looked up once
    arena::marker_type marker_;
    void* outer_;
};

}  // namespace rtmem
