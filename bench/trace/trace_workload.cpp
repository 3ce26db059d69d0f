// Allocation-heavy programs for the tracer overhead benchmark.
//   micro: each thread keeps a window of live blocks of mixed sizes and replaces one per
//          iteration (one malloc + one free) with almost no other work: the worst case for a
//          tracer, ~20 ns of program per allocation.
//   app:   what allocation-heavy C++ looks like: strings built and hashed into a bounded
//          unordered_map of vectors, entries evicted, small vectors sorted (several new/delete
//          per iteration among ~0.5 us of real work).
// Usage: trace_workload THREADS ITERATIONS [micro|app]
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

std::uint64_t xorshift(std::uint64_t& x) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

std::uint64_t micro(std::uint64_t iterations, std::uint64_t seed) {
    constexpr std::size_t window = 4096;
    std::vector<char*> live(window, nullptr);
    std::uint64_t x = seed, sum = 0;
    for (std::uint64_t i = 0; i < iterations; ++i) {
        xorshift(x);
        std::size_t slot = x % window;
        std::size_t size = 8 + (x >> 20) % 256;
        std::free(live[slot]);
        live[slot] = static_cast<char*>(std::malloc(size));
        live[slot][0] = static_cast<char>(i);
        sum += static_cast<unsigned char>(live[slot][0]);
    }
    for (char* p : live) std::free(p);
    return sum;
}

std::uint64_t app(std::uint64_t iterations, std::uint64_t seed) {
    std::unordered_map<std::string, std::vector<std::uint32_t>> table;
    std::vector<std::string> order;
    std::uint64_t x = seed, sum = 0;
    for (std::uint64_t i = 0; i < iterations; ++i) {
        xorshift(x);
        std::string key = "entity/" + std::to_string(x % 50000) + "/component";
        auto& values = table[key];
        if (values.empty()) order.push_back(key);
        for (std::uint32_t k = 0; k < 1 + x % 24; ++k) {
            values.push_back(static_cast<std::uint32_t>(xorshift(x)));
        }
        std::vector<std::uint32_t> scratch(values.begin(), values.end());
        std::sort(scratch.begin(), scratch.end());
        sum += scratch[scratch.size() / 2] + std::hash<std::string>{}(key);
        if (values.size() > 256) values.clear();
        if (table.size() > 20000) {  // evict the oldest fifth
            for (std::size_t k = 0; k < order.size() / 5; ++k) table.erase(order[k]);
            order.erase(order.begin(), order.begin() + static_cast<long>(order.size() / 5));
        }
    }
    return sum;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    std::uint64_t iterations = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000000;
    bool use_app = argc > 3 && std::strcmp(argv[3], "app") == 0;
    if (argc > 3 && !use_app && std::strcmp(argv[3], "micro") != 0) {
        std::fprintf(stderr, "trace_workload: unknown workload '%s' (micro or app)\n", argv[3]);
        return 2;
    }
    std::vector<std::thread> pool;
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
    std::vector<double> cpu_ms(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            std::uint64_t seed = 88172645463325252ull + static_cast<std::uint64_t>(t);
            sums[static_cast<std::size_t>(t)] =
                use_app ? app(iterations, seed) : micro(iterations, seed);
            timespec ts{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
            cpu_ms[static_cast<std::size_t>(t)] =
                static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
        });
    }
    for (auto& th : pool) th.join();
    std::uint64_t total = 0;
    for (auto s : sums) total += s;
    std::printf("%llu\n", static_cast<unsigned long long>(total));
    // CPU time of the working threads alone (a tracer's own threads excluded), for the bench.
    double sum_ms = 0;
    for (double ms : cpu_ms) sum_ms += ms;
    std::fprintf(stderr, "workload thread cpu ms: %.3f\n", sum_ms);
    return 0;
}
