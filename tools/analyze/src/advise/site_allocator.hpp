// Internal: the advised rtmem allocator of one site in the mixed replay. Any call may decline
// (nullptr) when the site breaks its class; the reason is counted and the block falls back to
// the baseline, so invalid advice is measured, never fatal.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/replay.hpp"

namespace rtmem::analyze::detail {

class site_allocator {
  public:
    virtual ~site_allocator() = default;
    /// Non-zero `tag` on success; nullptr: fall back (reason counted in `v`).
    virtual void* allocate(std::uint32_t thread, std::size_t size, std::size_t align,
                           std::uint32_t& tag, site_violations& v) noexcept = 0;
    virtual void deallocate(std::uint32_t thread, void* p, std::size_t size, std::size_t align,
                            std::uint32_t tag, site_violations& v) noexcept = 0;
    /// Resize in place when the allocator can (e.g. the top block of a stack); nullptr: the
    /// caller allocates, copies and frees instead; nullptr with `tag` set to 0: the old block was
    /// released but the new size did not fit (the caller allocates elsewhere, nothing to free).
    virtual void* reallocate(std::uint32_t, void*, std::size_t, std::size_t, std::size_t,
                             std::uint32_t&, site_violations&) noexcept {
        return nullptr;
    }
    virtual void next_frame() noexcept {}
    /// Creates the thread's instance now (before the timed replay, as a program would at start).
    virtual void prepare(std::uint32_t thread) = 0;
    /// Bytes reserved from the system (capacity of every instance).
    [[nodiscard]] virtual std::size_t footprint() const noexcept = 0;
};

/// The adapter for a recommendation, or nullptr with `why_not` set (class without an rtmem
/// allocator in this build, or general). `have_frames`: the trace has frame markers.
std::unique_ptr<site_allocator> make_site_allocator(const recommendation& r, bool have_frames,
                                                    std::string& why_not);

}  // namespace rtmem::analyze::detail
