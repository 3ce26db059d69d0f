// A stack as frame ids (html/call_tree.hpp's frame_names), outermost first, inlined frames
// expanded: the same names as site_names::path, but each return address is named once
// rather than once per stack it appears in.
#pragma once
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "html/call_tree.hpp"
#include "rtmem/analyze/event.hpp"
#include "rtmem/analyze/symbolizer.hpp"

namespace rtmem::analyze {

class stack_frames {
  public:
    stack_frames(const event_source& source, symbolizer* sym, frame_names& names)
        : source_(source), sym_(sym), names_(names) {}
    /// Appends the frames of `stack` to `out`.
    void path(std::uint32_t stack, std::vector<std::uint32_t>& out) {
        const auto ips = source_.stack(stack);
        for (std::size_t i = ips.size(); i-- > 0;) {
            const auto& ids = of(ips[i]);
            out.insert(out.end(), ids.begin(), ids.end());
        }
        if (ips.empty()) out.push_back(names_.id("(no stack)"));
    }

    /// Recorded return addresses of `stack` (before inlined frames are expanded).
    [[nodiscard]] std::size_t depth(std::uint32_t stack) const { return source_.stack(stack).size(); }

  private:
    const std::vector<std::uint32_t>& of(std::uint64_t ip) {
        auto [it, fresh] = cache_.try_emplace(ip);
        if (!fresh) return it->second;
        if (sym_ != nullptr) {
            const auto& fr = sym_->frames(ip);
            for (std::size_t k = fr.size(); k-- > 0;) it->second.push_back(names_.id(fr[k].function));
            if (fr.empty()) it->second.push_back(names_.id(sym_->symbolize(ip)));
        } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "0x%" PRIx64, ip);
            it->second.push_back(names_.id(buf));
        }
        return it->second;
    }
    const event_source& source_;
    symbolizer* sym_;
    frame_names& names_;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> cache_;
};

}  // namespace rtmem::analyze
