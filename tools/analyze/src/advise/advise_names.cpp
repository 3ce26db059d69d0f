// Site names for the CLI: the site's innermost frames, symbolised; sites that share those
// frames are told apart by the first frame where they differ (distinct_labels).
#include <memory>

#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/distinct_labels.hpp"
#include "rtmem/analyze/symbolizer.hpp"

namespace rtmem::analyze {

site_namer symbol_namer(const site_map& sites, symbolizer& sym, std::size_t frames) {
    // Labels of every site, made on the first call: whether one collides depends on all.
    auto labels = std::make_shared<std::vector<std::string>>();
    return [&sites, &sym, frames, labels](std::uint32_t site) {
        if (labels->empty()) {
            std::vector<std::span<const std::uint64_t>> stacks;
            stacks.reserve(sites.size());
            for (std::uint32_t s = 0; s < sites.size(); ++s) stacks.push_back(sites.frames(s));
            label_style style;
            style.frames = frames;
            style.text = [&sym](std::uint64_t ip) { return sym.symbolize(ip); };
            style.key = [&sym](std::uint64_t ip) { return sym.location_key(ip); };
            *labels = distinct_labels(stacks, style, "(unknown stack)");
        }
        return site < labels->size() ? (*labels)[site] : std::string("(unknown stack)");
    };
}

}  // namespace rtmem::analyze
