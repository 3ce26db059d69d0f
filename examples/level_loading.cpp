// Level loading with a double-ended allocator: permanent assets at the top, temporary
// decompression buffers at the bottom, rewound after each asset. The two share one budget, so
// neither needs its own worst case; a level switch resets both sides at once.
#include <cstdio>
#include <cstring>
#include <span>

#include "rtmem/alloc/double_ended.hpp"

namespace {

struct asset {
    const char* name;
    std::size_t compressed, decompressed;
};

// Pretend decompression: expands `in` into `out` (a real loader would call zstd/lz4 here).
void decompress(std::span<const std::byte> in, std::span<std::byte> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = in[i % in.size()];
}

bool load_level(rtmem::double_ended_allocator& memory, std::span<const asset> assets) {
    auto scratch = memory.bottom();  // temporary: rewound after every asset
    auto permanent = memory.top();   // kept until the level is unloaded
    for (const asset& a : assets) {
        const auto mark = scratch.marker();
        auto* file = static_cast<std::byte*>(scratch.allocate(a.compressed, 16));
        auto* work = static_cast<std::byte*>(scratch.allocate(a.decompressed, 64));
        auto* kept = static_cast<std::byte*>(permanent.allocate(a.decompressed, 64));
        if (file == nullptr || work == nullptr || kept == nullptr) {
            std::fprintf(stderr, "level_loading: %s does not fit\n", a.name);
            return false;
        }
        std::memset(file, 0x2A, a.compressed);  // "read the file"
        decompress({file, a.compressed}, {work, a.decompressed});
        std::memcpy(kept, work, a.decompressed);  // the final GPU-ready copy stays
        scratch.rewind(mark);                     // file and work buffers are gone
    }
    return true;
}

}  // namespace

int main() {
    rtmem::double_ended_allocator memory{std::size_t{8} << 20};  // one 8 MiB level budget
    const asset forest[] = {
        {"terrain", 400'000, 2'000'000}, {"trees", 200'000, 1'500'000}, {"sky", 50'000, 500'000}};
    const asset city[] = {{"buildings", 600'000, 3'000'000},
                          {"roads", 100'000, 800'000},
                          {"signs", 30'000, 200'000},
                          {"cars", 300'000, 1'200'000}};
    bool ok = true;
    for (const auto level : {std::span<const asset>(forest), std::span<const asset>(city)}) {
        ok = ok && load_level(memory, level);
        std::printf(
            "level_loading: %zu assets, %zu KiB permanent, %zu KiB scratch now, "
            "scratch peak %zu KiB, total peak %zu KiB of %zu KiB\n",
            level.size(), memory.used(rtmem::side::top) / 1024,
            memory.used(rtmem::side::bottom) / 1024, memory.stats(rtmem::side::bottom).peak / 1024,
            memory.stats().peak / 1024, memory.capacity() / 1024);
        ok = ok && memory.used(rtmem::side::bottom) == 0;
        memory.reset();  // unload the level: both sides, O(1)
    }
    return ok ? 0 : 1;
}
