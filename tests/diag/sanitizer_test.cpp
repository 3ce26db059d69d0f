// Sanitizer hooks: with ASan, memory an allocator took back (rewind, reset, pool free, TLSF
// free) is poisoned, so touching it is reported. Without ASan the hooks compile to nothing.
#include "rtmem/detail/sanitizer.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "rtmem/alloc/linear.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/alloc/tlsf.hpp"

namespace {

// Writes through a pointer the compiler cannot see through.
void touch(void* p, std::size_t offset) {
    auto* volatile bytes = static_cast<unsigned char*>(p);
    bytes[offset] = 1;
}

#ifdef RTMEM_HAS_ASAN
#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(AsanDeath, UseAfterRewindIsReported) {
    EXPECT_DEATH(
        {
            rtmem::linear_allocator a{4096};
            const auto m = a.marker();
            void* p = a.allocate(64, 8);
            touch(p, 10);  // fine while live
            a.rewind(m);
            touch(p, 10);
        },
        "use-after-poison");
}
#endif

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(AsanDeath, UseAfterResetIsReported) {
    EXPECT_DEATH(
        {
            rtmem::linear_allocator a{4096};
            void* p = a.allocate(64, 8);
            a.reset();
            touch(p, 0);
        },
        "use-after-poison");
}
#endif

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(AsanDeath, UseAfterPoolFreeIsReported) {
    EXPECT_DEATH(
        {
            rtmem::pool_allocator<> pool(64, 8, 16);
            void* p = pool.allocate(64, 8);
            pool.deallocate(p, 64, 8);
            touch(p, 40);  // past the free-list link word
        },
        "use-after-poison");
}
#endif

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(AsanDeath, UseAfterTlsfFreeIsReported) {
    EXPECT_DEATH(
        {
            alignas(16) static std::byte memory[1 << 16];
            rtmem::tlsf_allocator t{std::span<std::byte>(memory)};
            void* p = t.allocate(256, 16);
            t.deallocate(p, 256, 16);
            touch(p, 128);
        },
        "use-after-poison");
}
#endif

TEST(AsanHooks, UnpoisonMakesMemoryUsableAgain) {
    alignas(8) static unsigned char buffer[64];
    rtmem::detail::poison(buffer, sizeof buffer);
    EXPECT_TRUE(__asan_address_is_poisoned(buffer + 8));
    rtmem::detail::pool_alloc(buffer, buffer, 32);
    EXPECT_FALSE(__asan_address_is_poisoned(buffer + 8));
    rtmem::detail::pool_free(buffer, buffer, 32);
    EXPECT_TRUE(__asan_address_is_poisoned(buffer + 8));
    rtmem::detail::unpoison(buffer, sizeof buffer);
}
#else
TEST(SanitizerHooks, CompileToNothingWithoutAsan) {
    unsigned char buffer[64] = {};
    rtmem::detail::pool_create(buffer);
    rtmem::detail::poison(buffer, sizeof buffer);
    rtmem::detail::pool_alloc(buffer, buffer, 32);
    rtmem::detail::pool_free(buffer, buffer, 32);
    rtmem::detail::pool_trim_all(buffer, buffer, sizeof buffer);
    rtmem::detail::pool_destroy(buffer);
    touch(buffer, 5);  // still plain memory
    EXPECT_EQ(buffer[5], 1);
}
#endif
}  // namespace
