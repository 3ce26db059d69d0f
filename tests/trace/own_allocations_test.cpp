// The tracer's own allocations are not the program's: a C program traced shows exactly its own
// heap (libstdc++, loaded for the tracer, allocates its ~71 KiB emergency pool at start-up),
// and a C++ program's pool is freed at exit rather than reported as a leak.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace {

namespace fs = std::filesystem;

rtmem::analyze::report_data record_and_analyze(const std::string& program, const char* tag) {
    const fs::path trace =
        fs::temp_directory_path() / ("rtmem_own_" + std::to_string(getpid()) + tag + ".rtt");
    const std::string cmd = std::string(RTMEM_CLI) + " record -o " + trace.string() + " -- " +
                            program + " 2>/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    rtmem::analyze::trace_reader reader(trace.string());
    auto r = rtmem::analyze::analyze_events(reader);
    fs::remove(trace);
    return r;
}

TEST(own_allocations, a_c_program_shows_only_its_own_blocks) {
    const auto r = record_and_analyze(RTMEM_LEAK_SUBJECT, "c");
    EXPECT_EQ(r.allocations, 2u);
    EXPECT_EQ(r.deallocations, 1u);
    EXPECT_EQ(r.bytes_allocated, 1050u);
    EXPECT_EQ(r.peak_live_bytes, 1050u);
    EXPECT_EQ(r.leaked_blocks, 1u);
    EXPECT_EQ(r.leaked_bytes, 1000u);
    EXPECT_EQ(r.unknown_frees, 0u);
}

TEST(own_allocations, a_cxx_programs_exception_pool_is_not_a_leak) {
    const auto r = record_and_analyze(RTMEM_LEAK_SUBJECT_CXX, "cxx");
    EXPECT_EQ(r.leaked_blocks, 1u);
    EXPECT_EQ(r.leaked_bytes, 1000u);
    EXPECT_EQ(r.unknown_frees, 0u);
}

}  // namespace
