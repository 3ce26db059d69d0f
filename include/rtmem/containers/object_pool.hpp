// object_pool<T>: objects constructed once and reused, notified when they enter or leave the
// free list (Kaltenbrunn §6.2.2), handed out as self-returning pooled_ptr<T>.
#pragma once
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <new>
#include <string_view>
#include <utility>

#include "rtmem/containers/pool_handle.hpp"
#include "rtmem/containers/pooled_ptr.hpp"
#include "rtmem/core/allocator.hpp"
#include "rtmem/core/malloc_allocator.hpp"

namespace rtmem {

/// Which notifiers a pool calls (the thesis's Object_Notifier_Rules). Disabled kinds are
/// compiled out.
enum class notifier_rules : unsigned {
    none = 0,
    function_objects = 1,  ///< the pool's on_acquire(T&) / on_release(T&)
    member_functions = 2,  ///< T::on_exit_free_list() / T::on_enter_free_list()
    all = 3,
};
[[nodiscard]] constexpr bool enabled(notifier_rules rules, notifier_rules kind) noexcept {
    return (static_cast<unsigned>(rules) & static_cast<unsigned>(kind)) != 0;
}

/// Whether a pool may add chunks when full. Objects never move either way.
enum class pool_growth { fixed, chunks };

/// The default function-object notifier: does nothing and costs nothing.
/// (It takes no acquire arguments, so it never counts as a notifier that consumes them.)
struct no_notifier {
    template <class T>
    void operator()(T&) const noexcept {}
};

/// T declares the thesis's member notifiers (detected at compile time, called directly).
template <class T, class... A>
concept exit_notified = requires(T& t, A&&... a) {
    t.on_exit_free_list(std::forward<A>(a)...);
};
template <class T>
concept enter_notified = requires(T& t) {
    t.on_enter_free_list();
};

template <class T, notifier_rules Rules = notifier_rules::all, class OnAcquire = no_notifier,
          class OnRelease = no_notifier, allocator Upstream = malloc_allocator>
class object_pool {
    using layout = detail::pool_slot_layout<T>;
    using header = detail::pool_slot_header;
    static constexpr bool use_functions = enabled(Rules, notifier_rules::function_objects);
    static constexpr bool use_members = enabled(Rules, notifier_rules::member_functions);

    struct core : detail::pool_core_base {
        Upstream* up;
        std::byte** chunks = nullptr;
        std::size_t chunk_count = 0;
        std::size_t chunk_table_size = 0;
        std::size_t slots_per_chunk;
        std::size_t fresh = 0;  ///< slots [0, fresh) hold constructed objects
        std::size_t live = 0;
        header* free_head = nullptr;
        bool growable;
        bool orphaned = false;  ///< the pool object is gone; the last give-back frees the core
        [[no_unique_address]] OnAcquire on_acquire;
        [[no_unique_address]] OnRelease on_release;
    };

  public:
    static constexpr std::string_view name = "object_pool";
    using value_type = T;

    /// A pool of `capacity` slots (one chunk, allocated now); with pool_growth::chunks it adds
    /// chunks of the same size when full. Objects are constructed on first use or by prewarm.
    explicit object_pool(std::size_t capacity, pool_growth growth = pool_growth::fixed) requires
        std::default_initializable<Upstream> && std::default_initializable<OnAcquire> &&
        std::default_initializable<OnRelease>
        : object_pool(capacity, growth, OnAcquire{}, OnRelease{}, default_upstream()) {}
    object_pool(std::size_t capacity, pool_growth growth, Upstream& upstream) requires
        std::default_initializable<OnAcquire> && std::default_initializable<OnRelease>
        : object_pool(capacity, growth, OnAcquire{}, OnRelease{}, upstream) {}
    object_pool(std::size_t capacity, pool_growth growth, OnAcquire on_acquire,
                OnRelease on_release, Upstream& upstream = default_upstream()) {
        if (capacity == 0 || capacity > max_slots) throw std::bad_alloc();
        void* mem = upstream.allocate(sizeof(core), alignof(core));
        if (mem == nullptr) throw std::bad_alloc();
        c_ = ::new (mem) core{{&give_back},
                              &upstream,
                              nullptr,
                              0,
                              0,
                              capacity,
                              0,
                              0,
                              nullptr,
                              growth == pool_growth::chunks,
                              false,
                              std::move(on_acquire),
                              std::move(on_release)};
        if (!add_chunk()) {
            free_core(std::exchange(c_, nullptr));
            throw std::bad_alloc();
        }
    }

