// The per-thread recursion guard of a preload library: while a thread runs inside the library
// (recording, resolving, writing), its own allocations pass straight to the real functions.
#pragma once

namespace rtmem::interpose {

/// >0 while this thread runs inside the library. constinit: no dynamic initialisation, so no
/// TLS wrapper call on every access (initial-exec TLS, see CMakeLists.txt).
extern constinit thread_local int tl_guard;

struct guard_scope {
    guard_scope() noexcept { ++tl_guard; }
    ~guard_scope() { --tl_guard; }
    guard_scope(const guard_scope&) = delete;
    guard_scope& operator=(const guard_scope&) = delete;
};

}  // namespace rtmem::interpose
