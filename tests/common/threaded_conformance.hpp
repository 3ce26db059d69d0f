// The conformance harness with several threads, for allocators shared between threads (rt_heap,
// locked<A>): each thread allocates blocks of random sizes and alignments, frees some itself and
// hands others to another thread, which frees them (cross-thread frees). A shadow model shared by
// all threads records every live block, which thread allocated it and its contents pattern:
//
//   rtmem::testing::threaded_conformance_options o;
//   o.threads = 4;
//   const auto r = rtmem::testing::run_threaded_conformance(heap, o);
//
// Checked: no new block overlaps a live block of any thread; alignment; each block keeps its
// pattern until freed, whoever frees it; owns() is true for every new block; the model's
// owner agrees with the block handed over. Failures are gathered while threads run and thrown as
// one conformance_failure (naming the seed) after they have joined. Accounting after the run is
// the caller's to check (a heap may hold cross-thread frees until its owner takes them back).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "conformance.hpp"
#include "rtmem/core/allocator.hpp"

namespace rtmem::testing {

struct threaded_conformance_options {
    std::uint64_t seed = 1;
    unsigned threads = 4;
    int operations = 6000;       ///< per thread
    std::size_t max_size = 300;  ///< sizes 0..max_size, and 1 in 8 up to large_size
    std::size_t large_size = 0;
    std::size_t max_align = 64;     ///< alignments are powers of two from 1 to this
    unsigned handoff_percent = 25;  ///< of the operations: give a block to another thread
    unsigned free_percent = 25;     ///< of the operations: free one of this thread's blocks
};

struct threaded_conformance_result {
    std::size_t allocations = 0, frees = 0, cross_frees = 0, exhausted = 0;
};

namespace detail {

class threaded_model {
  public:
    struct block {
        std::byte* p;
        std::size_t size, align;
        std::uint64_t id;
        unsigned owner;  // the thread that allocated it
    };

    explicit threaded_model(unsigned threads) : inboxes_(threads) {}

    void allocated(const block& b) {
        std::lock_guard guard(mutex_);
        const auto start = reinterpret_cast<std::uintptr_t>(b.p);
        const std::uintptr_t end = start + std::max<std::size_t>(b.size, 1);
        auto next = live_.lower_bound(start);
        if ((next != live_.end() && next->first < end) ||
            (next != live_.begin() && std::prev(next)->second.first > start))
            failures_.push_back("thread " + std::to_string(b.owner) + " got a block of " +
                                std::to_string(b.size) + " bytes overlapping a live block");
        live_.emplace(start, std::pair{end, b.owner});
        ++result_.allocations;
    }
    // Called before the block is freed: the model forgets it first, so its address may come
    // back to any thread at once.
    void freeing(const block& b, unsigned by) {
        std::lock_guard guard(mutex_);
        auto it = live_.find(reinterpret_cast<std::uintptr_t>(b.p));
        if (it == live_.end() || it->second.second != b.owner)
            failures_.push_back("thread " + std::to_string(by) +
                                " frees a block the model does not give to its allocator");
        else
            live_.erase(it);
        ++result_.frees;
        if (by != b.owner) ++result_.cross_frees;
    }
    void send(unsigned to, const block& b) {
        std::lock_guard guard(mutex_);
        inboxes_[to].push_back(b);
    }
    std::vector<block> receive(unsigned me) {
        std::lock_guard guard(mutex_);
        return std::exchange(inboxes_[me], {});
    }
    void fail(std::string what) {
        std::lock_guard guard(mutex_);
        failures_.push_back(std::move(what));
    }
    void exhausted() {
        std::lock_guard guard(mutex_);
        ++result_.exhausted;
    }

    std::vector<std::string> failures_;
    std::map<std::uintptr_t, std::pair<std::uintptr_t, unsigned>> live_;  // start -> end, owner
    threaded_conformance_result result_;

  private:
    std::mutex mutex_;
    std::vector<std::vector<block>> inboxes_;
};

}  // namespace detail

/// Runs o.threads threads against the shared allocator `a`; returns the counts, throws
/// conformance_failure after joining them if any rule broke.
template <allocator A>
threaded_conformance_result run_threaded_conformance(A& a,
                                                     const threaded_conformance_options& o = {}) {
    using block = detail::threaded_model::block;
    detail::threaded_model m(o.threads);
    std::size_t align_bits = 0;
    while ((std::size_t{2} << align_bits) <= o.max_align) ++align_bits;
    auto intact = [](const block& b) {
        for (std::size_t i = 0; i < b.size; ++i)
            if (b.p[i] != detail::pattern_byte(b.id, i)) return false;
        return true;
    };
    auto release = [&](const block& b, unsigned by) {
        if (!intact(b))
            m.fail("contents of a block of " + std::to_string(b.size) + " bytes from thread " +
                   std::to_string(b.owner) + " changed before thread " + std::to_string(by) +
                   " freed it");
        m.freeing(b, by);
        a.deallocate(b.p, b.size, b.align);
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < o.threads; ++t) {
        pool.emplace_back([&, t] {
            rng_source rng(o.seed * 7919 + t);
            std::vector<block> own;
            for (int i = 0; i < o.operations; ++i) {
                const auto roll = rng.below(100);
                if (own.empty() || roll >= o.free_percent + o.handoff_percent) {
                    const auto size = static_cast<std::size_t>(
                        o.large_size > o.max_size && rng.below(8) == 0 ? rng.below(o.large_size + 1)
                                                                       : rng.below(o.max_size + 1));
                    const std::size_t align = std::size_t{1} << rng.below(align_bits + 1);
                    auto* p = static_cast<std::byte*>(a.allocate(size, align));
                    if (p == nullptr) {
                        m.exhausted();
                        continue;
                    }
                    if (!is_aligned(p, align))
                        m.fail("a block of " + std::to_string(size) + " bytes is not aligned to " +
                               std::to_string(align));
                    if constexpr (owning_allocator<A>) {
                        if (!a.owns(p)) m.fail("owns() is false for a block just allocated");
                    }
                    const block b{p, size, align, (std::uint64_t{t} << 40) | unsigned(i), t};
                    m.allocated(b);
                    for (std::size_t k = 0; k < size; ++k) p[k] = detail::pattern_byte(b.id, k);
                    own.push_back(b);
                } else {
                    const auto k = static_cast<std::size_t>(rng.below(own.size()));
                    const block b = own[k];
                    own[k] = own.back();
                    own.pop_back();
                    if (roll < o.free_percent || o.threads == 1)
                        release(b, t);
                    else
                        m.send(
                            static_cast<unsigned>((t + 1 + rng.below(o.threads - 1)) % o.threads),
                            b);
                }
                if (i % 16 == 0)
                    for (const auto& b : m.receive(t)) release(b, t);
            }
            for (const auto& b : own) release(b, t);
        });
    }
    for (auto& th : pool) th.join();
    for (unsigned t = 0; t < o.threads; ++t)  // blocks sent to threads that had finished
        for (const auto& b : m.receive(t)) release(b, o.threads);
    if (!m.live_.empty()) m.fail(std::to_string(m.live_.size()) + " blocks never freed");
    if (!m.failures_.empty())
        throw conformance_failure("threaded conformance: " + m.failures_.front() + " (seed " +
                                  std::to_string(o.seed) + ", " +
                                  std::to_string(m.failures_.size()) + " failures)");
    return m.result_;
}

}  // namespace rtmem::testing
