// A program whose allocations all go through wrappers, as cc1plus's go through xmalloc and
// sqlite3's through sqlite3MemMalloc: frame 0 of every malloc is the wrapper, and only the
// frames above it tell the sites apart (the `rtmem run --plan` wrapper tests). Sites, each
// with its own request size so the test finds it in the trace:
//   48   node_a -> xmalloc                    2 frames
//   80   node_b -> xmalloc                    2 frames (the sibling a plan may leave out)
//   112  deep_a -> helper -> xmalloc          3 frames
//   144  deep_b -> helper -> xmalloc          3 frames
//   160  dyn_a -> xmalloc_dynamic             2 frames; the wrapper's frame size varies
//   176  dyn_b -> xmalloc_dynamic             (alloca): a learned stack offset misreads
//   192  grow_a -> xrealloc(nullptr, n)       2 frames, a realloc that allocates
//   208  align_a -> xaligned(16, n)           2 frames, posix_memalign
// Prints a checksum of everything it wrote, identical whatever allocator serves it.
#include <alloca.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

std::uint64_t g_sum = 0;
void mix(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) g_sum = (g_sum ^ b[i]) * 1099511628211ull;
}

__attribute__((noinline)) void* xmalloc(std::size_t n) {
    void* p = std::malloc(n);
    if (p == nullptr) std::abort();
    std::memset(p, static_cast<int>(n), n);
    return p;
}
__attribute__((noinline)) void* xrealloc(void* old, std::size_t n) {
    void* p = std::realloc(old, n);
    if (p == nullptr) std::abort();
    std::memset(p, static_cast<int>(n), n);
    return p;
}
__attribute__((noinline)) void* xaligned(std::size_t align, std::size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, align, n) != 0) std::abort();
    std::memset(p, static_cast<int>(n), n);
    return p;
}
// Its frame grows by `pad` bytes of stack: the distance from malloc's return-address slot to
// its own varies from call to call.
__attribute__((noinline)) void* xmalloc_dynamic(std::size_t n, std::size_t pad) {
    auto* scratch = static_cast<unsigned char*>(alloca(pad));
    std::memset(scratch, 0x5a, pad);
    void* p = std::malloc(n);
    if (p == nullptr) std::abort();
    std::memcpy(p, scratch, n < pad ? n : pad);
    return p;
}
__attribute__((noinline)) void* helper(std::size_t n) {
    void* p = xmalloc(n);
    mix(p, 1);
    return p;
}

__attribute__((noinline)) void* node_a() {
    return xmalloc(48);
}
__attribute__((noinline)) void* node_b() {
    return xmalloc(80);
}
__attribute__((noinline)) void* deep_a() {
    return helper(112);
}
__attribute__((noinline)) void* deep_b() {
    return helper(144);
}
__attribute__((noinline)) void* dyn_a(int i) {
    return xmalloc_dynamic(160, 16 + 32 * (i % 4));
}
__attribute__((noinline)) void* dyn_b(int i) {
    return xmalloc_dynamic(176, 16 + 32 * (i % 4));
}
__attribute__((noinline)) void* grow_a() {
    return xrealloc(nullptr, 192);
}
__attribute__((noinline)) void* align_a() {
    return xaligned(16, 208);
}

using maker = void* (*)(int);
template <void* (*F)()>
void* plain(int) {
    return F();
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 4000;
    const struct {
        maker make;
        std::size_t size;
    } sites[] = {{plain<node_a>, 48},  {plain<node_b>, 80},  {plain<deep_a>, 112},
                 {plain<deep_b>, 144}, {dyn_a, 160},         {dyn_b, 176},
                 {plain<grow_a>, 192}, {plain<align_a>, 208}};
    // Churn in batches: each site's blocks live a while, then all go (pool-like).
    std::vector<void*> live;
    for (int r = 0; r < rounds; ++r) {
        for (const auto& s : sites) {
            void* p = s.make(r);
            std::memset(p, r & 0xff, s.size);
            live.push_back(p);
        }
        if (live.size() >= 8 * 16) {
            for (std::size_t i = 0; i < live.size(); ++i) mix(live[i], sites[i % 8].size);
            for (void* p : live) std::free(p);
            live.clear();
        }
    }
    for (void* p : live) std::free(p);
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(g_sum));
    return 0;
}
