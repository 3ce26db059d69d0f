// The hooks of sampled recording inside this library (`rtmem record --sample BYTES --heap
// rtmem`): librtmem-malloc-sampled.so compiles malloc_api.cpp and operator_new.cpp again with
// RTMEM_MALLOC_SAMPLED=1 (tools/trace/CMakeLists.txt); each entry point then first counts
// itself and its bytes down to the next sample (tools/trace/fast_path.hpp: one thread-local
// load decides, no call), and only a due sample, a recorded block's free or a thread's first
// call goes to the tracer (tools/trace/heap_sampler.hpp), which re-enters the entry point to
// be served. In librtmem-malloc.so every hook is empty.
#pragma once

#if RTMEM_MALLOC_SAMPLED
#include "heap_sampler.hpp"

namespace rtmem::malloc_shim::hook {
namespace ts = rtmem::trace;
namespace hs = rtmem::trace::heap_sampling;
}  // namespace rtmem::malloc_shim::hook

/// An allocation of `size` bytes (kind: a trace op); the arguments after `align` re-call the
/// entry point.
#define RTMEM_SAMPLED_ALLOCATION(kind, size, align, ...)                                     \
    if (!::rtmem::malloc_shim::hook::ts::fast_allocation(::rtmem::trace::op::kind, size) &&  \
        !::rtmem::malloc_shim::hook::hs::inside()) [[unlikely]]                              \
    return ::rtmem::malloc_shim::hook::hs::allocation(::rtmem::trace::op::kind, size, align, \
                                                      __builtin_return_address(0),           \
                                                      [=] { return __VA_ARGS__; })
/// A deallocation of `p` (size: the sized delete's, else 0).
#define RTMEM_SAMPLED_DEALLOCATION(kind, p, size, ...)                                     \
    if (!::rtmem::malloc_shim::hook::ts::fast_free(::rtmem::trace::op::kind, p, size) &&   \
        !::rtmem::malloc_shim::hook::hs::inside()) [[unlikely]]                            \
    return ::rtmem::malloc_shim::hook::hs::deallocation(::rtmem::trace::op::kind, p, size, \
                                                        [=] { __VA_ARGS__; })
#define RTMEM_SAMPLED_REALLOCATION(p, size, ...)                                                 \
    if (!((p == nullptr || ::rtmem::malloc_shim::hook::ts::unrecorded_block(p)) &&               \
          ::rtmem::malloc_shim::hook::ts::fast_allocation(::rtmem::trace::op::realloc, size)) && \
        !::rtmem::malloc_shim::hook::hs::inside()) [[unlikely]]                                  \
    return ::rtmem::malloc_shim::hook::hs::reallocation(p, size, __builtin_return_address(0),    \
                                                        [=] { return __VA_ARGS__; })
/// posix_memalign: the re-call's result code is returned, its block recorded when sampled.
#define RTMEM_SAMPLED_POSIX_MEMALIGN(out, align, size)                                             \
    if (!::rtmem::malloc_shim::hook::ts::fast_allocation(::rtmem::trace::op::aligned_alloc,        \
                                                         size) &&                                  \
        !::rtmem::malloc_shim::hook::hs::inside()) [[unlikely]] {                                  \
        int rc = ENOMEM;                                                                           \
        ::rtmem::malloc_shim::hook::hs::allocation(::rtmem::trace::op::aligned_alloc, size, align, \
                                                   __builtin_return_address(0), [&] {              \
                                                       rc = posix_memalign(out, align, size);      \
                                                       return rc == 0 ? *out : nullptr;            \
                                                   });                                             \
        return rc;                                                                                 \
    }
#else
#define RTMEM_SAMPLED_ALLOCATION(kind, size, align, ...)
#define RTMEM_SAMPLED_DEALLOCATION(kind, p, size, ...)
#define RTMEM_SAMPLED_REALLOCATION(p, size, ...)
#define RTMEM_SAMPLED_POSIX_MEMALIGN(out, align, size)
#endif
