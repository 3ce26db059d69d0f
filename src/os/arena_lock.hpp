// The C arena's lock: an SRWLOCK on Windows (one word, no kernel object, uncontended
// acquire/release are a single interlocked instruction each; Weaver and Coherent Labs measured the
// MSVC std::mutex of their time as the slow choice there), std::mutex elsewhere. BasicLockable.
#pragma once
#ifdef _WIN32
#include <windows.h>
#else
#include <mutex>
#endif

namespace rtmem::detail {

#ifdef _WIN32
class arena_lock {
  public:
    void lock() noexcept { AcquireSRWLockExclusive(&lock_); }
    void unlock() noexcept { ReleaseSRWLockExclusive(&lock_); }

  private:
    SRWLOCK lock_ = SRWLOCK_INIT;
};
#else
using arena_lock = std::mutex;
#endif

}  // namespace rtmem::detail
