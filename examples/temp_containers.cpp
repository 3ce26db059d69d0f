// Temporary STL containers in a function called every frame: std::pmr containers over the
// thread's temporary arena, freed when the scope ends. Once warm, a frame makes no heap call.
#include <algorithm>
#include <cstdio>
#include <memory_resource>
#include <string>
#include <vector>

#include "rtmem/adapt/temporary.hpp"

namespace {

struct object {
    float x, y, radius;
    int id;
};

// Called every frame: which objects are inside the view, sorted by id, with a debug label.
std::size_t visible_count(const std::vector<object>& world, float view_x, float view_w) {
    rtmem::temp_scope scope;
    std::pmr::vector<const object*> visible{scope.resource()};
    visible.reserve(64);
    for (const object& o : world)
        if (o.x + o.radius >= view_x && o.x - o.radius <= view_x + view_w) visible.push_back(&o);
    std::sort(visible.begin(), visible.end(),
              [](const object* a, const object* b) { return a->id < b->id; });
    std::pmr::string label{"visible: ", scope.resource()};
    label += std::to_string(visible.size());
    return visible.size();
}  // everything the scope allocated is rewound here

}  // namespace

int main() {
    std::vector<object> world;
    for (int i = 0; i < 5000; ++i)
        world.push_back({static_cast<float>(i % 1000), static_cast<float>(i / 1000), 2.0f, i});

    std::size_t total = 0;
    std::size_t warm_reserved = 0;
    for (int frame = 0; frame < 300; ++frame) {
        total += visible_count(world, static_cast<float>(frame % 800), 200.0f);
        if (frame == 0) warm_reserved = rtmem::temporary_allocator().reserved_bytes();
    }
    const rtmem::arena& temp = rtmem::temporary_allocator();
    const rtmem::stats s = temp.stats();
    std::printf(
        "temp_containers: 300 frames, %zu visible in total; arena peak %zu KiB, "
        "%zu KiB reserved in %zu chunks, now %zu bytes in use\n",
        total, s.peak / 1024, temp.reserved_bytes() / 1024, temp.chunk_count(), s.used);
    // Every frame's memory came back, and after the first frame no chunk was added.
    const bool ok = s.used == 0 && temp.reserved_bytes() == warm_reserved && total > 0;
    return ok ? 0 : 1;
}
