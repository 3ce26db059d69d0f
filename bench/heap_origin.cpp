// Start-up check of every benchmark program that links the peers (bench/peers.cmake adds this
// file to each): `malloc` must be glibc's (libc.so) and `operator new` the C++ runtime's
// (libstdc++.so / libc++.so, which calls that malloc), or every "malloc" / "new" / "heap" row
// would measure a peer. Prints both to stderr, records them in the JSON context
// (process_malloc, process_operator_new) and exits with status 3 when either is a peer.
// A program that means to measure another heap sets RTMEM_BENCH_HEAP_ANY=1 and says so in its rows.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "malloc_origin.hpp"

namespace {

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

const bool heap_origin_checked = [] {
    const std::string m = rtmem::bench::malloc_origin();
    const std::string n = rtmem::bench::operator_new_origin();
    benchmark::AddCustomContext("process_malloc", m);
    benchmark::AddCustomContext("process_operator_new", n);
    std::fprintf(stderr, "heap: malloc from %s, operator new from %s\n", m.c_str(), n.c_str());
    const bool glibc = starts_with(m, "libc.so") &&
                       (starts_with(n, "libstdc++.so") || starts_with(n, "libc++.so"));
    const char* any = std::getenv("RTMEM_BENCH_HEAP_ANY");
    if (!glibc && (any == nullptr || *any == '\0' || *any == '0')) {
        std::fprintf(stderr,
                     "heap: not glibc's heap; every malloc/new row would measure %s / %s. "
                     "Fix the link order (bench/peers.cmake) or set RTMEM_BENCH_HEAP_ANY=1.\n",
                     m.c_str(), n.c_str());
        std::exit(3);
    }
    return true;
}();

}  // namespace
