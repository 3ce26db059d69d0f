// Driver for the malloc-family budgets, built twice (tests/perf/CMakeLists.txt):
// rtmem_perf_malloc_driver is linked with librtmem-malloc.a whole, so its malloc and free are
// rt_heap's behind the shim; rtmem_perf_trace_driver is a plain program (glibc's malloc) run with
// librtmem-trace.so or librtmem-malloc-sampled.so preloaded (the test's ENV), so its calls take
// the sampled fast path of tools/trace/fast_path.hpp. `<driver> <case> <calls>`: malloc_free
// calls malloc(48) then free() of that block <calls> times, each from its own out-of-line
// function that callgrind collects in (see check_instructions.cmake); new_delete the same with
// operator new(48) and the sized operator delete.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string_view>

#define RTMEM_PERF_CASE extern "C" __attribute__((noipa, used))

namespace {
volatile std::uintptr_t sink;
}  // namespace

RTMEM_PERF_CASE void* rtmem_perf_malloc() {
    return std::malloc(48);
}
RTMEM_PERF_CASE void rtmem_perf_free(void* p) {
    std::free(p);
}
// operator new and the sized operator delete, as std::allocator calls them.
RTMEM_PERF_CASE void* rtmem_perf_new() {
    return ::operator new(48);
}
RTMEM_PERF_CASE void rtmem_perf_delete(void* p) {
    ::operator delete(p, 48);
}
RTMEM_PERF_CASE void* rtmem_perf_baseline(void* p) {
    return p;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s baseline|malloc_free|new_delete <calls>\n", argv[0]);
        return 2;
    }
    const std::string_view which = argv[1];
    const long calls = std::strtol(argv[2], nullptr, 10);
    // This thread's one-time work (building the heap, opening the tracer's gate) outside the
    // counted calls; through `sink`, since GCC drops a plain free(malloc(n)) pair.
    sink = reinterpret_cast<std::uintptr_t>(std::malloc(48));
    std::free(reinterpret_cast<void*>(sink));
    for (long i = 0; i < calls; ++i) {
        void* p = nullptr;
        if (which == "baseline") {
            p = rtmem_perf_baseline(argv);
        } else if (which == "malloc_free") {
            p = rtmem_perf_malloc();
            if (p == nullptr) return 1;
            rtmem_perf_free(p);
        } else if (which == "new_delete") {
            p = rtmem_perf_new();
            rtmem_perf_delete(p);
        } else {
            std::fprintf(stderr, "unknown case %s\n", argv[1]);
            return 2;
        }
        sink = reinterpret_cast<std::uintptr_t>(p);
    }
    return 0;
}
