#include "run_plan.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include "command.hpp"
#include "rtmem/malloc/plan_contract.hpp"

namespace rtmem::cli {

namespace {

namespace contract = rtmem::malloc_contract;

// One environment string may hold 128 KiB (MAX_ARG_STRLEN); leave room for the rest.
constexpr std::size_t max_text = 120 * 1024;
constexpr std::size_t max_frames = 32;  // plan_text_max_frames in the library

char kind_letter(analyze::plan_strategy s) {
    switch (s) {
        case analyze::plan_strategy::pool: return 'p';
        case analyze::plan_strategy::region: return 'r';
        case analyze::plan_strategy::thread_stack: return 't';
        case analyze::plan_strategy::heap: break;
    }
    return 0;
}

}  // namespace

compiled_plan compile_plan(const analyze::plan& p) {
    compiled_plan out;
    std::map<std::string, std::size_t> module_index;
    std::vector<std::string> modules;
    std::string site_lines;
    std::size_t frames = 0, dropped = 0;
    for (const auto& s : p.sites) {
        const char kind = kind_letter(s.strategy);
        if (kind == 0) {
            ++out.skipped;
            continue;
        }
        const std::size_t n = std::min(s.frames.size(), max_frames);
        std::string line = std::to_string(s.id) + ' ' + kind + ' ' +
                           std::to_string(kind == 'p' ? s.block_size : s.chunk_bytes) + ' ' +
                           std::to_string(s.max_request) + ' ' + std::to_string(n);
        std::vector<std::string> new_modules;
        for (std::size_t k = 0; k < n; ++k) {
            const auto& f = s.frames[k];
            auto it = module_index.find(f.module);
            std::size_t m = 0;
            if (it != module_index.end()) {
                m = it->second;
            } else {
                m = modules.size() + new_modules.size();
                for (std::size_t j = 0; j < new_modules.size(); ++j)
                    if (new_modules[j] == f.module) m = modules.size() + j;
                if (m == modules.size() + new_modules.size()) new_modules.push_back(f.module);
            }
            char off[24];
            std::snprintf(off, sizeof off, "%" PRIx64, f.offset);
            line += ' ' + std::to_string(m) + ' ' + off;
        }
        line += '\n';
        std::size_t module_bytes = 0;
        for (const auto& m : modules) module_bytes += m.size() + 8;
        for (const auto& m : new_modules) module_bytes += m.size() + 8;
        if (site_lines.size() + line.size() + module_bytes + 64 > max_text) {
            ++dropped;
            continue;
        }
        for (auto& m : new_modules) {
            module_index.emplace(m, modules.size());
            modules.push_back(std::move(m));
        }
        site_lines += line;
        frames += n;
        ++out.sites;
    }
    out.skipped += dropped;
    out.text = contract::plan_magic;
    out.text += "modules " + std::to_string(modules.size()) + '\n';
    for (const auto& m : modules) out.text += std::to_string(m.size()) + ' ' + m + '\n';
    out.text += "sites " + std::to_string(out.sites) + " frames " + std::to_string(frames) + '\n';
    out.text += site_lines;
    if (dropped != 0)
        out.warning = "the plan's last " + std::to_string(dropped) +
                      " sites do not fit in the environment and are left to the general heap";
    else if (out.sites == 0)
        out.warning = "the plan routes no site (every site is \"heap\"): the program runs on the "
                      "general heap alone, as under `rtmem run` without --plan";
    return out;
}

void apply_plan(const std::string& path, bool stats) {
    analyze::plan p;
    try {
        p = analyze::read_plan_file(path);
    } catch (const analyze::plan_error& e) {
        throw usage_error(std::string("--plan: ") + e.what());
    }
    for (const auto& s : p.sites)
        for (const auto& f : s.frames)
            if (f.module.empty() || f.module.find('\n') != std::string::npos)
                throw usage_error("--plan " + path + ": site " + std::to_string(s.id) +
                                  " has a frame without a usable module path");
    const compiled_plan c = compile_plan(p);
    if (!c.warning.empty()) std::cerr << "rtmem run: --plan " << path << ": " << c.warning << '\n';
    // A plan routing nothing is not loaded: the program runs exactly as under `rtmem run`
    // alone, without the site probe every call of a loaded plan pays.
    if (c.sites == 0) unsetenv(contract::env_plan);
    else setenv(contract::env_plan, c.text.c_str(), 1);
    setenv(contract::env_plan_stats, stats ? "1" : "0", 1);
}

}  // namespace rtmem::cli
