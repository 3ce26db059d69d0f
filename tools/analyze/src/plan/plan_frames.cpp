#include "plan_frames.hpp"

#include <algorithm>

namespace rtmem::analyze {

bool allocator_module(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    for (std::string_view prefix : {"librtmem-", "libmimalloc", "libjemalloc", "libtcmalloc"})
        if (name.starts_with(prefix)) return true;
    return false;
}

namespace plan_detail {

module_index::module_index(const std::vector<module>& modules) {
    for (const auto& m : modules) by_start_.push_back(&m);
    std::sort(by_start_.begin(), by_start_.end(),
              [](const module* a, const module* b) { return a->start < b->start; });
}

const module* module_index::find(std::uint64_t ip) const noexcept {
    const std::uint64_t call = ip == 0 ? 0 : ip - 1;  // a call that ends a module returns past it
    auto it = std::upper_bound(by_start_.begin(), by_start_.end(), call,
                               [](std::uint64_t a, const module* m) { return a < m->start; });
    if (it == by_start_.begin()) return nullptr;
    --it;
    return call < (*it)->end ? *it : nullptr;
}

usable_frames usable(std::span<const std::uint64_t> ips, const module_index& m,
                     std::uint32_t recorded_depth, std::size_t site_depth) {
    usable_frames out;
    std::size_t i = 0;
    while (i < ips.size()) {
        const module* mod = m.find(ips[i]);
        if (mod == nullptr || !allocator_module(mod->path)) break;
        ++i;
    }
    for (; i < ips.size(); ++i) {
        const module* mod = m.find(ips[i]);
        if (mod == nullptr || allocator_module(mod->path)) {
            out.complete = false;
            break;
        }
        out.ips.push_back(ips[i]);
    }
    if (recorded_depth != 0 && ips.size() >= recorded_depth) out.complete = false;
    if (site_depth != 0 && ips.size() >= site_depth) out.complete = false;
    return out;
}

distinguishing_depth::distinguishing_depth(
    const std::vector<const std::vector<std::uint64_t>*>& all) {
    for (const auto* ips : all) {
        if (ips->size() > prefixes_.size()) prefixes_.resize(ips->size());
        for (std::size_t d = 1; d <= ips->size(); ++d)
            ++prefixes_[d - 1][std::vector<std::uint64_t>(
                ips->begin(), ips->begin() + static_cast<std::ptrdiff_t>(d))];
        ++exact_[*ips];
    }
}

distinguishing_depth::answer distinguishing_depth::of(const std::vector<std::uint64_t>& ips) const {
    answer a;
    for (std::size_t d = 1; d <= ips.size() && d <= prefixes_.size(); ++d) {
        const std::vector<std::uint64_t> prefix(ips.begin(),
                                                ips.begin() + static_cast<std::ptrdiff_t>(d));
        auto it = prefixes_[d - 1].find(prefix);
        if (it == prefixes_[d - 1].end() || it->second <= 1) {
            a.depth = d;
            return a;
        }
    }
    // Every prefix is shared: the frames are a prefix of a longer site's (or equal to one's).
    a.depth = ips.size();
    a.whole_stack = true;
    auto it = exact_.find(ips);
    a.ambiguous = it != exact_.end() && it->second > 1;
    return a;
}

std::vector<plan_frame> relative_frames(const std::vector<std::uint64_t>& ips, std::size_t depth,
                                        const module_index& m) {
    std::vector<plan_frame> out;
    for (std::size_t i = 0; i < depth && i < ips.size(); ++i) {
        const module* mod = m.find(ips[i]);
        if (mod == nullptr) break;  // usable() never keeps such a frame
        out.push_back({mod->path, ips[i] - mod->bias});
    }
    return out;
}

}  // namespace plan_detail
}  // namespace rtmem::analyze
