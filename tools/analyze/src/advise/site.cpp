#include "rtmem/analyze/site.hpp"

#include <map>

namespace rtmem::analyze {

site_map::site_map(const event_source& source, std::size_t depth) {
    frames_.emplace_back();  // site 0: unknown
    representative_.push_back(0);
    const std::size_t count = source.stack_count();
    stack_to_site_.assign(count, 0);
    std::map<std::vector<std::uint64_t>, std::uint32_t> by_frames;
    for (std::size_t id = 1; id < count; ++id) {
        auto frames = source.stack(static_cast<std::uint32_t>(id));
        if (frames.empty()) continue;
        const std::size_t keep = depth == 0 ? frames.size() : std::min(depth, frames.size());
        std::vector<std::uint64_t> key(frames.begin(),
                                       frames.begin() + static_cast<std::ptrdiff_t>(keep));
        auto [it, inserted] =
            by_frames.try_emplace(std::move(key), static_cast<std::uint32_t>(frames_.size()));
        if (inserted) {
            frames_.push_back(it->first);
            representative_.push_back(static_cast<std::uint32_t>(id));
        }
        stack_to_site_[id] = it->second;
    }
}

}  // namespace rtmem::analyze
