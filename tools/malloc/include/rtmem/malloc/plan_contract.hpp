// The `rtmem run --plan` <-> librtmem-malloc.so contract: the compiled plan the CLI puts in the
// environment, read by the library at start-up without allocating (no JSON there).
//
//   rtmem-plan-run 1\n
//   modules N\n
//   LEN PATH\n                  N times (PATH is LEN bytes: any character but NUL)
//   sites M\n
//   ID KIND BLOCK MAXREQ NFRAMES (MODULE OFFSET){NFRAMES}\n   M times
//
// KIND: p (pool: BLOCK bytes per block), r (region: BLOCK bytes per chunk), t (thread_stack:
// run as a region).
// MAXREQ: the largest request the site serves (0: no limit). MODULE: index into the module
// list; OFFSET: hex, from the module's load bias; frames innermost first (frame 0 called
// malloc or operator new). Numbers are decimal unless said otherwise.
#pragma once

namespace rtmem::malloc_contract {

/// The compiled plan (text above). Unset: no plan.
inline constexpr const char* env_plan = "RTMEM_MALLOC_PLAN";
/// "1": print the plan's summary on stderr at exit (also printed with RTMEM_MALLOC_STATS=1).
inline constexpr const char* env_plan_stats = "RTMEM_PLAN_STATS";
inline constexpr const char* plan_magic = "rtmem-plan-run 1\n";

}  // namespace rtmem::malloc_contract
