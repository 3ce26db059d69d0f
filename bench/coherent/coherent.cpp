// Coherent Labs blog: "Temporary allocations in C++" (a thread-local linear allocator behind a
// scope object serves temporary STL containers, 7-10x faster than the heap) and "Unique values
// in C++" (std::unordered_set vs vector + sort/unique vs no uniqueness, plus a dense hash set:
// absl::flat_hash_set from Debian stands in for Google's dense_hash_set).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory_resource>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "common.hpp"
#include "floors.hpp"
#include "suite_mode.hpp"

#include <rtmem/adapt/std_allocator.hpp>
#include <rtmem/adapt/temporary.hpp>

#ifdef RTMEM_HAVE_ABSL
#include <absl/container/flat_hash_set.h>
#endif

namespace {

// ---- temporary allocations ----------------------------------------------------------------
// A thread-local linear allocator and a scope that rewinds it (the post's TempAllocatorScope).
rtmem::bench::bump_floor& temp_arena() {
    thread_local rtmem::bench::bump_floor arena(std::size_t{1} << 20);
    return arena;
}
struct temp_scope {
    std::byte* mark = temp_arena().marker();
    temp_scope() = default;
    temp_scope(const temp_scope&) = delete;
    temp_scope& operator=(const temp_scope&) = delete;
    ~temp_scope() { temp_arena().rewind(mark); }
};
template <class T>
struct temp_std_allocator {  // the post's STD allocator forwarding to the linear one
    using value_type = T;
    temp_std_allocator() = default;
    template <class U>
    temp_std_allocator(const temp_std_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) {
        void* p = temp_arena().allocate(n * sizeof(T), alignof(T));
        if (p == nullptr) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T*, std::size_t) noexcept {}
    template <class U>
    bool operator==(const temp_std_allocator<U>&) const noexcept {
        return true;
    }
};

struct task {
    int id;
    bool can_be_scheduled() const { return id % 3 != 0; }
};

std::vector<task>& waiting_tasks() {
    static std::vector<task> tasks = [] {
        std::vector<task> t(64);
        for (std::size_t i = 0; i < t.size(); ++i) t[i].id = static_cast<int>(i);
        return t;
    }();
    return tasks;
}

// The post's OnTaskComplete: gather the tasks to schedule into a temporary vector, walk it.
template <class Vector, class... Args>
std::size_t on_task_complete(Args&&... args) {
    Vector to_schedule(std::forward<Args>(args)...);
    for (task& t : waiting_tasks())
        if (t.can_be_scheduled()) to_schedule.push_back(&t);
    std::size_t sum = 0;
    for (task* t : to_schedule) sum += static_cast<std::size_t>(t->id);
    return sum;
}

void temp_heap(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(on_task_complete<std::vector<task*>>());
}
void temp_linear_scope(benchmark::State& state) {
    for (auto _ : state) {
        temp_scope scope;
        benchmark::DoNotOptimize(on_task_complete<std::vector<task*, temp_std_allocator<task*>>>());
    }
}
void temp_pmr_monotonic(benchmark::State& state) {  // the standard library's answer
    alignas(std::max_align_t) static std::byte buffer[1 << 16];
    for (auto _ : state) {
        std::pmr::monotonic_buffer_resource resource(buffer, sizeof buffer,
                                                     std::pmr::null_memory_resource());
        benchmark::DoNotOptimize(on_task_complete<std::pmr::vector<task*>>(&resource));
    }
}

void temp_rtmem_scope(benchmark::State& state) {  // rtmem's thread-local temporaries
    for (auto _ : state) {
        rtmem::temp_scope scope;
        benchmark::DoNotOptimize(on_task_complete<std::pmr::vector<task*>>(scope.resource()));
    }
}

// The non-pmr path: a std::vector over the scope's arena through rtmem::std_allocator (no
// virtual call; the bump is inlined into the vector's growth).
void temp_rtmem_scope_std(benchmark::State& state) {
    using alloc = rtmem::std_allocator<task*, rtmem::arena>;
    for (auto _ : state) {
        rtmem::temp_scope scope;
        benchmark::DoNotOptimize(
            on_task_complete<std::vector<task*, alloc>>(alloc(scope.allocator())));
    }
}

// ---- unique values ------------------------------------------------------------------------
// Per "frame", `inserts` element pointers are flagged in random order; each distinct element is
// flagged `duplicates` times. Then the work (a sqrt) runs on each collected element.
constexpr std::size_t inserts = 100'000;

struct flagged {
    std::vector<float> elements;
    std::vector<float*> order;
};
const flagged& flags_for(int duplicates) {
    static flagged cache[5];
    flagged& f = cache[duplicates];
    if (f.order.empty()) {
        f.elements.resize(inserts / static_cast<std::size_t>(duplicates));
        for (std::size_t i = 0; i < f.elements.size(); ++i) f.elements[i] = static_cast<float>(i);
        for (int d = 0; d < duplicates; ++d)
            for (float& e : f.elements) f.order.push_back(&e);
        std::shuffle(f.order.begin(), f.order.end(), std::mt19937_64{11});
    }
    return f;
}

template <class Range>
float work(const Range& r) {
    float sum = 0;
    for (float* p : r) sum += std::sqrt(*p);
    return sum;
}

void unique_unordered_set(benchmark::State& state, int duplicates) {
    const auto& f = flags_for(duplicates);
    for (auto _ : state) {
        std::unordered_set<float*> set;
        for (float* p : f.order) set.insert(p);
        benchmark::DoNotOptimize(work(set));
    }
}
void unique_vector_sort(benchmark::State& state, int duplicates) {
    const auto& f = flags_for(duplicates);
    for (auto _ : state) {
        std::vector<float*> v;
        for (float* p : f.order) v.push_back(p);
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        benchmark::DoNotOptimize(work(v));
    }
}
void unique_vector_none(benchmark::State& state, int duplicates) {  // UNIQUE_VEC off
    const auto& f = flags_for(duplicates);
    for (auto _ : state) {
        std::vector<float*> v;
        for (float* p : f.order) v.push_back(p);
        benchmark::DoNotOptimize(work(v));
    }
}
#ifdef RTMEM_HAVE_ABSL
void unique_flat_hash_set(benchmark::State& state, int duplicates) {
    const auto& f = flags_for(duplicates);
    for (auto _ : state) {
        absl::flat_hash_set<float*> set;
        for (float* p : f.order) set.insert(p);
        benchmark::DoNotOptimize(work(set));
    }
}
#endif

}  // namespace