    object_pool(object_pool&& o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
    object_pool& operator=(object_pool&& o) noexcept {
        if (this != &o) {
            destroy();
            c_ = std::exchange(o.c_, nullptr);
        }
        return *this;
    }
    object_pool(const object_pool&) = delete;
    object_pool& operator=(const object_pool&) = delete;
    ~object_pool() { destroy(); }

    /// An object for the caller. A free object already constructed is reused; otherwise a new
    /// one is constructed in place as T(args...). Either way the object leaves the pool through
    /// the exit notifiers (on_exit_free_list / on_acquire, receiving args if they accept them;
    /// a fresh object then gets args both in its constructor and in the notifier). Empty when
    /// the pool is full and fixed (or the upstream is exhausted). A reused object keeps its state, so acquire(args...) with
    /// arguments requires a notifier that takes them: arguments are never silently dropped.
    template <class... Args>
    [[nodiscard]] pooled_ptr<T> acquire(Args&&... args) {
        core& c = *c_;
        if (header* h = c.free_head) {
            static_assert(sizeof...(Args) == 0 || takes_arguments<Args...>,
                          "acquire(args...) reuses constructed objects: declare "
                          "T::on_exit_free_list(args...) or an on_acquire(T&, args...) notifier, "
                          "or call acquire() without arguments");
            c.free_head = h->next_free;
            ++h->generation;
            ++c.live;
            auto owned =
                pooled_ptr<T>::adopt(layout::object(h));  // given back if a notifier throws
            notify_exit(c, *owned, std::forward<Args>(args)...);
            return owned;
        }
        // A fresh object leaves the pool too: the exit notifiers run for it as for a reused one.
        if constexpr (sizeof...(Args) > 0 && takes_arguments<Args...>) {
            header* h = construct_fresh(args...);  // lvalues: the notifier receives them next
            if (h == nullptr) return {};
            ++h->generation;
            ++c.live;
            auto owned = pooled_ptr<T>::adopt(layout::object(h));
            notify_exit(c, *owned, std::forward<Args>(args)...);
            return owned;
        } else {
            header* h = construct_fresh(std::forward<Args>(args)...);
            if (h == nullptr) return {};
            ++h->generation;
            ++c.live;
            auto owned = pooled_ptr<T>::adopt(layout::object(h));
            notify_exit(c, *owned);  // the argument-free notifiers (args went to T's constructor)
            return owned;
        }
    }

    /// Constructs up to `count` objects ahead of time (T(args...)) and puts them in the free
    /// list (on_enter_free_list / on_release), so later acquires pay no constructor. Returns
    /// how many were constructed (fewer when a fixed pool fills up).
    template <class... Args>
    std::size_t prewarm(std::size_t count, Args&&... args) {  // args reused: never moved from
        std::size_t made = 0;
        for (; made < count; ++made) {
            header* h = construct_fresh(args...);
            if (h == nullptr) break;
            ++h->generation;
            ++c_->live;
            put_back(*c_, h);
        }
        return made;
    }

    /// Returns an object given up by pooled_ptr::detach. A pointer this pool did not hand out is
    /// a foreign_pointer violation; an object already in the free list is a double_free. Either
    /// way the pool is left untouched.
    void release(T* object) noexcept {
        if (object == nullptr) return;
        header* h = find_slot(object);
        if (h == nullptr) [[unlikely]] {
            report_violation(violation_kind::foreign_pointer, name, object, sizeof(T),
                             "object %p was not acquired from this pool",
                             static_cast<const void*>(object));
            return;
        }
        give_back_slot(*c_, h);  // the slot found, not one recomputed from a foreign pointer
    }

    /// True when p points at an object slot of this pool.
    [[nodiscard]] bool owns(const T* p) const noexcept { return find_slot(p) != nullptr; }

    /// A weak handle to a live object of this pool (empty for anything else).
    [[nodiscard]] pool_handle<T> handle_of(const T& object) const noexcept {
        const header* h = find_slot(&object);
        if (h == nullptr || (h->generation & 1u) == 0) return {};
        return {h->index, h->generation};
    }
    /// The object a handle refers to, or nullptr with a stale_handle violation when it was
    /// released since (its slot may hold someone else's object now).
    [[nodiscard]] T* resolve(pool_handle<T> handle) const noexcept {
        header* h = slot_for(handle);
        if (h == nullptr) [[unlikely]] {
            report_violation(violation_kind::stale_handle, name, nullptr, handle.index,
                             "handle {slot %u, generation %u} no longer refers to a live object",
                             handle.index, handle.generation);
            return nullptr;
        }
        return layout::object(h);
    }
    /// Whether a handle still refers to the object it was taken from (no violation).
    [[nodiscard]] bool alive(pool_handle<T> handle) const noexcept {
        return slot_for(handle) != nullptr;
    }

    [[nodiscard]] std::size_t size() const noexcept { return c_->live; }
    [[nodiscard]] std::size_t capacity() const noexcept {
        return c_->chunk_count * c_->slots_per_chunk;
    }
    /// Objects constructed so far (live plus free); the rest of the capacity is raw memory.
    [[nodiscard]] std::size_t constructed() const noexcept { return c_->fresh; }
    [[nodiscard]] bool empty() const noexcept { return c_->live == 0; }

    /// Visits every live object, chunk by chunk (address order within a chunk).
    template <class F>
    void for_each(F&& f) {
        for (auto& obj : *this) f(obj);
    }

    class iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = T*;
        using reference = T&;

        iterator() = default;
        iterator(const core* c, std::size_t i) noexcept : c_(c), i_(i) { skip_free(); }
        T& operator*() const noexcept { return *layout::object(slot(*c_, i_)); }
        T* operator->() const noexcept { return layout::object(slot(*c_, i_)); }
        iterator& operator++() noexcept {
            ++i_;
            skip_free();
            return *this;
        }
        iterator operator++(int) noexcept {
            iterator t = *this;
            ++*this;
            return t;
        }
        friend bool operator==(const iterator& a, const iterator& b) noexcept {
            return a.i_ == b.i_;
        }

      private:
        void skip_free() noexcept {
            while (i_ < c_->fresh && (slot(*c_, i_)->generation & 1u) == 0) ++i_;
        }
        const core* c_ = nullptr;
        std::size_t i_ = 0;
    };
    [[nodiscard]] iterator begin() const noexcept { return {c_, 0}; }
    [[nodiscard]] iterator end() const noexcept { return {c_, c_->fresh}; }

