// Recording overhead, reported not asserted: trace_workload (one malloc + one free per step)
// natively, under librtmem-trace.so at stack depth 16 (what `rtmem record` runs, without its
// closing summary), and under heaptrack when installed; 1 and 2 threads; median of N runs.
// Environment: RTMEM_OVERHEAD_REPS (default 3), RTMEM_OVERHEAD_ITERATIONS (per thread, 2e6).
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct sample {
    double wall = 0, cpu = 0;
};

sample run(const std::vector<std::string>& args, const std::vector<std::string>& env_extra) {
    std::vector<std::string> env_storage;
    for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
    env_storage.insert(env_storage.end(), env_extra.begin(), env_extra.end());
    std::vector<char*> envp, argv;
    for (auto& s : env_storage) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> a = args;
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    sample s;
    if (posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) return s;
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto tv = [](timeval v) {
        return static_cast<double>(v.tv_sec) + static_cast<double>(v.tv_usec) * 1e-6;
    };
    s.cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
    posix_spawn_file_actions_destroy(&fa);
    return s;
}

sample median(std::vector<sample> v) {
    auto mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end(),
                     [](const sample& a, const sample& b) { return a.wall < b.wall; });
    sample w = v[mid];
    std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end(),
                     [](const sample& a, const sample& b) { return a.cpu < b.cpu; });
    w.cpu = v[mid].cpu;
    return w;
}

}  // namespace

int main() {
    const char* reps_env = std::getenv("RTMEM_OVERHEAD_REPS");
    const char* iter_env = std::getenv("RTMEM_OVERHEAD_ITERATIONS");
    int reps = reps_env != nullptr ? std::atoi(reps_env) : 3;
    std::string iterations = iter_env != nullptr ? iter_env : "2000000";
    std::string lib = std::filesystem::path(RTMEM_CLI).parent_path().parent_path() / "trace" /
                      "librtmem-trace.so";
    std::string dir = "/tmp/rtmem_overhead_" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    std::string heaptrack = RTMEM_HEAPTRACK;
    std::printf("trace_workload, %s malloc+free steps per thread, median of %d runs\n",
                iterations.c_str(), reps);
    std::printf("%-22s %7s %9s %9s %10s %10s\n", "config", "threads", "wall s", "cpu s", "wall x",
                "cpu x");
    for (int threads : {1, 2}) {
        std::vector<std::string> workload{RTMEM_TRACE_WORKLOAD, std::to_string(threads),
                                          iterations};
        struct config {
            const char* name;
            std::vector<std::string> prefix, env;
        };
        std::vector<config> configs{
            {"native", {}, {}},
            {"rtmem record depth 16",
             {},
             {"LD_PRELOAD=" + lib, "RTMEM_TRACE_FILE=" + dir + "/w.rtt", "RTMEM_TRACE_DEPTH=16"}},
            {"rtmem record depth 0",
             {},
             {"LD_PRELOAD=" + lib, "RTMEM_TRACE_FILE=" + dir + "/w.rtt", "RTMEM_TRACE_DEPTH=0"}},
        };
        if (!heaptrack.empty() && !heaptrack.ends_with("NOTFOUND")) {
            configs.push_back({"heaptrack", {heaptrack, "-o", dir + "/h"}, {}});
        }
        sample base{};
        for (const auto& c : configs) {
            std::vector<sample> v;
            for (int r = 0; r < reps; ++r) {
                std::vector<std::string> args = c.prefix;
                args.insert(args.end(), workload.begin(), workload.end());
                v.push_back(run(args, c.env));
            }
            sample m = median(v);
            if (std::string(c.name) == "native") base = m;
            std::printf("%-22s %7d %9.3f %9.3f %10.1f %10.1f\n", c.name, threads, m.wall, m.cpu,
                        m.wall / std::max(base.wall, 1e-9), m.cpu / std::max(base.cpu, 1e-9));
            std::fflush(stdout);
        }
    }
    std::filesystem::remove_all(dir);
    return 0;
}
