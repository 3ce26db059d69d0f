// libFuzzer entry for handle_heap: the bytes choose allocations (size, alignment, memmove or a
// custom relocator), frees, pins, unpins and budgeted defragment steps. After every step each
// live block must still hold its pattern, pinned blocks must not have moved, and check() must
// hold. Any difference aborts (what libFuzzer and the ctest driver detect).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "conformance.hpp"
#include "rtmem/containers/handle_heap.hpp"

namespace {

struct live_block {
    rtmem::handle h;
    std::size_t size;
    std::uint8_t seed;
    void* pinned_at;  // nullptr when not pinned
};

void fail(const char* what) {
    std::fprintf(stderr, "handle_heap fuzz: %s\n", what);
    std::abort();
}

void copy_relocate(void* dst, void* src, std::size_t size, void* user) noexcept {
    auto* d = static_cast<std::byte*>(dst);
    auto* s = static_cast<std::byte*>(src);
    if (d < s + size && s < d + size) fail("custom relocator got overlapping ranges");
    std::memcpy(dst, src, size);
    ++*static_cast<std::size_t*>(user);
}

std::uint8_t pattern(std::uint8_t seed, std::size_t i) {
    return static_cast<std::uint8_t>(seed + i * 13u);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    rtmem::testing::byte_source src({data, size});
    rtmem::handle_heap heap{32 * 1024, 64};
    std::vector<live_block> live;
    std::size_t relocations = 0;
    while (!src.exhausted()) {
        const auto op = src.below(8);
        if (op < 3) {
            const auto n = static_cast<std::size_t>(1 + src.below(op == 0 ? 4096 : 256));
            const std::size_t align = std::size_t{1} << src.below(9);
            const bool custom = src.below(4) == 0;
            rtmem::handle h =
                heap.allocate(n, align, custom ? &copy_relocate : nullptr, &relocations);
            if (!h) continue;
            auto* p = static_cast<std::uint8_t*>(heap.resolve(h));
            if (!rtmem::is_aligned(p, align)) fail("misaligned block");
            const auto seed = static_cast<std::uint8_t>(src.below(256));
            for (std::size_t i = 0; i < n; ++i) p[i] = pattern(seed, i);
            live.push_back({h, n, seed, nullptr});
        } else if (op < 5 && !live.empty()) {
            const auto i = static_cast<std::size_t>(src.below(live.size()));
            heap.free(live[i].h);
            live[i] = live.back();
            live.pop_back();
        } else if (op == 5 && !live.empty()) {
            auto& b = live[static_cast<std::size_t>(src.below(live.size()))];
            if (b.pinned_at == nullptr) {
                b.pinned_at = heap.pin(b.h);
            } else {
                heap.unpin(b.h);
                b.pinned_at = nullptr;
            }
        } else {
            const rtmem::defrag_budget budget{static_cast<std::size_t>(1 + src.below(8192)),
                                              static_cast<std::size_t>(1 + src.below(4))};
            (void)heap.defragment(budget);
        }
        for (const auto& b : live) {
            const auto* p = static_cast<const std::uint8_t*>(heap.resolve(b.h));
            if (b.pinned_at != nullptr && p != b.pinned_at) fail("pinned block moved");
            for (std::size_t i = 0; i < b.size; ++i)
                if (p[i] != pattern(b.seed, i)) fail("block contents changed");
        }
        if (!heap.check()) fail("check() failed");
    }
    return 0;
}
