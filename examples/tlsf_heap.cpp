// A real-time heap: one pre-faulted buffer given to TLSF at start-up, then a "frame loop" that
// allocates and frees variable-sized messages with bounded cost, a pool for fixed-size particles,
// the heap's front cache turned on once the loop is in steady state, and a heap dump plus
// fragmentation figures at the end.
#include <cstdio>
#include <cstring>
#include <new>
#include <span>
#include <vector>

#include "rtmem/alloc/fixed_pool.hpp"
#include "rtmem/alloc/tlsf.hpp"

namespace {

struct particle {
    float x, y, vx, vy;
};

}  // namespace

int main() {
    // All memory is reserved and touched up front: nothing in the loop asks the OS for pages.
    static std::byte heap_memory[1 << 20];
    static std::byte particle_memory[64 << 10];
    std::memset(heap_memory, 0, sizeof heap_memory);

    rtmem::tlsf_allocator heap{std::span<std::byte>(heap_memory)};
    // The particle's size is a constant, so allocate() below tests nothing but the free list.
    rtmem::fixed_pool_allocator<sizeof(particle), alignof(particle)> particles{
        std::span<std::byte>(particle_memory)};

    struct message {
        void* data;
        std::size_t size;
    };
    std::vector<message> inbox;
    std::vector<void*> live_particles;
    unsigned seed = 1;
    auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };

    for (int frame = 0; frame < 600; ++frame) {
        // Steady state from here on: park up to 4 freed blocks per size for the next message of
        // that size (a pop instead of a search, split and merge).
        if (frame == 300) heap.set_cache_depth(4);
        // Messages of 16 B .. 4 KiB arrive and are handled a few frames later.
        for (int i = 0; i < 8; ++i) {
            const std::size_t size = 16 + next() % 4080;
            void* p = heap.allocate(size, 16);
            if (p == nullptr) {
                std::fprintf(stderr, "frame %d: heap exhausted\n", frame);
                return 1;
            }
            std::memset(p, frame & 0xFF, size);
            inbox.push_back({p, size});
        }
        while (inbox.size() > 40) {
            const std::size_t i = next() % inbox.size();
            heap.deallocate(inbox[i].data, inbox[i].size, 16);
            inbox[i] = inbox.back();
            inbox.pop_back();
        }
        // Particles spawn and die: O(1) pops and pushes.
        for (int i = 0; i < 20; ++i)
            if (void* p = particles.allocate(sizeof(particle), alignof(particle)))
                live_particles.push_back(new (p) particle{});
        while (live_particles.size() > 500) {
            particles.deallocate(live_particles.back(), sizeof(particle), alignof(particle));
            live_particles.pop_back();
        }
    }

    const auto f = heap.fragmentation();
    std::printf("TLSF heap: %zu live blocks, %zu bytes held for %zu requested (internal %.1f%%)\n",
                heap.stats().live_count, f.held_live, f.requested_live, 100.0 * f.internal());
    std::printf("free: %zu bytes in %zu blocks, largest %zu (external fragmentation %.1f%%)\n",
                f.free_bytes, f.free_blocks, f.largest_free, 100.0 * f.external());
    std::printf("front cache: %zu freed blocks parked for reuse\n", heap.cached_blocks());
    std::printf("pool: %zu particles live, peak %zu bytes\n", particles.stats().live_count,
                particles.stats().peak);

    std::size_t shown = 0;
    std::printf("first blocks of the heap dump:\n");
    heap.walk([&](const void* p, std::size_t size, bool used) {
        if (shown++ < 6) std::printf("  %p %7zu bytes %s\n", p, size, used ? "used" : "free");
    });

    for (const auto& m : inbox) heap.deallocate(m.data, m.size, 16);
    heap.flush_cache();  // coalesce the parked blocks too
    for (void* p : live_particles) particles.deallocate_block(p);
    const bool ok = heap.check() && particles.check() && heap.fragmentation().free_blocks == 1;
    std::printf("after freeing everything: %s\n",
                ok ? "one free block, invariants hold" : "BROKEN");
    return ok ? 0 : 1;
}
