// locked<A, Mutex>: makes any rtmem allocator safe to share between threads by taking a mutex
// around every call. Capabilities of A (owns, reset, marker/rewind, stats, check) are forwarded.
#pragma once
#include <mutex>
#include <string_view>
#include <utility>

#include "rtmem/core/allocator.hpp"
#include "rtmem/sync/cache_aligned.hpp"
#include "rtmem/sync/spin_mutex.hpp"

namespace rtmem {

namespace detail {
template <class A>
struct locked_marker_base {};
template <marker_allocator A>
struct locked_marker_base<A> {
    using marker_type = typename A::marker_type;
};
}  // namespace detail

/// Owns an A (constructed in place from the given arguments) and a Mutex (std::mutex, or
/// spin_mutex for short critical sections). The mutex sits on its own cache line pair so that
/// threads spinning on it do not slow down the allocator's first fields. Not movable (mutexes
/// are not); create it where it will live.
template <allocator A, class Mutex = std::mutex>
class locked : public detail::locked_marker_base<A> {
  public:
    static constexpr std::string_view name = A::name;

    template <class... Args>
    explicit locked(Args&&... args) : inner_(std::forward<Args>(args)...) {}
    locked(const locked&) = delete;
    locked& operator=(const locked&) = delete;

    [[nodiscard]] void* allocate(std::size_t size, std::size_t align = default_alignment) noexcept {
        std::lock_guard guard(*mutex_);
        return inner_.allocate(size, align);
    }

    void deallocate(void* p, std::size_t size, std::size_t align = default_alignment) noexcept {
        std::lock_guard guard(*mutex_);
        inner_.deallocate(p, size, align);
    }

    [[nodiscard]] bool owns(const void* p) const noexcept requires owning_allocator<A> {
        std::lock_guard guard(*mutex_);
        return inner_.owns(p);
    }

    void reset() noexcept requires resettable_allocator<A> {
        std::lock_guard guard(*mutex_);
        inner_.reset();
    }

    [[nodiscard]] auto marker() noexcept requires marker_allocator<A> {
        std::lock_guard guard(*mutex_);
        return inner_.marker();
    }

    template <class Marker>
    requires marker_allocator<A>
    void rewind(Marker m) noexcept {
        std::lock_guard guard(*mutex_);
        inner_.rewind(m);
    }

    [[nodiscard]] rtmem::stats stats() const noexcept requires stats_allocator<A> {
        std::lock_guard guard(*mutex_);
        return inner_.stats();
    }

    [[nodiscard]] bool check() const noexcept requires checkable_allocator<A> {
        std::lock_guard guard(*mutex_);
        return inner_.check();
    }

    /// Runs f(A&) with the lock held: for several operations that must be atomic together, or
    /// for members locked<> does not forward.
    template <class F>
    decltype(auto) with_lock(F&& f) {
        std::lock_guard guard(*mutex_);
        return std::forward<F>(f)(inner_);
    }

    /// The wrapped allocator without locking: only while no other thread can use it.
    [[nodiscard]] A& unlocked() noexcept { return inner_; }

  private:
    mutable cache_aligned<Mutex> mutex_;
    A inner_;
};

}  // namespace rtmem