  private:
    static constexpr std::size_t max_slots = std::uint32_t{0xffffffff};

    template <class... Args>
    static constexpr bool takes_arguments = (use_members && exit_notified<T, Args...>) ||
                                            (use_functions &&
                                             std::invocable<OnAcquire&, T&, Args...>);

    static Upstream& default_upstream() noexcept {
        static Upstream instance;
        return instance;
    }

    static header* slot(const core& c, std::size_t index) noexcept {
        std::byte* chunk = c.chunks[index / c.slots_per_chunk];
        std::byte* at = chunk + (index % c.slots_per_chunk) * layout::stride;
        return layout::header(static_cast<T*>(static_cast<void*>(at)));
    }

    template <class... Args>
    static void notify_exit(core& c, T& obj, Args&&... args) {
        if constexpr (use_members && exit_notified<T, Args...>) {
            obj.on_exit_free_list(std::forward<Args>(args)...);
        } else if constexpr (use_members && exit_notified<T>) {
            obj.on_exit_free_list();
        }
        if constexpr (use_functions && std::invocable<OnAcquire&, T&, Args...>) {
            c.on_acquire(obj, std::forward<Args>(args)...);
        } else if constexpr (use_functions && std::invocable<OnAcquire&, T&>) {
            c.on_acquire(obj);
        }
    }

    /// Free-list entry: the object is told first, then becomes available again.
    static void put_back(core& c, header* h) noexcept {
        T& obj = *layout::object(h);
        if constexpr (use_members && enter_notified<T>) obj.on_enter_free_list();
        if constexpr (use_functions) c.on_release(obj);
        ++h->generation;
        --c.live;
        h->next_free = c.free_head;
        c.free_head = h;
    }

    /// What every pooled_ptr of this pool calls (through pool_core_base, no virtual call).
    static void give_back(detail::pool_core_base* base, void* object) noexcept {
        give_back_slot(*static_cast<core*>(base), layout::header(static_cast<T*>(object)));
    }
    static void give_back_slot(core& c, header* h) noexcept {
        if ((h->generation & 1u) == 0) [[unlikely]] {
            report_violation(violation_kind::double_free, name, layout::object(h), sizeof(T),
                             "object in slot %u released twice", h->index);
            return;
        }
        put_back(c, h);
        if (c.orphaned && c.live == 0) [[unlikely]]
            destroy_core(&c);
    }

