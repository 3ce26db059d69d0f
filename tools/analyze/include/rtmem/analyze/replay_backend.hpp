// Replay backends: each allocator under test is a small adapter behind one interface, so the
// engine compiles against whatever allocators exist (peers are loaded with dlopen at run time).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rtmem::analyze {

/// Who asks: the block's allocation site and the thread that allocated it.
struct replay_call {
    std::uint32_t site = 0;
    std::uint32_t thread = 0;
    bool cross_thread = false;  ///< a free by another thread than the allocating one
};

class replay_backend {
  public:
    virtual ~replay_backend() = default;
    /// `tag` is stored with the block and handed back on deallocate (e.g. which allocator).
    virtual void* allocate(replay_call c, std::size_t size, std::size_t align,
                           std::uint32_t& tag) noexcept = 0;
    virtual void deallocate(replay_call c, void* p, std::size_t size, std::size_t align,
                            std::uint32_t tag) noexcept = 0;
    virtual void* allocate_zeroed(replay_call c, std::size_t size, std::size_t align,
                                  std::uint32_t& tag) noexcept;
    /// Default: allocate (for `to`), copy, deallocate (for `from`). `tag` in: the old block's,
    /// out: the new block's. nullptr leaves the old block allocated.
    virtual void* reallocate(replay_call from, replay_call to, void* p, std::size_t old_size,
                             std::size_t size, std::size_t align, std::uint32_t& tag) noexcept;
    virtual void next_frame() noexcept {}
    /// Bytes held from the system now (0 when unknown); sampled during the replay.
    virtual std::size_t footprint() noexcept { return 0; }
    /// What footprint() counts that is not this replay's: the value at the start for
    /// process-wide measures (glibc, peers), 0 for allocators owning all their memory.
    virtual std::size_t footprint_base() noexcept { return footprint(); }
};

struct backend_factory {
    std::string name;
    std::function<std::unique_ptr<replay_backend>()> make;  ///< nullptr when unavailable
    std::string note;                                       ///< why unavailable
};

/// glibc (called through libc.so.6 directly, even when malloc is interposed), mimalloc,
/// jemalloc and tcmalloc (dlopen'ed, prefixed APIs), rtmem's tlsf_allocator (plain and
/// cached) and rt_heap.
[[nodiscard]] std::vector<backend_factory> whole_program_backends();
/// Their names, comma-separated, in order (for help texts and errors), without loading any.
[[nodiscard]] std::string backend_names();
[[nodiscard]] const backend_factory* find_backend(const std::vector<backend_factory>& all,
                                                  const std::string& name);

}  // namespace rtmem::analyze
