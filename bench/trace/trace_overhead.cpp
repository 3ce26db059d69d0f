// Recording overhead, reported not asserted: trace_workload's two programs (micro: one
// malloc + one free and nothing else per step; app: allocation-heavy C++ with real work)
// natively, under librtmem-trace.so (what `rtmem record` runs, without its closing summary)
// and under heaptrack when installed; 1 and 2 threads; median of N runs.
// Columns: wall time, CPU of the whole process (the tracer's writer thread included) and CPU
// of the workload's own threads (what the traced program itself pays), each also as a ratio
// to native. Environment: RTMEM_OVERHEAD_REPS (default 3), RTMEM_OVERHEAD_ITERATIONS (micro
// steps per thread, 2e6; app runs a sixth of it). When the build compiler is GCC, a real
// program too: cc1plus compiling a small C++ file at -O2 (one thread; the prog column is then
// not measured). Sampled recording (`record --sample 512K`) is measured beside it.
// RTMEM_OVERHEAD_CONFIGS: run only the configurations whose name contains one of these
// comma-separated words (native always runs), e.g. "sample,depth 16" or "sample".
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct sample {
    double wall = 0, cpu = 0, thread_cpu = 0;
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
    std::string err = "/tmp/rtmem_overhead_stderr_" + std::to_string(getpid());
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
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
    if (FILE* f = std::fopen(err.c_str(), "r")) {  // "workload thread cpu ms: X"
        char line[256];
        while (std::fgets(line, sizeof line, f) != nullptr) {
            if (const char* p = std::strstr(line, "workload thread cpu ms:")) {
                s.thread_cpu = std::atof(p + 23) * 1e-3;
            }
        }
        std::fclose(f);
    }
    std::remove(err.c_str());
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
    std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end(),
                     [](const sample& a, const sample& b) { return a.thread_cpu < b.thread_cpu; });
    w.thread_cpu = v[mid].thread_cpu;
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
    std::string app_iterations = std::to_string(std::max(1LL, std::atoll(iterations.c_str()) / 6));
    const std::string sample_512k = "RTMEM_TRACE_SAMPLE=524288";
    const char* only = std::getenv("RTMEM_OVERHEAD_CONFIGS");
    auto wanted = [only](const std::string& name) {
        if (only == nullptr || *only == 0 || name == "native") return true;
        std::string list = only;
        for (std::size_t b = 0; b <= list.size();) {
            std::size_t e = std::min(list.find(',', b), list.size());
            if (e > b && name.find(list.substr(b, e - b)) != std::string::npos) return true;
            b = e + 1;
        }
        return false;
    };
    std::printf("median of %d runs; x = ratio to native in the same run\n", reps);
    std::printf("%-6s %-28s %3s %8s %8s %8s %7s %7s %7s\n", "work", "config", "thr", "wall s",
                "cpu s", "prog s", "wall x", "cpu x", "prog x");
    for (const char* work : {"micro", "app"}) {
        for (int threads : {1, 2}) {
            std::vector<std::string> workload{
                RTMEM_TRACE_WORKLOAD, std::to_string(threads),
                std::string(work) == "micro" ? iterations : app_iterations, work};
            struct config {
                const char* name;
                std::vector<std::string> prefix, env;
            };
            std::string out = "RTMEM_TRACE_FILE=" + dir + "/w.rtt";
            std::vector<config> configs{
                {"native", {}, {}},
                {"rtmem record depth 16", {}, {"LD_PRELOAD=" + lib, out}},
                {"rtmem depth 16, no writer",
                 {},
                 {"LD_PRELOAD=" + lib, out, "RTMEM_TRACE_WRITER=0"}},
                {"rtmem depth 16, unwind all",
                 {},
                 {"LD_PRELOAD=" + lib, out, "RTMEM_TRACE_FAST_STACKS=0"}},
                {"rtmem record depth 0", {}, {"LD_PRELOAD=" + lib, out, "RTMEM_TRACE_DEPTH=0"}},
                {"rtmem --sample 512K", {}, {"LD_PRELOAD=" + lib, out, sample_512k}},
            };
            if (!heaptrack.empty() && !heaptrack.ends_with("NOTFOUND")) {
                configs.push_back({"heaptrack", {heaptrack, "-o", dir + "/h"}, {}});
            }
            sample base{};
            for (const auto& c : configs) {
                if (!wanted(c.name)) continue;
                std::vector<sample> v;
                for (int r = 0; r < reps; ++r) {
                    std::vector<std::string> args = c.prefix;
                    args.insert(args.end(), workload.begin(), workload.end());
                    v.push_back(run(args, c.env));
                }
                sample m = median(v);
                if (std::string(c.name) == "native") base = m;
                auto ratio = [](double a, double b) { return a / std::max(b, 1e-9); };
                std::printf("%-6s %-28s %3d %8.3f %8.3f %8.3f %7.1f %7.1f %7.1f\n", work, c.name,
                            threads, m.wall, m.cpu, m.thread_cpu, ratio(m.wall, base.wall),
                            ratio(m.cpu, base.cpu), ratio(m.thread_cpu, base.thread_cpu));
                std::fflush(stdout);
            }
        }
    }
    if (std::string cc1plus = RTMEM_CC1PLUS; !cc1plus.empty() && std::filesystem::exists(cc1plus)) {
        std::string src = dir + "/unit.cpp";
        if (FILE* f = std::fopen(src.c_str(), "w")) {
            std::fputs(
                "#include <algorithm>\n#include <map>\n#include <string>\n"
                "#include <unordered_map>\n#include <vector>\n"
                "int main(int argc, char** argv) {\n"
                "    std::map<std::string, std::vector<int>> m;\n"
                "    std::unordered_map<int, std::string> u;\n"
                "    for (int i = 0; i < argc; ++i) { m[argv[i]].push_back(i); u[i] = argv[i]; }\n"
                "    std::vector<std::string> keys;\n"
                "    for (const auto& [k, v] : m) keys.push_back(k);\n"
                "    std::sort(keys.begin(), keys.end());\n"
                "    return int(keys.size() + u.size());\n"
                "}\n",
                f);
            std::fclose(f);
        }
        std::vector<std::string> compile{
            cc1plus, "-quiet", "-imultiarch", "x86_64-linux-gnu", "-D_GNU_SOURCE",
            src,     "-O2",    "-o",          dir + "/unit.s"};
        std::string out = "RTMEM_TRACE_FILE=" + dir + "/c.rtt";
        std::vector<std::pair<const char*, std::vector<std::string>>> configs{
            {"native", {}},
            {"rtmem record depth 16", {"LD_PRELOAD=" + lib, out}},
            {"rtmem --sample 512K", {"LD_PRELOAD=" + lib, out, sample_512k}}};
        sample base{};
        for (const auto& [name, env] : configs) {
            if (!wanted(name)) continue;
            std::vector<sample> v;
            for (int r = 0; r < reps; ++r) v.push_back(run(compile, env));
            sample m = median(v);
            if (std::string(name) == "native") base = m;
            std::printf("%-6s %-28s %3d %8.3f %8.3f %8s %7.1f %7.1f %7s\n", "cc1plus", name, 1,
                        m.wall, m.cpu, "-", m.wall / std::max(base.wall, 1e-9),
                        m.cpu / std::max(base.cpu, 1e-9), "-");
            std::fflush(stdout);
        }
        if (!heaptrack.empty() && !heaptrack.ends_with("NOTFOUND") && wanted("heaptrack")) {
            std::vector<std::string> args{heaptrack, "-o", dir + "/hc"};
            args.insert(args.end(), compile.begin(), compile.end());
            std::vector<sample> v;
            for (int r = 0; r < reps; ++r) v.push_back(run(args, {}));
            sample m = median(v);
            std::printf("%-6s %-28s %3d %8.3f %8.3f %8s %7.1f %7.1f %7s\n", "cc1plus", "heaptrack",
                        1, m.wall, m.cpu, "-", m.wall / std::max(base.wall, 1e-9),
                        m.cpu / std::max(base.cpu, 1e-9), "-");
        }
    }
    std::filesystem::remove_all(dir);
    return 0;
}
