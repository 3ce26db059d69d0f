// A tiny "game loop" for the advisor's end-to-end test: recorded with `rtmem record`, its sites
// have known classes. Particles live one frame into the next (frame_allocator<2>), entities
// are fixed-size with churn (pool), the level is loaded once (long-lived).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rtmem.h"

namespace {

volatile unsigned char sink;

__attribute__((noinline)) void* spawn_particle(std::size_t i) {
    void* p = std::malloc(64 + (i % 4) * 16);
    std::memset(p, 1, 64);
    return p;
}

__attribute__((noinline)) void* spawn_entity() {
    void* p = std::malloc(48);
    std::memset(p, 2, 48);
    return p;
}

__attribute__((noinline)) void* load_level_chunk(std::size_t i) {
    void* p = std::malloc(1024 + i);
    std::memset(p, 3, 1024);
    return p;
}

}  // namespace

int main() {
    std::vector<void*> level, entities, previous, current;
    level.reserve(32);
    entities.reserve(256);
    previous.reserve(64);
    current.reserve(64);
    for (std::size_t i = 0; i < 32; ++i) level.push_back(load_level_chunk(i));
    for (int i = 0; i < 100; ++i) entities.push_back(spawn_entity());
    for (int frame = 0; frame < 120; ++frame) {
        current.clear();
        for (std::size_t i = 0; i < 40; ++i) current.push_back(spawn_particle(i));
        for (void* p : previous) std::free(p);  // last frame's particles die now
        previous.swap(current);
        for (int k = 0; k < 7; ++k) {  // entities die and respawn in no particular order
            const std::size_t victim =
                static_cast<std::size_t>(frame * 31 + k * 17) % entities.size();
            std::free(entities[victim]);
            entities[victim] = spawn_entity();
        }
        sink = static_cast<const unsigned char*>(entities[0])[0];
        rtmem_trace_frame();
    }
    for (void* p : previous) std::free(p);
    for (void* p : entities) std::free(p);
    std::printf("%d\n", static_cast<int>(sink));
    return 0;  // the level is never freed: long-lived
}
