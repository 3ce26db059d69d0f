// The `rtmem run` <-> librtmem-malloc.so contract: the environment the CLI sets and the
// preload library reads at its first call.
#pragma once

namespace rtmem::malloc_contract {

/// Path of librtmem-malloc.so (overrides the CLI's search).
inline constexpr const char* env_library = "RTMEM_MALLOC_LIBRARY";
/// Real-time mode: bytes (decimal) reserved, committed and prefaulted at the first call.
inline constexpr const char* env_realtime = "RTMEM_MALLOC_REALTIME";
/// "1": real-time mode also mlocks its memory.
inline constexpr const char* env_lock = "RTMEM_MALLOC_LOCK";
/// "1": print the heap's figures on stderr when the process exits.
inline constexpr const char* env_stats = "RTMEM_MALLOC_STATS";

}  // namespace rtmem::malloc_contract
