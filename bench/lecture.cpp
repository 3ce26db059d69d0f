// zhiayang, "Introduction to Performance Analysis in C++" (2022): arena create<T> vs new for
// 10,000 objects, SSO vs no-SSO strings, interned vs plain strings (count/copy/hash), AoS vs SoA
// enemies, predictable vs unpredictable branches (and branch-free), row- vs column-major access.
// Each pair reproduces the lecture's snippet; the report divides the slower by the faster.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common.hpp"
#include "floors.hpp"
#include "suite_mode.hpp"

#include <rtmem/alloc/arena.hpp>
#include <rtmem/alloc/linear.hpp>

namespace {

// ---- arena create<T> vs new (snippets 42-44) ------------------------------------------------
// The lecture never shows Big; we assume 128 bytes (16 doubles), zero-initialised by `Big()`
// (GCC emits `rep stosq` for it in every variant, which narrows every ratio).
struct Big {
    double values[16] = {};
};
constexpr std::size_t object_count = 10'000;
constexpr std::int64_t leak_iterations = 40;  // 40 x 1.28 MB leaked per repetition, then freed

// The lecture's own loop: every iteration news 10,000 Bigs and never frees them, so each `new`
// touches fresh pages (page faults included). A fixed iteration count bounds the leak; the
// objects are freed after the timed loop.
void arena_new_leaking(benchmark::State& state) {
    std::vector<Big*> bigs;
    bigs.reserve(object_count * static_cast<std::size_t>(leak_iterations));
    for (auto _ : state) {
        for (std::size_t i = 0; i < object_count; ++i) bigs.push_back(new Big());
        benchmark::DoNotOptimize(bigs.data());
    }
    for (Big* b : bigs) delete b;
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(object_count));
}

void arena_new(benchmark::State& state) {
    std::vector<Big*> bigs;
    bigs.reserve(object_count);
    for (auto _ : state) {
        for (std::size_t i = 0; i < object_count; ++i) bigs.push_back(new Big());
        benchmark::DoNotOptimize(bigs.data());
        state.PauseTiming();  // freed outside the timed region (new_leaking is the lecture's)
        for (Big* b : bigs) delete b;
        bigs.clear();
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(object_count));
}

// object_count Bigs placement-new'd from a bump allocator per iteration; the reset happens
// outside the timed region (the lecture's Arena is reset between iterations).
template <class Bump>
void bump_and_reset(benchmark::State& state, Bump& bump) {
    std::vector<Big*> bigs;
    bigs.reserve(object_count);
    for (auto _ : state) {
        for (std::size_t i = 0; i < object_count; ++i)
            bigs.push_back(new (bump.allocate(sizeof(Big), alignof(Big))) Big());
        benchmark::DoNotOptimize(bigs.data());
        state.PauseTiming();
        bigs.clear();
        bump.reset();
        state.ResumeTiming();
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(object_count));
}

// The lecture's Arena: align up, add, placement new.
void arena_lecture(benchmark::State& state) {
    rtmem::bench::bump_floor arena(object_count * sizeof(Big) + 4096);
    bump_and_reset(state, arena);
}

void arena_rtmem(benchmark::State& state) {
    rtmem::arena arena{object_count * sizeof(Big) + 4096};
    bump_and_reset(state, arena);
}

void linear_rtmem(benchmark::State& state) {
    rtmem::linear_allocator linear{object_count * sizeof(Big) + 4096};
    bump_and_reset(state, linear);
}

// ---- SSO (snippets 35-36) -----------------------------------------------------------------
// The lecture's SimpleString: always a heap buffer, never inline storage.
class simple_string {
  public:
    explicit simple_string(const char* s) : size_(std::strlen(s)), data_(new char[size_ + 1]) {
        std::memcpy(data_, s, size_ + 1);
    }
    ~simple_string() { delete[] data_; }
    simple_string(const simple_string&) = delete;
    simple_string& operator=(const simple_string&) = delete;
    const char* data() const { return data_; }

  private:
    std::size_t size_;
    char* data_;
};

const char* const short_text = "hello, world!";
const char* const long_text = "hello, world! this is quite a long string, so please forgive me.";

