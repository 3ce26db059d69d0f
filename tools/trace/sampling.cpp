// Sampling intervals and the set of sampled blocks still live (sampling.hpp). No libm: the
// exponential draw uses its own logarithm; no malloc: the table comes from mmap.
#include "sampling.hpp"

#include <sys/mman.h>

#include <cstring>

#include "recorder_internal.hpp"
#include "sampled_calls.hpp"

namespace rtmem::trace {

std::uint64_t g_sample_interval = 0;

namespace {

constinit thread_local std::uint64_t tl_random __attribute__((tls_model("initial-exec"))) = 0;
// Bit k: kind k's countdown has been drawn in this thread.
constinit thread_local std::uint32_t tl_drawn_kinds __attribute__((tls_model("initial-exec"))) = 0;
std::uint64_t g_seed = 0;
std::atomic<std::uint64_t> g_seeded_threads{0};

std::uint64_t splitmix64(std::uint64_t x) noexcept {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::uint64_t next_random() noexcept {  // xorshift64*
    std::uint64_t x = tl_random;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    tl_random = x;
    return x * 0x2545f4914f6cdd1dull;
}

// ln(x) for x in (0, 1]: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(z),
// z = (m - 1) / (m + 1), |z| < 0.172: five terms of the series leave an error below 2e-9.
double log_unit(double x) noexcept {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & ((1ull << 52) - 1)) | (1023ull << 52);
    double m = 0;
    std::memcpy(&m, &bits, sizeof m);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        ++e;
    }
    double z = (m - 1) / (m + 1), z2 = z * z;
    double ln_m = 2 * z * (1 + z2 * (1.0 / 3 + z2 * (1.0 / 5 + z2 * (1.0 / 7 + z2 / 9))));
    return e * 0.6931471805599453 + ln_m;
}

// An exponential interval of mean g_sample_interval, rounded down (so that an allocation of s
// bytes, sampled when s > interval, is sampled with probability exactly 1 - exp(-s / mean)).
std::uint64_t draw_interval() noexcept {
    double u = static_cast<double>((next_random() >> 11) + 1) * 0x1p-53;  // (0, 1]
    double v = -log_unit(u) * static_cast<double>(g_sample_interval);
    if (!(v < 0x1p62)) return max_interval;
    return v < 1 ? 0 : static_cast<std::uint64_t>(v);
}

// ---- the live sampled blocks: open addressing, linear probing, backward-shift deletion

internal::spin_lock g_lock;
std::uintptr_t* g_table = nullptr;
std::size_t g_capacity = 0;  // power of two
std::size_t g_size = 0;

std::size_t slot_of(std::uintptr_t p) noexcept {
    return static_cast<std::size_t>((p * 0x9e3779b97f4a7c15ull) >> 20) & (g_capacity - 1);
}

bool grow() noexcept {
    std::size_t cap = g_capacity == 0 ? 4096 : g_capacity * 2;
    auto* t = static_cast<std::uintptr_t*>(internal::map_memory(cap * sizeof(std::uintptr_t)));
    if (t == nullptr) return false;
    std::uintptr_t* old = g_table;
    std::size_t old_cap = g_capacity;
    g_table = t;
    g_capacity = cap;
    for (std::size_t i = 0; i < old_cap; ++i) {
        if (old[i] == 0) continue;
        std::size_t j = slot_of(old[i]);
        while (g_table[j] != 0) j = (j + 1) & (cap - 1);
        g_table[j] = old[i];
    }
    if (old != nullptr) munmap(old, old_cap * sizeof(std::uintptr_t));
    return true;
}

}  // namespace

namespace internal {
std::atomic<std::uint8_t> g_sampled_filter[1u << filter_bits];

// Compare-and-swap: bootstrap marks come from any thread without the table's lock. 255 sticks
// (the count is lost), and a byte never drops below the marks it holds.
void filter_add(const void* p, int delta) noexcept {
    auto& f = g_sampled_filter[sampled_hash(p)];
    std::uint8_t c = f.load(std::memory_order_relaxed);
    while (c != 255 && !(delta < 0 && c == 0)) {
        if (f.compare_exchange_weak(c, static_cast<std::uint8_t>(c + delta),
                                    std::memory_order_relaxed)) {
            return;
        }
    }
}
}  // namespace internal

}  // namespace rtmem::trace

