// The interposed entry points of librtmem-trace.so: the malloc family, every operator
// new/delete form under its mangled name (so new and malloc stay apart), _exit and exec.
// Each forwards to the next definition and records the call, unless this thread is already
// inside the library (then it only forwards) or the real functions are still being resolved
// (then the bootstrap buffer serves it). In sampled mode the common entry points first try
// the fast path (thread_gate.hpp): one thread-local load decides, then a countdown, a
// per-thread counter and a tail call; everything else takes the full path (`*_full`).
#include <errno.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <new>

#include "fast_path.hpp"
#include "recorder.hpp"
#include "rtmem/interpose/sizes.hpp"
#include "sampled_calls.hpp"
#include "sampling.hpp"

#define RTMEM_EXPORT extern "C" __attribute__((visibility("default")))

using namespace rtmem::trace;
using rtmem::interpose::page_size;

namespace {

// Calls `call` (returning the new pointer) and records it as an allocation.
template <class Call>
void* traced_alloc(op kind, std::size_t size, std::size_t align, Call call) {
    guard_scope g;
    if (sampling()) {
        void* p = call();
        sampled_allocation_done(kind, size, align, p);
        return p;
    }
    if (paused()) return call();
    count_call(kind, size);
    call_timing timing;
    void* p = call();
    std::uint64_t t1 = ticks();
    record(kind, size, align, p, nullptr, t1, timing.duration(t1), timing.timed, p == nullptr);
    return p;
}

// Records a deallocation before it happens (a block freed here may be handed out again by
// another thread at once; its allocation must not appear before this free). Sampled mode:
// only the frees of sampled blocks (their filter byte is set: almost every other free costs
// one load), also while paused.
template <class Call>
void traced_free(op kind, void* p, std::size_t size, std::size_t align, Call call) {
    guard_scope g;
    if (sampling()) {
        sampled_deallocation(kind, p, size, align, call);
        return;
    }
    if (paused()) {
        call();
        return;
    }
    count_call(kind, size);
    bool timed = timing_due();
    std::uint64_t t0 = ticks();
    call();
    std::uint64_t duration = timed ? ticks() - t0 : 0;
    record(kind, size, align, p, nullptr, t0, duration, timed, false);
}

bool passthrough() noexcept {
    if (tl_guard > 0 || !ensure_ready() || !recording()) return true;
    maybe_open_gate();
    return false;
}

// ---- the full paths (out of line)

__attribute__((noinline)) void* malloc_full(std::size_t n, const void* caller) {
    if (only_paused()) return real.malloc(n);
    if (!real_resolved() && !ensure_ready()) return bootstrap_alloc(n, 16);
    if (passthrough() || tracers_own_call(caller))
        return real_resolved() ? real.malloc(n) : bootstrap_alloc(n, 16);
    return traced_alloc(op::malloc, n, 0, [&] { return real.malloc(n); });
}

}  // namespace

// ---- malloc family ------------------------------------------------------------------------------

RTMEM_EXPORT void* malloc(std::size_t n) {
    if (fast_allocation(op::malloc, n)) [[likely]]
        return real.malloc(n);
    return malloc_full(n, __builtin_return_address(0));
}

namespace {
__attribute__((noinline)) void* calloc_full(std::size_t n, std::size_t m) {
    std::size_t total = 0;
    bool overflow = __builtin_mul_overflow(n, m, &total);
    if (!real_resolved() && !ensure_ready()) {
        if (overflow) return nullptr;
        void* p = bootstrap_alloc(total, 16);
        if (p != nullptr) std::memset(p, 0, total);
        return p;
    }
    if (passthrough()) {
        if (real_resolved()) return real.calloc(n, m);
        void* p = overflow ? nullptr : bootstrap_alloc(total, 16);
        if (p != nullptr) std::memset(p, 0, total);
        return p;
    }
    return traced_alloc(op::calloc, overflow ? ~std::uint64_t{0} : total, 0,
                        [&] { return real.calloc(n, m); });
}

__attribute__((noinline)) void free_full(void* p) {
    if (only_paused() && unrecorded_block(p)) return real.free(p);
    if (p == nullptr || is_bootstrap(p)) return;
    if (passthrough()) {
        if (real_resolved()) real.free(p);
        return;
    }
    traced_free(op::free, p, 0, 0, [&] { real.free(p); });
}
}  // namespace

