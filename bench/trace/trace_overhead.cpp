// Recording overhead, reported not asserted: trace_workload's two programs (micro: one
// malloc + one free and nothing else per step; app: allocation-heavy C++ with real work)
// natively, under librtmem-trace.so (what `rtmem record` runs, without its closing summary)
// and under heaptrack when installed; 1 and 2 threads; median of N runs.
// Columns: wall time, CPU of the whole process (the tracer's writer thread included) and CPU
// of the workload's own threads (what the traced program itself pays), each also as a ratio
// to native. Environment: RTMEM_OVERHEAD_REPS (default 3), RTMEM_OVERHEAD_ITERATIONS (micro
// steps per thread, 2e6; app runs a sixth of it). When the build compiler is GCC, a real
// program too: cc1plus compiling a small C++ file at -O2 (one thread; the prog column is then
// not measured). Sampled recording (`record --sample 512K`) is measured beside it, both ways:
// interposed on glibc (librtmem-trace.so, against native) and inside rt_heap (`--heap rtmem`,
// librtmem-malloc-sampled.so, against `rtmem run`, i.e. librtmem-malloc.so without sampling).
// Runs are interleaved (rep 1 of every configuration, then rep 2, ...), so a change in the
// machine's load hits every configuration alike. Each ratio is median/median, with the
// spread of the per-run ratios (each run against the same rep of its baseline) as min-max.
// At the end: the target of issue #20 (sampled overhead <= 5% CPU at 512 KiB on micro, app
// and cc1plus, one thread), met or not, per mode.
// RTMEM_OVERHEAD_CONFIGS: run only the configurations whose name contains one of these
// comma-separated words (native, and the baseline of a chosen configuration, always run),
// e.g. "sample,depth 16" or "sample".
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

struct config {
    std::string name;
    std::vector<std::string> prefix, env;
    std::string baseline;  ///< the configuration its ratio is taken against ("" : native)
};

struct verdict {
    std::string work, name, baseline;
    double ratio = 0, low = 0, high = 0;
};

// Runs every configuration `reps` times, interleaved, and prints one row each. `use_prog`:
// the CPU of the workload's own threads is measured (the trace_workload programs).
std::vector<verdict> measure(const std::string& work, int threads,
                             const std::vector<std::string>& command,
                             const std::vector<config>& configs, int reps, bool use_prog) {
    std::vector<std::vector<sample>> runs(configs.size());
    for (int r = 0; r < reps; ++r) {
        for (std::size_t c = 0; c < configs.size(); ++c) {
            std::vector<std::string> args = configs[c].prefix;
            args.insert(args.end(), command.begin(), command.end());
            runs[c].push_back(run(args, configs[c].env));
        }
    }
    auto index_of = [&](const std::string& name) {
        for (std::size_t c = 0; c < configs.size(); ++c) {
            if (configs[c].name == name) return c;
        }
        return std::size_t{0};
    };
    auto cpu_of = [use_prog](const sample& x) { return use_prog ? x.thread_cpu : x.cpu; };
    std::vector<verdict> out;
    for (std::size_t c = 0; c < configs.size(); ++c) {
        const std::size_t b =
            index_of(configs[c].baseline.empty() ? "native" : configs[c].baseline);
        sample m = median(runs[c]), base = median(runs[b]), native = median(runs[0]);
        std::vector<double> per_run;
        for (int r = 0; r < reps; ++r) {
            per_run.push_back(cpu_of(runs[c][static_cast<std::size_t>(r)]) /
                              std::max(cpu_of(runs[b][static_cast<std::size_t>(r)]), 1e-9));
        }
        auto [lo, hi] = std::minmax_element(per_run.begin(), per_run.end());
        double ratio = cpu_of(m) / std::max(cpu_of(base), 1e-9);
        std::printf("%-7s %-30s %3d %8.3f %8.3f %8s %7.2f %7.2f  %-12s %5.2f-%-5.2f %s\n",
                    work.c_str(), configs[c].name.c_str(), threads, m.wall, m.cpu,
                    use_prog ? std::to_string(m.thread_cpu).substr(0, 8).c_str() : "-",
                    m.wall / std::max(native.wall, 1e-9),
                    cpu_of(m) / std::max(cpu_of(native), 1e-9),
                    configs[c].baseline.empty() ? "native" : configs[c].baseline.c_str(), *lo, *hi,
                    c == b ? "" : (std::to_string(ratio).substr(0, 5) + "x").c_str());
        std::fflush(stdout);
        out.push_back({work, configs[c].name, configs[c].baseline, ratio, *lo, *hi});
    }
    return out;
}

}  // namespace

