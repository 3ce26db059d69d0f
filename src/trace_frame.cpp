// rtmem_trace_frame: forwards frame boundaries to the tracer's preload library when it is
// loaded (it exports rtmem_trace_frame_hook); a cached no-op otherwise. dlsym(RTLD_DEFAULT)
// finds the hook whether rtmem is linked statically or as a shared library.
#include <atomic>

#include "c_last_error.hpp"
#include "rtmem.h"

#if defined(__unix__) || defined(__APPLE__)
#include <dlfcn.h>
#endif

namespace {

using hook_fn = void (*)();

// Not yet looked up: the address of this sentinel; looked up and absent: nullptr.
void unresolved() {}

std::atomic<hook_fn> cached_hook{&unresolved};

hook_fn resolve() noexcept {
    hook_fn h = nullptr;
#if defined(__unix__) || defined(__APPLE__)
    void* sym = dlsym(RTLD_DEFAULT, "rtmem_trace_frame_hook");
    h = reinterpret_cast<hook_fn>(sym);
#endif
    cached_hook.store(h, std::memory_order_release);
    return h;
}

}  // namespace

extern "C" void rtmem_trace_frame(void) {
    rtmem::detail::c_last_error() = RTMEM_OK;
    hook_fn h = cached_hook.load(std::memory_order_acquire);
    if (h == &unresolved) [[unlikely]]
        h = resolve();
    if (h != nullptr) h();
}
