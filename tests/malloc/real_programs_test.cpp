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

void same_as_native(const std::string& command) {
    const auto native = run_shell(command);
    ASSERT_EQ(native.status, 0) << native.out;
    const auto shim = run_under_rtmem(command);
    EXPECT_EQ(shim.status, 0);
    EXPECT_EQ(shim.out, native.out);
}

}  // namespace

TEST(RealPrograms, Python) {
    if (!installed("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
    same_as_native(
        "/usr/bin/python3 -c \"import json, collections\n"
        "d = [{'k': i, 'v': str(i) * (i % 40), 'l': list(range(i % 30))} for i in range(100000)]\n"
        "s = json.dumps(d); back = json.loads(s)\n"
        "c = collections.Counter(len(x['v']) for x in back)\n"
        "print(len(s), sum(c.values()), sorted(c.items())[:3])\"");
}

TEST(RealPrograms, Sqlite) {
    if (!installed("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
    same_as_native(
        "/usr/bin/sqlite3 :memory: \"create table t(a integer, b text); "
        "with recursive c(x) as (select 1 union all select x+1 from c where x < 50000) "
        "insert into t select x, 'row' || x from c; "
        "create index i on t(b); select count(*), sum(a), max(b) from t;\"");
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
