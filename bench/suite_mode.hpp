// QUICK mode for the suite: scripts/bench sets RTMEM_BENCH_QUICK=1 for `make bench QUICK=1`, and
// the programs that own large parameter sweeps register a reduced sweep.
#pragma once
#include <cstdlib>
#include <cstring>

namespace rtmem::bench {

inline bool quick_mode() noexcept {
    const char* v = std::getenv("RTMEM_BENCH_QUICK");
    return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
}

}  // namespace rtmem::bench
