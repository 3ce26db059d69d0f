// The recursion guard's per-thread counter (guard.hpp).
#include "rtmem/interpose/guard.hpp"

namespace rtmem::interpose {

constinit thread_local int tl_guard __attribute__((tls_model("initial-exec"))) = 0;

}  // namespace rtmem::interpose
