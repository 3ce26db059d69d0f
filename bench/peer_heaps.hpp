// General-purpose heaps measured side by side, each through its own prefixed API so that no
// peer has to replace the process's malloc: glibc (std::malloc; see malloc_origin.hpp),
// mimalloc (mi_malloc), jemalloc (mallocx), tcmalloc (tc_malloc), TBB (scalable_malloc).
// for_each_heap(f) calls f.template operator()<Heap>() for every heap built into this program.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <string_view>

#ifdef RTMEM_HAVE_MIMALLOC
#include <mimalloc.h>
#endif
#ifdef RTMEM_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#ifdef RTMEM_HAVE_TCMALLOC
#include <gperftools/tcmalloc.h>
#endif
#ifdef RTMEM_HAVE_TBB
#include <tbb/scalable_allocator.h>
#endif

namespace rtmem::bench {

struct glibc_heap {
    static constexpr std::string_view name = "malloc";
    static void* allocate(std::size_t n) noexcept { return std::malloc(n); }
    static void deallocate(void* p, std::size_t) noexcept { std::free(p); }
};
#ifdef RTMEM_HAVE_MIMALLOC
struct mimalloc_heap {
    static constexpr std::string_view name = "mimalloc";
    static void* allocate(std::size_t n) noexcept { return mi_malloc(n); }
    static void deallocate(void* p, std::size_t) noexcept { mi_free(p); }
};
#endif
#ifdef RTMEM_HAVE_JEMALLOC
struct jemalloc_heap {
    static constexpr std::string_view name = "jemalloc";
    static void* allocate(std::size_t n) noexcept { return mallocx(n, 0); }
    static void deallocate(void* p, std::size_t n) noexcept { sdallocx(p, n, 0); }
};
#endif
#ifdef RTMEM_HAVE_TCMALLOC
struct tcmalloc_heap {
    static constexpr std::string_view name = "tcmalloc";
    static void* allocate(std::size_t n) noexcept { return tc_malloc(n); }
    static void deallocate(void* p, std::size_t) noexcept { tc_free(p); }
};
#endif
#ifdef RTMEM_HAVE_TBB
struct tbb_heap {
    static constexpr std::string_view name = "tbb";
    static void* allocate(std::size_t n) noexcept { return scalable_malloc(n); }
    static void deallocate(void* p, std::size_t) noexcept { scalable_free(p); }
};
#endif

template <class F>
void for_each_heap(F&& f) {
    f.template operator()<glibc_heap>();
#ifdef RTMEM_HAVE_MIMALLOC
    f.template operator()<mimalloc_heap>();
#endif
#ifdef RTMEM_HAVE_JEMALLOC
    f.template operator()<jemalloc_heap>();
#endif
#ifdef RTMEM_HAVE_TCMALLOC
    f.template operator()<tcmalloc_heap>();
#endif
#ifdef RTMEM_HAVE_TBB
    f.template operator()<tbb_heap>();
#endif
}

}  // namespace rtmem::bench
