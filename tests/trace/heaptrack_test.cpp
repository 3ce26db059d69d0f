// Cross-check against heaptrack on programs nobody here wrote: the number of allocation calls
// and the peak live bytes must agree within 1%. heaptrack sees operator new as the malloc it
// calls, so every rtmem allocation (malloc family and new) is compared with its count.
// Skipped when heaptrack is not installed. The programs must behave the same in both runs
// (hence `git ls-files`, not `git status`, which may refresh the index in one run only).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/trace_reader.hpp"

namespace {

namespace fs = std::filesystem;

std::string capture(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
    return out;
}

struct heaptrack_numbers {
    double calls = -1, peak = -1, peak_unit = 1;
};

heaptrack_numbers heaptrack_run(const std::string& program, const fs::path& dir) {
    std::string data = (dir / "h").string();
    std::system(
        ("cd " + dir.string() + " && heaptrack -o " + data + " " + program + " >/dev/null 2>&1")
            .c_str());
    std::string file = fs::exists(data + ".zst") ? data + ".zst" : data + ".gz";
    std::string out = capture("heaptrack_print -f " + file + " 2>/dev/null | tail -20");
    heaptrack_numbers h;
    // "calls to allocation functions: 1743 (2880/s)", "peak heap memory consumption: 1.13M"
    auto after = [&](const std::string& label) -> std::string {
        std::size_t at = out.find(label);
        if (at == std::string::npos) return "";
        at += label.size();
        std::size_t end = out.find_first_of(" \n", at);
        return out.substr(at, end - at);
    };
    std::string calls = after("calls to allocation functions: ");
    if (!calls.empty()) h.calls = std::stod(calls);
    std::string peak = after("peak heap memory consumption: ");
    if (!peak.empty()) {
        char unit = peak.back();
        double scale = unit == 'K' ? 1e3 : unit == 'M' ? 1e6 : unit == 'G' ? 1e9 : 1;
        std::string digits =
            scale == 1 ? peak.substr(0, peak.find('B')) : peak.substr(0, peak.size() - 1);
        h.peak = std::stod(digits) * scale;
        // heaptrack prints 3 significant digits: half a unit of the last one is rounding.
        std::size_t dot = digits.find('.');
        int decimals = dot == std::string::npos ? 0 : static_cast<int>(digits.size() - dot - 1);
        h.peak_unit = scale * std::pow(10.0, -decimals);
    }
    return h;
}

// heaptrack's preload library needs libstdc++, whose start-up allocates its emergency pool: in a
// program that does not use libstdc++ itself, heaptrack counts that call and its bytes (it frees
// the pool at exit, so not as a leak), rtmem does not (the tracer's libstdc++ is not the
// program's). Measured on a C program whose heap is known: 2 calls, peak 1050 B.
heaptrack_numbers heaptrack_own_pool(const fs::path& dir) {
    heaptrack_numbers h = heaptrack_run(RTMEM_LEAK_SUBJECT, dir);
    h.calls -= 2;
    h.peak -= 1050;
    return h;
}

bool uses_libstdcxx(const std::string& program) {
    return std::system(("ldd \"$(command -v " + program + ")\" | grep -q libstdc++").c_str()) == 0;
}

class heaptrack_check : public ::testing::TestWithParam<const char*> {};

TEST_P(heaptrack_check, calls_and_peak_agree_within_one_percent) {
    if (std::system("command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null") !=
        0) {
        GTEST_SKIP() << "heaptrack not installed";
    }
    fs::path dir = fs::temp_directory_path() / ("rtmem_heaptrack_" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::string program = GetParam();
    std::string first = program.substr(0, program.find(' '));
    if (std::system(("command -v " + first + " >/dev/null").c_str()) != 0) {
        GTEST_SKIP() << first << " not installed";
    }
    heaptrack_numbers h = heaptrack_run(program, dir);
    ASSERT_GT(h.calls, 0) << "could not read heaptrack's summary";
    std::string trace = (dir / "t.rtt").string();
    std::system(("cd " + dir.string() + " && " RTMEM_CLI " record -o " + trace + " -- " + program +
                 " >/dev/null 2>&1")
                    .c_str());
    rtmem::analyze::trace_reader r(trace);
    auto d = rtmem::analyze::analyze_events(r);
    auto calls = static_cast<double>(d.allocations + d.failed);
    auto peak = static_cast<double>(d.peak_live_bytes);
    if (!uses_libstdcxx(first)) {
        const heaptrack_numbers pool = heaptrack_own_pool(dir);
        ASSERT_GE(pool.calls, 1) << "heaptrack did not add its pool to a C program";
        ASSERT_GT(pool.peak, 60e3);
        h.calls -= pool.calls;
        h.peak -= pool.peak;
        h.peak_unit += pool.peak_unit;
    }
    EXPECT_NEAR(calls, h.calls, 0.01 * h.calls) << program;
    EXPECT_NEAR(peak, h.peak, 0.01 * h.peak + h.peak_unit / 2) << program;
    std::printf("%s: calls rtmem %.0f heaptrack %.0f; peak rtmem %.0f heaptrack %.0f\n",
                program.c_str(), calls, h.calls, peak, h.peak);
    fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(programs, heaptrack_check,
                         ::testing::Values("/usr/bin/python3 -c 'x=[str(i) for i in range(20000)]'",
                                           "cmake --version", "git --version",
                                           "git -C " RTMEM_SOURCE_DIR " ls-files --stage"),
                         [](const auto& param_info) {
                             return "program" + std::to_string(param_info.index);
                         });

}  // namespace
