// Thesis (Kaltenbrunn 2018) Fig 2.2: 5000 `new Particle` vs a vector of values; Table 3.2 and
// Figs 3.5/3.6: traversing a linked list of padded nodes (Node{next; size_t pad[Pad]}), laid out
// linearly or shuffled, for working sets 2^10..2^28 bytes. The time per node shows the cache
// steps (L1, L2, LLC). `--chase <pad> <layout> <log2>` runs one traversal for callgrind's cache
// simulator (scripts/bench uses it for Table 3.2's miss rates).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "suite_mode.hpp"

namespace {

// ---- Fig 2.2 -----------------------------------------------------------------------------
struct Vector3 {
    float x = 0, y = 0, z = 0;
};
struct Particle {  // the thesis' listing 5.1: 128 bytes, two cache lines
    float age = 0, max_age = 1;
    bool pending_kill = false;
    Vector3 position, rotation, scale, linear_velocity, angular_velocity, linear_force, torque;
    int color = 0, texture_handle = 0;
    void* parent = nullptr;
    void* user_ptr = nullptr;
    std::uint64_t flags = 0;
};
static_assert(sizeof(Particle) == 128);
constexpr int particle_count = 5000;

// Listing 2.2: one allocation per particle (and the matching delete, which the listing leaks).
void particles_new(benchmark::State& state) {
    for (auto _ : state) {
        std::vector<Particle*> particles;
        particles.reserve(particle_count);
        for (int i = 0; i < particle_count; ++i) particles.push_back(new Particle());
        benchmark::DoNotOptimize(particles.data());
        benchmark::ClobberMemory();
        for (Particle* p : particles) delete p;
    }
    state.SetItemsProcessed(state.iterations() * particle_count);
}

// Listing 2.3: one allocation for all particles.
void particles_values(benchmark::State& state) {
    for (auto _ : state) {
        std::vector<Particle> particles;
        particles.reserve(particle_count);
        for (int i = 0; i < particle_count; ++i) particles.push_back(Particle());
        benchmark::DoNotOptimize(particles.data());
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * particle_count);
}

// ---- Table 3.2, Figs 3.5/3.6 ---------------------------------------------------------------
// A node is `next` followed by Pad size_t's: 8 * (Pad + 1) bytes, as in the thesis' listing 3.1.
struct node_list {
    std::unique_ptr<std::byte[]> memory;
    std::size_t count = 0;
    void* head = nullptr;
};

node_list build_list(std::size_t pad, bool shuffled, std::size_t working_set) {
    const std::size_t node_size = 8 * (pad + 1);
    node_list list;
    list.count = std::max<std::size_t>(1, working_set / node_size);
    list.memory = std::make_unique<std::byte[]>(list.count * node_size);  // zeroed: pre-faulted
    std::vector<std::uint32_t> order(list.count);
    std::iota(order.begin(), order.end(), 0u);
    if (shuffled) std::shuffle(order.begin(), order.end(), std::mt19937_64{42});
    std::byte* base = list.memory.get();
    for (std::size_t i = 0; i < list.count; ++i) {
        void* next = base + order[(i + 1) % list.count] * node_size;
        std::memcpy(base + order[i] * node_size, &next, sizeof next);
    }
    list.head = base + order[0] * node_size;
    return list;
}

}  // namespace

// Follows `next` n times. Out of line and unmangled so callgrind can --toggle-collect it.
extern "C" __attribute__((noinline)) const void* rtmem_bench_chase(const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) p = *static_cast<const void* const*>(p);
    return p;
}

namespace {

void list_traversal(benchmark::State& state, int pad_arg, int shuffled_arg, int log2) {
    const auto pad = static_cast<std::size_t>(pad_arg);
    const bool shuffled = shuffled_arg != 0;
    const std::size_t working_set = std::size_t{1} << log2;
    static node_list list;  // one list alive at a time: 2^28 bytes is the largest
    static int key = -1;
    const int want = (pad_arg << 16) | (shuffled_arg << 8) | log2;
    if (key != want) {
        list = node_list{};
        list = build_list(pad, shuffled, working_set);
        key = want;
    }
    const void* p = list.head;
    for (auto _ : state) {
        p = rtmem_bench_chase(p, list.count);
        benchmark::DoNotOptimize(p);
    }
    state.counters["nodes"] = static_cast<double>(list.count);
    state.counters["ns_per_node"] = benchmark::Counter(
        static_cast<double>(list.count) * static_cast<double>(state.iterations()),
        benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(list.count));
}

int chase_once(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s --chase <pad> <0|1 shuffled> <log2 working set>\n",
                     argv[0]);
        return 2;
    }
    const auto pad = static_cast<std::size_t>(std::atoi(argv[2]));
    const bool shuffled = std::atoi(argv[3]) != 0;
    const auto log2 = std::atoi(argv[4]);
    node_list list = build_list(pad, shuffled, std::size_t{1} << log2);
    const void* p = rtmem_bench_chase(list.head, 4 * list.count);  // four traversals
    std::printf("nodes %zu end %p\n", list.count, p);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--chase") == 0) return chase_once(argc, argv);
    const bool quick = rtmem::bench::quick_mode();
    benchmark::RegisterBenchmark("fig2_2/new_particle", particles_new);
    benchmark::RegisterBenchmark("fig2_2/vector_of_values", particles_values);
    const int max_log2 = quick ? 24 : 28;
    const int step = quick ? 2 : 1;
    for (int shuffled = 0; shuffled <= 1; ++shuffled) {
        for (int pad : {0, 7, 15, 31, 63}) {
            if (quick && (pad == 15 || pad == 31)) continue;
            for (int log2 = 10; log2 <= max_log2; log2 += step) {
                std::string name = std::string("fig3_5_6/") + (shuffled ? "shuffled" : "linear") +
                                   "/pad:" + std::to_string(pad) + "/ws:" + std::to_string(log2);
                auto* b =
                    benchmark::RegisterBenchmark(name.c_str(), list_traversal, pad, shuffled, log2);
                // The sweep is long (190 points; a shuffled 2^28 traversal is seconds): three
                // repetitions give the medians in the full run too.
                if (!quick) b->Repetitions(3);
            }
        }
    }
    return rtmem::bench::run_benchmarks(argc, argv);
}