int main(int argc, char** argv) {
    using benchmark::RegisterBenchmark;
    RegisterBenchmark("coherent/temp/heap", temp_heap);
    RegisterBenchmark("coherent/temp/linear_scope", temp_linear_scope);
    RegisterBenchmark("coherent/temp/pmr_monotonic", temp_pmr_monotonic);
    RegisterBenchmark("coherent/temp/rtmem_temp_scope", temp_rtmem_scope);
    RegisterBenchmark("coherent/temp/rtmem_temp_scope_std", temp_rtmem_scope_std);
    for (int dup : {1, 2, 4}) {
        const std::string suffix = "/dup:" + std::to_string(dup);
        RegisterBenchmark(("coherent/unique/unordered_set" + suffix).c_str(), unique_unordered_set,
                          dup)
            ->Unit(benchmark::kMicrosecond);
        RegisterBenchmark(("coherent/unique/vector_sort_unique" + suffix).c_str(),
                          unique_vector_sort, dup)
            ->Unit(benchmark::kMicrosecond);
        RegisterBenchmark(("coherent/unique/vector_no_unique" + suffix).c_str(), unique_vector_none,
                          dup)
            ->Unit(benchmark::kMicrosecond);
#ifdef RTMEM_HAVE_ABSL
        RegisterBenchmark(("coherent/unique/absl_flat_hash_set" + suffix).c_str(),
                          unique_flat_hash_set, dup)
            ->Unit(benchmark::kMicrosecond);
#endif
    }
    return rtmem::bench::run_benchmarks(argc, argv);
}
