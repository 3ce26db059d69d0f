// Streaming assets through a handle_heap: each frame some assets are unloaded and new ones of
// random size stream in. Without compaction the heap fragments until a load fails although
// enough bytes are free; a small defragment budget per frame keeps it usable.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "rtmem/containers/handle_heap.hpp"

namespace {

struct asset {
    rtmem::handle block;
    std::size_t size;
    unsigned char tag;
};

struct run_result {
    int failed_loads = 0;
    std::size_t moved_bytes = 0;
    bool contents_ok = true;
};

run_result stream(bool defragment_each_frame) {
    rtmem::handle_heap heap{4u << 20, 1024};
    std::vector<asset> loaded;
    std::vector<std::size_t> pending;  // sizes of loads waiting for room
    std::mt19937 rng(2024);
    run_result r;
    for (int frame = 0; frame < 600; ++frame) {
        // Unload a few assets (random ones: streaming order is not allocation order).
        const auto unloads = static_cast<int>(rng() % 3);
        for (int k = 0; k < unloads && !loaded.empty(); ++k) {
            const auto i = rng() % loaded.size();
            heap.free(loaded[i].block);
            loaded[i] = loaded.back();
            loaded.pop_back();
        }
        // Stream in a few, of very different sizes; a load that does not fit waits for the
        // next frame.
        for (int k = 0; k < 2; ++k) {
            pending.push_back((rng() % 4 == 0) ? 64 * 1024 + rng() % (128 * 1024)
                                               : 1024 + rng() % 16384);
        }
        std::vector<std::size_t> still_pending;
        for (std::size_t size : pending) {
            rtmem::handle h = heap.allocate(size, 64);
            if (!h) {
                ++r.failed_loads;
                still_pending.push_back(size);
                continue;
            }
            const auto tag = static_cast<unsigned char>(rng());
            std::memset(heap.resolve(h), tag, size);
            loaded.push_back({h, size, tag});
        }
        pending.swap(still_pending);
        // The level keeps about 3 MiB resident: evict the oldest assets beyond that.
        while (heap.free_bytes() < (1u << 20) && !loaded.empty()) {
            heap.free(loaded.front().block);
            loaded.erase(loaded.begin());
        }
        // The per-frame budget: a few blocks, bounded bytes (Gregory: 8-16 blocks per frame).
        if (defragment_each_frame)
            r.moved_bytes +=
                heap.defragment({.max_bytes = 512 * 1024, .max_blocks = 12}).bytes_moved;

        // Render: resolve handles every frame (addresses may change between frames).
        for (const auto& a : loaded) {
            const auto* p = static_cast<const unsigned char*>(heap.resolve(a.block));
            if (p[0] != a.tag || p[a.size - 1] != a.tag) r.contents_ok = false;
        }
    }
    if (!heap.check()) r.contents_ok = false;
    return r;
}

}  // namespace

int main() {
    const run_result plain = stream(false);
    const run_result compacted = stream(true);
    std::printf("without defragmentation: %d loads had to wait a frame\n", plain.failed_loads);
    std::printf("with a per-frame defragment budget: %d loads waited, %zu KiB moved in total\n",
                compacted.failed_loads, compacted.moved_bytes / 1024);
    if (!plain.contents_ok || !compacted.contents_ok) {
        std::printf("asset contents were damaged\n");
        return EXIT_FAILURE;
    }
    return compacted.failed_loads < plain.failed_loads ? EXIT_SUCCESS : EXIT_FAILURE;
}
