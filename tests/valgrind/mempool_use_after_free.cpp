// Built with RTMEM_VALGRIND=1 and run under Memcheck: the mempool hooks describe a block carved
// out of a static buffer, and a read after pool_free must be reported like a heap use after free.
#include <cstdio>

#include "rtmem/detail/sanitizer.hpp"

#if !defined(RTMEM_VALGRIND) || !RTMEM_VALGRIND
#error "build with RTMEM_VALGRIND=1"
#endif

alignas(16) static unsigned char arena[4096];

int main(int argc, char**) {
    rtmem::detail::pool_create(arena);
    rtmem::detail::poison(arena, sizeof arena);  // nothing handed out yet
    unsigned char* block = arena + 64;
    rtmem::detail::pool_alloc(arena, block, 32);
    block[0] = 7;  // fine: the block is live
    rtmem::detail::pool_free(arena, block, 32);
    const unsigned char after_free = static_cast<volatile unsigned char*>(block)[argc];
    rtmem::detail::pool_destroy(arena);
    std::printf("read %u after free\n", static_cast<unsigned>(after_free));
    return 0;
}
