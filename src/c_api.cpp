// The C arena (Weaver): one mapping with the header, a mutex and two stacks inside it. Memory
// points are stored in the side they mark, so there is no fixed limit on their number.
// Threads share the sides, so their blocks interleave: a rewind that would free a block or a
// memory point another thread made after the point being rewound to is refused
// (RTMEM_ERROR_OTHER_THREAD). Each point (and each side's base) records the thread that opened
// it and whether another thread has allocated in it since.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "c_last_error.hpp"
#include "rtmem.h"
#include "rtmem/core/alignment.hpp"
#include "rtmem/core/virtual_memory.hpp"
#include "rtmem/detail/sanitizer.hpp"
#include "os/arena_lock.hpp"

namespace {

// A process-unique id of the calling thread (never reused, unlike thread addresses).
std::uint64_t this_thread_id() noexcept {
    static std::atomic<std::uint64_t> next{1};
    thread_local const std::uint64_t id = next.fetch_add(1, std::memory_order_relaxed);
    return id;
}

// The part of a side above a memory point (or above the side's start): who opened it, and
// whether another thread has allocated in it since.
struct region {
    std::uint64_t owner = 0;  // 0: a side's base while it is empty (no one yet)
    bool shared = false;

    void allocated_by(std::uint64_t thread) noexcept {
        if (owner == 0)
            owner = thread;
        else if (owner != thread)
            shared = true;
    }
    [[nodiscard]] bool rewindable_by(std::uint64_t thread) const noexcept {
        return !shared && (owner == 0 || owner == thread);
    }
};

struct memory_point {
    memory_point* prev;  // older point of the same side
    std::byte* saved;    // the side's top before this point (and its record) was pushed
    region above;
};

template <class T>
T fail(rtmem_error e, T result) noexcept {
    rtmem::detail::c_last_error() = e;
    return result;
}

}  // namespace

struct rtmem_arena {
    rtmem::detail::arena_lock mutex;
    std::size_t mapping_bytes;
    std::byte* begin;
    std::byte* end;
    std::byte* left;   // grows up
    std::byte* right;  // grows down
    std::size_t peak;
    memory_point* points[2];
    region base[2];  // each side below its oldest point

    region& top_region(int side) noexcept {
        return points[side] != nullptr ? points[side]->above : base[side];
    }

    [[nodiscard]] std::size_t used() const noexcept {
        return static_cast<std::size_t>(left - begin) + static_cast<std::size_t>(end - right);
    }
    void note_peak() noexcept {
        if (used() > peak) peak = used();
    }
    // Carves size bytes aligned to align from a side; nullptr when the sides would meet.
    std::byte* carve(int side, std::size_t size, std::size_t align) noexcept {
        const auto room = static_cast<std::size_t>(right - left);
        if (side == RTMEM_SIDE_LEFT) {
            const std::size_t pad = rtmem::align_padding(left, align);
            if (pad > room || size > room - pad) return nullptr;
            std::byte* p = left + pad;
            left = p + size;
            return p;
        }
        if (size > room) return nullptr;
        const auto start = reinterpret_cast<std::uintptr_t>(right) - size;
        std::byte* p = right - size - (start & (std::uintptr_t{align} - 1));
        if (p < left) return nullptr;
        right = p;
        return p;
    }
};

namespace {
constexpr std::size_t header_bytes = rtmem::align_up(sizeof(rtmem_arena), 64);
bool bad_side(int side) noexcept {
    return side != RTMEM_SIDE_LEFT && side != RTMEM_SIDE_RIGHT;
}
}  // namespace

extern "C" {

rtmem_arena* rtmem_arena_create(size_t bytes) {
    std::size_t total = 0;
    if (!rtmem::checked_add(bytes, header_bytes, total) ||
        total > SIZE_MAX - rtmem::virtual_memory::page_size())
        return fail(RTMEM_ERROR_BAD_SIZE, static_cast<rtmem_arena*>(nullptr));
    total = rtmem::virtual_memory::round_to_pages(total);
    void* mem = rtmem::virtual_memory::reserve(total);
    if (mem == nullptr) return fail(RTMEM_ERROR_OUT_OF_MEMORY, static_cast<rtmem_arena*>(nullptr));
    if (!rtmem::virtual_memory::commit(mem, total)) {
        rtmem::virtual_memory::release(mem, total);
        return fail(RTMEM_ERROR_OUT_OF_MEMORY, static_cast<rtmem_arena*>(nullptr));
    }
    auto* a = new (mem) rtmem_arena{};
    a->mapping_bytes = total;
    a->begin = a->left = static_cast<std::byte*>(mem) + header_bytes;
    a->end = a->right = static_cast<std::byte*>(mem) + total;
    rtmem::detail::poison(a->begin, static_cast<std::size_t>(a->end - a->begin));
    rtmem::detail::c_last_error() = RTMEM_OK;
    return a;
}

bool rtmem_arena_destroy(rtmem_arena* arena) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, false);
    bool empty = false;
    {
        std::lock_guard lock(arena->mutex);
        empty = arena->left == arena->begin && arena->right == arena->end;
    }
    const std::size_t bytes = arena->mapping_bytes;
    rtmem::detail::unpoison(arena->begin, static_cast<std::size_t>(arena->end - arena->begin));
    arena->~rtmem_arena();
    rtmem::virtual_memory::release(arena, bytes);
    if (!empty) return fail(RTMEM_ERROR_LIVE_BLOCKS, false);
    rtmem::detail::c_last_error() = RTMEM_OK;
    return true;
}

