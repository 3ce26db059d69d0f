// rt_heap from several threads (label `threads`: CI runs these under ThreadSanitizer):
// a model-based run with cross-thread frees, thread exit and adoption, thread churn, more threads
// than thread heaps, a double free from another thread, and the shared locked<> stress run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../sync/stress.hpp"
#include "conformance.hpp"
#include "rtmem/alloc/rt_heap.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::rt_heap;
using rtmem::rt_heap_options;

rt_heap_options test_options() {
    rt_heap_options o;
    o.reserve_bytes = 256u << 20;
    o.segment_bytes = 64u << 10;
    o.max_threads = 16;
    return o;
}

std::byte pattern(std::uint64_t id, std::size_t i) {
    return static_cast<std::byte>((id * 0x9E37u + i * 7u + (id >> 8)) & 0xFFu);
}

struct entry {
    std::uintptr_t end;
    unsigned owner;
};

// The shadow model: every live block (its range, who allocated it, its id) in one map, so a new
// block overlapping any live block of any thread is caught; per-thread inboxes carry blocks to
// the thread that will free them.
class model {
  public:
    struct block {
        std::byte* p;
        std::size_t size;
        std::uint64_t id;
        unsigned owner;  // the thread that allocated it
    };

    explicit model(unsigned threads) : inboxes_(threads) {}

    void allocated(const block& b) {
        std::lock_guard guard(mutex_);
        const auto start = reinterpret_cast<std::uintptr_t>(b.p);
        const std::uintptr_t end = start + std::max<std::size_t>(b.size, 1);
        auto next = live_.lower_bound(start);
        if ((next != live_.end() && next->first < end) ||
            (next != live_.begin() && std::prev(next)->second.end > start))
            failures_.push_back("thread " + std::to_string(b.owner) + " got a block overlapping "
                                "a live block");
        live_.emplace(start, entry{end, b.owner});
        ++allocations_;
    }
    // Before the block is freed: the model forgets it first, so the address may come back.
    void freeing(const block& b, unsigned by) {
        std::lock_guard guard(mutex_);
        auto it = live_.find(reinterpret_cast<std::uintptr_t>(b.p));
        if (it == live_.end() || it->second.owner != b.owner)
            failures_.push_back("freeing a block the model does not hold");
        else
            live_.erase(it);
        if (by != b.owner) ++cross_frees_;
    }
    void send(unsigned to, const block& b) {
        std::lock_guard guard(mutex_);
        inboxes_[to].push_back(b);
    }
    std::vector<block> receive(unsigned me) {
        std::lock_guard guard(mutex_);
        return std::exchange(inboxes_[me], {});
    }
    void corrupted(const block& b) {
        std::lock_guard guard(mutex_);
        failures_.push_back("contents of block " + std::to_string(b.id) + " changed");
    }

    std::vector<std::string> failures_;
    std::size_t allocations_ = 0, cross_frees_ = 0;
    std::map<std::uintptr_t, entry> live_;

  private:
    std::mutex mutex_;
    std::vector<std::vector<block>> inboxes_;
};

void fill(const model::block& b) {
    for (std::size_t i = 0; i < b.size; ++i) b.p[i] = pattern(b.id, i);
}
bool intact(const model::block& b) {
    for (std::size_t i = 0; i < b.size; ++i)
        if (b.p[i] != pattern(b.id, i)) return false;
    return true;
}

void run_model(rt_heap& heap, unsigned threads, int operations, std::uint64_t seed) {
    model m(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            rtmem::testing::rng_source rng(seed * 1000 + t);
            std::vector<model::block> own;
            auto release = [&](const model::block& b) {
                if (!intact(b)) m.corrupted(b);
                m.freeing(b, t);
                heap.deallocate(b.p, b.size, 16);
            };
            for (int i = 0; i < operations; ++i) {
                const auto roll = rng.below(100);
                if (roll < 50 || own.empty()) {
                    const std::size_t size = rng.below(8) == 0 ? rng.below(70000) : rng.below(300);
                    auto* p = static_cast<std::byte*>(heap.allocate(size, 16));
                    if (p == nullptr) continue;
                    const model::block b{p, size, (std::uint64_t{t} << 40) | unsigned(i), t};
                    m.allocated(b);
                    fill(b);
                    own.push_back(b);
                } else if (roll < 75) {  // free one of ours
                    const std::size_t k = rng.below(own.size());
                    release(own[k]);
                    own[k] = own.back();
                    own.pop_back();
                } else {  // hand one to another thread, which frees it
                    const std::size_t k = rng.below(own.size());
                    m.send(static_cast<unsigned>((t + 1 + rng.below(threads - 1)) % threads),
                           own[k]);
                    own[k] = own.back();
                    own.pop_back();
                }
                if (i % 16 == 0)
                    for (const auto& b : m.receive(t)) release(b);
            }
            for (const auto& b : own) release(b);
        });
    }
    for (auto& th : pool) th.join();
    for (unsigned t = 0; t < threads; ++t)  // blocks sent to threads that had finished
        for (const auto& b : m.receive(t)) {
            if (!intact(b)) m.corrupted(b);
            m.freeing(b, threads);
            heap.deallocate(b.p, b.size, 16);
        }
    for (const auto& f : m.failures_) ADD_FAILURE() << f;
    EXPECT_TRUE(m.live_.empty());
    EXPECT_GT(m.cross_frees_, static_cast<std::size_t>(operations) / 10);
    heap.collect();  // the exited threads' heaps take back what was freed into them
    EXPECT_TRUE(heap.check());
    const rtmem::stats s = heap.stats();
    EXPECT_EQ(s.live_count, 0u);
    EXPECT_EQ(s.used, 0u);
    EXPECT_EQ(s.total_count, m.allocations_);
    EXPECT_EQ(heap.threads_attached(), 0u);
    EXPECT_EQ(heap.threads_abandoned(), threads);
}