RTMEM_EXPORT void* calloc(std::size_t n, std::size_t m) {
    std::size_t total = 0;
    if (!__builtin_mul_overflow(n, m, &total) && fast_allocation(op::calloc, total)) [[likely]]
        return real.calloc(n, m);
    return calloc_full(n, m);
}

RTMEM_EXPORT void free(void* p) {
    if (fast_free(op::free, p)) [[likely]]
        return real.free(p);
    free_full(p);
}

namespace {
__attribute__((noinline)) void* realloc_full(void* old, std::size_t n) {
    if (old != nullptr && is_bootstrap(old)) {  // move out of the bootstrap buffer
        void* p = malloc(n);
        if (p != nullptr) {
            std::size_t s = bootstrap_size(old);
            std::memcpy(p, old, s < n ? s : n);
        }
        return p;
    }
    if (!real_resolved() && !ensure_ready()) return bootstrap_alloc(n, 16);
    if (passthrough()) return real_resolved() ? real.realloc(old, n) : bootstrap_alloc(n, 16);
    guard_scope g;
    if (sampling()) return sampled_reallocation(old, n, [&] { return real.realloc(old, n); });
    if (paused()) return real.realloc(old, n);
    count_call(op::realloc, n);
    call_timing timing;
    void* p = real.realloc(old, n);
    std::uint64_t t1 = ticks();
    bool failed = p == nullptr && n != 0;
    record(op::realloc, n, 0, p, old, t1, timing.duration(t1), timing.timed, failed);
    return p;
}
}  // namespace

RTMEM_EXPORT void* realloc(void* old, std::size_t n) {
    // An old block that was not recorded, and a new one not sampled: only counted.
    if ((old == nullptr || unrecorded_block(old)) && fast_allocation(op::realloc, n)) [[likely]]
        return real.realloc(old, n);
    return realloc_full(old, n);
}

RTMEM_EXPORT void* reallocarray(void* old, std::size_t n, std::size_t m) {
    std::size_t total = 0;
    return rtmem::interpose::checked_product(n, m, total) ? realloc(old, total) : nullptr;
}

RTMEM_EXPORT void* memalign(std::size_t align, std::size_t n) {
    if (!real_resolved() && !ensure_ready()) return bootstrap_alloc(n, align);
    if (passthrough()) return real_resolved() ? real.memalign(align, n) : bootstrap_alloc(n, align);
    return traced_alloc(op::aligned_alloc, n, align, [&] { return real.memalign(align, n); });
}

RTMEM_EXPORT void* aligned_alloc(std::size_t align, std::size_t n) {
    if (!real_resolved() && !ensure_ready()) return bootstrap_alloc(n, align);
    if (passthrough()) {
        return real_resolved() ? real.aligned_alloc(align, n) : bootstrap_alloc(n, align);
    }
    return traced_alloc(op::aligned_alloc, n, align, [&] { return real.aligned_alloc(align, n); });
}

RTMEM_EXPORT int posix_memalign(void** out, std::size_t align, std::size_t n) {
    if (!real_resolved() && !ensure_ready()) {
        *out = bootstrap_alloc(n, align);
        return *out != nullptr ? 0 : ENOMEM;
    }
    if (passthrough()) {
        if (real_resolved()) return real.posix_memalign(out, align, n);
        *out = bootstrap_alloc(n, align);
        return *out != nullptr ? 0 : ENOMEM;
    }
    int rc = 0;
    traced_alloc(op::aligned_alloc, n, align, [&]() -> void* {
        rc = real.posix_memalign(out, align, n);
        return rc == 0 ? *out : nullptr;
    });
    return rc;
}

RTMEM_EXPORT void* valloc(std::size_t n) {
    if (!real_resolved() && !ensure_ready()) return bootstrap_alloc(n, page_size());
    if (passthrough()) return real_resolved() ? real.valloc(n) : bootstrap_alloc(n, page_size());
    return traced_alloc(op::malloc, n, page_size(), [&] { return real.valloc(n); });
}

RTMEM_EXPORT void* pvalloc(std::size_t n) {
    if (!real_resolved() && !ensure_ready()) return bootstrap_alloc(n, page_size());
    if (passthrough()) return real_resolved() ? real.pvalloc(n) : bootstrap_alloc(n, page_size());
    return traced_alloc(op::malloc, n, page_size(), [&] { return real.pvalloc(n); });
}

