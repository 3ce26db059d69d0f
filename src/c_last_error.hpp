// The C API's per-thread last error, shared by the files that implement rtmem.h.
#pragma once
#include "rtmem.h"

namespace rtmem::detail {

/// This thread's last rtmem.h error: every call sets it, to RTMEM_OK on success.
inline rtmem_error& c_last_error() noexcept {
    thread_local rtmem_error e = RTMEM_OK;
    return e;
}

}  // namespace rtmem::detail
