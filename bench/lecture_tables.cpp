// zhiayang, "Introduction to Performance Analysis in C++" (2022): the lecture's measured pairs
// that bench/lecture.cpp does not cover, each as the lecture set it up:
//   lecture_tables/traversal/{list,vector}         range-for over 100,000 ints (snippets 4-5)
//   lecture_tables/reserve/{none,reserve}          push_back 2^22 rand() values (snippet 3)
//   lecture_tables/false_sharing/{adjacent,alignas}  two threads, 10M increments each of
//                                                  neighbouring / alignas(64) ints (18-20)
//   lecture_tables/prefetch/{random,sequential}    sum of elems[idx[i]] (snippets 21-22)
//   lecture_tables/l1_array/{row,column}           96x96 shorts (fits L1), no SIMD (snippet 25)
//   lecture_tables/skewed_branch/{branch,branchless}  count of x > 0, x in [-INT_MAX, 10] (30)
//   lecture_tables/pass/{by_value,by_ref}          take_value(take_value(sv)) (snippets 31-32)
//   lecture_tables/intern_generate/{std_string,intern_string}  1,000,000 strings "0".."99"
// The lecture timed the reserve, false-sharing, L1-array and branch pairs (and lecture.cpp's
// branch and 4096x4096 array pairs) as whole processes with hyperfine; `--program <name>` runs
// one such process (scripts/bench times the pairs with hyperfine, bench/report/report.py
// compares them with the lecture's figures).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <list>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

