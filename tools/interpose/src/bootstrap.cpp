// The bootstrap buffer (bootstrap.hpp).
#include "rtmem/interpose/bootstrap.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rtmem::interpose {

// A bump buffer; blocks carry their size in a 16-byte header and are never freed.
alignas(4096) char g_bootstrap[bootstrap_bytes];

namespace {
std::atomic<std::size_t> g_bootstrap_used{0};
}  // namespace

void* bootstrap_alloc(std::size_t size, std::size_t align) noexcept {
    if (align < 16) align = 16;
    std::size_t need = ((size + 15) & ~std::size_t{15}) + align + 16;
    std::size_t start = g_bootstrap_used.fetch_add(need);
    if (start + need > sizeof g_bootstrap) {
        errno = ENOMEM;
        return nullptr;
    }
    auto base = reinterpret_cast<std::uintptr_t>(g_bootstrap) + start + 16;
    std::uintptr_t p = (base + align - 1) & ~(align - 1);
    std::size_t stored = size;
    std::memcpy(reinterpret_cast<void*>(p - 16), &stored, sizeof stored);
    if (&rtmem_interpose_bootstrap_block != nullptr)
        rtmem_interpose_bootstrap_block(reinterpret_cast<void*>(p));
    return reinterpret_cast<void*>(p);
}
std::size_t bootstrap_size(const void* p) noexcept {
    std::size_t s = 0;
    std::memcpy(&s, static_cast<const char*>(p) - 16, sizeof s);
    return s;
}


}  // namespace rtmem::interpose
