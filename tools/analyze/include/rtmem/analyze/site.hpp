// Allocation sites: the advisor groups events by call stack, optionally merging stacks that
// share their innermost `depth` frames (--site-depth), so one site = one place in the code.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "rtmem/analyze/event.hpp"

namespace rtmem::analyze {

/// Maps the source's stack ids to dense site ids. Site 0 is "unknown stack".
class site_map {
  public:
    /// depth 0 keeps whole stacks apart; depth N merges stacks equal in their N innermost frames.
    explicit site_map(const event_source& source, std::size_t depth = 0);

    [[nodiscard]] std::uint32_t site_of(std::uint32_t stack) const noexcept {
        return stack < stack_to_site_.size() ? stack_to_site_[stack] : 0;
    }
    [[nodiscard]] std::size_t size() const noexcept { return frames_.size(); }
    /// The frames identifying a site, innermost first (empty for site 0).
    [[nodiscard]] std::span<const std::uint64_t> frames(std::uint32_t site) const noexcept {
        return site < frames_.size() ? std::span<const std::uint64_t>(frames_[site])
                                     : std::span<const std::uint64_t>();
    }
    /// One stack id of the site (to symbolise it with the source's stack table).
    [[nodiscard]] std::uint32_t representative_stack(std::uint32_t site) const noexcept {
        return site < representative_.size() ? representative_[site] : 0;
    }

  private:
    std::vector<std::uint32_t> stack_to_site_;
    std::vector<std::vector<std::uint64_t>> frames_;
    std::vector<std::uint32_t> representative_;
};

}  // namespace rtmem::analyze
