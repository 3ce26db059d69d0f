// Several threads allocate, mark and rewind one C arena concurrently: no two live blocks may
// overlap, and each thread's data must survive the others' work.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "rtmem.h"

namespace {

struct block {
    unsigned char* p;
    std::size_t size;
    unsigned char fill;
};

std::atomic<int> failures{0};

void fail(const char* what) {
    std::fprintf(stderr, "arena threads: %s\n", what);
    failures.fetch_add(1);
}

void worker(rtmem_arena* arena, unsigned id) {
    std::vector<block> mine;
    std::uint32_t rng = 0x12345u + id * 7919u;
    auto next = [&rng] { return rng = rng * 1664525u + 1013904223u; };
    for (int round = 0; round < 2000; ++round) {
        const int side = static_cast<int>(next() >> 31);
        const std::size_t size = 1 + (next() >> 8) % 200;
        const std::size_t align = std::size_t{1} << ((next() >> 8) % 7);
        auto* p = static_cast<unsigned char*>(rtmem_arena_alloc(arena, align, side, size));
        if (p == nullptr) continue;  // exhausted: the others hold the space
        if ((reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0) fail("misaligned block");
        const auto fill = static_cast<unsigned char>(id * 31 + static_cast<unsigned>(round));
        std::memset(p, fill, size);
        mine.push_back({p, size, fill});
        if (next() % 64 == 0) (void)rtmem_arena_mark(arena, side);
    }
    // Every block written by this thread still holds its pattern: nobody else got its bytes.
    for (const block& b : mine)
        for (std::size_t i = 0; i < b.size; ++i)
            if (b.p[i] != b.fill) return fail("a block was overwritten by another thread");
}

}  // namespace

int main() {
    rtmem_arena* arena = rtmem_arena_create(std::size_t{8} << 20);
    if (arena == nullptr) return EXIT_FAILURE;
    const std::size_t empty = rtmem_arena_remaining(arena);
    for (int pass = 0; pass < 3; ++pass) {
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 4; ++t)
            threads.emplace_back(worker, arena, t + 4 * static_cast<unsigned>(pass));
        for (auto& t : threads) t.join();
        // Rewinding until both sides are empty pops every memory point the threads pushed.
        for (int side = 0; side < 2; ++side)
            for (int i = 0; i < 10000 && rtmem_arena_remaining(arena) != empty; ++i)
                rtmem_arena_rewind(arena, side);
        if (rtmem_arena_remaining(arena) != empty) fail("arena not empty after rewinding");
    }
    if (rtmem_arena_peak(arena) == 0) fail("peak not recorded");
    if (!rtmem_arena_destroy(arena)) fail("destroy reported live blocks after rewinding");
    if (failures.load() != 0) return EXIT_FAILURE;
    std::puts("arena threads: no overlap, all data intact");
    return EXIT_SUCCESS;
}