void sso_simple_short(benchmark::State& state) {
    for (auto _ : state) {
        simple_string s(short_text);
        benchmark::DoNotOptimize(s.data());
    }
}
void sso_std_short(benchmark::State& state) {
    for (auto _ : state) {
        std::string s(short_text);
        benchmark::DoNotOptimize(s.data());
    }
}
void sso_simple_long(benchmark::State& state) {
    for (auto _ : state) {
        simple_string s(long_text);
        benchmark::DoNotOptimize(s.data());
    }
}
void sso_std_long(benchmark::State& state) {
    for (auto _ : state) {
        std::string s(long_text);
        benchmark::DoNotOptimize(s.data());
    }
}

// ---- interning (snippets 38-41) -----------------------------------------------------------
struct intern_string {
    const std::string* ptr;
    explicit intern_string(const std::string& s) : ptr(&*pool().emplace(s).first) {}
    friend bool operator==(intern_string a, intern_string b) { return a.ptr == b.ptr; }
    static std::unordered_set<std::string>& pool() {
        static std::unordered_set<std::string> strings;
        return strings;
    }
};

std::size_t string_count() {
    return rtmem::bench::quick_mode() ? 200'000 : 1'000'000;
}

std::vector<std::string> make_strings() {  // "0".."99", uniformly
    std::mt19937 rng(7);
    std::vector<std::string> v;
    v.reserve(string_count());
    for (std::size_t i = 0; i < string_count(); ++i) v.push_back(std::to_string(rng() % 100));
    return v;
}
const std::vector<std::string>& plain_strings() {
    static const std::vector<std::string> v = make_strings();
    return v;
}
const std::vector<intern_string>& interned_strings() {
    static const std::vector<intern_string> v = [] {
        std::vector<intern_string> out;
        out.reserve(plain_strings().size());
        for (const auto& s : plain_strings()) out.emplace_back(s);
        return out;
    }();
    return v;
}

void intern_count(benchmark::State& state) {
    const auto& v = interned_strings();
    const intern_string zero{std::string("0")};
    for (auto _ : state) benchmark::DoNotOptimize(std::count(v.begin(), v.end(), zero));
}
void string_count_bench(benchmark::State& state) {
    const auto& v = plain_strings();
    const std::string zero = "0";
    for (auto _ : state) benchmark::DoNotOptimize(std::count(v.begin(), v.end(), zero));
}
void intern_copy(benchmark::State& state) {
    const auto& v = interned_strings();
    for (auto _ : state) {
        auto copy = v;
        benchmark::DoNotOptimize(copy.data());
    }
}
void string_copy(benchmark::State& state) {
    const auto& v = plain_strings();
    for (auto _ : state) {
        auto copy = v;
        benchmark::DoNotOptimize(copy.data());
    }
}
void intern_hash(benchmark::State& state) {
    const auto& v = interned_strings();
    for (auto _ : state) {
        std::size_t sum = 0;
        for (const auto& s : v) sum += reinterpret_cast<std::uintptr_t>(s.ptr);
        benchmark::DoNotOptimize(sum);
    }
}
void string_hash(benchmark::State& state) {
    const auto& v = plain_strings();
    for (auto _ : state) {
        std::size_t sum = 0;
        for (const auto& s : v) sum += std::hash<std::string>{}(s);
        benchmark::DoNotOptimize(sum);
    }
}

// ---- AoS vs SoA enemies (snippets 45-46) --------------------------------------------------
struct enemy {
    int age;
    double health;
    double damage;
};
struct enemies_soa {
    std::array<int, 256> ages;
    std::array<double, 256> healths;
    std::array<double, 256> damages;
};

void enemies_aos_bench(benchmark::State& state) {
    static std::array<enemy, 256> enemies{};
    for (auto _ : state) {
        for (int t = 0; t < 1000; ++t) {
            for (auto& e : enemies) e.age++;
            benchmark::ClobberMemory();
        }
    }
}
void enemies_soa_bench(benchmark::State& state) {
    static enemies_soa enemies{};
    for (auto _ : state) {
        for (int t = 0; t < 1000; ++t) {
            for (auto& age : enemies.ages) age++;
            benchmark::ClobberMemory();
        }
    }
}

// ---- branch predictability (snippets 25-30) -----------------------------------------------
int final_count = 0;
__attribute__((noinline)) void add_one() {
    benchmark::DoNotOptimize(++final_count);
}
__attribute__((noinline)) void sub_one() {
    benchmark::DoNotOptimize(--final_count);
}

