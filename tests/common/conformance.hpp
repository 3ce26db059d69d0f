// The shared conformance harness: random operation sequences run against an allocator and a
// shadow model of what must hold. Every rtmem allocator plugs in with a few lines:
//
//   rtmem::testing::conformance_options o;
//   o.max_size = 1024;
//   rtmem::linear_allocator a{1 << 20};
//   rtmem::testing::run_conformance(a, o);
//
// Checked after every operation: no two live blocks overlap; every pointer honours its alignment;
// each block keeps the unique pattern written into it until it is freed (or rewound/reset);
// stats() is exact (live_count, total_count, used >= bytes held, used == 0 when empty,
// used <= capacity, peak >= used and never decreasing); check() passes; owns() is true for live
// blocks and false for a foreign address; exhaustion returns nullptr and leaves the allocator
// usable. Failures throw conformance_failure naming the seed and operation, so GoogleTest reports
// them and libFuzzer crashes on them.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "rtmem/core/allocator.hpp"

namespace rtmem::testing {

/// Operations per conformance run: RTMEM_FUZZ_OPS from the environment, else 100000.
inline std::size_t default_operations() {
    if (const char* env = std::getenv("RTMEM_FUZZ_OPS")) {
        const auto n = std::strtoull(env, nullptr, 10);
        if (n > 0) return static_cast<std::size_t>(n);
    }
    return 100000;
}

/// How blocks are given back individually.
enum class free_order {
    random,  ///< any live block (general allocators, pools)
    lifo,    ///< only the most recent live block (stack allocators)
    none,    ///< deallocate is a no-op; memory comes back only by rewind/reset (linear, arena)
};

struct conformance_options {
    std::uint64_t seed = 1;
    std::size_t operations = default_operations();
    double scale = 1.0;  ///< fraction of `operations` to run (slow sources such as mmap use less)
    std::size_t min_size = 0;
    std::size_t max_size = 256;
    std::size_t large_size = 0;  ///< when > max_size, 1 request in 64 is up to this size
    std::size_t max_align = 64;  ///< alignments are powers of two from 1 to this
    std::size_t max_live = 512;  ///< the harness frees rather than exceed this many live blocks
    free_order order = free_order::random;
    bool use_markers = true;  ///< exercise marker()/rewind() when the allocator has them
    bool use_reset = true;    ///< exercise reset() when the allocator has it
    unsigned marker_per_mille = 8;
    unsigned rewind_per_mille = 4;
    unsigned reset_per_mille = 1;
    std::size_t check_every = 1;      ///< call check() every this many operations
    std::size_t verify_every = 4096;  ///< verify every live block's contents this often
    bool expect_no_exhaustion = false;  ///< nullptr is a failure (malloc, page sources)
    bool exact_empty_used = true;       ///< used == 0 whenever no block occupies memory
};

struct conformance_result {
    std::size_t allocations = 0, frees = 0, exhausted = 0, rewinds = 0, resets = 0, checks = 0;
};

struct conformance_failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Random numbers from a seed (splitmix64: fast and good enough for test sequences).
class rng_source {
public:
    explicit rng_source(std::uint64_t seed) : state_(seed) {}
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
    [[nodiscard]] bool exhausted() const { return false; }

private:
    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint64_t state_;
};

/// Decisions read from fuzzer input; the run ends when the bytes are used up.
class byte_source {
public:
    explicit byte_source(std::span<const std::uint8_t> data) : data_(data) {}
    std::uint64_t below(std::uint64_t n) {
        std::uint64_t v = 0;
        for (int i = 0; i < 3 && pos_ < data_.size(); ++i) v = (v << 8) | data_[pos_++];
        return n == 0 ? 0 : v % n;
    }
    [[nodiscard]] bool exhausted() const { return pos_ >= data_.size(); }

private:
    std::span<const std::uint8_t> data_;
    std::size_t pos_ = 0;
};

namespace detail {

template <class A>
struct marker_slot {
    using type = int;
};
template <marker_allocator A>
struct marker_slot<A> {
    using type = typename A::marker_type;
};

inline std::byte pattern_byte(std::uint64_t seq, std::size_t i) {
    return static_cast<std::byte>((seq * 0x9E37u + i * 7u + (seq >> 8)) & 0xFFu);
}

template <class A, class Source>
class conformance_run {
public:
    conformance_run(A& a, const conformance_options& o, Source& src) : a_(a), o_(o), src_(src) {
        if (o_.order == free_order::random && o_.use_markers && marker_allocator<A>)
            fail("markers need free_order::lifo or none (set use_markers = false)");
        std::size_t align_bits = 0;
        while ((std::size_t{2} << align_bits) <= o_.max_align) ++align_bits;
        align_bits_ = align_bits;
    }

