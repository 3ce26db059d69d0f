// Analysis speed of `rtmem report` without symbolisation: events per second of
// trace_reader + analyze_events on a synthetic 10M-event, 4-thread trace with a realistic mix
// (a window of live blocks per thread, one malloc + one free per step, 64 call sites).
// Target (issue 8): >= 10 million events per second. RTMEM_ANALYSIS_EVENTS overrides the size.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "trace_writer.hpp"

namespace {

using rtmem::analyze::op;

const std::string& synthetic_trace() {
    static const std::string path = [] {
        std::string p = "/tmp/rtmem_bench_analysis_" + std::to_string(getpid()) + ".rtt";
        const char* env = std::getenv("RTMEM_ANALYSIS_EVENTS");
        std::uint64_t events = env != nullptr ? std::strtoull(env, nullptr, 10) : 10'000'000;
        rtmem::testing::trace_writer w(p);
        w.module("/synthetic/lib.so", 0x1000, 0x100000, 0x1000);
        for (std::uint32_t s = 1; s <= 64; ++s) w.stack(s, {0x1000 + s * 16, 0x2000 + s * 8});
        constexpr std::uint64_t window = 4096;
        std::uint64_t x = 88172645463325252ull, time = 0;
        std::vector<std::uint64_t> live(4 * window, 0);
        for (std::uint64_t i = 0; i + 1 < events; i += 2) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            auto thread = static_cast<std::uint32_t>(i / 2 % 4);
            std::uint64_t slot = thread * window + x % window;
            time += 40;
            if (live[slot] != 0) w.event(thread, op::free, time, live[slot], 0, 0, 0, 12);
            live[slot] = 0x10000000 + (i / 2) * 64;
            w.event(thread, op::malloc, time + 20, live[slot], 8 + (x >> 20) % 256,
                    1 + static_cast<std::uint32_t>((x >> 40) % 64), 0, 25);
        }
        w.finish();
        return p;
    }();
    return path;
}

void read_only(benchmark::State& state) {
    std::uint64_t n = 0;
    for (auto _ : state) {
        rtmem::analyze::trace_reader r(synthetic_trace());
        rtmem::analyze::event e;
        while (r.next(e)) ++n;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(n));
}
BENCHMARK(read_only)->Unit(benchmark::kMillisecond)->Iterations(3);

void report(benchmark::State& state) {
    std::uint64_t n = 0;
    for (auto _ : state) {
        rtmem::analyze::trace_reader r(synthetic_trace());
        auto d = rtmem::analyze::analyze_events(r);
        n += d.events;
        benchmark::DoNotOptimize(d.peak_live_bytes);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(n));
}
BENCHMARK(report)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    synthetic_trace();
    benchmark::RunSpecifiedBenchmarks();
    std::remove(synthetic_trace().c_str());
    return 0;
}
