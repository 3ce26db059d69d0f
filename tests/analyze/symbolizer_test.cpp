// The symbolizer resolves addresses of this very test binary through a module map built the
// way the tracer builds it: demangled names, source lines and inlined frames.
#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <fstream>
#include <string>

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

// A call to a [[noreturn]] function as the very last instruction of its caller: the return
// address is the first byte after the caller (the next function), so only `ip - 1` names the
// caller. The thrown value carries the return address out.
struct return_address_box {
    std::uint64_t ip;
};
volatile int sink = 0;
[[noreturn]] __attribute__((noinline)) void throw_return_address() {
    sink = sink + 1;
    throw return_address_box{reinterpret_cast<std::uint64_t>(__builtin_return_address(0))};
}
__attribute__((noinline)) void ends_with_noreturn_call(int x) {
    sink = x;
    throw_return_address();  // LINE_DIRECT
}
__attribute__((always_inline)) inline void inlined_noreturn_tail(int x) {
    sink = x * 2;
    throw_return_address();  // LINE_TAIL_CALL
}
__attribute__((noinline)) void ends_with_inlined_noreturn_call(int x) {
    sink = x;
    inlined_noreturn_tail(x);  // LINE_OUTER_CALL
}
__attribute__((noinline)) void next_function(int x) {  // starts where the callers' calls return
    sink = x + 3;
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

template <class F>
std::uint64_t return_address_of_noreturn_call(F f) {
    try {
        f();
    } catch (const rtmem_symbolizer_test::return_address_box& b) {
        return b.ip;
    }
    return 0;
}

// The line of this file containing `marker` (1-based), so the test does not hard-code lines.
int line_of(const char* marker) {
    std::ifstream in(RTMEM_SYMBOLIZER_TEST_SOURCE);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        if (text.find(marker) != std::string::npos && text.find("find(") == std::string::npos &&
            text.find("line_of(") == std::string::npos) {
            return n;
        }
    }
    return -1;
}

// The precondition that makes the test meaningful: `ip` is one past the last byte of the
// function containing `ip - 1` (per the ELF symbol table), i.e. the call really is last.
bool call_is_last_instruction(std::uint64_t ip) {
    char* debuginfo_path = nullptr;
    Dwfl_Callbacks cb{};
    cb.find_elf = dwfl_linux_proc_find_elf;
    cb.find_debuginfo = dwfl_standard_find_debuginfo;
    cb.debuginfo_path = &debuginfo_path;
    Dwfl* dwfl = dwfl_begin(&cb);
    if (dwfl == nullptr) return false;
    dwfl_report_begin(dwfl);
    dwfl_linux_proc_report(dwfl, getpid());
    dwfl_report_end(dwfl, nullptr, nullptr);
    bool last = false;
    if (Dwfl_Module* mod = dwfl_addrmodule(dwfl, ip - 1)) {
        GElf_Sym s{};
        GElf_Off off = 0;
        if (dwfl_module_addrinfo(mod, ip - 1, &off, &s, nullptr, nullptr, nullptr) != nullptr) {
            last = off + 1 == s.st_size;
        }
    }
    dwfl_end(dwfl);
    return last;
}

TEST(symbolizer, call_at_the_end_of_a_function_resolves_to_the_caller) {
    std::uint64_t ip =
        return_address_of_noreturn_call([] { rtmem_symbolizer_test::ends_with_noreturn_call(5); });
    ASSERT_NE(ip, 0u);
    ASSERT_TRUE(call_is_last_instruction(ip)) << "the compiler put code after the call";
    rtmem::analyze::symbolizer sym(own_modules());
    const auto& frames = sym.frames(ip);
    ASSERT_EQ(frames.size(), 1u) << sym.symbolize(ip);
    EXPECT_NE(frames[0].function.find("ends_with_noreturn_call(int)"), std::string::npos)
        << sym.symbolize(ip);
    EXPECT_NE(frames[0].file.find("symbolizer_test.cpp"), std::string::npos);
    EXPECT_EQ(frames[0].line, line_of("// LINE_DIRECT")) << sym.symbolize(ip);
}

TEST(symbolizer, call_at_the_end_of_an_inlined_block_keeps_its_inline_frames) {
    std::uint64_t ip = return_address_of_noreturn_call(
        [] { rtmem_symbolizer_test::ends_with_inlined_noreturn_call(7); });
    ASSERT_NE(ip, 0u);
    ASSERT_TRUE(call_is_last_instruction(ip)) << "the compiler put code after the call";
    rtmem::analyze::symbolizer sym(own_modules());
    const auto& frames = sym.frames(ip);
    ASSERT_EQ(frames.size(), 2u) << sym.symbolize(ip);
    EXPECT_TRUE(frames[0].inlined);
    EXPECT_NE(frames[0].function.find("inlined_noreturn_tail"), std::string::npos)
        << sym.symbolize(ip);
    EXPECT_EQ(frames[0].line, line_of("// LINE_TAIL_CALL")) << sym.symbolize(ip);
    EXPECT_FALSE(frames[1].inlined);
    EXPECT_NE(frames[1].function.find("ends_with_inlined_noreturn_call(int)"), std::string::npos)
        << sym.symbolize(ip);
    EXPECT_EQ(frames[1].line, line_of("// LINE_OUTER_CALL")) << sym.symbolize(ip);
    EXPECT_NE(sym.symbolize(ip).find("ends_with_inlined_noreturn_call(int) (symbolizer_test.cpp:"),
              std::string::npos)
        << sym.symbolize(ip);
}

// An address of a known module where neither a symbol nor a line is known (a stripped
// program, here /bin/true mapped at a made-up address, looked up inside its ELF header) is
// named by module and offset, not "??".
TEST(symbolizer, addresses_without_symbols_are_named_by_module_and_offset) {
    if (access("/bin/true", R_OK) != 0) GTEST_SKIP() << "no /bin/true";
    rtmem::analyze::symbolizer sym({{"/bin/true", 0x100000, 0x110000, 0x100000}});
    std::uint64_t ip = 0x100011;
    EXPECT_TRUE(sym.frames(ip).empty()) << sym.symbolize(ip);
    EXPECT_EQ(sym.symbolize(ip), "true+0x11");
}

TEST(symbolizer, unknown_addresses_fall_back_to_hex) {
    rtmem::analyze::symbolizer sym(std::vector<rtmem::analyze::module>{});
    EXPECT_EQ(sym.symbolize(0x1234), "0x1234");
}

}  // namespace
