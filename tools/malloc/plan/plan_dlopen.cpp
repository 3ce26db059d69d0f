// dlopen of librtmem-malloc: a plan site in a module loaded after start-up (python3's
// extension modules) is resolved and routed as soon as its module is loaded. glibc takes
// dlopen's caller from its return address (for $ORIGIN, the caller's RUNPATH and namespace),
// so this wrapper stays out of the way: with no plan module missing, or a name that a caller
// could change the meaning of (no '/', or a '$'), it is a tail call and glibc sees the
// program's call. Only a path is opened from here, then the plan resolves what it brought; a
// module loaded by bare name is resolved at the next dlopen of a path.
#include <dlfcn.h>

#include <cstring>

#include "plan_router.hpp"
#include "rtmem/interpose/guard.hpp"

namespace {

using dlopen_fn = void* (*)(const char*, int);

dlopen_fn real_dlopen() noexcept {
    static dlopen_fn fn = nullptr;
    if (fn == nullptr) {
        rtmem::interpose::guard_scope guard;  // dlsym's own allocations go to glibc
        fn = reinterpret_cast<dlopen_fn>(dlsym(RTLD_NEXT, "dlopen"));
    }
    return fn;
}

bool names_a_path(const char* file) noexcept {
    return file != nullptr && std::strchr(file, '/') != nullptr &&
           std::strchr(file, '$') == nullptr;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* dlopen(const char* file, int mode) {
    const dlopen_fn real = real_dlopen();
    if (!rtmem::site_plan::modules_missing() || !names_a_path(file)) return real(file, mode);
    void* handle = real(file, mode);
    rtmem::site_plan::resolve_new_modules();
    return handle;
}