RTMEM_EXPORT std::size_t malloc_usable_size(void* p) {
    if (p == nullptr) return 0;
    if (is_bootstrap(p)) return bootstrap_size(p);
    if (!real_resolved()) ensure_ready();
    return real.malloc_usable_size != nullptr ? real.malloc_usable_size(p) : 0;
}

// ---- operator new / delete ---------------------------------------------------------------------
// Forwarded to the next operator new (libstdc++: new_handler loop, bad_alloc); the malloc it
// calls inside passes through unrecorded because the guard is held.

namespace {

void* fallback_new(std::size_t n, std::size_t align, bool nothrow) {
    for (;;) {
        void* p = align > 16 ? real.aligned_alloc(align, (n + align - 1) & ~(align - 1))
                             : real.malloc(n == 0 ? 1 : n);
        if (p != nullptr) return p;
        std::new_handler h = std::get_new_handler();
        if (h == nullptr) {
            if (nothrow) return nullptr;
            throw std::bad_alloc();
        }
        h();
    }
}

template <class Real, class... Args>
void* new_impl(op kind, std::size_t n, std::size_t align, bool nothrow, Real fn, Args... args) {
    if (align == 0 && only_paused()) {  // gate registered: libstdc++'s new, i.e. malloc
        if (void* p = real.malloc(n == 0 ? 1 : n)) return p;
    }
    if (!real_resolved()) ensure_ready();
    if (tl_guard > 0 || !recording()) {
        return fn != nullptr ? fn(n, args...) : fallback_new(n, align, nothrow);
    }
    maybe_open_gate();
    guard_scope g;
    if (sampling() || paused()) {  // bad_alloc passes through unrecorded
        void* p = g_new_is_malloc && align == 0 ? real.malloc(n == 0 ? 1 : n) : nullptr;
        if (p == nullptr) p = fn != nullptr ? fn(n, args...) : fallback_new(n, align, nothrow);
        if (sampling()) sampled_allocation_done(kind, n, align, p);
        return p;
    }
    count_call(kind, n);
    call_timing timing;
    void* p = nullptr;
    try {
        p = fn != nullptr ? fn(n, args...) : fallback_new(n, align, nothrow);
    } catch (...) {  // bad_alloc: recorded as a failed allocation, then passed on
        std::uint64_t t1 = ticks();
        record(kind, n, align, nullptr, nullptr, t1, timing.duration(t1), timing.timed, true);
        throw;
    }
    std::uint64_t t1 = ticks();
    record(kind, n, align, p, nullptr, t1, timing.duration(t1), timing.timed, p == nullptr);
    return p;
}

// noexcept, as the operators: the entry points' fast paths then tail-call it and need no frame.
template <class Real, class... Args>
void delete_impl(op kind, void* p, std::size_t size, std::size_t align, Real fn,
                 Args... args) noexcept {
    if (align == 0 && only_paused() && unrecorded_block(p)) return real.free(p);
    if (p == nullptr) return;
    if (is_bootstrap(p)) return;
    auto call = [&] {
        if (fn != nullptr) {
            fn(p, args...);
        } else {
            real.free(p);
        }
    };
    if (tl_guard > 0 || !recording()) {
        call();
        return;
    }
    maybe_open_gate();
    if (g_new_is_malloc && align == 0 && (sampling() || paused())) {
        traced_free(kind, p, size, align, [&] { real.free(p); });
        return;
    }
    traced_free(kind, p, size, align, call);
}

constexpr std::size_t as_size(std::align_val_t a) noexcept {
    return static_cast<std::size_t>(a);
}

// The fast path's operator new found glibc's malloc out of memory (the call is counted):
// libstdc++'s operator new runs its new_handler loop and throws, its malloc unrecorded.
__attribute__((noinline)) void* new_after_failure(std::size_t n, void* (*fn)(std::size_t)) {
    guard_scope g;
    return fn != nullptr ? fn(n) : fallback_new(n, 0, false);
}

}  // namespace

