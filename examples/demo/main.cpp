// rtmem_demo: runs the game-loop workload with one memory policy and measures it per frame.
//   rtmem_demo --variant baseline|rtmem [--frames N] [--entities N] [--seed N]
//              [--profile] [--csv FILE] [--json FILE] [--label NAME] [--progress|--no-progress]
//   rtmem_demo --verify SEED[,SEED...]   run both variants, compare final-state checksums
// Frame times come from runs without --profile; --profile times every allocator call (TSC)
// and tracks live heap bytes, which costs ~20 ns per call.
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "baseline_memory.hpp"
#include "cycle_clock.hpp"
#include "game.hpp"
#include "heap_counters.hpp"
// The rtmem variant needs the allocators, adapters and containers; until they are all in the
// tree, the demo runs the baseline alone and says so.
#if __has_include("rtmem/alloc/frame.hpp") &&                              \
                  __has_include("rtmem/adapt/pmr.hpp") &&                  \
                                __has_include("rtmem/diag/tracked.hpp") && \
                                              __has_include("rtmem/containers/soa_vector.hpp")
#include "rtmem_memory.hpp"
#define DEMO_HAVE_RTMEM 1
#endif

namespace {

using namespace demo;

struct options {
    config cfg;
    std::string variant = "baseline";
    std::string label;
    std::string csv;
    std::string json;
    std::vector<std::uint64_t> verify_seeds;
    bool profile = false;
    bool progress = isatty(2) != 0;
};

struct sample {
    double frame_ns;
    double cpu_ns;  // game thread CPU time: robust when other processes share the cores
    std::uint64_t heap_calls;
    std::uint64_t rtmem_calls;
    std::uint64_t alloc_cycles;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(
        stderr,
        "rtmem_demo: %s\nusage: rtmem_demo --variant baseline|rtmem [--frames N] [--entities N] "
        "[--seed N] [--profile] [--csv FILE] [--json FILE] [--label NAME]\n"
        "       rtmem_demo --verify SEED[,SEED...] [--frames N] [--entities N]\n",
        why);
    std::exit(2);
}

std::uint64_t number(const char* s, const char* what) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s, &end, 10);
    if (end == s || *end != '\0') usage(what);
    return v;
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto value = [&](const char* what) {
            if (i + 1 >= argc) usage(what);
            return argv[++i];
        };
        if (a == "--variant")
            o.variant = value("--variant needs baseline or rtmem");
        else if (a == "--frames")
            o.cfg.frames = static_cast<std::uint32_t>(number(value("--frames N"), "bad --frames"));
        else if (a == "--entities")
            o.cfg.entities =
                static_cast<std::uint32_t>(number(value("--entities N"), "bad --entities"));
        else if (a == "--seed")
            o.cfg.seed = number(value("--seed N"), "bad --seed");
        else if (a == "--profile")
            o.profile = true;
        else if (a == "--csv")
            o.csv = value("--csv FILE");
        else if (a == "--json")
            o.json = value("--json FILE");
        else if (a == "--label")
            o.label = value("--label NAME");
        else if (a == "--progress")
            o.progress = true;
        else if (a == "--no-progress")
            o.progress = false;
        else if (a == "--verify") {
            std::string list = value("--verify SEED[,SEED...]");
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t comma = std::min(list.find(',', at), list.size());
                o.verify_seeds.push_back(
                    number(list.substr(at, comma - at).c_str(), "bad seed list"));
                at = comma + 1;
            }
        } else
            usage("unknown argument");
    }
    if (o.cfg.entities < 16) usage("--entities must be at least 16");
    if (o.variant != "baseline" && o.variant != "rtmem")
        usage("--variant must be baseline or rtmem");
    if (o.label.empty()) o.label = o.variant;
    return o;
}

void progress_bar(const std::string& label, std::uint32_t done, std::uint32_t total) {
    constexpr int width = 40;
    const int filled =
        static_cast<int>(static_cast<std::uint64_t>(done) * width / std::max(total, 1u));
    std::fprintf(
        stderr, "\r  %-30s [%.*s%*s] %3u%%", label.c_str(), filled,
        "########################################", width - filled, "",
        static_cast<unsigned>(static_cast<std::uint64_t>(done) * 100 / std::max(total, 1u)));
    if (done == total) std::fputc('\n', stderr);
}

double thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double seconds(const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

template <class M>
int run(const options& o) {
    const double cycles_per_ns = o.profile ? calibrate_cycles_per_ns() : 1.0;
    const double overhead = o.profile ? static_cast<double>(timer_overhead_cycles()) : 0.0;
    // Time inside allocators for one frame, net of the cost of timing each call.
    auto alloc_ns_of = [&](const sample& s) {
        const double calls = static_cast<double>(s.heap_calls + s.rtmem_calls);
        return std::max(0.0, static_cast<double>(s.alloc_cycles) - calls * overhead) / cycles_per_ns;
    };
    heap::set_profiling(o.profile);
    std::vector<sample> samples;
    samples.reserve(o.cfg.frames);
    std::uint64_t checksum = 0;
    std::size_t particles = 0;
    std::uint32_t chunks = 0;
    std::string tags_json;
    {
        M mem(o.cfg);
        game<M> g(mem, o.cfg);
        heap::totals before = heap::read();
        for (std::uint32_t f = 0; f < o.cfg.frames; ++f) {
            const double c0 = thread_cpu_ns();
            const auto t0 = std::chrono::steady_clock::now();
            g.run_frame();
            const auto t1 = std::chrono::steady_clock::now();
            const double c1 = thread_cpu_ns();
            const heap::totals after = heap::read();
            samples.push_back({std::chrono::duration<double, std::nano>(t1 - t0).count(), c1 - c0,
                               after.heap_calls - before.heap_calls,
                               after.rtmem_calls - before.rtmem_calls,
                               (after.heap_cycles - before.heap_cycles) +
                                   (after.rtmem_cycles - before.rtmem_cycles)});
            before = after;
            if (o.progress && (f + 1 == o.cfg.frames || f % std::max(1u, o.cfg.frames / 50) == 0)) {
                progress_bar(o.label, f + 1, o.cfg.frames);
            }
        }
        checksum = g.checksum();
        particles = g.live_particles();
        chunks = g.chunks_loaded();
        tags_json = mem.tags_json();
    }
    heap::set_profiling(false);

    std::vector<double> ms;
    double calls = 0, rtmem_calls = 0, alloc_ns = 0, cpu_ns = 0;
    std::vector<double> alloc_us;  // per frame: its median is immune to a preempted call
    for (const sample& s : samples) {
        cpu_ns += s.cpu_ns;
        ms.push_back(s.frame_ns / 1e6);
        calls += static_cast<double>(s.heap_calls);
        rtmem_calls += static_cast<double>(s.rtmem_calls);
        const double frame_alloc_ns = alloc_ns_of(s);
        alloc_ns += frame_alloc_ns;
        alloc_us.push_back(frame_alloc_ns / 1e3);
    }
    const double n = static_cast<double>(std::max<std::size_t>(samples.size(), 1));
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const double rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
    const double process_cpu_ms = (seconds(ru.ru_utime) + seconds(ru.ru_stime)) * 1e3;
    const heap::totals t = heap::read();

    std::printf("%s: %u frames, %u entities, seed %" PRIu64
                ": frame p50 %.3f ms, p99 %.3f ms, max %.3f ms; "
                "%.0f heap calls/frame; peak RSS %.1f MiB; %zu particles live; %u chunks loaded; "
                "checksum %016" PRIx64 "\n",
                o.label.c_str(), o.cfg.frames, o.cfg.entities, o.cfg.seed, percentile(ms, 0.5),
                percentile(ms, 0.99), percentile(ms, 1.0), calls / n, rss_mib, particles, chunks,
                checksum);
    if (!o.csv.empty()) {
        std::FILE* f = std::fopen(o.csv.c_str(), "w");
        if (f == nullptr) usage("cannot write --csv file");
        std::fprintf(f, "frame,frame_ms,cpu_ms,heap_calls,rtmem_calls,alloc_us\n");
        for (std::size_t i = 0; i < samples.size(); ++i) {
            std::fprintf(
                f, "%zu,%.4f,%.4f,%" PRIu64 ",%" PRIu64 ",%.3f\n", i, samples[i].frame_ns / 1e6,
                samples[i].cpu_ns / 1e6, samples[i].heap_calls, samples[i].rtmem_calls,
                o.profile ? alloc_ns_of(samples[i]) / 1e3
                          : 0.0);
        }
        std::fclose(f);
    }
    if (!o.json.empty()) {
        std::FILE* f = std::fopen(o.json.c_str(), "w");
        if (f == nullptr) usage("cannot write --json file");
        std::fprintf(
            f,
            "{\"label\": \"%s\", \"variant\": \"%s\", \"frames\": %u, \"entities\": %u, \"seed\": "
            "%" PRIu64
            ", \"profile\": %s, \"heap_counting\": %s,\n"
            " \"frame_ms\": {\"p50\": %.4f, \"p99\": %.4f, \"max\": %.4f, \"mean\": %.4f},\n"
            " \"game_cpu_ms_per_frame\": %.4f, \"process_cpu_ms\": %.1f,\n"
            " \"heap_calls_per_frame\": %.1f, \"rtmem_calls_per_frame\": %.1f, "
            "\"alloc_us_per_frame\": %.2f, \"alloc_us_frame_p50\": %.2f,\n"
            " \"peak_rss_mib\": %.2f, \"peak_heap_mib\": %.2f, \"particles\": %zu, "
            "\"chunks_loaded\": %u,\n"
            " \"checksum\": \"%016" PRIx64 "\", \"tags\": %s}\n",
            o.label.c_str(), o.variant.c_str(), o.cfg.frames, o.cfg.entities, o.cfg.seed,
            o.profile ? "true" : "false", heap::available() ? "true" : "false", percentile(ms, 0.5),
            percentile(ms, 0.99), percentile(ms, 1.0),
            [&] {
                double s = 0;
                for (double v : ms) s += v;
                return s / n;
            }(),
            cpu_ns / n / 1e6, process_cpu_ms, calls / n, rtmem_calls / n,
            o.profile ? alloc_ns / n / 1e3 : 0.0, o.profile ? percentile(alloc_us, 0.5) : 0.0,
            rss_mib,
            o.profile ? static_cast<double>(t.peak_bytes) / 1048576.0 : 0.0, particles, chunks,
            checksum, tags_json.c_str());
        std::fclose(f);
    }
    return 0;
}

template <class M>
std::uint64_t checksum_of(config cfg) {
    M mem(cfg);
    game<M> g(mem, cfg);
    for (std::uint32_t f = 0; f < cfg.frames; ++f) g.run_frame();
    return g.checksum();
}

int verify(const options& o) {
    int failures = 0;
    for (std::uint64_t seed : o.verify_seeds) {
        config cfg = o.cfg;
        cfg.seed = seed;
        const std::uint64_t a = checksum_of<baseline_memory>(cfg);
#ifdef DEMO_HAVE_RTMEM
        const std::uint64_t b = checksum_of<rtmem_memory>(cfg);
#else
        const std::uint64_t b = 0;
        std::fprintf(stderr, "rtmem_demo: the rtmem variant is not built yet\n");
#endif
        std::printf("seed %" PRIu64 ": baseline %016" PRIx64 "  rtmem %016" PRIx64 "  %s\n", seed,
                    a, b, a == b ? "same" : "DIFFERENT");
        failures += a != b;
    }
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 2 && std::string_view(argv[1]) == "--variants") {  // what this build can run
#ifdef DEMO_HAVE_RTMEM
        std::puts("baseline rtmem");
#else
        std::puts("baseline");
#endif
        return 0;
    }
    const options o = parse(argc, argv);
    if (!o.verify_seeds.empty()) return verify(o);
#ifdef DEMO_HAVE_RTMEM
    if (o.variant == "rtmem") return run<rtmem_memory>(o);
#else
    if (o.variant == "rtmem")
        usage("the rtmem variant is not built yet (its allocators have not landed)");
#endif
    return run<baseline_memory>(o);
}