    template <class... Args>
    header* construct_fresh(Args&&... args) {
        core& c = *c_;
        if (c.fresh == c.chunk_count * c.slots_per_chunk) {
            if (!c.growable || c.fresh + c.slots_per_chunk > max_slots || !add_chunk())
                return nullptr;
        }
        header* h = slot(c, c.fresh);
        ::new (static_cast<void*>(layout::object(h))) T(std::forward<Args>(args)...);
        ::new (static_cast<void*>(h)) header{&c, nullptr, 0, static_cast<std::uint32_t>(c.fresh)};
        ++c.fresh;
        return h;
    }

    RTMEM_NOINLINE bool add_chunk() noexcept {
        core& c = *c_;
        if (c.chunk_count == c.chunk_table_size) {
            const std::size_t n = c.chunk_table_size == 0 ? 4 : c.chunk_table_size * 2;
            auto* table = static_cast<std::byte**>(
                c.up->allocate(n * sizeof(std::byte*), alignof(std::byte*)));
            if (table == nullptr) return false;
            for (std::size_t i = 0; i < c.chunk_count; ++i) table[i] = c.chunks[i];
            c.up->deallocate(c.chunks, c.chunk_table_size * sizeof(std::byte*),
                             alignof(std::byte*));
            c.chunks = table;
            c.chunk_table_size = n;
        }
        auto* chunk = static_cast<std::byte*>(
            c.up->allocate(c.slots_per_chunk * layout::stride, layout::alignment));
        if (chunk == nullptr) return false;
        c.chunks[c.chunk_count++] = chunk;
        return true;
    }

    /// The slot of p, or nullptr when p is not exactly an object of this pool. O(chunks).
    header* find_slot(const T* p) const noexcept {
        const core& c = *c_;
        const auto* bytes = static_cast<const std::byte*>(static_cast<const void*>(p));
        const std::size_t chunk_bytes = c.slots_per_chunk * layout::stride;
        for (std::size_t k = 0; k < c.chunk_count; ++k) {
            const std::byte* chunk = c.chunks[k];
            if (bytes < chunk || bytes >= chunk + chunk_bytes) continue;
            const auto offset = static_cast<std::size_t>(bytes - chunk);
            if (offset % layout::stride != 0) return nullptr;
            const std::size_t index = k * c.slots_per_chunk + offset / layout::stride;
            return index < c.fresh ? slot(c, index) : nullptr;
        }
        return nullptr;
    }

    header* slot_for(pool_handle<T> handle) const noexcept {
        if (handle.index >= c_->fresh || (handle.generation & 1u) == 0) return nullptr;
        header* h = slot(*c_, handle.index);
        return h->generation == handle.generation ? h : nullptr;
    }

    void destroy() noexcept {
        core* c = std::exchange(c_, nullptr);
        if (c == nullptr) return;
        if (c->live != 0) [[unlikely]] {
            // pooled_ptrs still point into the pool: keep its memory until the last comes back.
            report_violation(violation_kind::bad_argument, name, c, c->live,
                             "destroyed with %zu objects still acquired (memory kept until they "
                             "are released)",
                             c->live);
            c->orphaned = true;
            return;
        }
        destroy_core(c);
    }

    static void destroy_core(core* c) noexcept {
        for (std::size_t i = 0; i < c->fresh; ++i) layout::object(slot(*c, i))->~T();
        free_core(c);
    }

    static void free_core(core* c) noexcept {
        for (std::size_t k = 0; k < c->chunk_count; ++k)
            c->up->deallocate(c->chunks[k], c->slots_per_chunk * layout::stride, layout::alignment);
        c->up->deallocate(c->chunks, c->chunk_table_size * sizeof(std::byte*), alignof(std::byte*));
        Upstream* up = c->up;
        c->~core();
        up->deallocate(c, sizeof(core), alignof(core));
    }

    core* c_ = nullptr;
};

/// Deduces the notifier types: make_object_pool<particle>(1024, pool_growth::fixed,
/// [](particle& p) {...}, [](particle& p) {...}).
template <class T, notifier_rules Rules = notifier_rules::all, class OnAcquire, class OnRelease>
[[nodiscard]] object_pool<T, Rules, OnAcquire, OnRelease> make_object_pool(std::size_t capacity,
                                                                           pool_growth growth,
                                                                           OnAcquire on_acquire,
                                                                           OnRelease on_release) {
    return {capacity, growth, std::move(on_acquire), std::move(on_release)};
}

}  // namespace rtmem