    conformance_result run() {
        const auto ops = static_cast<std::size_t>(static_cast<double>(o_.operations) * o_.scale);
        stats_snapshot();
        probe_foreign();
        for (op_ = 0; op_ < std::max<std::size_t>(ops, 1) && !src_.exhausted(); ++op_) {
            step();
            after_step();
        }
        verify_all();
        // Return to empty: free everything (or reset) and check the accounting comes back.
        if (o_.order == free_order::random) {
            while (!blocks_.empty()) free_at(blocks_.size() - 1);
        } else if (o_.order == free_order::lifo) {
            while (!blocks_.empty()) free_at(blocks_.size() - 1);
        } else if constexpr (resettable_allocator<A>) {
            do_reset();
        }
        after_step();
        return result_;
    }

private:
    struct block {
        std::byte* p;
        std::size_t size;
        std::size_t align;
        std::uint64_t seq;
        bool user_live;  // false once deallocated but still occupying (free_order::none)
    };
    struct marker_entry {
        typename marker_slot<A>::type m;
        std::size_t blocks;  // blocks_.size() when taken
    };

    [[noreturn]] void fail(const std::string& what) const {
        throw conformance_failure("conformance: " + what + " (seed " + std::to_string(o_.seed) +
                                  ", operation " + std::to_string(op_) + ")");
    }

    void step() {
        const auto roll = src_.below(1000);
        if constexpr (resettable_allocator<A>) {
            if (o_.use_reset && roll < o_.reset_per_mille) return do_reset();
        }
        if constexpr (marker_allocator<A>) {
            if (o_.use_markers && o_.order != free_order::random) {
                if (roll < o_.reset_per_mille + o_.marker_per_mille) return take_marker();
                if (roll < o_.reset_per_mille + o_.marker_per_mille + o_.rewind_per_mille)
                    return do_rewind();
            }
        }
        const bool must_free = live_ >= o_.max_live || last_failed_;
        if (!must_free && (live_ == 0 || src_.below(100) < 55)) return do_allocate();
        do_free();
    }

    // A draw below n, as a size (n is a size, so the draw fits one on 32-bit targets too).
    std::size_t below(std::size_t n) { return static_cast<std::size_t>(src_.below(n)); }

    std::size_t pick_size() {
        const auto kind = src_.below(64);
        if (kind == 0 && o_.large_size > o_.max_size)
            return o_.max_size + 1 + below(o_.large_size - o_.max_size);
        const std::size_t hi = kind < 40 ? std::min(o_.max_size, o_.min_size + 64) : o_.max_size;
        return o_.min_size + below(hi - o_.min_size + 1);
    }

    void do_allocate() {
        const std::size_t size = pick_size();
        const std::size_t align = std::size_t{1} << src_.below(align_bits_ + 1);
        auto* p = static_cast<std::byte*>(a_.allocate(size, align));
        if (p == nullptr) {
            if (o_.expect_no_exhaustion)
                fail("allocate(" + std::to_string(size) + ", " + std::to_string(align) +
                     ") returned nullptr");
            ++result_.exhausted;
            last_failed_ = true;
            return;
        }
        last_failed_ = false;
        if (!is_aligned(p, align))
            fail("allocate(" + std::to_string(size) + ", " + std::to_string(align) +
                 ") returned a misaligned pointer");
        const auto start = reinterpret_cast<std::uintptr_t>(p);
        const std::uintptr_t end = start + std::max<std::size_t>(size, 1);
        auto next = ranges_.lower_bound(start);
        if (next != ranges_.end() && next->first < end)
            fail("new block of " + std::to_string(size) + " bytes overlaps a live block");
        if (next != ranges_.begin() && std::prev(next)->second > start)
            fail("new block of " + std::to_string(size) + " bytes overlaps a live block");
        ranges_.emplace(start, end);
        if constexpr (owning_allocator<A>) {
            if (!a_.owns(p)) fail("owns() is false for a block just allocated");
        }
        const std::uint64_t seq = next_seq_++;
        for (std::size_t i = 0; i < size; ++i) p[i] = pattern_byte(seq, i);
        blocks_.push_back(block{p, size, align, seq, true});
        held_ += size;
        ++live_;
        ++total_;
        ++result_.allocations;
    }

