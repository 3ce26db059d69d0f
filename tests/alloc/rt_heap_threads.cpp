// rt_heap from several threads (label `threads`: CI runs these under ThreadSanitizer):
// a model-based run with cross-thread frees, thread exit and adoption, thread churn, more threads
// than thread heaps, a double free from another thread, and the shared locked<> stress run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#if defined(__linux__)
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../sync/stress.hpp"
#include "rtmem/alloc/rt_heap.hpp"
#include "threaded_conformance.hpp"
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

// The shared threaded harness, then the accounting once every block is back: after collect(),
// the exited threads' heaps have taken back what other threads freed into them.
void run_model(rt_heap& heap, unsigned threads, int operations, std::uint64_t seed,
               std::size_t max_align = 64) {
    rtmem::testing::threaded_conformance_options o;
    o.seed = seed;
    o.threads = threads;
    o.operations = operations;
    o.large_size = 70000;  // more than a 64 KiB segment: pools of several segments
    o.max_align = max_align;
    const auto r = rtmem::testing::run_threaded_conformance(heap, o);
    EXPECT_GT(r.cross_frees, static_cast<std::size_t>(operations) / 10);
    EXPECT_EQ(r.exhausted, 0u);
    heap.collect();
    EXPECT_TRUE(heap.check());
    const rtmem::stats s = heap.stats();
    EXPECT_EQ(s.live_count, 0u);
    EXPECT_EQ(s.used, 0u);
    EXPECT_EQ(s.total_count, r.allocations);
    EXPECT_EQ(heap.threads_attached(), 0u);
    // Every thread has exited; a thread that started after another exited adopts its heap, so
    // there are between one and `threads` abandoned heaps, depending on the scheduling.
    EXPECT_GE(heap.threads_abandoned(), 1u);
    EXPECT_LE(heap.threads_abandoned(), threads);
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
    run_model(heap, 3, 4000, 11, 4096);
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

// attach() walks the miss path of the smallest class once, which may refill by a run: in an
// adopted heap that class's list may still hold blocks, and the run goes in front of them.
TEST(RtHeapThreads, AttachToAnAdoptedHeapKeepsTheBlocksItsListsHold) {
    rt_heap_options o = test_options();
    o.refill_runs = rt_heap_options::run_start::always;
    rt_heap heap{o};
    std::thread([&] {
        ASSERT_TRUE(heap.attach());
        std::vector<void*> small;
        for (int i = 0; i < 20; ++i) small.push_back(heap.allocate(16));  // runs of 2, 4, 8, ...
        for (int i = 0; i < 3; ++i) heap.deallocate(small[static_cast<std::size_t>(i)], 16);
        for (std::size_t i = 3; i < small.size(); ++i) heap.deallocate(small[i], 16);
    }).join();
    const std::size_t listed = heap.cached_blocks();
    ASSERT_GT(listed, 0u);
    std::thread([&] {
        ASSERT_TRUE(heap.attach());  // adopts the heap above, then refills its class-1 list
        EXPECT_TRUE(heap.check());
        EXPECT_GE(heap.cached_blocks(), listed);
        std::vector<void*> again;  // every listed block comes out once, then TLSF serves
        for (std::size_t i = 0; i < 2 * listed; ++i) again.push_back(heap.allocate(16));
        for (void* p : again) heap.deallocate(p, 16);
    }).join();
    EXPECT_TRUE(heap.check());
    EXPECT_EQ(heap.stats().live_count, 0u);
}

// By default a heap refills by runs only once it has taken back a block another thread freed:
// before, every miss is one TLSF block and nothing is listed that no one freed.
TEST(RtHeapThreads, RefillRunsStartOnceTheHeapTakesBackABlockAnotherThreadFreed) {
    rt_heap heap{test_options()};
    ASSERT_TRUE(heap.attach());  // lists one smallest block (its warm-up)
    const std::size_t base = heap.cached_blocks();
    std::vector<void*> blocks;
    for (int i = 0; i < 40; ++i) {
        blocks.push_back(heap.allocate(48));
        ASSERT_NE(blocks.back(), nullptr);
        EXPECT_EQ(heap.cached_blocks(), base);  // no run: made one after another, in order
    }
    for (std::size_t i = 1; i < blocks.size(); ++i)
        EXPECT_EQ(static_cast<char*>(blocks[i]) - static_cast<char*>(blocks[i - 1]), 64);
    std::thread([&] { heap.deallocate(blocks.back(), 48); }).join();
    blocks.pop_back();
    std::size_t most = 0;
    for (int i = 0; i < 40; ++i) {  // the first miss takes the block back; later ones run
        blocks.push_back(heap.allocate(48));
        ASSERT_NE(blocks.back(), nullptr);
        most = std::max(most, heap.cached_blocks() - base);
    }
    EXPECT_GE(most, 7u);  // runs of 1, 2, 4, 8, ... list the rest of each
    for (void* p : blocks) heap.deallocate(p, 48);
    EXPECT_TRUE(heap.check());
    EXPECT_EQ(heap.stats().live_count, 0u);
}

// The exit hook (a thread_local destructor, on Windows the fiber-local storage callback) hands
// the heap back and first takes back what other threads freed into it while it ran.
TEST(RtHeapThreads, ThreadExitTakesBackQueuedBlocksAndHandsItsHeapBack) {
    rt_heap heap{test_options()};
    std::vector<void*> blocks;
    std::atomic<int> step{0};
    std::thread owner([&] {
        for (int i = 0; i < 200; ++i) blocks.push_back(heap.allocate(48));
        step = 1;
        while (step.load() != 2) std::this_thread::yield();
    });
    while (step.load() != 1) std::this_thread::yield();
    EXPECT_EQ(heap.threads_attached(), 1u);
    for (std::size_t i = 0; i < blocks.size(); ++i) {  // queued: the owner is still running
        if (i % 2 == 0)
            heap.deallocate(blocks[i], 48);
        else
            EXPECT_TRUE(heap.deallocate_if_owned(blocks[i]));  // free()'s path, from elsewhere
    }
    step = 2;
    owner.join();
    EXPECT_EQ(heap.threads_attached(), 0u);
    EXPECT_EQ(heap.threads_abandoned(), 1u);
    const rtmem::stats s = heap.stats();  // no collect(): the exit took the queue back
    EXPECT_EQ(s.live_count, 0u);
    EXPECT_EQ(s.used, 0u);
    EXPECT_TRUE(heap.check());
}

// attach() in real-time mode also gives the thread heap its first segment, so the thread's
// first allocate does not grow it; outside real-time mode it only binds.
TEST(RtHeapThreads, AttachInRealTimeModeClaimsTheFirstSegment) {
    rt_heap_options o = rt_heap_options::real_time_with(8u << 20);
    o.segment_bytes = 64u << 10;
    o.max_threads = 4;
    rt_heap rt{o};
    rt_heap plain{test_options()};
    std::thread([&] {
        EXPECT_TRUE(rt.attach());
        EXPECT_EQ(rt.segments_used(), 1u);
        EXPECT_TRUE(rt.attach());  // bound already: nothing more
        EXPECT_EQ(rt.segments_used(), 1u);
        void* p = rt.allocate(100);
        EXPECT_EQ(rt.segments_used(), 1u);
        rt.deallocate(p, 100);
        EXPECT_TRUE(plain.attach());
        EXPECT_EQ(plain.segments_used(), 0u);
    }).join();
    EXPECT_TRUE(rt.check());
}

TEST(RtHeapThreads, ThreadChurnReusesHeaps) {
    rt_heap heap{test_options()};
    std::vector<void*> survivors;
    std::mutex survivors_lock;
    for (int round = 0; round < 50; ++round) {
        std::thread a([&] {
            std::vector<void*> mine;
            for (int i = 0; i < 300; ++i)
                mine.push_back(heap.allocate(static_cast<std::size_t>(16 + (i * 37) % 900)));
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

TEST(RtHeapThreads, ReallocateABlockAnotherThreadOwns) {
    rt_heap heap{test_options()};
    unsigned char* p = nullptr;
    std::thread([&] {
        p = static_cast<unsigned char*>(heap.allocate(64));
        for (int i = 0; i < 64; ++i) p[i] = static_cast<unsigned char>(i + 1);
    }).join();
    auto* q = static_cast<unsigned char*>(heap.reallocate(p, 64, 32));  // not ours: moved
    ASSERT_NE(q, nullptr);
    EXPECT_NE(q, p);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(q[i], i + 1);
    heap.deallocate(q, 32);
    heap.collect();
    EXPECT_EQ(heap.stats().live_count, 0u);
    EXPECT_TRUE(heap.check());
}

TEST(RtHeapThreads, AThreadUsingManyHeapsReleasesTheOldestBinding) {
    // 20 live heaps used from one thread: a thread keeps 16 bindings, so the oldest are released
    // (abandoned) and adopted again when the thread comes back to them.
    rt_heap_options o = test_options();
    o.reserve_bytes = 16u << 20;  // 20 heaps must fit a 32-bit address space
    std::vector<std::unique_ptr<rt_heap>> heaps;
    for (int i = 0; i < 20; ++i) heaps.push_back(std::make_unique<rt_heap>(o));
    std::thread([&] {
        std::vector<void*> blocks;
        for (int round = 0; round < 2; ++round)
            for (auto& h : heaps) blocks.push_back(h->allocate(100));
        for (std::size_t i = 0; i < blocks.size(); ++i)
            heaps[i % heaps.size()]->deallocate(blocks[i], 100);
        EXPECT_EQ(heaps[0]->threads_attached() + heaps[0]->threads_abandoned(), 1u);
    }).join();
    for (auto& h : heaps) {
        h->collect();
        EXPECT_TRUE(h->check());
        EXPECT_EQ(h->stats().live_count, 0u);
        EXPECT_EQ(h->stats().total_count, 2u);
        EXPECT_EQ(h->threads_abandoned(), 1u);  // one thread heap each, reused on rebinding
    }
}

TEST(RtHeapThreads, CollectWhileOtherThreadsFreeAndAttach) {
    rt_heap heap{test_options()};
    std::vector<void*> blocks;
    std::thread([&] {
        for (int i = 0; i < 4000; ++i)
            blocks.push_back(heap.allocate(static_cast<std::size_t>(16 + i % 500)));
    }).join();
    std::atomic<bool> stop{false};
    std::thread freer([&] {
        for (std::size_t i = 0; i < blocks.size(); ++i) heap.deallocate(blocks[i], 0);
        stop.store(true);
    });
    std::thread adopter([&] {  // binds, perhaps adopting the exited heap while it is collected
        for (int i = 0; i < 200; ++i) heap.deallocate(heap.allocate(64), 64);
    });
    while (!stop.load()) heap.collect();
    freer.join();
    adopter.join();
    heap.collect();
    EXPECT_TRUE(heap.check());
    EXPECT_EQ(heap.stats().live_count, 0u);
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

#if defined(__linux__) && !defined(__SANITIZE_THREAD__)
// Another thread holds rt_heap's registry lock (as thread exit and binding take it) when the
// main thread forks. With lock_for_fork/unlock_after_fork as fork handlers the fork waits for
// it, so the child's own thread can bind and exit; without them the child inherits the lock
// held and hangs at that thread's exit (its alarm kills it).
void before_fork() { rt_heap::lock_for_fork(); }
void after_fork() { rt_heap::unlock_after_fork(); }

TEST(RtHeapThreads, ForkHandlersLeaveThreadExitWorkingInTheChild) {
    static const bool registered = pthread_atfork(before_fork, after_fork, after_fork) == 0;
    ASSERT_TRUE(registered);
    rt_heap_options options;
    options.reserve_bytes = 64u << 20;
    options.segment_bytes = 64u << 10;
    options.max_threads = 8;
    rt_heap heap(options);
    for (int round = 0; round < 3; ++round) {
        std::atomic<bool> held{false};
        std::thread holder([&] {
            rt_heap::lock_for_fork();
            held = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            rt_heap::unlock_after_fork();
        });
        while (!held.load()) std::this_thread::yield();
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            std::thread t([&] { heap.deallocate(heap.allocate(32), 32); });
            t.join();
            _exit(0);
        }
        holder.join();
        int status = 0;
        waitpid(pid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    }
}
#endif

}  // namespace
