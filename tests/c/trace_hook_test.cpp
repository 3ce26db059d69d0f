// rtmem_trace_frame forwards to rtmem_trace_frame_hook when the process exports one (as the
// tracer's preload library does). This binary exports it (ENABLE_EXPORTS) and counts calls.
#include <cstdio>
#include <cstdlib>

#include "rtmem.h"

namespace {
int hook_calls = 0;
}

#ifdef _WIN32
#define RTMEM_TEST_EXPORT __declspec(dllexport)
#else
#define RTMEM_TEST_EXPORT __attribute__((visibility("default")))
#endif

extern "C" RTMEM_TEST_EXPORT void rtmem_trace_frame_hook(void) {
    ++hook_calls;
}

int main() {
    for (int i = 0; i < 5; ++i) rtmem_trace_frame();
    if (hook_calls != 5) {
        std::fprintf(stderr, "trace hook: expected 5 calls, got %d\n", hook_calls);
        return EXIT_FAILURE;
    }
    std::puts("trace hook: called once per frame");
    return EXIT_SUCCESS;
}