    void do_free() {
        if (blocks_.empty()) return;
        if (o_.order == free_order::random) return free_at(below(blocks_.size()));
        if (o_.order == free_order::lifo) return free_at(blocks_.size() - 1);
        // none: deallocate is a no-op; pick a user-live block, it keeps occupying memory.
        for (std::size_t tries = 0; tries < 4; ++tries) {
            auto& b = blocks_[below(blocks_.size())];
            if (!b.user_live) continue;
            verify(b);
            a_.deallocate(b.p, b.size, b.align);
            b.user_live = false;
            --live_;
            ++result_.frees;
            return;
        }
        // Mostly dead blocks: memory only comes back by rewinding or resetting.
        if constexpr (resettable_allocator<A>) do_reset();
    }

    void free_at(std::size_t i) {
        block b = blocks_[i];
        if (b.user_live) verify(b);
        if (b.user_live) a_.deallocate(b.p, b.size, b.align);
        ranges_.erase(reinterpret_cast<std::uintptr_t>(b.p));
        if (b.user_live) --live_;
        held_ -= b.size;
        blocks_[i] = blocks_.back();
        blocks_.pop_back();
        ++result_.frees;
        last_failed_ = false;
        while (!markers_.empty() && markers_.back().blocks > blocks_.size()) markers_.pop_back();
    }

    void take_marker() {
        if constexpr (marker_allocator<A>) {
            markers_.push_back(marker_entry{a_.marker(), blocks_.size()});
        }
    }

    void do_rewind() {
        if constexpr (marker_allocator<A>) {
            if (markers_.empty()) return;
            const std::size_t k = below(markers_.size());
            markers_.resize(k + 1);
            a_.rewind(markers_.back().m);
            drop_blocks_from(markers_.back().blocks);
            ++result_.rewinds;
        }
    }

    void do_reset() {
        if constexpr (resettable_allocator<A>) {
            a_.reset();
            markers_.clear();
            drop_blocks_from(0);
            ++result_.resets;
        }
    }

    void drop_blocks_from(std::size_t n) {
        for (std::size_t i = n; i < blocks_.size(); ++i) {
            ranges_.erase(reinterpret_cast<std::uintptr_t>(blocks_[i].p));
            if (blocks_[i].user_live) --live_;
            held_ -= blocks_[i].size;
        }
        blocks_.resize(std::min(n, blocks_.size()));
        last_failed_ = false;
    }

    void verify(const block& b) const {
        for (std::size_t i = 0; i < b.size; ++i)
            if (b.p[i] != pattern_byte(b.seq, i))
                fail("contents of a live block of " + std::to_string(b.size) +
                     " bytes changed at offset " + std::to_string(i));
    }

    void verify_all() const {
        for (const auto& b : blocks_)
            if (b.user_live) verify(b);
    }

    void probe_foreign() {
        if constexpr (owning_allocator<A>) {
            int local = 0;
            if (a_.owns(&local)) fail("owns() is true for an address on the test's stack");
        }
    }

    void after_step() {
        if (o_.verify_every != 0 && op_ % o_.verify_every == 0) verify_all();
        if constexpr (checkable_allocator<A>) {
            if (o_.check_every != 0 && op_ % o_.check_every == 0) {
                ++result_.checks;
                if (!a_.check()) fail("check() found a broken invariant");
            }
        }
        stats_snapshot();
    }

