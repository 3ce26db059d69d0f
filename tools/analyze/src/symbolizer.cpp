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

std::string hex(const unsigned char* bits, int n) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (int i = 0; i < n; ++i) {
        out += digits[bits[i] >> 4];
        out += digits[bits[i] & 15];
    }
    return out;
}

}  // namespace

struct symbolizer::impl {
    std::vector<module> modules;
    Dwfl_Callbacks callbacks{};
    std::string search_path;  // dwfl_standard_find_debuginfo's directories
    char* debuginfo_path = nullptr;
    Dwfl* dwfl = nullptr;
    std::unordered_map<std::uint64_t, std::vector<frame_info>> cache;
    // Per module (by path) that lacked DWARF, for debug_info(); frames counted once per ip.
    std::unordered_map<Dwfl_Module*, bool> has_dwarf;
    std::unordered_map<std::string, module_without_debug_info> without;
    std::uint64_t frames_seen = 0, frames_without = 0;
    // Per module, its function symbols by address: dwfl_module_addrname scans the whole symbol
    // table on every lookup (31k symbols in cc1plus: seconds for an advice's frames).
    struct symbol {
        GElf_Addr address, size;
        int rank;  // at one address the global name wins, then weak, then local
        const char* name;
    };
    std::unordered_map<Dwfl_Module*, std::vector<symbol>> symbols;

    const char* symbol_name(Dwfl_Module* mod, std::uint64_t pc) {
        auto [it, fresh] = symbols.try_emplace(mod);
        std::vector<symbol>& table = it->second;
        if (fresh) {
            const int n = dwfl_module_getsymtab(mod);
            for (int i = 1; i < n; ++i) {
                GElf_Sym sym{};
                GElf_Addr address = 0;
                const char* name =
                    dwfl_module_getsym_info(mod, i, &sym, &address, nullptr, nullptr, nullptr);
                const int type = GELF_ST_TYPE(sym.st_info);
                if (name == nullptr || *name == '\0' || sym.st_shndx == SHN_UNDEF ||
                    (type != STT_FUNC && type != STT_GNU_IFUNC)) {
                    continue;
                }
                const int bind = GELF_ST_BIND(sym.st_info);
                const int rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
                table.push_back({address, sym.st_size, rank, name});
            }
            std::sort(table.begin(), table.end(), [](const symbol& a, const symbol& b) {
                return a.address != b.address ? a.address < b.address : a.rank < b.rank;
            });
        }
        auto after = std::upper_bound(table.begin(), table.end(), pc,
                                      [](std::uint64_t a, const symbol& s) { return a < s.address; });
        if (after == table.begin()) return nullptr;
        const symbol& s = *std::prev(after);
        return pc < s.address + std::max<GElf_Addr>(s.size, 1) ? s.name : nullptr;
    }

    void count(std::uint64_t pc) {
        ++frames_seen;
        Dwfl_Module* mod = dwfl != nullptr ? dwfl_addrmodule(dwfl, pc) : nullptr;
        if (mod != nullptr) {
            auto [it, fresh] = has_dwarf.try_emplace(mod, false);
            if (fresh) {
                Dwarf_Addr bias = 0;
                it->second = dwfl_module_getdwarf(mod, &bias) != nullptr;
            }
            if (it->second) return;
        }
        ++frames_without;
        const module* m = find(pc);
        std::string path = m != nullptr ? m->path : std::string("(no module)");
        auto [w, fresh] = without.try_emplace(path);
        if (fresh) {
            w->second.path = path;
            w->second.readable = mod != nullptr;
            const unsigned char* bits = nullptr;
            GElf_Addr vaddr = 0;
            int n = mod != nullptr ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
            if (n > 0) w->second.build_id = hex(bits, n);
        }
        ++w->second.frames;
    }

    const module* find(std::uint64_t ip) const {
        auto it = std::upper_bound(modules.begin(), modules.end(), ip,
                                   [](std::uint64_t a, const module& m) { return a < m.start; });
        if (it == modules.begin()) return nullptr;
        --it;
        return ip < it->end ? &*it : nullptr;
    }

    std::vector<frame_info> resolve(std::uint64_t pc) {
        std::vector<frame_info> out;
        Dwfl_Module* mod = dwfl != nullptr ? dwfl_addrmodule(dwfl, pc) : nullptr;
        if (mod == nullptr) return out;
        const char* sym = symbol_name(mod, pc);
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
    // libdwfl's default path (":.debug:/usr/lib/debug"), after the user's own directory.
    impl_->search_path = ":.debug:/usr/lib/debug";
    if (const char* dir = std::getenv("RTMEM_DEBUG_DIR"); dir != nullptr && *dir != '\0') {
        impl_->search_path = std::string(dir) + ":" + impl_->search_path;
    }
    impl_->debuginfo_path = impl_->search_path.data();
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
    const std::uint64_t pc = ip == 0 ? 0 : ip - 1;
    impl_->count(pc);
    return impl_->cache.emplace(ip, impl_->resolve(pc)).first->second;
}

debug_info_summary symbolizer::debug_info() const {
    debug_info_summary s;
    s.frames = impl_->frames_seen;
    s.without_debug_info = impl_->frames_without;
    for (const auto& [path, m] : impl_->without) s.modules.push_back(m);
    std::sort(s.modules.begin(), s.modules.end(), [](const auto& a, const auto& b) {
        return a.frames != b.frames ? a.frames > b.frames : a.path < b.path;
    });
    return s;
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
