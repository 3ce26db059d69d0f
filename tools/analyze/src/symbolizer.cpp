// Symbolisation with elfutils libdwfl: each recorded module is reported at its recorded load
// bias, so addresses resolve offline, after the process is gone.
#include "rtmem/analyze/symbolizer.hpp"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace rtmem::analyze {

namespace {

std::string demangle(const char* name) {
    if (name == nullptr) return "??";
    int status = 0;
    char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (d == nullptr) return name;
    std::string out(d);
    std::free(d);
    return out;
}

const char* die_name(Dwarf_Die* die) {
    Dwarf_Attribute attr;
    const char* name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    if (name == nullptr) {
        name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    }
    if (name == nullptr) name = dwarf_diename(die);
    return name;
}

std::string base_name(const std::string& path) {
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

struct symbolizer::impl {
    std::vector<module> modules;
    Dwfl_Callbacks callbacks{};
    char* debuginfo_path = nullptr;
    Dwfl* dwfl = nullptr;
    std::unordered_map<std::uint64_t, std::vector<frame_info>> cache;

    const module* find(std::uint64_t ip) const {
        auto it = std::upper_bound(modules.begin(), modules.end(), ip,
                                   [](std::uint64_t a, const module& m) { return a < m.start; });
        if (it == modules.begin()) return nullptr;
        --it;
        return ip < it->end ? &*it : nullptr;
    }

    std::vector<frame_info> resolve(std::uint64_t pc) const {
        std::vector<frame_info> out;
        Dwfl_Module* mod = dwfl != nullptr ? dwfl_addrmodule(dwfl, pc) : nullptr;
        if (mod == nullptr) return out;
        const char* sym = dwfl_module_addrname(mod, pc);
        std::string file;
        int line = 0;
        if (Dwfl_Line* l = dwfl_module_getsrc(mod, pc)) {
            const char* f = dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr);
            if (f != nullptr) file = f;
        }
        // Inlined frames: the innermost function-like scope around pc, then outwards through
        // the concrete tree (dwarf_getscopes_die), each inlined call site giving the location
        // within the next outer function.
        Dwarf_Addr bias = 0;
        Dwarf_Die* cu = dwfl_module_addrdie(mod, pc, &bias);
        Dwarf_Die* scopes = nullptr;
        int n = cu != nullptr ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
        Dwarf_Files* files = nullptr;
        if (cu != nullptr) dwarf_getsrcfiles(cu, &files, nullptr);
        auto function_like = [](Dwarf_Die* d) {
            int tag = dwarf_tag(d);
            return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram;
        };
        Dwarf_Die cur{};
        bool have = false;
        for (int i = 0; i < n && !have; ++i) {
            if (function_like(&scopes[i])) {
                cur = scopes[i];
                have = true;
            }
        }
        std::free(scopes);
        for (int guard = 0; have && guard < 64; ++guard) {
            frame_info f;
            f.function = demangle(die_name(&cur));
            f.file = file;
            f.line = line;
            f.inlined = dwarf_tag(&cur) == DW_TAG_inlined_subroutine;
            out.push_back(f);
            if (!f.inlined) break;
            Dwarf_Attribute attr;
            Dwarf_Word call_file = 0, call_line = 0;
            dwarf_formudata(dwarf_attr(&cur, DW_AT_call_file, &attr), &call_file);
            dwarf_formudata(dwarf_attr(&cur, DW_AT_call_line, &attr), &call_line);
            const char* cf =
                files != nullptr ? dwarf_filesrc(files, call_file, nullptr, nullptr) : nullptr;
            file = cf != nullptr ? cf : "";
            line = static_cast<int>(call_line);
            Dwarf_Die* parents = nullptr;
            int m = dwarf_getscopes_die(&cur, &parents);
            have = false;
            for (int i = 1; i < m && !have; ++i) {
                if (function_like(&parents[i])) {
                    cur = parents[i];
                    have = true;
                }
            }
            std::free(parents);
        }
        if (out.empty()) {
            if (sym == nullptr && file.empty()) return out;  // nothing known: module+offset
            frame_info f;
            f.function = sym != nullptr ? demangle(sym) : "??";
            f.file = file;
            f.line = line;
            out.push_back(f);
        } else if (sym != nullptr && out.back().function == "??") {
            out.back().function = demangle(sym);
        }
        return out;
    }
};

symbolizer::symbolizer(std::vector<module> modules) : impl_(std::make_unique<impl>()) {
    impl_->modules = std::move(modules);
    std::sort(impl_->modules.begin(), impl_->modules.end(),
              [](const module& a, const module& b) { return a.start < b.start; });
    impl_->callbacks.find_elf = dwfl_build_id_find_elf;
    impl_->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    impl_->callbacks.section_address = dwfl_offline_section_address;
    impl_->callbacks.debuginfo_path = &impl_->debuginfo_path;
    impl_->dwfl = dwfl_begin(&impl_->callbacks);
    if (impl_->dwfl == nullptr) return;
    dwfl_report_begin(impl_->dwfl);
    for (const auto& m : impl_->modules) {
        if (m.path.empty() || m.path[0] != '/' || access(m.path.c_str(), R_OK) != 0) continue;
        dwfl_report_elf(impl_->dwfl, base_name(m.path).c_str(), m.path.c_str(), -1, m.bias, true);
    }
    dwfl_report_end(impl_->dwfl, nullptr, nullptr);
}

symbolizer::~symbolizer() {
    if (impl_->dwfl != nullptr) dwfl_end(impl_->dwfl);
}

const std::vector<frame_info>& symbolizer::frames(std::uint64_t ip) {
    auto it = impl_->cache.find(ip);
    if (it != impl_->cache.end()) return it->second;
    return impl_->cache.emplace(ip, impl_->resolve(ip == 0 ? 0 : ip - 1)).first->second;
}

std::string symbolizer::location_key(std::uint64_t ip) const {
    // The module of the call (ip - 1): a call that ends a module's code returns past its end.
    const module* m = impl_->find(ip == 0 ? 0 : ip - 1);
    char buf[64];
    if (m == nullptr) {
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(ip));
        return buf;
    }
    std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(ip - m->bias));
    return base_name(m->path) + buf;
}

std::string symbolizer::symbolize(std::uint64_t ip) {
    const auto& fr = frames(ip);
    if (fr.empty()) return location_key(ip);
    std::string out;
    for (std::size_t i = fr.size(); i-- > 0;) {  // outermost function first
        if (!out.empty()) out += " > ";
        out += fr[i].function;
        if (!fr[i].file.empty()) {
            out += " (" + base_name(fr[i].file) + ":" + std::to_string(fr[i].line) + ")";
        }
        if (fr[i].inlined) out += " [inlined]";
    }
    return out;
}

}  // namespace rtmem::analyze
