// The bootstrap buffer: serves allocations made before the real functions are resolved (dlsym
// and the dynamic loader allocate). A bump buffer in the library's own image; its blocks carry
// their size in a 16-byte header and are never reused, so free() of one is a no-op and
// realloc() copies out of it.
#pragma once
#include <cstddef>
#include <cstdint>

/// Told of every block the buffer hands out, when the library defines it (the tracer's
/// sampling marks them in its free filter: tools/trace/sampling.cpp); weak, so that a library
/// without it (librtmem-malloc.so) links.
extern "C" __attribute__((weak, visibility("hidden"))) void rtmem_interpose_bootstrap_block(
    const void* p) noexcept;

namespace rtmem::interpose {

constexpr std::size_t bootstrap_bytes = std::size_t{4} << 20;
/// The buffer itself: hidden in each preload library, so is_bootstrap is an address compare
/// against a PC-relative constant, inline on every free.
extern char g_bootstrap[bootstrap_bytes] __attribute__((visibility("hidden")));

/// nullptr (errno ENOMEM) once the buffer (4 MiB) is used up.
void* bootstrap_alloc(std::size_t size, std::size_t align) noexcept;
[[nodiscard]] inline bool is_bootstrap(const void* p) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(g_bootstrap) <
           bootstrap_bytes;
}
/// The size requested for a block of the buffer.
[[nodiscard]] std::size_t bootstrap_size(const void* p) noexcept;

}  // namespace rtmem::interpose
