// A site's frames as a plan names them: module-relative, without the tracer's or an allocator's
// own frames, and cut to the fewest innermost frames that tell the site apart from the others.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace rtmem::analyze::plan_detail {

/// Finds the module of a return address (the call is at ip - 1).
class module_index {
  public:
    explicit module_index(const std::vector<module>& modules);
    [[nodiscard]] const module* find(std::uint64_t ip) const noexcept;

  private:
    std::vector<const module*> by_start_;
};

/// A site's frames a matcher can see. `complete` is false when the stack was cut (a frame in
/// no module, or an allocator's frame above the caller): the frames are then a prefix only.
struct usable_frames {
    std::vector<std::uint64_t> ips;
    bool complete = true;
};
/// Leading frames of the tracer or an allocator are dropped (frames[0] must be the code that
/// called malloc/new); the stack is cut at the first later frame that is one, or in no module.
/// Frames as many as the recorded depth (the recorder cut the stack) or the site merge depth
/// (the site stands for longer stacks) are never complete.
[[nodiscard]] usable_frames usable(std::span<const std::uint64_t> ips, const module_index& m,
                                   std::uint32_t recorded_depth, std::size_t site_depth);

/// How many innermost frames tell each site apart from every other one.
class distinguishing_depth {
  public:
    explicit distinguishing_depth(const std::vector<const std::vector<std::uint64_t>*>& all);
    struct answer {
        std::size_t depth = 0;     ///< frames to keep
        bool whole_stack = false;  ///< only the whole stack (ending there) tells it apart
        bool ambiguous = false;    ///< another site has exactly these frames
    };
    [[nodiscard]] answer of(const std::vector<std::uint64_t>& ips) const;

  private:
    // prefixes_[d - 1]: how many sites' frames start with each prefix of d frames.
    std::vector<std::map<std::vector<std::uint64_t>, std::uint32_t>> prefixes_;
    std::map<std::vector<std::uint64_t>, std::uint32_t> exact_;
};

/// Module path + offset from the load bias, for each of the first `depth` frames.
[[nodiscard]] std::vector<plan_frame> relative_frames(const std::vector<std::uint64_t>& ips,
                                                      std::size_t depth, const module_index& m);

}  // namespace rtmem::analyze::plan_detail
