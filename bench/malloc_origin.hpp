// Which libraries serve `malloc` and `operator new` in this process. Debian's libmimalloc.so,
// libjemalloc.so and libtcmalloc.so export `malloc` and the global `operator new`/`delete`, so
// merely linking one before libc / libstdc++ replaces glibc's heap for every `new` in the program
// (the dynamic linker binds each symbol to the first needed library that defines it).
// bench/peers.cmake keeps libc and libstdc++ first; heap_origin.cpp, compiled into every program
// that links the peers, checks the result at start-up with dladdr on the resolved symbols.
#pragma once
#include <dlfcn.h>

#include <string>

namespace rtmem::bench {

/// File name of the shared object (or the program) that defines the code at `address`.
inline std::string library_of(const void* address) {
    Dl_info info{};
    if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr)
        return "unknown";
    const std::string path = info.dli_fname;
    return path.empty() ? "unknown" : path.substr(path.find_last_of('/') + 1);
}

/// The library the global symbol `name` binds to: the dynamic linker's own lookup in the
/// program's global scope (dlsym(RTLD_DEFAULT)), the same search that binds the program's calls.
inline std::string symbol_origin(const char* name) {
    return library_of(dlsym(RTLD_DEFAULT, name));
}

inline std::string malloc_origin() {
    return symbol_origin("malloc");
}
/// `operator new(std::size_t)` (_Znwm on LP64, _Znwj on ILP32).
inline std::string operator_new_origin() {
    return symbol_origin(sizeof(void*) == 8 ? "_Znwm" : "_Znwj");
}

}  // namespace rtmem::bench
