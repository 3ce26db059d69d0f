// The symbolizer resolves addresses of this very test binary through a module map built the
// way the tracer builds it: demangled names, source lines and inlined frames.
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include "rtmem/analyze/symbolizer.hpp"

namespace rtmem_symbolizer_test {

__attribute__((noinline)) std::uint64_t return_address() {
    return reinterpret_cast<std::uint64_t>(__builtin_return_address(0));
}
__attribute__((always_inline)) inline std::uint64_t inlined_helper(int) {
    return return_address();
}
__attribute__((noinline)) std::uint64_t outer_function(int x) {
    return inlined_helper(x) + 0;
}

}  // namespace rtmem_symbolizer_test

namespace {

std::vector<rtmem::analyze::module> own_modules() {
    std::vector<rtmem::analyze::module> out;
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
            auto* mods = static_cast<std::vector<rtmem::analyze::module>*>(data);
            std::uint64_t lo = ~0ull, hi = 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                if (info->dlpi_phdr[i].p_type != PT_LOAD) continue;
                lo = std::min<std::uint64_t>(lo, info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
                hi = std::max<std::uint64_t>(
                    hi, info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz);
            }
            std::string name = info->dlpi_name;
            if (name.empty()) {
                char buf[4096];
                ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
                name.assign(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
            }
            if (hi != 0) mods->push_back({name, lo, hi, info->dlpi_addr});
            return 0;
        },
        &out);
    return out;
}

TEST(symbolizer, demangles_and_reports_inlined_frames) {
    std::uint64_t ip = rtmem_symbolizer_test::outer_function(1);
    rtmem::analyze::symbolizer sym(own_modules());
    const auto& frames = sym.frames(ip);
    ASSERT_FALSE(frames.empty());
    EXPECT_NE(frames.back().function.find("rtmem_symbolizer_test::outer_function(int)"),
              std::string::npos)
        << frames.back().function;
    EXPECT_NE(frames.back().file.find("symbolizer_test.cpp"), std::string::npos);
    ASSERT_GE(frames.size(), 2u) << sym.symbolize(ip);
    EXPECT_TRUE(frames.front().inlined);
    EXPECT_NE(frames.front().function.find("inlined_helper"), std::string::npos);
    EXPECT_NE(sym.location_key(ip).find("+0x"), std::string::npos);
}

TEST(symbolizer, unknown_addresses_fall_back_to_hex) {
    rtmem::analyze::symbolizer sym(std::vector<rtmem::analyze::module>{});
    EXPECT_EQ(sym.symbolize(0x1234), "0x1234");
}

}  // namespace