TEST(RtHeapThreads, ModelWithCrossThreadFrees) {
    for (unsigned threads : {2u, 4u}) {
        rt_heap heap{test_options()};
        run_model(heap, threads, 6000, threads);
    }
}

TEST(RtHeapThreads, ModelWithTinyDrainBatchAndNoCache) {
    rt_heap_options o = test_options();
    o.drain_batch = 1;
    o.cache_depth = 0;
    rt_heap heap{o};
    run_model(heap, 3, 4000, 11);
}

TEST(RtHeapThreads, ExitedThreadsHeapIsAdoptedWithItsBlocks) {
    rt_heap heap{test_options()};
    std::vector<void*> left;
    std::thread([&] {
        for (int i = 0; i < 1000; ++i) left.push_back(heap.allocate(100));
    }).join();
    EXPECT_EQ(heap.threads_abandoned(), 1u);
    EXPECT_EQ(heap.threads_attached(), 0u);
    const std::size_t segments = heap.segments_used();
    for (std::size_t i = 0; i < left.size(); i += 2) heap.deallocate(left[i], 100);  // remote
    std::vector<void*> mine;
    std::thread([&] {
        EXPECT_TRUE(heap.attach());
        EXPECT_EQ(heap.threads_abandoned(), 0u);  // adopted, not created
        for (int i = 0; i < 400; ++i) mine.push_back(heap.allocate(100));
        for (std::size_t i = 1; i < left.size(); i += 4) heap.deallocate(left[i], 100);  // own
    }).join();
    EXPECT_EQ(heap.segments_used(), segments);  // the adopter reused the exited thread's memory
    for (void* p : mine) heap.deallocate(p, 100);
    for (std::size_t i = 3; i < left.size(); i += 4) heap.deallocate(left[i], 100);
    heap.collect();
    EXPECT_TRUE(heap.check());
    EXPECT_EQ(heap.stats().live_count, 0u);
}

TEST(RtHeapThreads, ThreadChurnReusesHeaps) {
    rt_heap heap{test_options()};
    std::vector<void*> survivors;
    std::mutex survivors_lock;
    for (int round = 0; round < 50; ++round) {
        std::thread a([&] {
            std::vector<void*> mine;
            for (int i = 0; i < 300; ++i) mine.push_back(heap.allocate(16 + (i * 37) % 900));
            std::lock_guard guard(survivors_lock);
            for (std::size_t i = 0; i < mine.size(); ++i) {
                if (i % 3 == 0)
                    survivors.push_back(mine[i]);  // freed later by another thread
                else
                    heap.deallocate(mine[i], 0);
            }
        });
        std::thread b([&] {
            std::lock_guard guard(survivors_lock);
            for (void* p : survivors) heap.deallocate(p, 0);
            survivors.clear();
        });
        a.join();
        b.join();
    }
    for (void* p : survivors) heap.deallocate(p, 0);
    EXPECT_LE(heap.threads_abandoned(), 2u);  // 100 threads, at most two at once
    EXPECT_LE(heap.segments_used(), 8u);
    heap.collect();
    EXPECT_TRUE(heap.check());
    EXPECT_EQ(heap.stats().live_count, 0u);
}

TEST(RtHeapThreads, MoreThreadsThanHeapsGetNullptrButFreeFine) {
    rt_heap_options o = test_options();
    o.max_threads = 1;
    rt_heap heap{o};
    void* first = heap.allocate(64);
    ASSERT_NE(first, nullptr);
    void* second = &o;
    std::thread([&] {
        second = heap.allocate(64);  // the only heap is bound to the main thread
        heap.deallocate(first, 64);  // a cross-thread free needs no heap of its own
    }).join();
    EXPECT_EQ(second, nullptr);
    heap.collect();
    EXPECT_EQ(heap.stats().live_count, 0u);
}

TEST(RtHeapThreads, SecondFreeFromAnotherThreadIsReported) {
    if constexpr (rtmem::check_level >= 1) {
        rtmem::testing::violation_recorder rec;
        rt_heap heap{test_options()};
        void* p = nullptr;
        std::thread([&] { p = heap.allocate(48); }).join();
        heap.deallocate(p, 48);
        heap.deallocate(p, 48);  // still queued for its (exited) owner
        EXPECT_EQ(rec.count(rtmem::violation_kind::double_free), 1u);
        heap.collect();
        EXPECT_TRUE(heap.check());
        EXPECT_EQ(heap.stats().live_count, 0u);
    }
}

TEST(RtHeapThreads, SharedStressRun) {
    rt_heap heap{test_options()};
    rtmem::testing::stress_options o;
    o.threads = 6;
    o.blocks_per_thread = 3000;
    o.max_size = 2000;
    o.align = 16;
    const auto r = rtmem::testing::run_stress(heap, o);
    EXPECT_EQ(r.corrupted, 0u);
    EXPECT_EQ(r.exhausted, 0u);
    EXPECT_GT(r.freed_elsewhere, 1000u);
    heap.collect();
    EXPECT_TRUE(heap.check());
    EXPECT_EQ(heap.stats().live_count, 0u);
}

}  // namespace