    void stats_snapshot() {
        if constexpr (stats_allocator<A>) {
            const rtmem::stats s = a_.stats();
            const std::size_t held = held_;
            if (s.live_count != blocks_.size())
                fail("stats().live_count is " + std::to_string(s.live_count) + ", model has " +
                     std::to_string(blocks_.size()) + " blocks occupying memory");
            bool counts_calls = true;  // an allocator may say it does not count (0)
            if constexpr (requires { A::counts_calls; }) counts_calls = A::counts_calls;
            if (counts_calls && s.total_count != total_)
                fail("stats().total_count is " + std::to_string(s.total_count) + ", expected " +
                     std::to_string(total_));
            if (s.used < held)
                fail("stats().used is " + std::to_string(s.used) + ", below the " +
                     std::to_string(held) + " bytes the live blocks need");
            if (blocks_.empty() && o_.exact_empty_used && s.used != 0)
                fail("stats().used is " + std::to_string(s.used) + " with no block live");
            if (s.capacity != 0 && s.used > s.capacity) fail("stats().used exceeds capacity");
            if (s.peak < s.used) fail("stats().peak is below used");
            if (s.peak < last_peak_) fail("stats().peak decreased");
            last_peak_ = s.peak;
        }
    }

    A& a_;
    const conformance_options& o_;
    Source& src_;
    std::size_t align_bits_ = 0;
    std::size_t op_ = 0;
    std::vector<block> blocks_;                     // occupying blocks, in allocation order
    std::map<std::uintptr_t, std::uintptr_t> ranges_;  // start -> end of occupying blocks
    std::vector<marker_entry> markers_;
    std::size_t live_ = 0;   // user-live blocks
    std::size_t total_ = 0;  // successful allocations
    std::size_t held_ = 0;   // requested bytes of occupying blocks
    std::uint64_t next_seq_ = 1;
    std::size_t last_peak_ = 0;
    bool last_failed_ = false;
    conformance_result result_;
};

}  // namespace detail

/// Runs one random sequence against `a`. Throws conformance_failure on the first broken rule.
template <allocator A>
conformance_result run_conformance(A& a, const conformance_options& o = {}) {
    rng_source src(o.seed);
    return detail::conformance_run<A, rng_source>(a, o, src).run();
}

/// Same, with decisions taken from fuzzer bytes (for LLVMFuzzerTestOneInput).
template <allocator A>
conformance_result run_conformance(A& a, const conformance_options& o, byte_source& src) {
    return detail::conformance_run<A, byte_source>(a, o, src).run();
}

/// Fills a bounded allocator until allocate(size, align) returns nullptr, checks that the blocks
/// are intact, frees them (or resets), and checks the allocator serves the same request again.
/// Returns how many blocks fit.
template <allocator A>
std::size_t run_exhaustion(A& a, std::size_t size, std::size_t align,
                           std::size_t max_blocks = 1u << 22) {
    std::vector<std::byte*> got;
    for (std::size_t i = 0; i < max_blocks; ++i) {
        auto* p = static_cast<std::byte*>(a.allocate(size, align));
        if (p == nullptr) break;
        for (std::size_t j = 0; j < size; ++j) p[j] = detail::pattern_byte(i, j);
        got.push_back(p);
    }
    if (got.size() == max_blocks) throw conformance_failure("exhaustion: never ran out");
    for (std::size_t i = 0; i < got.size(); ++i)
        for (std::size_t j = 0; j < size; ++j)
            if (got[i][j] != detail::pattern_byte(i, j))
                throw conformance_failure("exhaustion: a block changed while filling");
    if (a.allocate(size, align) != nullptr)
        throw conformance_failure("exhaustion: allocate succeeded right after failing");
    if constexpr (resettable_allocator<A>) {
        a.reset();
    } else {
        for (std::size_t i = got.size(); i-- > 0;) a.deallocate(got[i], size, align);
    }
    void* again = a.allocate(size, align);
    if (got.empty() ? again != nullptr : again == nullptr)
        throw conformance_failure("exhaustion: allocator unusable after being emptied");
    if (again != nullptr) {
        if constexpr (resettable_allocator<A>) {
            a.reset();
        } else {
            a.deallocate(again, size, align);
        }
    }
    return got.size();
}

}  // namespace rtmem::testing
