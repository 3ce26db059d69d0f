// The bootstrap buffer (bootstrap.hpp).
#include "rtmem/interpose/bootstrap.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rtmem::interpose {

namespace {
// A bump buffer; blocks carry their size in a 16-byte header and are never freed.
alignas(4096) char g_bootstrap[4u << 20];
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
    return reinterpret_cast<void*>(p);
}
bool is_bootstrap(const void* p) noexcept {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto b = reinterpret_cast<std::uintptr_t>(g_bootstrap);
    return a >= b && a < b + sizeof g_bootstrap;
}
std::size_t bootstrap_size(const void* p) noexcept {
    std::size_t s = 0;
    std::memcpy(&s, static_cast<const char*>(p) - 16, sizeof s);
    return s;
}


}  // namespace rtmem::interpose
