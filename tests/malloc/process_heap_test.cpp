// The process heap's hygiene: threads with cross-thread frees and churn, fork (while other
// threads allocate and exit) and exec, dlopen'd code, and the static way of linking it.
#include <gtest/gtest.h>

#include "run_helpers.hpp"

using rtmem::test::run_shell;
using rtmem::test::run_under_rtmem;

namespace {

std::string prog(const char* name) {
    return std::string(RTMEM_PROGRAMS) + "/" + name;
}

void same_as_native(const std::string& command, const std::string& options = "") {
    const auto native = run_shell(command);
    ASSERT_EQ(native.status, 0) << native.out;
    ASSERT_FALSE(native.out.empty());
    const auto shim = run_under_rtmem(command, options);
    EXPECT_EQ(shim.status, 0);
    EXPECT_EQ(shim.out, native.out);
}

}  // namespace

TEST(ProcessHeap, CrossThreadFreesAndThreadChurn) {
    same_as_native(prog("rtmem_malloc_threads"));
}

TEST(ProcessHeap, CrossThreadFreesAndThreadChurnRealTime) {
    same_as_native(prog("rtmem_malloc_threads"), "--realtime 256M");
}

TEST(ProcessHeap, ForkWhileThreadsAllocateAndExitThenExec) {
    same_as_native(prog("rtmem_malloc_fork_exec"));
}

TEST(ProcessHeap, DlopenedModuleAllocatesAndFreesForTheHost) {
    same_as_native(prog("rtmem_malloc_dlopen") + " " + RTMEM_MALLOC_PLUGIN);
}

TEST(ProcessHeap, LinkedStaticallyWithoutPreload) {
    const auto r = run_shell(prog("rtmem_malloc_static_program"));
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out, "malloc 1 new 1 strdup 1 thread 1\n");
}
