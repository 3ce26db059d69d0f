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

namespace detail {

/// This thread's temporary arena and the std::pmr view of it, one thread-local object: the
/// resource's do_allocate reaches the arena's bump pointer at a fixed offset from `this`, with no
/// pointer to follow. deallocate does nothing (the scope frees); exhaustion throws
/// std::bad_alloc, as the memory_resource contract requires.
///
/// The temporary arena counts bytes, not blocks: its stats() report used, peak and nothing in
/// live_count / total_count, so the same-chunk bump (bump_or) needs no counter.
class temporary_resource final : public std::pmr::memory_resource {
  public:
    temporary_resource() noexcept
        : arena_(arena_options{.chunk_size = 64 * 1024,
                               .growth = arena_growth::geometric,
                               .max_chunk_size = std::size_t{16} << 20,
                               .keep_chunks = true}) {
        arena_.counts_blocks_ = false;
    }
    temporary_resource(const temporary_resource&) = delete;
    temporary_resource& operator=(const temporary_resource&) = delete;

    [[nodiscard]] arena& allocator() noexcept { return arena_; }

    /// Whether bump_or bumps inline: checks off, on x86-64 (whose address range makes the one
    /// size test enough). Elsewhere a caller that can inline arena::allocate should.
#if defined(__x86_64__) || defined(_M_X64)
    static constexpr bool inline_bump = check_level == 0;
#else
    static constexpr bool inline_bump = false;
#endif

    /// The same-chunk bump with a runtime size and alignment, uncounted; slow(bytes, -align) for
    /// everything else. The slow path gets the alignment negated because the round-up needs
    /// -align: negating in place leaves it in the argument register for the tail call, with no
    /// copy. bytes as a signed number sends a zero size (which must still get a unique block) and
    /// sizes of 2^63 or more out of line in one test; below 2^63 start + bytes cannot wrap (a
    /// user-space address on x86-64 is below 2^57, start at most 2^63). inline_bump only: with
    /// checks on every call goes through arena::allocate, which validates the alignment.
    template <class Slow>
    RTMEM_ALWAYS_INLINE void* bump_or(std::size_t bytes, std::size_t align, Slow slow) {
        if constexpr (inline_bump) {
            const auto t = reinterpret_cast<std::uintptr_t>(arena_.top_);
            std::uintptr_t up = t + align - 1;
#ifdef __GNUC__
            // Emits nothing; orders `up` before the negation, so GCC negates the alignment in
            // its register instead of copying it first (one instruction, tests/perf).
            asm("" : "+r"(up));
#endif
            const std::uintptr_t negated = 0 - std::uintptr_t{align};
            const auto start = up & negated;
            const auto next = start + bytes;
            if (next <= reinterpret_cast<std::uintptr_t>(arena_.end_) &&
                static_cast<std::intptr_t>(bytes) > 0) [[likely]] {
                std::byte* p = arena_.top_ + (start - t);
                arena_.top_ = arena_.top_ + (next - t);
                detail::unpoison(p, bytes);
                return p;
            }
            return slow(bytes, negated);
        } else {
            return slow(bytes, 0 - std::uintptr_t{align});
        }
    }

    /// arena::allocate (chunk changes, dedicated chunks, validation with checks on): nullptr
    /// when the upstream is exhausted.
    RTMEM_NOINLINE void* allocate_slow_nothrow(std::size_t bytes, std::uintptr_t negated) noexcept {
        return arena_.allocate(bytes, 0 - negated);
    }

  private:
    // The bump inline, everything else one out-of-line call made as a tail call: the fast path
    // has no stack frame and no second test of the result.
    void* do_allocate(std::size_t bytes, std::size_t align) override {
        return bump_or(bytes, align, [this](std::size_t n, std::uintptr_t negated) {
            return allocate_slow(n, negated);
        });
    }
    RTMEM_NOINLINE void* allocate_slow(std::size_t bytes, std::uintptr_t negated) {
        void* p = arena_.allocate(bytes, 0 - negated);
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

    arena arena_;
};

/// This thread's temporary_resource, created on first use.
[[nodiscard]] inline temporary_resource& temporary_state() noexcept {
#ifdef RTMEM_THREAD_EXIT_CALLBACK
    // No thread_local destructor (see core/config.hpp): the resource and its arena live on the
    // heap and are destroyed by the thread-exit callback. Without memory for them the thread
    // cannot proceed.
    thread_local temporary_resource* r = nullptr;
    if (r == nullptr) [[unlikely]] {
        void* storage = std::malloc(sizeof(temporary_resource));
        if (storage == nullptr)
            detail::out_of_memory_fatal(sizeof(temporary_resource), alignof(temporary_resource));
        r = ::new (storage) temporary_resource;
        detail::at_thread_exit(
            [](void* p) {
                static_cast<temporary_resource*>(p)->~temporary_resource();
                std::free(p);
            },
            r);
    }
    return *r;
#else
    thread_local temporary_resource r;
    return r;
#endif
}

struct temp_scope_link {
    void* innermost = nullptr;
};
inline temp_scope_link& temp_scopes() noexcept {
    thread_local temp_scope_link link;
    return link;
}

}  // namespace detail

/// This thread's temporary arena: 64 KiB chunks growing geometrically to 16 MiB, chunks kept on
/// rewind so a warm thread makes no heap call. Only use it inside a temp_scope, so everything
/// comes back when the scope ends. Its stats() count bytes, not blocks (live_count and
/// total_count are 0).
[[nodiscard]] inline arena& temporary_allocator() noexcept {
    return detail::temporary_state().allocator();
}

/// This thread's temporary arena as a std::pmr::memory_resource.
[[nodiscard]] inline std::pmr::memory_resource* temporary_resource() noexcept {
    return &detail::temporary_state();
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
/// The scope holds its thread's resource and arena: allocate() and allocator() (an rtmem::arena&,
/// for std_allocator or any allocator-aware code) are the non-pmr path, an inlined bump with no
/// thread-local lookup and no virtual call.
class temp_scope {
  public:
    static constexpr std::string_view name = "temp_scope";

    temp_scope() noexcept
        : resource_(&detail::temporary_state()),
          marker_(resource_->allocator().marker()),
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
        resource_->allocator().rewind(marker_);
    }
    temp_scope(const temp_scope&) = delete;
    temp_scope& operator=(const temp_scope&) = delete;

    [[nodiscard]] arena& allocator() const noexcept { return resource_->allocator(); }
    /// The thread's resource, taken from its thread-local object rather than from this scope's
    /// copy: a compiler that sees where the pointer comes from knows its dynamic type, so the
    /// pmr calls of a container built on it in the same function can be devirtualized (GCC does).
    [[nodiscard]] std::pmr::memory_resource* resource() const noexcept {
        return &detail::temporary_state();
    }
    /// Shortcut: size bytes from the thread's arena (nullptr when the upstream is exhausted).
    [[nodiscard]] RTMEM_ALWAYS_INLINE void* allocate(
        std::size_t size, std::size_t align = default_alignment) const noexcept {
        detail::temporary_resource* r = resource_;
        if constexpr (detail::temporary_resource::inline_bump) {
            return r->bump_or(size, align, [r](std::size_t n, std::uintptr_t negated) noexcept {
                return r->allocate_slow_nothrow(n, negated);
            });
        } else {
            return r->allocator().allocate(size, align);  // inline too, and validated with checks
        }
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

    detail::temporary_resource* resource_;  // this thread's, looked up once
    arena::marker_type marker_;
    void* outer_;
};

}  // namespace rtmem