int main() {
    const char* reps_env = std::getenv("RTMEM_OVERHEAD_REPS");
    const char* iter_env = std::getenv("RTMEM_OVERHEAD_ITERATIONS");
    int reps = reps_env != nullptr ? std::max(1, std::atoi(reps_env)) : 3;
    std::string iterations = iter_env != nullptr ? iter_env : "2000000";
    const std::string tools = std::filesystem::path(RTMEM_CLI).parent_path().parent_path();
    const std::string lib = tools + "/trace/librtmem-trace.so";
    const std::string heap_lib = tools + "/malloc/librtmem-malloc.so";
    const std::string sampled_heap_lib = tools + "/trace/librtmem-malloc-sampled.so";
    std::string dir = "/tmp/rtmem_overhead_" + std::to_string(getpid());
    std::filesystem::create_directories(dir);
    std::string heaptrack = RTMEM_HEAPTRACK;
    const bool have_heaptrack = !heaptrack.empty() && !heaptrack.ends_with("NOTFOUND");
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
    // The chosen configurations and the baselines they need, in the given order.
    auto chosen = [&](const std::vector<config>& all) {
        std::vector<config> out;
        for (const auto& c : all) {
            bool needed = wanted(c.name);
            for (const auto& other : all) needed |= wanted(other.name) && other.baseline == c.name;
            if (needed) out.push_back(c);
        }
        return out;
    };
    std::printf(
        "median of %d interleaved runs; x = ratio to native (cpu x: of the program's own "
        "threads where measured); vs = the baseline of the last columns, with the min-max "
        "of the per-run cpu ratios\n",
        reps);
    std::printf("%-7s %-30s %3s %8s %8s %8s %7s %7s  %-12s %-11s %s\n", "work", "config", "thr",
                "wall s", "cpu s", "prog s", "wall x", "cpu x", "vs", "spread", "ratio");
    std::vector<verdict> verdicts;
    const std::string out = "RTMEM_TRACE_FILE=" + dir + "/w.rtt";
    const std::vector<config> workload_configs{
        {"native", {}, {}, ""},
        {"rtmem record depth 16", {}, {"LD_PRELOAD=" + lib, out}, ""},
        {"rtmem depth 16, no writer", {}, {"LD_PRELOAD=" + lib, out, "RTMEM_TRACE_WRITER=0"}, ""},
        {"rtmem depth 16, unwind all",
         {},
         {"LD_PRELOAD=" + lib, out, "RTMEM_TRACE_FAST_STACKS=0"},
         ""},
        {"rtmem record depth 0", {}, {"LD_PRELOAD=" + lib, out, "RTMEM_TRACE_DEPTH=0"}, ""},
        {"rtmem --sample 512K", {}, {"LD_PRELOAD=" + lib, out, sample_512k}, ""},
        {"rtmem run", {}, {"LD_PRELOAD=" + heap_lib}, ""},
        {"--sample 512K --heap rtmem",
         {},
         {"LD_PRELOAD=" + sampled_heap_lib, out, sample_512k},
         "rtmem run"},
    };
    for (const char* work : {"micro", "app"}) {
        for (int threads : {1, 2}) {
            std::vector<std::string> workload{
                RTMEM_TRACE_WORKLOAD, std::to_string(threads),
                std::string(work) == "micro" ? iterations : app_iterations, work};
            std::vector<config> configs = chosen(workload_configs);
            if (have_heaptrack && wanted("heaptrack")) {
                configs.push_back({"heaptrack", {heaptrack, "-o", dir + "/h"}, {}, ""});
            }
            auto v = measure(work, threads, workload, configs, reps, true);
            if (threads == 1) verdicts.insert(verdicts.end(), v.begin(), v.end());
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
        const std::string c_out = "RTMEM_TRACE_FILE=" + dir + "/c.rtt";
        std::vector<config> configs = chosen({
            {"native", {}, {}, ""},
            {"rtmem record depth 16", {}, {"LD_PRELOAD=" + lib, c_out}, ""},
            {"rtmem --sample 512K", {}, {"LD_PRELOAD=" + lib, c_out, sample_512k}, ""},
            {"rtmem run", {}, {"LD_PRELOAD=" + heap_lib}, ""},
            {"--sample 512K --heap rtmem",
             {},
             {"LD_PRELOAD=" + sampled_heap_lib, c_out, sample_512k},
             "rtmem run"},
        });
        if (have_heaptrack && wanted("heaptrack")) {
            configs.push_back({"heaptrack", {heaptrack, "-o", dir + "/hc"}, {}, ""});
        }
        auto v = measure("cc1plus", 1, compile, configs, reps, false);
        verdicts.insert(verdicts.end(), v.begin(), v.end());
    }
    // Issue #20's target: sampled recording at 512 KiB costs <= 5% CPU (one thread).
    std::printf("\ntarget: --sample 512K overhead <= 5%% CPU (median ratio, one thread)\n");
    for (const auto& v : verdicts) {
        if (v.name.find("512K") == std::string::npos) continue;
        std::printf("  %-8s %-28s vs %-8s %6.3fx (runs %.3f-%.3f): %s\n", v.work.c_str(),
                    v.name.c_str(), v.baseline.empty() ? "native" : v.baseline.c_str(), v.ratio,
                    v.low, v.high, v.ratio <= 1.05 ? "met" : "NOT met");
    }
    std::filesystem::remove_all(dir);
    return 0;
}
