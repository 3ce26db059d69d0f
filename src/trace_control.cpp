// rtmem_trace_start/stop/dump: forwarded to the tracer's preload library when it is loaded
// (it exports rtmem_trace_control_hook), RTMEM_ERROR_NOT_TRACED otherwise. Looked up once with
// dlsym(RTLD_DEFAULT), as rtmem_trace_frame's hook; no tracer on Windows or WebAssembly.
#include <atomic>
#include <cerrno>

#include "c_last_error.hpp"
#include "rtmem.h"

#if (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#endif

namespace {

using control_fn = int (*)(int, const char*);

// Not yet looked up: the address of this sentinel; looked up and absent: nullptr.
int unresolved(int, const char*) {
    return 0;
}

std::atomic<control_fn> cached{&unresolved};

control_fn hook() noexcept {
    control_fn h = cached.load(std::memory_order_acquire);
    if (h != &unresolved) [[likely]]
        return h;
    h = nullptr;
#if (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
    h = reinterpret_cast<control_fn>(dlsym(RTLD_DEFAULT, "rtmem_trace_control_hook"));
#endif
    cached.store(h, std::memory_order_release);
    return h;
}

// Commands of rtmem_trace_control_hook (tools/trace/control.cpp).
enum command : int { start = 0, stop = 1, dump = 2 };

bool control(command c, const char* path) noexcept {
    rtmem_error& e = rtmem::detail::c_last_error();
    control_fn h = hook();
    int rc = h != nullptr ? h(c, path) : ESRCH;
    e = rc == 0 ? RTMEM_OK
        : rc == ESRCH  ? RTMEM_ERROR_NOT_TRACED
        : rc == EINVAL ? RTMEM_ERROR_BAD_ARGUMENT
                       : RTMEM_ERROR_IO;
    return rc == 0;
}

}  // namespace

extern "C" bool rtmem_trace_start(void) {
    return control(start, nullptr);
}
extern "C" bool rtmem_trace_stop(void) {
    return control(stop, nullptr);
}
extern "C" bool rtmem_trace_dump(const char* path) {
    if (path == nullptr || *path == 0) {
        rtmem::detail::c_last_error() = RTMEM_ERROR_BAD_ARGUMENT;
        return false;
    }
    return control(dump, path);
}
