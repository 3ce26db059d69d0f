// The malloc-API conformance test: tests/malloc/programs/malloc_api prints every edge case's
// result; under `rtmem run` it must print exactly what it prints with glibc, and rt_heap must
// have served the calls (RTMEM_EXPECT_OWNED makes the program check rtmem_malloc_owns).
#include <gtest/gtest.h>

#include "run_helpers.hpp"

using rtmem::test::run_shell;
using rtmem::test::run_under_rtmem;

namespace {
const std::string program = std::string(RTMEM_PROGRAMS) + "/rtmem_malloc_api";
}

TEST(MallocApi, SameResultsAsGlibc) {
    const auto native = run_shell(program);
    ASSERT_EQ(native.status, 0);
    ASSERT_GT(native.out.size(), 2000u);  // every case printed
    const auto shim = run_under_rtmem("env RTMEM_EXPECT_OWNED=1 " + program);
    EXPECT_EQ(shim.status, 0) << "a call was not served by rt_heap (see stderr)";
    EXPECT_EQ(shim.out, native.out);
}

TEST(MallocApi, SameResultsInRealTimeMode) {
    const auto native = run_shell(program);
    const auto shim = run_under_rtmem("env RTMEM_EXPECT_OWNED=1 " + program, "--realtime 64M");
    EXPECT_EQ(shim.status, 0);
    EXPECT_EQ(shim.out, native.out);
}

TEST(MallocApi, RealTimeHeapExhaustedGivesNullNotGlibc) {
    // An 8 MiB real-time heap: a 30 MB block cannot come from it, and glibc must not serve it.
    const auto r = run_under_rtmem(
        "/usr/bin/python3 -c \"import ctypes; m=ctypes.CDLL(None).malloc; m.restype=ctypes.c_void_p; "
        "print(m(30000000) is None)\"",
        "--realtime 8M");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "True\n");
}

TEST(RunCommand, BadArgumentsAreNamed) {
    EXPECT_EQ(run_shell(std::string(RTMEM_CLI) + " run --realtime 12 -- true 2>/dev/null").status, 2);
    EXPECT_EQ(run_shell(std::string(RTMEM_CLI) + " run --realtime 3X -- true 2>/dev/null").status, 2);
    EXPECT_EQ(run_shell(std::string(RTMEM_CLI) + " run --lock -- true 2>/dev/null").status, 2);
    EXPECT_EQ(run_shell(std::string(RTMEM_CLI) + " run -- /nonexistent/program 2>/dev/null").status, 2);
    const auto msg = run_shell(std::string(RTMEM_CLI) + " run --realtime 12 -- true 2>&1");
    EXPECT_NE(msg.out.find("--realtime 12"), std::string::npos) << msg.out;
}

TEST(RunCommand, ExitStatusAndSignalAreTheProgramsOwn) {
    EXPECT_EQ(run_under_rtmem("sh -c 'exit 7'").status, 7);
    EXPECT_EQ(run_under_rtmem("sh -c 'kill -TERM $$'").status, 128 + 15);
}

TEST(RunCommand, StatsNameTheHeapThatServed) {
    const auto r = run_shell(std::string(RTMEM_CLI) + " run --stats -- " + program +
                             " 2>&1 >/dev/null");
    EXPECT_NE(r.out.find("rtmem run: pid"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("rt_heap:"), std::string::npos) << r.out;
}