void* rtmem_arena_alloc(rtmem_arena* arena, size_t alignment, int side, size_t size) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, static_cast<void*>(nullptr));
    if (alignment == 0) alignment = alignof(std::max_align_t);
    if (!rtmem::is_pow2(alignment))
        return fail(RTMEM_ERROR_BAD_ALIGNMENT, static_cast<void*>(nullptr));
    if (bad_side(side)) return fail(RTMEM_ERROR_BAD_SIDE, static_cast<void*>(nullptr));
    if (size > SIZE_MAX - alignment) return fail(RTMEM_ERROR_BAD_SIZE, static_cast<void*>(nullptr));
    if (size == 0) size = 1;
    const std::uint64_t thread = this_thread_id();
    std::byte* p = nullptr;
    {
        std::lock_guard lock(arena->mutex);
        p = arena->carve(side, size, alignment);
        if (p != nullptr) {
            arena->top_region(side).allocated_by(thread);
            arena->note_peak();
            // Under the lock: neighbouring blocks of other threads can share an ASan granule,
            // and an unpoison racing with theirs would cut their block short.
            rtmem::detail::unpoison(p, size);
        }
    }
    if (p == nullptr) return fail(RTMEM_ERROR_OUT_OF_MEMORY, static_cast<void*>(nullptr));
    rtmem::detail::c_last_error() = RTMEM_OK;
    return p;
}

bool rtmem_arena_mark(rtmem_arena* arena, int side) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, false);
    if (bad_side(side)) return fail(RTMEM_ERROR_BAD_SIDE, false);
    std::lock_guard lock(arena->mutex);
    std::byte* saved = side == RTMEM_SIDE_LEFT ? arena->left : arena->right;
    std::byte* at = arena->carve(side, sizeof(memory_point), alignof(memory_point));
    if (at == nullptr) return fail(RTMEM_ERROR_OUT_OF_MEMORY, false);
    arena->note_peak();
    rtmem::detail::unpoison(at, sizeof(memory_point));
    arena->points[side] = new (at) memory_point{arena->points[side], saved, {this_thread_id()}};
    rtmem::detail::c_last_error() = RTMEM_OK;
    return true;
}

namespace {
// Frees a side back to its last memory point (popping it), or empties it when it has none.
void rewind_side(rtmem_arena* arena, int side) noexcept {
    memory_point* point = arena->points[side];
    if (point == nullptr) arena->base[side] = region{};
    if (side == RTMEM_SIDE_LEFT) {
        std::byte* to = point != nullptr ? point->saved : arena->begin;
        arena->points[side] = point != nullptr ? point->prev : nullptr;
        rtmem::detail::poison(to, static_cast<std::size_t>(arena->left - to));
        arena->left = to;
    } else {
        std::byte* to = point != nullptr ? point->saved : arena->end;
        arena->points[side] = point != nullptr ? point->prev : nullptr;
        rtmem::detail::poison(arena->right, static_cast<std::size_t>(to - arena->right));
        arena->right = to;
    }
}
}  // namespace

bool rtmem_arena_rewind(rtmem_arena* arena, int side) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, false);
    if (bad_side(side)) return fail(RTMEM_ERROR_BAD_SIDE, false);
    std::lock_guard lock(arena->mutex);
    if (!arena->top_region(side).rewindable_by(this_thread_id()))
        return fail(RTMEM_ERROR_OTHER_THREAD, false);
    rewind_side(arena, side);
    rtmem::detail::c_last_error() = RTMEM_OK;
    return true;
}

bool rtmem_arena_reset(rtmem_arena* arena, int side) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, false);
    if (bad_side(side)) return fail(RTMEM_ERROR_BAD_SIDE, false);
    std::lock_guard lock(arena->mutex);
    while (arena->points[side] != nullptr) rewind_side(arena, side);
    rewind_side(arena, side);
    rtmem::detail::c_last_error() = RTMEM_OK;
    return true;
}

size_t rtmem_arena_remaining(const rtmem_arena* arena) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, std::size_t{0});
    auto& a = const_cast<rtmem_arena&>(*arena);  // the mutex, not the state, changes
    std::lock_guard lock(a.mutex);
    rtmem::detail::c_last_error() = RTMEM_OK;
    return static_cast<std::size_t>(a.right - a.left);
}

size_t rtmem_arena_peak(const rtmem_arena* arena) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, std::size_t{0});
    auto& a = const_cast<rtmem_arena&>(*arena);
    std::lock_guard lock(a.mutex);
    rtmem::detail::c_last_error() = RTMEM_OK;
    return a.peak;
}

rtmem_error rtmem_last_error(void) {
    return rtmem::detail::c_last_error();
}

const char* rtmem_error_string(rtmem_error error) {
    switch (error) {
        case RTMEM_OK:
            return "no error";
        case RTMEM_ERROR_NULL_ARENA:
            return "the arena is NULL";
        case RTMEM_ERROR_BAD_ALIGNMENT:
            return "alignment is neither 0 nor a power of two";
        case RTMEM_ERROR_BAD_SIDE:
            return "side is neither RTMEM_SIDE_LEFT nor RTMEM_SIDE_RIGHT";
        case RTMEM_ERROR_OUT_OF_MEMORY:
            return "out of memory: the two sides would meet";
        case RTMEM_ERROR_BAD_SIZE:
            return "size overflows";
        case RTMEM_ERROR_OTHER_THREAD:
            return "the rewind would free blocks or a memory point of another thread";
        case RTMEM_ERROR_LIVE_BLOCKS:
            return "blocks or memory points were still live";
        case RTMEM_ERROR_NOT_TRACED:
            return "the process is not being recorded by rtmem record (or its trace has ended)";
        case RTMEM_ERROR_BAD_ARGUMENT:
            return "a NULL or empty argument";
        case RTMEM_ERROR_IO:
            return "the trace could not be written";
    }
    return "unknown error";
}

}  // extern "C"
