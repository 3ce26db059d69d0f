// An allocation-heavy program for the tracer overhead benchmark: each thread keeps a window of
// live blocks of mixed sizes and replaces one per iteration (one malloc + one free), with a
// little work on the memory so the allocator is not everything.
// Usage: trace_workload THREADS ITERATIONS
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

std::uint64_t run(std::uint64_t iterations, std::uint64_t seed) {
    constexpr std::size_t window = 4096;
    std::vector<char*> live(window, nullptr);
    std::uint64_t x = seed, sum = 0;
    for (std::uint64_t i = 0; i < iterations; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
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

}  // namespace

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    std::uint64_t iterations = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 2000000;
    std::vector<std::thread> pool;
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            sums[static_cast<std::size_t>(t)] =
                run(iterations, 88172645463325252ull + static_cast<std::uint64_t>(t));
        });
    }
    for (auto& th : pool) th.join();
    std::uint64_t total = 0;
    for (auto s : sums) total += s;
    std::printf("%llu\n", static_cast<unsigned long long>(total));
    return 0;
}
