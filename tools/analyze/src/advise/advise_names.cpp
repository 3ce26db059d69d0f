// Site names for the CLI: the site's innermost frames, symbolised.
#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/symbolizer.hpp"

namespace rtmem::analyze {

site_namer symbol_namer(const site_map& sites, symbolizer& sym, std::size_t frames) {
    return [&sites, &sym, frames](std::uint32_t site) {
        auto ips = sites.frames(site);
        if (ips.empty()) return std::string("(unknown stack)");
        std::string out;
        for (std::size_t i = 0; i < ips.size() && i < frames; ++i) {
            if (!out.empty()) out += " < ";
            out += sym.symbolize(ips[i]);
        }
        return out;
    };
}

}  // namespace rtmem::analyze