// Fast path (sampled, gate open): the gate opens only when the next operator new is
// libstdc++'s, i.e. malloc plus a new_handler loop, so malloc is called directly.
// glibc's malloc(0) returns a unique block, as libstdc++'s new(0) does (it asks for 1 byte); a
// null result, whatever the size, goes to libstdc++'s own new and its new_handler loop. No frame
// pointer: the fast path's call is glibc's malloc (never recorded), and the full path is a tail
// call, so no stack the recorder walks ever holds this frame.
#if defined(__clang__)
#define RTMEM_NO_FRAME  // (no per-function optimize attribute)
#else
#define RTMEM_NO_FRAME __attribute__((optimize("omit-frame-pointer")))
#endif
RTMEM_EXPORT RTMEM_NO_FRAME void* _Znwm(std::size_t n) {
    if (fast_allocation(op::new_scalar, n)) [[likely]] {
        if (void* p = real.malloc(n)) [[likely]]
            return p;
        return new_after_failure(n, real.new_scalar);
    }
    return new_impl(op::new_scalar, n, 0, false, real.new_scalar);
}
RTMEM_EXPORT RTMEM_NO_FRAME void* _Znam(std::size_t n) {
    if (fast_allocation(op::new_array, n)) [[likely]] {
        if (void* p = real.malloc(n)) [[likely]]
            return p;
        return new_after_failure(n, real.new_array);
    }
    return new_impl(op::new_array, n, 0, false, real.new_array);
}
RTMEM_EXPORT void* _ZnwmRKSt9nothrow_t(std::size_t n, const std::nothrow_t& t) noexcept {
    try {
        return new_impl(op::new_scalar, n, 0, true, real.new_scalar_nothrow, t);
    } catch (...) {
        return nullptr;
    }
}
RTMEM_EXPORT void* _ZnamRKSt9nothrow_t(std::size_t n, const std::nothrow_t& t) noexcept {
    try {
        return new_impl(op::new_array, n, 0, true, real.new_array_nothrow, t);
    } catch (...) {
        return nullptr;
    }
}
RTMEM_EXPORT void* _ZnwmSt11align_val_t(std::size_t n, std::align_val_t a) {
    return new_impl(op::new_scalar, n, as_size(a), false, real.new_scalar_aligned, a);
}
RTMEM_EXPORT void* _ZnamSt11align_val_t(std::size_t n, std::align_val_t a) {
    return new_impl(op::new_array, n, as_size(a), false, real.new_array_aligned, a);
}
RTMEM_EXPORT void* _ZnwmSt11align_val_tRKSt9nothrow_t(std::size_t n, std::align_val_t a,
                                                      const std::nothrow_t& t) noexcept {
    try {
        return new_impl(op::new_scalar, n, as_size(a), true, real.new_scalar_aligned_nothrow, a, t);
    } catch (...) {
        return nullptr;
    }
}
RTMEM_EXPORT void* _ZnamSt11align_val_tRKSt9nothrow_t(std::size_t n, std::align_val_t a,
                                                      const std::nothrow_t& t) noexcept {
    try {
        return new_impl(op::new_array, n, as_size(a), true, real.new_array_aligned_nothrow, a, t);
    } catch (...) {
        return nullptr;
    }
}

