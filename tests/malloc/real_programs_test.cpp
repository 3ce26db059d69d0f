// Programs nobody here wrote, where installed: their output under `rtmem run` must be the same
// as with glibc. A program that is missing skips its test.
#include <unistd.h>

#include <gtest/gtest.h>

#include "run_helpers.hpp"

using rtmem::test::run_shell;
using rtmem::test::run_under_rtmem;

namespace {

bool installed(const char* path) {
    return access(path, X_OK) == 0;
}

void same_as_native(const std::string& command, const std::string& options = "") {
    const auto native = run_shell(command);
    ASSERT_EQ(native.status, 0) << native.out;
    const auto shim = run_under_rtmem(command, options);
    EXPECT_EQ(shim.status, 0) << options;
    EXPECT_EQ(shim.out, native.out) << options;
}

const char* const python_script =
    "/usr/bin/python3 -c \"import json, collections\n"
    "d = [{'k': i, 'v': str(i) * (i % 40), 'l': list(range(i % 30))} for i in range(100000)]\n"
    "s = json.dumps(d); back = json.loads(s)\n"
    "c = collections.Counter(len(x['v']) for x in back)\n"
    "print(len(s), sum(c.values()), sorted(c.items())[:3])\"";

std::string sqlite_inserts(int rows) {
    return "/usr/bin/sqlite3 :memory: \"create table t(a integer, b text); "
           "with recursive c(x) as (select 1 union all select x+1 from c where x < " +
           std::to_string(rows) +
           ") insert into t select x, 'row' || x from c; "
           "create index i on t(b); select count(*), sum(a), max(b) from t;\" 2>&1";
}

}  // namespace

TEST(RealPrograms, Python) {
    if (!installed("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
    same_as_native(python_script);
}

TEST(RealPrograms, Sqlite) {
    if (!installed("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
    same_as_native(sqlite_inserts(50000));
}

// Real-time mode (docs/run.md): the whole region committed and prefaulted at start, the same
// output. Not --lock: CI machines may not allow locking this much.
TEST(RealPrograms, PythonAndSqliteInRealTimeMode) {
    if (installed("/usr/bin/python3")) same_as_native(python_script, "--realtime 256M");
    if (installed("/usr/bin/sqlite3")) same_as_native(sqlite_inserts(50000), "--realtime 64M");
}

// An exhausted real-time region: malloc returns nullptr (ENOMEM), which sqlite reports as
// SQLITE_NOMEM, exiting with that code (7); no crash (a signal would be status 128 + n), no
// fallback to glibc.
TEST(RealPrograms, SqliteReportsOutOfMemoryWhenTheRealTimeRegionIsExhausted) {
    if (!installed("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
    const auto r = run_under_rtmem(sqlite_inserts(400000), "--realtime 4M");
    EXPECT_EQ(r.status, 7) << r.out;
    EXPECT_NE(r.out.find("out of memory"), std::string::npos) << r.out;
}

TEST(RealPrograms, PerlCmakeGit) {
    if (installed("/usr/bin/perl"))
        same_as_native("/usr/bin/perl -e 'my %h; $h{$_} = $_ x 3 for 1..100000; "
                       "print scalar(keys %h), \" \", length(join q(,), sort keys %h), \"\\n\"'");
    if (installed("/usr/bin/cmake")) same_as_native("/usr/bin/cmake --version");
    if (installed("/usr/bin/git"))
        same_as_native("/usr/bin/git -C " RTMEM_SOURCE_DIR " log --oneline -n 200 --stat "
                       "-- include src | wc -c");
}
