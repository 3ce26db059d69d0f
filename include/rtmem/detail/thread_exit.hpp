// Thread-exit cleanup that does not rely on thread_local destructors (see
// RTMEM_THREAD_EXIT_CALLBACK in core/config.hpp). Windows only.
#pragma once
#include "rtmem/core/config.hpp"

#ifdef RTMEM_THREAD_EXIT_CALLBACK
namespace rtmem::detail {

/// Calls destroy(object) when the calling thread exits, newest registration first (a fiber-local
/// storage callback, which Windows runs at thread exit). False when Windows refused the slot or
/// its node: the object is then never destroyed.
bool at_thread_exit(void (*destroy)(void*), void* object) noexcept;

}  // namespace rtmem::detail
#endif
