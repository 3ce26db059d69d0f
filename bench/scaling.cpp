// The scaling view: cost of one operation (free a random live block, allocate a replacement) as
// the number of live blocks grows from 10^3 to 10^6. A bounded allocator stays flat; a list
// walk (the thesis' free list, Fig 6.6) grows. General-purpose allocators get random sizes
// 16..256 B; fixed-size pools get 64 B blocks (their name says so). Each live count is filled
// first (not timed); the random slot choice costs the same for everyone (the floor shows it).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include <rtmem/alloc/free_list.hpp>
#include <rtmem/alloc/pool.hpp>
#include <rtmem/alloc/tlsf.hpp>
#include <span>

#include "common.hpp"
#include "floors.hpp"
#include "peer_heaps.hpp"
#include "suite_mode.hpp"

#ifdef RTMEM_HAVE_BOOST
#include <boost/pool/pool.hpp>
#endif
#ifdef RTMEM_HAVE_FOONATHAN
#include <foonathan/memory/memory_pool.hpp>
#endif

namespace {

constexpr std::size_t fixed_size = 64;

// ---- adapters: allocate(size) / deallocate(p, size) on an instance ----------------------
template <class Heap>
struct heap_adapter {
    static constexpr bool fixed = false;
    explicit heap_adapter(std::size_t) {}
    void* allocate(std::size_t n) { return Heap::allocate(n); }
    void deallocate(void* p, std::size_t n) { Heap::deallocate(p, n); }
};

struct pmr_pool_adapter {
    static constexpr bool fixed = false;
    explicit pmr_pool_adapter(std::size_t) {}
    std::pmr::unsynchronized_pool_resource pool;
    void* allocate(std::size_t n) { return pool.allocate(n); }
    void deallocate(void* p, std::size_t n) { pool.deallocate(p, n); }
};

struct floor_adapter {
    static constexpr bool fixed = true;
    explicit floor_adapter(std::size_t live) : pool(fixed_size, live + 1) {}
    rtmem::bench::free_list_floor pool;
    void* allocate(std::size_t) { return pool.allocate(); }
    void deallocate(void* p, std::size_t) { pool.deallocate(p); }
};

#ifdef RTMEM_HAVE_BOOST
struct boost_adapter {
    static constexpr bool fixed = true;
    explicit boost_adapter(std::size_t) {}
    boost::pool<> pool{fixed_size};
    void* allocate(std::size_t) { return pool.malloc(); }
    void deallocate(void* p, std::size_t) { pool.free(p); }
};
#endif
#ifdef RTMEM_HAVE_FOONATHAN
struct foonathan_adapter {
    static constexpr bool fixed = true;
    explicit foonathan_adapter(std::size_t) {}
    foonathan::memory::memory_pool<> pool{fixed_size, 4096 * fixed_size};
    void* allocate(std::size_t) { return pool.allocate_node(); }
    void deallocate(void* p, std::size_t) { pool.deallocate_node(p); }
};
#endif

struct rtmem_pool_adapter {
    static constexpr bool fixed = true;
    explicit rtmem_pool_adapter(std::size_t) {}
    rtmem::pool_allocator<> pool{fixed_size, 16, 4096};
    void* allocate(std::size_t) { return pool.allocate_block(); }
    void deallocate(void* p, std::size_t) { pool.deallocate_block(p); }
};

// rtmem's general-purpose allocators over one caller buffer with room for every live block.
template <class A>
struct rtmem_buffer_adapter {
    static constexpr bool fixed = false;
    static constexpr bool drop_all_at_end = true;  // the buffer goes at once; no per-block frees
    explicit rtmem_buffer_adapter(std::size_t live)
        : bytes(live * 320 + (std::size_t{1} << 20)),
          memory(std::make_unique<std::byte[]>(bytes)),  // zeroed: pre-faulted
          a(std::span<std::byte>(memory.get(), bytes)) {}
    std::size_t bytes;
    std::unique_ptr<std::byte[]> memory;
    A a;
    void* allocate(std::size_t n) { return a.allocate(n); }
    void deallocate(void* p, std::size_t n) { a.deallocate(p, n); }
};

// TLSF with its front cache at glibc's tcache depth.
struct cached_tlsf : rtmem::tlsf_allocator {
    explicit cached_tlsf(std::span<std::byte> pool) : rtmem::tlsf_allocator(pool, 7) {}
};

template <class A>
constexpr bool drops_all = requires {
    A::drop_all_at_end;
};

template <class A>
void churn(benchmark::State& state, std::size_t live) {
    auto a = std::make_unique<A>(live);
    rtmem::bench::xorshift rng{0x2545F4914F6CDD1Dull};
    auto size_of = [&] { return A::fixed ? fixed_size : 16 + rng.below(241); };
    std::vector<void*> blocks(live);
    std::vector<std::size_t> sizes(live);
    for (std::size_t i = 0; i < live; ++i) {
        sizes[i] = size_of();
        blocks[i] = a->allocate(sizes[i]);
        if (blocks[i] == nullptr) {
            state.SkipWithError("allocator exhausted while filling");
            return;
        }
        *static_cast<unsigned char*>(blocks[i]) = 1;
    }
    for (auto _ : state) {
        const std::size_t i = rng.below(live);
        a->deallocate(blocks[i], sizes[i]);
        sizes[i] = size_of();
        blocks[i] = a->allocate(sizes[i]);
        *static_cast<unsigned char*>(blocks[i]) = 1;
    }
    if constexpr (!drops_all<A>) {
        for (std::size_t i = 0; i < live; ++i) a->deallocate(blocks[i], sizes[i]);
    }
    state.counters["live"] = static_cast<double>(live);
}

template <class A>
void add(const std::string& name, const std::vector<std::size_t>& lives,
         std::size_t max_live = ~std::size_t{0}) {
    for (std::size_t live : lives)
        if (live <= max_live)
            benchmark::RegisterBenchmark(
                ("scaling/" + name + "/live:" + std::to_string(live)).c_str(), churn<A>, live);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::size_t> lives = {1000, 10'000, 100'000, 1'000'000};
    if (!rtmem::bench::quick_mode())
        lives = {1000, 3000, 10'000, 30'000, 100'000, 300'000, 1'000'000};
    rtmem::bench::for_each_heap(
        [&]<class Heap>() { add<heap_adapter<Heap>>(std::string(Heap::name), lives); });
    add<pmr_pool_adapter>("pmr_unsync_pool", lives);
    add<floor_adapter>("floor_free_list_64B", lives);
    add<rtmem_pool_adapter>("rtmem_pool_64B", lives);
    add<rtmem_buffer_adapter<rtmem::tlsf_allocator>>("rtmem_tlsf", lives);
    add<rtmem_buffer_adapter<cached_tlsf>>("rtmem_tlsf_cached", lives);
    add<rtmem_buffer_adapter<rtmem::free_list_allocator<rtmem::first_fit>>>(
        "rtmem_free_list_first_fit", lives, 100'000);  // O(free blocks) per call
    add<rtmem_buffer_adapter<rtmem::free_list_allocator<rtmem::best_fit>>>(
        "rtmem_free_list_best_fit", lives, 100'000);
#ifdef RTMEM_HAVE_BOOST
    add<boost_adapter>("boost_pool_64B", lives);
#endif
#ifdef RTMEM_HAVE_FOONATHAN
    add<foonathan_adapter>("foonathan_pool_64B", lives);
#endif
    return rtmem::bench::run_benchmarks(argc, argv);
}
