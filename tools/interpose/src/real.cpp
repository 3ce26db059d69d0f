// dlsym(RTLD_NEXT) for every interposed entry point.
#include "rtmem/interpose/real.hpp"

#include <dlfcn.h>

namespace rtmem::interpose {

real_functions real{};

namespace {

template <class F>
void resolve(F& fn, const char* name) noexcept {
    fn = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

void resolve_real() noexcept {
    resolve(real.malloc, "malloc");
    resolve(real.calloc, "calloc");
    resolve(real.realloc, "realloc");
    resolve(real.free, "free");
    resolve(real.memalign, "memalign");
    resolve(real.posix_memalign, "posix_memalign");
    resolve(real.aligned_alloc, "aligned_alloc");
    resolve(real.valloc, "valloc");
    resolve(real.pvalloc, "pvalloc");
    resolve(real.malloc_usable_size, "malloc_usable_size");
    resolve(real.new_scalar, "_Znwm");
    resolve(real.new_array, "_Znam");
    resolve(real.new_scalar_nothrow, "_ZnwmRKSt9nothrow_t");
    resolve(real.new_array_nothrow, "_ZnamRKSt9nothrow_t");
    resolve(real.new_scalar_aligned, "_ZnwmSt11align_val_t");
    resolve(real.new_array_aligned, "_ZnamSt11align_val_t");
    resolve(real.new_scalar_aligned_nothrow, "_ZnwmSt11align_val_tRKSt9nothrow_t");
    resolve(real.new_array_aligned_nothrow, "_ZnamSt11align_val_tRKSt9nothrow_t");
    resolve(real.delete_scalar, "_ZdlPv");
    resolve(real.delete_array, "_ZdaPv");
    resolve(real.delete_scalar_aligned, "_ZdlPvSt11align_val_t");
    resolve(real.delete_array_aligned, "_ZdaPvSt11align_val_t");
    resolve(real.exit_now, "_exit");
    resolve(real.execve, "execve");
    resolve(real.execvpe, "execvpe");
    resolve(real.fexecve, "fexecve");
}

}  // namespace rtmem::interpose
