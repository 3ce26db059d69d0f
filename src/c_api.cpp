// The C arena (Weaver): one mapping with the header, a mutex and two stacks inside it. Memory
// points are stored in the side they mark, so there is no fixed limit on their number.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "rtmem.h"
#include "rtmem/core/alignment.hpp"
#include "rtmem/core/virtual_memory.hpp"
#include "rtmem/detail/sanitizer.hpp"
#include "os/arena_lock.hpp"

namespace {

thread_local rtmem_error last_error = RTMEM_OK;

struct memory_point {
    memory_point* prev;  // older point of the same side
    std::byte* saved;    // the side's top before this point (and its record) was pushed
};

template <class T>
T fail(rtmem_error e, T result) noexcept {
    last_error = e;
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
    last_error = RTMEM_OK;
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
    last_error = RTMEM_OK;
    return empty;
}

void* rtmem_arena_alloc(rtmem_arena* arena, size_t alignment, int side, size_t size) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, static_cast<void*>(nullptr));
    if (alignment == 0) alignment = alignof(std::max_align_t);
    if (!rtmem::is_pow2(alignment))
        return fail(RTMEM_ERROR_BAD_ALIGNMENT, static_cast<void*>(nullptr));
    if (bad_side(side)) return fail(RTMEM_ERROR_BAD_SIDE, static_cast<void*>(nullptr));
    if (size == 0) size = 1;
    std::byte* p = nullptr;
    {
        std::lock_guard lock(arena->mutex);
        p = arena->carve(side, size, alignment);
        if (p != nullptr) {
            arena->note_peak();
            // Under the lock: neighbouring blocks of other threads can share an ASan granule,
            // and an unpoison racing with theirs would cut their block short.
            rtmem::detail::unpoison(p, size);
        }
    }
    if (p == nullptr) return fail(RTMEM_ERROR_OUT_OF_MEMORY, static_cast<void*>(nullptr));
    last_error = RTMEM_OK;
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
    arena->points[side] = new (at) memory_point{arena->points[side], saved};
    last_error = RTMEM_OK;
    return true;
}

void rtmem_arena_rewind(rtmem_arena* arena, int side) {
    if (arena == nullptr) return (void)fail(RTMEM_ERROR_NULL_ARENA, 0);
    if (bad_side(side)) return (void)fail(RTMEM_ERROR_BAD_SIDE, 0);
    std::lock_guard lock(arena->mutex);
    memory_point* point = arena->points[side];
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
    last_error = RTMEM_OK;
}

size_t rtmem_arena_remaining(const rtmem_arena* arena) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, std::size_t{0});
    auto& a = const_cast<rtmem_arena&>(*arena);  // the mutex, not the state, changes
    std::lock_guard lock(a.mutex);
    last_error = RTMEM_OK;
    return static_cast<std::size_t>(a.right - a.left);
}

size_t rtmem_arena_peak(const rtmem_arena* arena) {
    if (arena == nullptr) return fail(RTMEM_ERROR_NULL_ARENA, std::size_t{0});
    auto& a = const_cast<rtmem_arena&>(*arena);
    std::lock_guard lock(a.mutex);
    last_error = RTMEM_OK;
    return a.peak;
}

rtmem_error rtmem_last_error(void) {
    return last_error;
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
    }
    return "unknown error";
}

}  // extern "C"
