// Which library `malloc` resolves to in this process. Peers such as Debian's libmimalloc.so export
// `malloc` themselves, so merely linking them can replace glibc's malloc for every `new` in the
// program; the report states the origin per program so a "malloc" column is never mislabelled.
#pragma once
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace rtmem::bench {

inline std::string malloc_origin() {
    void* (*resolved)(std::size_t) = &std::malloc;
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(resolved), &info) == 0 || info.dli_fname == nullptr)
        return "unknown";
    std::string path = info.dli_fname;
    return path.substr(path.find_last_of('/') + 1);
}

/// Adds "process_malloc" to the JSON context (call before benchmark::Initialize).
inline void record_malloc_origin() {
    benchmark::AddCustomContext("process_malloc", malloc_origin());
}

}  // namespace rtmem::bench