// Every block of the bootstrap buffer (tools/interpose) gets a permanent filter mark, so its
// free leaves the fast path on the filter byte alone (the full path knows it is never freed).
extern "C" void rtmem_interpose_bootstrap_block(const void* p) noexcept {
    rtmem::trace::internal::filter_add(p, +1);
}

namespace rtmem::trace {

bool sample_slow(op kind, std::uint64_t size) noexcept {
    const auto k = static_cast<std::size_t>(kind);
    const std::uint64_t old_left = tl_fast.sample_left[k];
    if (tl_random == 0) {  // this thread's first draw: seed its generator
        std::uint64_t n = g_seeded_threads.fetch_add(1, std::memory_order_relaxed);
        tl_random = splitmix64(g_seed + n * 0x632be59bd9b4e019ull) | 1;
    }
    std::uint64_t left = 0;
    bool sampled = true;
    if ((tl_drawn_kinds & (1u << k)) == 0) {  // the kind's first draw, then count this allocation
        tl_drawn_kinds |= 1u << k;
        left = draw_interval();
        sampled = size > left;
        if (!sampled) left -= size;
    }
    if (sampled) left = draw_interval();  // memoryless: the next sample point after this block
    // The countdown counts `size` more bytes: base - left grows by exactly `size` (mod 2^64).
    // Other threads read both (counted_calls): a sequence lock around the pair.
    const std::uint32_t seq = tl_fast.redraws;
    __atomic_store_n(&tl_fast.redraws, seq + 1, __ATOMIC_RELAXED);
    std::atomic_thread_fence(std::memory_order_release);
    __atomic_store_n(&tl_fast.countdown_base[k], tl_fast.countdown_base[k] + (left - old_left + size),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&tl_fast.sample_left[k], left, __ATOMIC_RELAXED);
    __atomic_store_n(&tl_fast.redraws, seq + 2, __ATOMIC_RELEASE);
    return sampled;
}

bool remember_sampled(const void* p) noexcept {
    auto key = reinterpret_cast<std::uintptr_t>(p);
    g_lock.lock();
    if ((g_size + 1) * 2 > g_capacity && !grow()) {
        g_lock.unlock();
        return false;
    }
    std::size_t j = slot_of(key);
    while (g_table[j] != 0 && g_table[j] != key) j = (j + 1) & (g_capacity - 1);
    if (g_table[j] == 0) {
        g_table[j] = key;
        ++g_size;
        internal::filter_add(p, +1);
    }
    g_lock.unlock();
    return true;
}

bool forget_sampled(const void* p) noexcept {
    auto key = reinterpret_cast<std::uintptr_t>(p);
    if (!maybe_sampled(p)) return false;
    g_lock.lock();
    bool found = false;
    if (g_capacity != 0) {
        std::size_t j = slot_of(key);
        while (g_table[j] != 0 && g_table[j] != key) j = (j + 1) & (g_capacity - 1);
        found = g_table[j] == key;
        if (found) {
            // Backward shift: move later entries of the probe run into the hole.
            std::size_t hole = j;
            for (std::size_t k = (j + 1) & (g_capacity - 1); g_table[k] != 0;
                 k = (k + 1) & (g_capacity - 1)) {
                std::size_t home = slot_of(g_table[k]);
                bool movable = hole <= k ? (home <= hole || home > k) : (home <= hole && home > k);
                if (movable) {
                    g_table[hole] = g_table[k];
                    hole = k;
                }
            }
            g_table[hole] = 0;
            --g_size;
            internal::filter_add(p, -1);
        }
    }
    g_lock.unlock();
    return found;
}

std::uint64_t sampled_live() noexcept {
    g_lock.lock();
    std::uint64_t n = g_size;
    g_lock.unlock();
    return n;
}

__attribute__((noinline)) void record_sampled(op kind, std::size_t size, std::size_t align,
                                              const void* p) noexcept {
    if (remember_sampled(p)) record(kind, size, align, p, nullptr, ticks(), 0, false, false);
}

void sampling_init(std::uint64_t interval, std::uint64_t seed) noexcept {
    // The byte of address 0 (hash 0) never drops to zero: a free(nullptr) leaves the fast path
    // without a null test of its own (and goes uncounted, as in a full trace).
    internal::filter_add(nullptr, +1);
    g_sample_interval = interval;
    g_seed = seed;
}

// The child gets the table as the forking thread saw it, never mid-update.
void sampling_before_fork() noexcept {
    g_lock.lock();
}
void sampling_after_fork() noexcept {
    g_lock.unlock();
}

}  // namespace rtmem::trace