namespace {

// ---- vector vs list traversal -----------------------------------------------------------
template <class Container>
void traversal(benchmark::State& state) {
    Container xs;
    for (std::size_t i = 0; i < 100000; i++) xs.push_back(std::rand());
    for (auto _ : state)
        for (auto x : xs) benchmark::DoNotOptimize(x);
}

// ---- reserve vs none ---------------------------------------------------------------------
int reserve_run(bool reserve) {
    std::vector<int> xs{};
    constexpr int n = 1 << 22;
    if (reserve) xs.reserve(n);
    for (int i = 0; i < n; i++) xs.push_back(std::rand());
    return xs[0];
}
void reserve_bench(benchmark::State& state, bool reserve) {
    for (auto _ : state) benchmark::DoNotOptimize(reserve_run(reserve));
}

// ---- false sharing -----------------------------------------------------------------------
// The lecture's `f->a++` on plain ints; a relaxed atomic load + store is the same plain
// load/add/store (no lock prefix) without letting the compiler fold the loop into one add.
using counter = std::atomic<int>;
struct adjacent_pair {
    counter a{0}, b{0};
};
struct aligned_pair {  // std::hardware_destructive_interference_size is 64 on x86-64
    alignas(64) counter a{0};
    alignas(64) counter b{0};
};
void bump(counter& c) {
    for (int i = 0; i < 10'000'000; i++) c.store(c.load(std::memory_order_relaxed) + 1,
                                                 std::memory_order_relaxed);
}
template <class Pair>
int false_sharing_run() {
    auto f = std::make_unique<Pair>();
    std::thread t1([&] { bump(f->a); });
    std::thread t2([&] { bump(f->b); });
    t1.join();
    t2.join();
    return f->a.load() + f->b.load();
}
template <class Pair>
void false_sharing_bench(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(false_sharing_run<Pair>());
}

// ---- prefetch-friendly index -----------------------------------------------------------
// The lecture does not show N; 2^20 elements (4 MiB of ints, 8 MiB of indices) is past L2.
constexpr std::size_t prefetch_n = std::size_t{1} << 20;
void prefetch_bench(benchmark::State& state, bool sequential) {
    std::vector<std::size_t> idx(prefetch_n);
    std::size_t i = 0;
    if (sequential)
        std::generate(idx.begin(), idx.end(), [&i] { return i++; });
    else
        std::generate(idx.begin(), idx.end(), [] {
            return static_cast<std::size_t>(std::rand()) % prefetch_n;
        });
    std::vector<int> elems{};
    std::generate_n(std::back_inserter(elems), prefetch_n, &std::rand);
    for (auto _ : state) {
        int sum = 0;
        for (auto k : idx) sum += elems[k];
        benchmark::DoNotOptimize(sum);
    }
}

// ---- L1-fitting array, no SIMD -----------------------------------------------------------
// The lecture compiled with -mno-sse; here vectorisation is switched off for these loops only.
constexpr std::size_t l1_side = 96;
#if defined(__clang__)
#define RTMEM_NO_VECTORIZE _Pragma("clang loop vectorize(disable) interleave(disable)")
#define RTMEM_NO_VECTORIZE_FN
#else
#define RTMEM_NO_VECTORIZE
#define RTMEM_NO_VECTORIZE_FN __attribute__((optimize("no-tree-vectorize")))
#endif
volatile std::size_t l1_runtime = l1_side;  // a runtime bound: no loop interchange
RTMEM_NO_VECTORIZE_FN int l1_pass(const short* array, bool by_rows) {
    const std::size_t n = l1_runtime;
    int sum = 0;
    if (by_rows) {
        for (std::size_t r = 0; r < n; r++) RTMEM_NO_VECTORIZE
            for (std::size_t c = 0; c < n; c++) sum += array[r * n + c];
    } else {
        for (std::size_t c = 0; c < n; c++) RTMEM_NO_VECTORIZE
            for (std::size_t r = 0; r < n; r++) sum += array[r * n + c];
    }
    return sum;
}
std::unique_ptr<short[]> l1_array() {
    auto a = std::make_unique<short[]>(l1_side * l1_side);
    for (std::size_t i = 0; i < l1_side * l1_side; ++i) a[i] = static_cast<short>(i & 7);
    return a;
}
void l1_bench(benchmark::State& state, bool by_rows) {
    const auto array = l1_array();
    for (auto _ : state) benchmark::DoNotOptimize(l1_pass(array.get(), by_rows));
}

// ---- skewed branch -----------------------------------------------------------------------
std::vector<int> skewed_values() {
    constexpr int n = 1000000;
    constexpr int m = std::numeric_limits<int>::max();
    std::mt19937_64 rng{420};
    std::uniform_int_distribution d{-m, 10};
    std::vector<int> xs(n);
    for (auto& x : xs) x = d(rng);
    return xs;
}
// Scalar for both (no SIMD), so the pair compares a branch with setcc. The empty volatile asm in
// the taken arm cannot be executed speculatively, so the compiler keeps the branch (no cmov).
RTMEM_NO_VECTORIZE_FN int count_positive(const std::vector<int>& xs, bool branch_free) {
    int total = 0;
    if (branch_free) {
        RTMEM_NO_VECTORIZE
        for (int x : xs) total += (x > 0);
    } else {
        RTMEM_NO_VECTORIZE
        for (int x : xs) {
            if (x > 0) {
                asm volatile("");
                total++;
            }
        }
    }
    return total;
}
/// count_positive `times` times over; the clobber stops GCC, which knows count_positive is pure
/// in its branch-free form, from computing it once.
int count_repeated(const std::vector<int>& xs, bool branch_free, int times) {
    int total = 0;
    for (int k = 0; k < times; k++) {
        benchmark::DoNotOptimize(xs.data());
        benchmark::ClobberMemory();
        total += count_positive(xs, branch_free);
    }
    return total;
}
void skewed_bench(benchmark::State& state, bool branch_free) {
    const auto xs = skewed_values();
    for (auto _ : state) benchmark::DoNotOptimize(count_repeated(xs, branch_free, 1));
}

// ---- pass by value vs by reference -------------------------------------------------------
// noipa on GCC: noinline alone still lets IPA-SRA turn a const& parameter into a value.
#if defined(__clang__)
#define RTMEM_OPAQUE __attribute__((noinline))
#else
#define RTMEM_OPAQUE __attribute__((noipa))
#endif
RTMEM_OPAQUE std::size_t take_value(std::string_view sv) {
    return sv.size() * 2;
}
RTMEM_OPAQUE std::size_t take_ref(const std::string_view& sv) {
    return sv.size() * 2;
}
RTMEM_OPAQUE std::size_t take_value(std::size_t n) {
    return n / 2;
}
RTMEM_OPAQUE std::size_t take_ref(const std::size_t& n) {
    return n / 2;
}
// The lecture does not show `strings` and `idx`: 100 strings and 1,000 random indices. As in the
// lecture, strings[i] is a std::string turned into a string_view at the call: by reference that
// view is stored to the stack and its address passed.
void pass_bench(benchmark::State& state, bool by_value) {
    std::vector<std::string> strings;
    for (int i = 0; i < 100; ++i) strings.push_back(std::string(static_cast<std::size_t>(i), 'x'));
    std::vector<std::size_t> idx(1000);
    for (auto& i : idx) i = static_cast<std::size_t>(std::rand()) % strings.size();
    std::size_t n = 0;
    for (auto _ : state) {
        if (by_value) {
            for (auto i : idx) n += take_value(take_value(strings[i]));
        } else {
            for (auto i : idx) n += take_ref(take_ref(strings[i]));
        }
        benchmark::DoNotOptimize(n);
    }
}

// ---- interning: the generate step -------------------------------------------------------
// The lecture's InternString (snippets 38-39): a pointer into a global pool of unique strings.
std::unordered_set<std::string>& intern_pool() {
    static std::unordered_set<std::string> pool;
    return pool;
}
struct intern_string {
    const std::string* s;
    explicit intern_string(std::string&& str) : s(&*intern_pool().insert(std::move(str)).first) {}
};
template <class String>
void intern_generate(benchmark::State& state) {
    std::mt19937 rng(7);
    for (auto _ : state) {
        std::vector<String> xs;
        for (int i = 0; i < 1000000; ++i)
            xs.emplace_back(std::to_string(rng() % 100));
        benchmark::DoNotOptimize(xs.data());
    }
}

// ---- lecture.cpp's whole-process pairs (branch predictability, branch-free, 4096^2 array) ----
int final_count = 0;
[[gnu::noinline]] void add_one() {
    benchmark::DoNotOptimize(++final_count);
}
[[gnu::noinline]] void sub_one() {
    benchmark::DoNotOptimize(--final_count);
}
int predict_run(bool sorted_halves) {  // snippet 26: add() / sub() through a branch
    constexpr int n = 1048576;
    std::mt19937_64 rng{420};
    std::vector<int> xs;
    xs.reserve(2 * n);
    if (sorted_halves) {
        std::uniform_int_distribution d{0, n};
        std::size_t k = 0;
        std::generate_n(std::back_inserter(xs), 2 * n,
                        [&] { return d(rng) * (k++ > static_cast<std::size_t>(n) ? -1 : 1); });
    } else {
        std::uniform_int_distribution d{-n, n};
        std::generate_n(std::back_inserter(xs), 2 * n, [&] { return d(rng); });
    }
    for (int it = 0; it < 8; it++)
        for (int x : xs) {
            if (x > 0)
                add_one();
            else
                sub_one();
        }
    return final_count;
}
int uniform_count_run(bool branch_free) {  // snippet 27: the uniform data, counted
    constexpr int n = 1048576;
    std::mt19937_64 rng{420};
    std::uniform_int_distribution d{-n, n};
    std::vector<int> xs(2 * n);
    for (auto& x : xs) x = d(rng);
    return count_repeated(xs, branch_free, 8);
}
int grid_run(bool by_rows) {  // snippet 23: new int[4096][4096], summed once
    const std::size_t n = l1_runtime == 0 ? 0 : 4096;
    auto array = std::make_unique<int[]>(n * n);  // value-initialised: every page is touched
    int sum = 0;
    if (by_rows) {
        for (std::size_t r = 0; r < n; r++)
            for (std::size_t c = 0; c < n; c++) sum += array[r * n + c];
    } else {
        for (std::size_t c = 0; c < n; c++)
            for (std::size_t r = 0; r < n; r++) sum += array[r * n + c];
    }
    return sum;
}

/// One whole program, as the lecture's hyperfine runs timed it; 0 when the name is known.
int run_program(std::string_view name) {
    int r = 0;
    if (name == "reserve_none") r = reserve_run(false);
    else if (name == "reserve") r = reserve_run(true);
    else if (name == "false_sharing") r = false_sharing_run<adjacent_pair>();
    else if (name == "false_sharing_alignas") r = false_sharing_run<aligned_pair>();
    else if (name == "l1_row" || name == "l1_column") {
        const auto array = l1_array();
        for (int k = 0; k < 20000; k++) r += l1_pass(array.get(), name == "l1_row");
    } else if (name == "skewed_branch" || name == "skewed_branchless") {
        r = count_repeated(skewed_values(), name == "skewed_branchless", 20);
    }
    else if (name == "predict_random") r = predict_run(false);
    else if (name == "predict_sorted") r = predict_run(true);
    else if (name == "branch") r = uniform_count_run(false);
    else if (name == "branchless") r = uniform_count_run(true);
    else if (name == "array_row") r = grid_run(true);
    else if (name == "array_column") r = grid_run(false);
    else {
        std::fprintf(stderr, "lecture_tables: unknown program '%.*s'\n",
                     static_cast<int>(name.size()), name.data());
        return 2;
    }
    std::fprintf(stderr, "result = %d\n", r);  // the lecture printed xs[0] / sum likewise
    return 0;
}

void register_all() {
    using benchmark::RegisterBenchmark;
    RegisterBenchmark("lecture_tables/traversal/list", traversal<std::list<int>>);
    RegisterBenchmark("lecture_tables/traversal/vector", traversal<std::vector<int>>);
    RegisterBenchmark("lecture_tables/reserve/none", reserve_bench, false)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark("lecture_tables/reserve/reserve", reserve_bench, true)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark("lecture_tables/false_sharing/adjacent", false_sharing_bench<adjacent_pair>)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark("lecture_tables/false_sharing/alignas", false_sharing_bench<aligned_pair>)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    RegisterBenchmark("lecture_tables/prefetch/random", prefetch_bench, false);
    RegisterBenchmark("lecture_tables/prefetch/sequential", prefetch_bench, true);
    RegisterBenchmark("lecture_tables/l1_array/row", l1_bench, true);
    RegisterBenchmark("lecture_tables/l1_array/column", l1_bench, false);
    RegisterBenchmark("lecture_tables/skewed_branch/branch", skewed_bench, false);
    RegisterBenchmark("lecture_tables/skewed_branch/branchless", skewed_bench, true);
    RegisterBenchmark("lecture_tables/pass/by_value", pass_bench, true);
    RegisterBenchmark("lecture_tables/pass/by_ref", pass_bench, false);
    RegisterBenchmark("lecture_tables/intern_generate/std_string", intern_generate<std::string>)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark("lecture_tables/intern_generate/intern_string",
                      intern_generate<intern_string>)
        ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--program") == 0) return run_program(argv[2]);
    register_all();
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
