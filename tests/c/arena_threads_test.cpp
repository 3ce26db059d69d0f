// Several threads allocate, mark and rewind one C arena concurrently. A rewind frees only the
// calling thread's own work or is refused with RTMEM_ERROR_OTHER_THREAD (rtmem.h, "Threads"):
// no two live blocks may overlap, and each thread's live data must survive the others' work.
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
std::atomic<long> rewinds_done{0}, rewinds_refused{0};
std::atomic<int> ready{0};  // the workers start together, so their work interleaves

void fail(const char* what) {
    std::fprintf(stderr, "arena threads: %s\n", what);
    failures.fetch_add(1);
}

bool intact(const block& b) {
    for (std::size_t i = 0; i < b.size; ++i)
        if (b.p[i] != b.fill) return false;
    return true;
}

void worker(rtmem_arena* arena, unsigned id) {
    std::vector<block> mine[2];             // this thread's live blocks per side, oldest first
    std::vector<std::size_t> my_points[2];  // mine[side].size() when each of my points was pushed
    std::uint32_t rng = 0x12345u + id * 7919u;
    auto next = [&rng] { return rng = rng * 1664525u + 1013904223u; };
    ready.fetch_add(1);
    while (ready.load() < 4) std::this_thread::yield();
    for (int round = 0; round < 3000; ++round) {
        const int side = static_cast<int>(next() >> 31);
        std::uint32_t action = next() % 64;
        if (action == 0) {
            if (rtmem_arena_mark(arena, side)) my_points[side].push_back(mine[side].size());
            continue;
        }
        if (action < 7) {
            // A short scope: mark, a few blocks, rewind. Succeeds unless another thread got in.
            if (!rtmem_arena_mark(arena, side)) continue;
            my_points[side].push_back(mine[side].size());
            for (std::uint32_t k = 0; k < 1 + action % 3; ++k) {
                auto* p = static_cast<unsigned char*>(rtmem_arena_alloc(arena, 8, side, 32));
                if (p == nullptr) break;
                const auto fill = static_cast<unsigned char>(id * 17 + k);
                std::memset(p, fill, 32);
                mine[side].push_back({p, 32, fill});
            }
            action = 7;  // and rewind it, below
        }
        if (action == 7) {  // also alone: a rewind of whatever this thread marked last
            // A rewind frees back to my last point on this side, or (none) all my blocks there;
            // those blocks are checked while still live (once freed, others may reuse them).
            const std::size_t keep = my_points[side].empty() ? 0 : my_points[side].back();
            for (std::size_t i = keep; i < mine[side].size(); ++i)
                if (!intact(mine[side][i])) fail("a block was overwritten before its rewind");
            if (rtmem_arena_rewind(arena, side)) {
                if (!my_points[side].empty()) my_points[side].pop_back();
                mine[side].resize(keep);
                rewinds_done.fetch_add(1);
            } else {
                if (rtmem_last_error() != RTMEM_ERROR_OTHER_THREAD) fail("wrong rewind error");
                rewinds_refused.fetch_add(1);
            }
            continue;
        }
        const std::size_t size = 1 + (next() >> 8) % 200;
        const std::size_t align = std::size_t{1} << ((next() >> 8) % 7);
        auto* p = static_cast<unsigned char*>(rtmem_arena_alloc(arena, align, side, size));
        if (p == nullptr) continue;  // exhausted: the others hold the space
        if ((reinterpret_cast<std::uintptr_t>(p) & (align - 1)) != 0) fail("misaligned block");
        const auto fill = static_cast<unsigned char>(id * 31 + static_cast<unsigned>(round));
        std::memset(p, fill, size);
        mine[side].push_back({p, size, fill});
    }
    // Every block this thread still holds keeps its pattern: nobody else got its bytes.
    for (const auto& side : mine)
        for (const block& b : side)
            if (!intact(b)) return fail("a block was overwritten by another thread");
}

// One thread alone: its rewinds all succeed and free exactly its blocks.
void single_thread_rewinds(rtmem_arena* arena, std::size_t empty) {
    std::thread t([&] {
        if (!rtmem_arena_mark(arena, RTMEM_SIDE_LEFT)) fail("mark failed");
        (void)rtmem_arena_alloc(arena, 0, RTMEM_SIDE_LEFT, 100);
        if (!rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT)) fail("own rewind refused");
        if (!rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT)) fail("own rewind refused");
    });
    t.join();
    if (rtmem_arena_remaining(arena) != empty) fail("single thread: arena not empty");
}

// Another thread's point on top, or another thread's block above mine: refused, nothing freed.
void refusals(rtmem_arena* arena, std::size_t empty) {
    if (!rtmem_arena_mark(arena, RTMEM_SIDE_RIGHT)) fail("mark failed");
    std::thread([&] {
        auto* p = static_cast<unsigned char*>(rtmem_arena_alloc(arena, 0, RTMEM_SIDE_RIGHT, 64));
        if (p == nullptr) return fail("alloc failed");
        std::memset(p, 0x5A, 64);
    }).join();
    const std::size_t before = rtmem_arena_remaining(arena);
    if (rtmem_arena_rewind(arena, RTMEM_SIDE_RIGHT) ||
        rtmem_last_error() != RTMEM_ERROR_OTHER_THREAD)
        fail("a rewind over another thread's block was not refused");
    if (rtmem_arena_remaining(arena) != before) fail("a refused rewind freed memory");
    std::thread([&] {
        if (!rtmem_arena_mark(arena, RTMEM_SIDE_LEFT)) fail("mark failed");
    }).join();
    if (rtmem_arena_rewind(arena, RTMEM_SIDE_LEFT) ||
        rtmem_last_error() != RTMEM_ERROR_OTHER_THREAD)
        fail("a rewind of another thread's memory point was not refused");
    for (int side = 0; side < 2; ++side)
        if (!rtmem_arena_reset(arena, side)) fail("reset failed");
    if (rtmem_arena_remaining(arena) != empty) fail("reset did not empty the arena");
}

}  // namespace

int main() {
    rtmem_arena* arena = rtmem_arena_create(std::size_t{8} << 20);
    if (arena == nullptr) return EXIT_FAILURE;
    const std::size_t empty = rtmem_arena_remaining(arena);
    single_thread_rewinds(arena, empty);
    refusals(arena, empty);
    for (int pass = 0; pass < 3; ++pass) {
        std::vector<std::thread> threads;
        ready.store(0);
        for (unsigned t = 0; t < 4; ++t)
            threads.emplace_back(worker, arena, t + 4 * static_cast<unsigned>(pass));
        for (auto& t : threads) t.join();
        for (int side = 0; side < 2; ++side) (void)rtmem_arena_reset(arena, side);
        if (rtmem_arena_remaining(arena) != empty) fail("arena not empty after reset");
    }
    if (rewinds_done.load() == 0) fail("no rewind succeeded: the test exercised nothing");
    if (rtmem_arena_peak(arena) == 0) fail("peak not recorded");
    if (!rtmem_arena_destroy(arena)) fail("destroy reported live blocks after the resets");
    if (failures.load() != 0) return EXIT_FAILURE;
    std::printf("arena threads: no overlap, all data intact (%ld rewinds, %ld refused)\n",
                rewinds_done.load(), rewinds_refused.load());
    return EXIT_SUCCESS;
}