// Fast path as for new: the next delete is libstdc++'s, i.e. free.
RTMEM_EXPORT void _ZdlPv(void* p) noexcept {
    if (fast_free(op::delete_scalar, p)) [[likely]]
        return real.free(p);
    delete_impl(op::delete_scalar, p, 0, 0, real.delete_scalar);
}
RTMEM_EXPORT void _ZdaPv(void* p) noexcept {
    if (fast_free(op::delete_array, p)) [[likely]]
        return real.free(p);
    delete_impl(op::delete_array, p, 0, 0, real.delete_array);
}
RTMEM_EXPORT void _ZdlPvm(void* p, std::size_t n) noexcept {
    if (fast_free(op::delete_scalar, p, n)) [[likely]]
        return real.free(p);
    delete_impl(op::delete_scalar, p, n, 0, real.delete_scalar);
}
RTMEM_EXPORT void _ZdaPvm(void* p, std::size_t n) noexcept {
    if (fast_free(op::delete_array, p, n)) [[likely]]
        return real.free(p);
    delete_impl(op::delete_array, p, n, 0, real.delete_array);
}
RTMEM_EXPORT void _ZdlPvRKSt9nothrow_t(void* p, const std::nothrow_t&) noexcept {
    delete_impl(op::delete_scalar, p, 0, 0, real.delete_scalar);
}
RTMEM_EXPORT void _ZdaPvRKSt9nothrow_t(void* p, const std::nothrow_t&) noexcept {
    delete_impl(op::delete_array, p, 0, 0, real.delete_array);
}
RTMEM_EXPORT void _ZdlPvSt11align_val_t(void* p, std::align_val_t a) noexcept {
    delete_impl(op::delete_scalar, p, 0, as_size(a), real.delete_scalar_aligned, a);
}
RTMEM_EXPORT void _ZdaPvSt11align_val_t(void* p, std::align_val_t a) noexcept {
    delete_impl(op::delete_array, p, 0, as_size(a), real.delete_array_aligned, a);
}
RTMEM_EXPORT void _ZdlPvmSt11align_val_t(void* p, std::size_t n, std::align_val_t a) noexcept {
    delete_impl(op::delete_scalar, p, n, as_size(a), real.delete_scalar_aligned, a);
}
RTMEM_EXPORT void _ZdaPvmSt11align_val_t(void* p, std::size_t n, std::align_val_t a) noexcept {
    delete_impl(op::delete_array, p, n, as_size(a), real.delete_array_aligned, a);
}
RTMEM_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void* p, std::align_val_t a,
                                                      const std::nothrow_t&) noexcept {
    delete_impl(op::delete_scalar, p, 0, as_size(a), real.delete_scalar_aligned, a);
}
RTMEM_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void* p, std::align_val_t a,
                                                      const std::nothrow_t&) noexcept {
    delete_impl(op::delete_array, p, 0, as_size(a), real.delete_array_aligned, a);
}

// ---- process end and image replacement
// -----------------------------------------------------------

RTMEM_EXPORT void _exit(int status) {
    if (!real_resolved()) ensure_ready();
    finish_quick_exit();
    if (real.exit_now != nullptr) real.exit_now(status);
    __builtin_trap();
}
RTMEM_EXPORT void _Exit(int status) {
    _exit(status);
}

RTMEM_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
    if (!real_resolved()) ensure_ready();
    finish_before_exec();
    return real.execve(path, argv, envp);
}
RTMEM_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
    if (!real_resolved()) ensure_ready();
    finish_before_exec();
    return real.execvpe(file, argv, envp);
}
RTMEM_EXPORT int execv(const char* path, char* const argv[]) {
    return execve(path, argv, environ);
}
RTMEM_EXPORT int execvp(const char* file, char* const argv[]) {
    return execvpe(file, argv, environ);
}
RTMEM_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
    if (!real_resolved()) ensure_ready();
    finish_before_exec();
    return real.fexecve(fd, argv, envp);
}

namespace {
// execl/execlp/execle: collect the variadic arguments (bounded, on the stack).
constexpr int max_exec_args = 4096;

// argv[0] = arg, then the arguments from `ap` up to and including the terminating null;
// `ap` is left after it (execle's envp follows).
void collect_exec_args(const char* arg, va_list& ap, const char** argv) noexcept {
    int n = 0;
    argv[n++] = arg;
    while (argv[n - 1] != nullptr && n < max_exec_args) argv[n++] = va_arg(ap, const char*);
    argv[max_exec_args - 1] = nullptr;
}
}  // namespace

RTMEM_EXPORT int execl(const char* path, const char* arg, ...) {
    const char* argv[max_exec_args];
    va_list ap;
    va_start(ap, arg);
    collect_exec_args(arg, ap, argv);
    va_end(ap);
    return execve(path, const_cast<char* const*>(argv), environ);
}
RTMEM_EXPORT int execlp(const char* file, const char* arg, ...) {
    const char* argv[max_exec_args];
    va_list ap;
    va_start(ap, arg);
    collect_exec_args(arg, ap, argv);
    va_end(ap);
    return execvpe(file, const_cast<char* const*>(argv), environ);
}
RTMEM_EXPORT int execle(const char* path, const char* arg, ...) {
    const char* argv[max_exec_args];
    va_list ap;
    va_start(ap, arg);
    collect_exec_args(arg, ap, argv);
    char* const* envp = va_arg(ap, char* const*);
    va_end(ap);
    return execve(path, const_cast<char* const*>(argv), envp);
}