std::vector<int> branch_values(bool sorted_halves) {
    const std::size_t n = std::size_t{1} << 20;
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> d(1, 1 << 20);
    std::vector<int> xs(2 * n);
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const bool negative = sorted_halves ? i >= n : (rng() & 1) != 0;
        xs[i] = d(rng) * (negative ? -1 : 1);
    }
    return xs;
}

void branch_bench(benchmark::State& state, bool predictable) {
    const auto xs = branch_values(predictable);
    for (auto _ : state) {
        for (int x : xs) {
            if (x > 0)
                add_one();
            else
                sub_one();
        }
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(xs.size()));
}

void count_bench(benchmark::State& state, bool branch_free) {
    const auto xs = branch_values(false);
    for (auto _ : state) {
        int total = 0;
        if (branch_free) {
            for (int x : xs) total += (x > 0);
        } else {
            for (int x : xs) {
                benchmark::DoNotOptimize(x);  // keeps the compiler from turning it branch-free
                if (x > 0) total++;
            }
        }
        benchmark::DoNotOptimize(total);
    }
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(xs.size()));
}

// ---- row- vs column-major (snippet 23) ----------------------------------------------------
constexpr std::size_t grid_side = 4096;
volatile std::size_t grid_runtime =
    grid_side;  // a runtime bound keeps GCC from interchanging loops
void grid_bench(benchmark::State& state, bool by_rows) {
    const std::size_t grid = grid_runtime;
    auto array = std::make_unique<int[]>(grid * grid);
    for (std::size_t i = 0; i < grid * grid; ++i) array[i] = static_cast<int>(i & 7);
    for (auto _ : state) {
        int sum = 0;
        if (by_rows) {
            for (std::size_t r = 0; r < grid; ++r)
                for (std::size_t c = 0; c < grid; ++c) sum += array[r * grid + c];
        } else {
            for (std::size_t c = 0; c < grid; ++c)
                for (std::size_t r = 0; r < grid; ++r) sum += array[r * grid + c];
        }
        benchmark::DoNotOptimize(sum);
    }
}

}  // namespace

int main(int argc, char** argv) {
    using benchmark::RegisterBenchmark;
    RegisterBenchmark("lecture/arena/new", arena_new);
    RegisterBenchmark("lecture/arena/new_leaking", arena_new_leaking)->Iterations(leak_iterations);
    RegisterBenchmark("lecture/arena/lecture_arena", arena_lecture);
    RegisterBenchmark("lecture/arena/rtmem_arena", arena_rtmem);
    RegisterBenchmark("lecture/arena/rtmem_linear", linear_rtmem);
    RegisterBenchmark("lecture/sso/short/simple_string", sso_simple_short);
    RegisterBenchmark("lecture/sso/short/std_string", sso_std_short);
    RegisterBenchmark("lecture/sso/long/simple_string", sso_simple_long);
    RegisterBenchmark("lecture/sso/long/std_string", sso_std_long);
    RegisterBenchmark("lecture/intern/count/std_string", string_count_bench);
    RegisterBenchmark("lecture/intern/count/intern_string", intern_count);
    RegisterBenchmark("lecture/intern/copy/std_string", string_copy);
    RegisterBenchmark("lecture/intern/copy/intern_string", intern_copy);
    RegisterBenchmark("lecture/intern/hash/std_string", string_hash);
    RegisterBenchmark("lecture/intern/hash/intern_string", intern_hash);
    RegisterBenchmark("lecture/enemies/aos", enemies_aos_bench);
    RegisterBenchmark("lecture/enemies/soa", enemies_soa_bench);
    RegisterBenchmark("lecture/branch/unpredictable", branch_bench, false);
    RegisterBenchmark("lecture/branch/predictable", branch_bench, true);
    RegisterBenchmark("lecture/branchless/branch", count_bench, false);
    RegisterBenchmark("lecture/branchless/branch_free", count_bench, true);
    RegisterBenchmark("lecture/array/column_major", grid_bench, false)
        ->Unit(benchmark::kMillisecond);
    RegisterBenchmark("lecture/array/row_major", grid_bench, true)->Unit(benchmark::kMillisecond);
    return rtmem::bench::run_benchmarks(argc, argv);
}
