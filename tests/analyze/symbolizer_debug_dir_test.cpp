// Frames of a stripped module: named through its separate debug file, found by build id under
// $RTMEM_DEBUG_DIR/.build-id/xx/yyyy.debug; without it, debug_info() names the module and its
// build id, and the note says how to get names.
#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "rtmem/analyze/symbolizer.hpp"
#include "scratch_dir_test.hpp"

namespace {

// debug_dir_fixture.c is linked with --build-id=0x<this>.
constexpr const char* fixture_build_id = "0123456789abcdef0123456789abcdef01234567";

// The file address of a symbol in an unstripped ELF file.
std::uint64_t symbol_address(const std::string& file, const char* name) {
    char* path = nullptr;
    Dwfl_Callbacks cb{};
    cb.find_elf = dwfl_build_id_find_elf;
    cb.find_debuginfo = dwfl_standard_find_debuginfo;
    cb.section_address = dwfl_offline_section_address;
    cb.debuginfo_path = &path;
    Dwfl* dwfl = dwfl_begin(&cb);
    dwfl_report_begin(dwfl);
    Dwfl_Module* mod = dwfl_report_elf(dwfl, "fixture", file.c_str(), -1, 0, true);
    dwfl_report_end(dwfl, nullptr, nullptr);
    std::uint64_t address = 0;
    for (int i = 0; mod != nullptr && i < dwfl_module_getsymtab(mod); ++i) {
        GElf_Sym sym{};
        GElf_Addr value = 0;
        const char* n = dwfl_module_getsym_info(mod, i, &sym, &value, nullptr, nullptr, nullptr);
        if (n != nullptr && std::string(n) == name) address = value;
    }
    dwfl_end(dwfl);
    return address;
}

int run(const std::string& command) { return std::system(command.c_str()); }

class symbolizer_debug_dir : public rtmem::testing::scratch_dir_test {
  protected:
    void SetUp() override {
        scratch_dir_test::SetUp();
        unsetenv("RTMEM_DEBUG_DIR");
        stripped_ = path("libfixture.so");
        const std::string debug_dir = path("debug/.build-id/01");
        std::filesystem::create_directories(debug_dir);
        const std::string debug_file =
            debug_dir + "/" + std::string(fixture_build_id).substr(2) + ".debug";
        ASSERT_EQ(run(std::string(RTMEM_OBJCOPY) + " --only-keep-debug " + RTMEM_FIXTURE + " " +
                      debug_file),
                  0);
        ASSERT_EQ(run(std::string(RTMEM_STRIP) + " --strip-all -o " + stripped_ + " " +
                      RTMEM_FIXTURE),
                  0);
        const std::uint64_t hidden = symbol_address(RTMEM_FIXTURE, "fixture_hidden_step");
        ASSERT_NE(hidden, 0u);
        ASSERT_EQ(symbol_address(stripped_, "fixture_hidden_step"), 0u) << "not stripped";
        // Mapped at a made-up base; a return address one past the function's first byte.
        module_ = {stripped_, base_, base_ + 0x100000, base_};
        ip_ = base_ + hidden + 1;
        const std::uint64_t entry = symbol_address(RTMEM_FIXTURE, "fixture_entry");
        ASSERT_NE(entry, 0u);
        exported_ip_ = base_ + entry + 1;
    }
    void TearDown() override {
        unsetenv("RTMEM_DEBUG_DIR");
        scratch_dir_test::TearDown();
    }

    static constexpr std::uint64_t base_ = 0x7f0000000000;
    std::string stripped_;
    rtmem::analyze::module module_;
    std::uint64_t ip_ = 0;
    std::uint64_t exported_ip_ = 0;  // in fixture_entry, which .dynsym still names
};

TEST_F(symbolizer_debug_dir, stripped_module_without_debug_file_is_listed_with_its_build_id) {
    rtmem::analyze::symbolizer sym({module_});
    EXPECT_TRUE(sym.frames(ip_).empty()) << sym.symbolize(ip_);
    const auto info = sym.debug_info();
    EXPECT_EQ(info.frames, 1u);
    EXPECT_EQ(info.without_debug_info, 1u);
    ASSERT_EQ(info.modules.size(), 1u);
    EXPECT_EQ(info.modules[0].path, stripped_);
    EXPECT_EQ(info.modules[0].build_id, fixture_build_id);
    EXPECT_EQ(info.modules[0].frames, 1u);
    const std::string note = rtmem::analyze::debug_info_note(info);
    EXPECT_NE(note.find("100% of the 1 distinct frames"), std::string::npos) << note;
    EXPECT_NE(note.find(fixture_build_id), std::string::npos) << note;
    EXPECT_NE(note.find("/usr/lib/debug/.build-id/01/23456789"), std::string::npos) << note;
    EXPECT_NE(note.find("RTMEM_DEBUG_DIR"), std::string::npos) << note;
    EXPECT_NE(note.find("-dbgsym"), std::string::npos) << note;
}

TEST_F(symbolizer_debug_dir, stripped_module_still_names_exported_functions_from_dynsym) {
    rtmem::analyze::symbolizer sym({module_});
    const auto& frames = sym.frames(exported_ip_);
    ASSERT_EQ(frames.size(), 1u) << sym.symbolize(exported_ip_);
    EXPECT_EQ(frames[0].function, "fixture_entry");
    EXPECT_TRUE(frames[0].file.empty());
    EXPECT_EQ(sym.debug_info().without_debug_info, 1u);
}

TEST_F(symbolizer_debug_dir, debug_file_under_rtmem_debug_dir_names_the_frame) {
    setenv("RTMEM_DEBUG_DIR", path("debug").c_str(), 1);
    rtmem::analyze::symbolizer sym({module_});
    const auto& frames = sym.frames(ip_);
    ASSERT_EQ(frames.size(), 1u) << sym.symbolize(ip_);
    EXPECT_EQ(frames[0].function, "fixture_hidden_step");
    EXPECT_NE(frames[0].file.find("debug_dir_fixture.c"), std::string::npos) << frames[0].file;
    EXPECT_EQ(sym.debug_info().without_debug_info, 0u);
    EXPECT_EQ(rtmem::analyze::debug_info_note(sym.debug_info()), "");
}

TEST(symbolizer_debug_info, frames_with_debug_info_need_no_note) {
    rtmem::analyze::symbolizer sym(std::vector<rtmem::analyze::module>{});
    EXPECT_EQ(rtmem::analyze::debug_info_note(sym.debug_info()), "");
    (void)sym.symbolize(0x1234);  // in no module
    const auto info = sym.debug_info();
    EXPECT_EQ(info.without_debug_info, 1u);
    ASSERT_EQ(info.modules.size(), 1u);
    EXPECT_FALSE(info.modules[0].readable);
}

}  // namespace
