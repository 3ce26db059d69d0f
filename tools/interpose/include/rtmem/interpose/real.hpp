// The next definitions of the functions a preload library interposes (glibc's, or another
// preloaded malloc's), found with dlsym(RTLD_NEXT). A preload library calls resolve_real()
// once, from its first interposed call, with its recursion guard held (dlsym may allocate:
// those allocations come back into the library and must be served from the bootstrap buffer).
#pragma once
#include <cstddef>
#include <new>

namespace rtmem::interpose {

struct real_functions {
    void* (*malloc)(std::size_t);
    void* (*calloc)(std::size_t, std::size_t);
    void* (*realloc)(void*, std::size_t);
    void (*free)(void*) noexcept;  ///< noexcept (glibc: __THROW): operator delete tail-calls it
    void* (*memalign)(std::size_t, std::size_t);
    int (*posix_memalign)(void**, std::size_t, std::size_t);
    void* (*aligned_alloc)(std::size_t, std::size_t);
    void* (*valloc)(std::size_t);
    void* (*pvalloc)(std::size_t);
    std::size_t (*malloc_usable_size)(void*);
    void* (*new_scalar)(std::size_t);
    void* (*new_array)(std::size_t);
    void* (*new_scalar_nothrow)(std::size_t, const std::nothrow_t&);
    void* (*new_array_nothrow)(std::size_t, const std::nothrow_t&);
    void* (*new_scalar_aligned)(std::size_t, std::align_val_t);
    void* (*new_array_aligned)(std::size_t, std::align_val_t);
    void* (*new_scalar_aligned_nothrow)(std::size_t, std::align_val_t, const std::nothrow_t&);
    void* (*new_array_aligned_nothrow)(std::size_t, std::align_val_t, const std::nothrow_t&);
    void (*delete_scalar)(void*);
    void (*delete_array)(void*);
    void (*delete_scalar_aligned)(void*, std::align_val_t);
    void (*delete_array_aligned)(void*, std::align_val_t);
    void (*exit_now)(int);  ///< _exit
    int (*execve)(const char*, char* const[], char* const[]);
    int (*execvpe)(const char*, char* const[], char* const[]);
    int (*fexecve)(int, char* const[], char* const[]);
};
/// Hidden (the library is static, built with hidden visibility): a preload's tail call is then
/// `jmp *real+k(%rip)`, not a GOT load and a jump.
extern real_functions real __attribute__((visibility("hidden")));

/// Fills `real` (entries the process does not have stay null).
void resolve_real() noexcept;

/// malloc and free are known: the library can forward instead of using the bootstrap buffer.
[[nodiscard]] inline bool real_resolved() noexcept {
    return real.free != nullptr && real.malloc != nullptr;
}

}  // namespace rtmem::interpose
