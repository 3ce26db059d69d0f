// rtmem_trace_frame: forwards frame boundaries to the tracer's preload library when it is
// loaded (it exports rtmem_trace_frame_hook); a cached no-op otherwise. dlsym(RTLD_DEFAULT)
// finds the hook whether rtmem is linked statically or as a shared library. On Windows (no
// tracer there yet) the hook is looked up in the executable and every loaded DLL's exports, so
// a program or a tool DLL can still provide one. WebAssembly has no symbol lookup without
// emscripten's dynamic linking (dlsym aborts the module): there the hook is always absent.
#include <algorithm>
#include <atomic>

#include "c_last_error.hpp"
#include "rtmem.h"

#if defined(_WIN32)
#include <windows.h>
// after windows.h
#include <psapi.h>
#elif (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
#include <dlfcn.h>
#endif

namespace {

using hook_fn = void (*)();

// Not yet looked up: the address of this sentinel; looked up and absent: nullptr.
void unresolved() {}

std::atomic<hook_fn> cached_hook{&unresolved};

hook_fn resolve() noexcept {
    hook_fn h = nullptr;
#if defined(_WIN32)
    HMODULE modules[256];
    DWORD bytes = 0;
    DWORD count = 0;
    if (K32EnumProcessModules(GetCurrentProcess(), modules, sizeof modules, &bytes))
        count = std::min<DWORD>(bytes / sizeof(HMODULE), 256);
    for (DWORD i = 0; i < count && h == nullptr; ++i) {
        FARPROC sym = GetProcAddress(modules[i], "rtmem_trace_frame_hook");
        h = reinterpret_cast<hook_fn>(reinterpret_cast<void*>(sym));
    }
#elif (defined(__unix__) || defined(__APPLE__)) && !defined(__EMSCRIPTEN__)
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
