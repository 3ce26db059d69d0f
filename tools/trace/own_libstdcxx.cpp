// libstdc++ loaded for the tracer alone. librtmem-trace.so needs libstdc++ (bad_alloc, the
// exception runtime), so a C program traced by it gets libstdc++ too, whose start-up allocates
// its emergency exception pool (~71 KiB, never freed): the tracer's block, not the program's,
// and it read as a 71 KiB leak in every C program. When no other loaded object needs
// libstdc++, calls from its code are passed through untraced until the tracer's constructor,
// which runs after libstdc++'s start-up (a dependency starts first).
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstring>

#include "recorder_internal.hpp"

namespace __gnu_cxx {
__attribute__((weak)) void __freeres() noexcept;  // libstdc++ (CXXABI_1.3.10), for valgrind
}  // namespace __gnu_cxx

namespace rtmem::trace::internal {

std::uintptr_t g_own_init_lo = 0, g_own_init_hi = 0;

namespace {

bool g_libstdcxx_ours = false;

struct scan {
    std::uintptr_t self_lo;
    std::uintptr_t lib_lo = 0, lib_hi = 0;
    bool needed_elsewhere = false;
};

bool needs_libstdcxx(const dl_phdr_info* info, const ElfW(Dyn) * dyn) {
    std::uintptr_t strtab = 0;
    bool any = false;
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
        if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
        if (d->d_tag == DT_NEEDED) any = true;
    }
    if (!any || strtab == 0) return false;
    // glibc relocates the dynamic section's addresses in place; the vDSO's are left as linked.
    if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
        if (d->d_tag != DT_NEEDED) continue;
        const char* name = reinterpret_cast<const char*>(strtab + d->d_un.d_val);
        if (std::strncmp(name, "libstdc++.so", 12) == 0) return true;
    }
    return false;
}

int visit(dl_phdr_info* info, std::size_t, void* data) {
    auto* s = static_cast<scan*>(data);
    std::uintptr_t lo = ~std::uintptr_t{0}, hi = 0;
    const ElfW(Dyn)* dyn = nullptr;
    for (int k = 0; k < info->dlpi_phnum; ++k) {
        const auto& ph = info->dlpi_phdr[k];
        if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
        if (ph.p_type != PT_LOAD) continue;
        lo = std::min<std::uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
        hi = std::max<std::uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    }
    if (hi == 0 || lo == s->self_lo) return 0;  // the tracer itself
    if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, "/libstdc++.so") != nullptr) {
        s->lib_lo = lo;
        s->lib_hi = hi;
        return 0;
    }
    if (dyn != nullptr && needs_libstdcxx(info, dyn)) s->needed_elsewhere = true;
    return 0;
}

}  // namespace

void find_own_libstdcxx() noexcept {
    scan s{g_self_begin};
    dl_iterate_phdr(visit, &s);
    if (s.lib_hi == 0 || s.needed_elsewhere) return;
    g_libstdcxx_ours = true;
    g_own_init_lo = s.lib_lo;
    g_own_init_hi = s.lib_hi;
}

void end_own_libstdcxx_start() noexcept {
    g_own_init_lo = g_own_init_hi = 0;
}

// At exit, a program's libstdc++ frees its pool, as heaptrack and valgrind have it do: the
// pool is the runtime's, allocated once, and no leak of the program's.
void free_libstdcxx_pool() noexcept {
    if (!g_libstdcxx_ours && &__gnu_cxx::__freeres != nullptr) __gnu_cxx::__freeres();
}

}  // namespace rtmem::trace::internal
