// rt_heap from one thread: the conformance harness, growth by segments, real-time exhaustion,
// misuse, and (in a child process under seccomp) that real-time mode makes no memory system call
// after construction. The threaded tests are in rt_heap_threads.cpp.
#include "rtmem/alloc/rt_heap.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iterator>
#include <memory>
#include <vector>

#include "conformance.hpp"
#include "violation_recorder.hpp"

#if defined(__linux__)
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#endif

namespace {
using rtmem::rt_heap;
using rtmem::rt_heap_options;
using rtmem::violation_kind;
static_assert(rtmem::allocator<rt_heap>);
static_assert(rtmem::owning_allocator<rt_heap>);
static_assert(rtmem::stats_allocator<rt_heap>);
static_assert(rtmem::checkable_allocator<rt_heap>);
static_assert(!std::is_copy_constructible_v<rt_heap>);

rt_heap_options small_segments(std::size_t reserve = 64u << 20) {
    rt_heap_options o;
    o.reserve_bytes = reserve;
    o.segment_bytes = 64u << 10;
    o.max_threads = 8;
    return o;
}

TEST(RtHeap, ConformanceSmallAndLargeAcrossSegments) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        rt_heap h{small_segments()};
        ASSERT_TRUE(h.ready());
        rtmem::testing::conformance_options o;
        o.seed = seed;
        o.min_size = seed == 2 ? 1 : 0;
        o.max_size = 4096;
        o.large_size = 1 << 20;  // several 64 KiB segments per pool
        o.max_align = 4096;
        o.max_live = 400;
        o.scale = 0.2;
        o.check_every = 7;
        const auto r = rtmem::testing::run_conformance(h, o);
        EXPECT_GT(r.allocations, 10000u);
        EXPECT_GT(h.segments_used(), 1u);
        EXPECT_EQ(h.stats().live_count, 0u);
        EXPECT_EQ(h.threads_attached(), 1u);
    }
}

TEST(RtHeap, ConformanceWithCacheOffAndOneBlockDrains) {
    rt_heap_options opts = small_segments();
    opts.cache_depth = 0;
    opts.drain_batch = 1;
    rt_heap h{opts};
    rtmem::testing::conformance_options o;
    o.seed = 7;
    o.max_size = 1024;
    o.scale = 0.2;
    rtmem::testing::run_conformance(h, o);
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, RealTimeHeapRunsOutAndRecovers) {
    rt_heap h{rt_heap_options::real_time_with(1u << 20)};
    ASSERT_TRUE(h.ready());
    rtmem::testing::conformance_options o;
    o.max_size = 8192;
    o.max_align = 256;
    o.max_live = 2000;  // more than 1 MiB holds: exhaustion paths run
    o.scale = 0.25;
    o.check_every = 5;
    const auto r = rtmem::testing::run_conformance(h, o);
    EXPECT_GT(r.exhausted, 0u);
    EXPECT_EQ(h.segments_used(), h.segment_count());
    const std::size_t fit = rtmem::testing::run_exhaustion(h, 200, 16);
    EXPECT_GT(fit, 4000u);  // 1 MiB / 208-byte blocks, less one segment's bookkeeping
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, EveryRequestNearASegmentFitsTheSegmentsItClaims) {
    // The claim covers TLSF's rounding up to the next size class and the alignment slack: a
    // fresh heap serves each of these at once (a short claim would return nullptr).
    for (std::size_t align : {std::size_t{16}, std::size_t{64}, std::size_t{4096}}) {
        for (std::size_t size = 1000; size < 300000; size += 1237) {
            rt_heap h{small_segments(4u << 20)};
            void* p = h.allocate(size, align);
            ASSERT_NE(p, nullptr) << size << " @ " << align;
            h.deallocate(p, size, align);
        }
    }
}

// What a malloc shim's free does: one lookup decides "mine" (freed) or "not mine" (untouched).
TEST(RtHeap, DeallocateIfOwnedFreesOnlyItsOwnBlocks) {
    rt_heap heap{small_segments()};
    void* p = heap.allocate(200);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(heap.stats().live_count, 1u);
    EXPECT_TRUE(heap.deallocate_if_owned(p));
    EXPECT_EQ(heap.stats().live_count, 0u);
    EXPECT_EQ(heap.stats().used, 0u);
    // Pointers read back through a volatile: GCC 12 at -O3 otherwise follows a known pointer
    // (the 64-byte malloc, null) into the never-taken owned branch: a false -Warray-bounds.
    void* volatile slot = std::malloc(64);
    void* foreign = slot;
    EXPECT_FALSE(heap.deallocate_if_owned(foreign));
    std::free(foreign);
    slot = nullptr;
    EXPECT_FALSE(heap.deallocate_if_owned(slot));
    rt_heap other{small_segments()};  // a pointer of another rt_heap is not this one's
    void* q = other.allocate(64);
    EXPECT_FALSE(heap.deallocate_if_owned(q));
    EXPECT_TRUE(other.deallocate_if_owned(q));
    EXPECT_TRUE(heap.check());
    EXPECT_TRUE(other.check());
}

TEST(RtHeap, RequestLargerThanTheReservationFails) {
    rt_heap h{small_segments(1u << 20)};
    EXPECT_EQ(h.allocate(2u << 20), nullptr);
    void* p = h.allocate(900u << 10);  // 15 of the 16 segments in one pool
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(h.allocate(200u << 10), nullptr);
    h.deallocate(p, 900u << 10);
    EXPECT_NE(p = h.allocate(900u << 10), nullptr);  // the freed pool serves it again
    h.deallocate(p, 900u << 10);
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, BadOptionsAreReportedAndTheHeapStaysEmpty) {
    rtmem::testing::violation_recorder rec;
    rt_heap_options o;
    o.segment_bytes = 100000;  // not a power of two
    rt_heap h{o};
    EXPECT_EQ(rec.count(violation_kind::bad_argument), 1u);
    EXPECT_FALSE(h.ready());
    EXPECT_EQ(h.allocate(16), nullptr);
    EXPECT_FALSE(h.owns(&o));
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, MisuseIsReported) {
    rtmem::testing::violation_recorder rec;
    rt_heap h{small_segments()};
    int local = 0;
    // Read through a volatile: GCC -O3 otherwise inlines the owner's TLSF free on &local and
    // flags the (unreachable) header read with -Warray-bounds.
    int* volatile outside = &local;
    h.deallocate(outside, sizeof local);  // outside the reservation
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 1u);
    void* p = h.allocate(64);
    ASSERT_NE(p, nullptr);
    if constexpr (rtmem::check_level >= 1) {
        h.deallocate(static_cast<std::byte*>(p) + 8, 56);  // inside, not a block start
        EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 2u);
        rec.clear();
        h.deallocate(outside, sizeof local);
    }
    rt_heap other{small_segments()};
    other.deallocate(p, 64);  // another heap's block: not in a segment of `other`
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 2u);
    EXPECT_EQ(h.allocate(16, 3), nullptr);  // alignment not a power of two
    EXPECT_EQ(rec.count(violation_kind::bad_alignment), 1u);
    h.deallocate(p, 64);
    if constexpr (rtmem::check_level >= 1) {
        h.deallocate(p, 64);  // the owner frees twice: tlsf_allocator's check
        EXPECT_EQ(rec.count(violation_kind::double_free), 1u);
    }
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, SizeClassListsServeTheSameSizeLastInFirstOutAndStayBounded) {
    rt_heap_options o = small_segments();
    o.cache_depth = 4;
    o.cache_class_bytes = 2000;
    o.refill_batch = 1;  // only freed blocks on the lists (runs: the test below)
    rt_heap h{o};
    void* blocks[10];
    for (auto& p : blocks) ASSERT_NE(p = h.allocate(100), nullptr);
    for (void* p : blocks) h.deallocate(p, 100);
    EXPECT_EQ(h.cached_blocks(), 4u);  // cache_depth: the other six went back to TLSF
    EXPECT_EQ(h.stats().live_count, 0u);
    EXPECT_EQ(h.stats().used, 0u);
    // 97..104 bytes share the 104-byte block class; the last block pushed comes out first.
    EXPECT_EQ(h.allocate(97), blocks[3]);
    EXPECT_EQ(h.allocate(104), blocks[2]);
    EXPECT_EQ(h.cached_blocks(), 2u);
    EXPECT_EQ(h.stats().live_count, 2u);
    EXPECT_EQ(h.stats().total_count, 12u);
    h.deallocate(blocks[3], 97);
    h.deallocate(blocks[2], 104);
    // cache_class_bytes: 1000-byte blocks, at most 2000 bytes of them on their list.
    void* big[5];
    for (auto& p : big) ASSERT_NE(p = h.allocate(1000), nullptr);
    for (void* p : big) h.deallocate(p, 1000);
    EXPECT_EQ(h.cached_blocks(), 4u + 2u);
    // Requests of 1..8 bytes take the smallest blocks (24 bytes, the class of 9..24).
    void* small = h.allocate(16);
    h.deallocate(small, 16);
    EXPECT_EQ(h.allocate(1), small);
    h.deallocate(small, 1);
    EXPECT_EQ(h.stats().live_count, 0u);
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, AnEmptyListRefillsWithARunOfAdjacentBlocksThatDoublesUpToTheBatch) {
    rt_heap_options o = small_segments();
    o.cache_depth = 32;
    o.refill_batch = 8;
    o.refill_runs = rt_heap_options::run_start::always;
    rt_heap h{o};
    ASSERT_TRUE(h.attach());  // lists one 24-byte block (attach's warm-up), never counted
    const std::size_t base = h.cached_blocks();
    // 48-byte requests take 56-byte blocks: 64 bytes apart with the header word.
    std::vector<void*> blocks;
    std::vector<std::size_t> listed;  // after each allocate
    for (int i = 0; i < 40; ++i) {
        blocks.push_back(h.allocate(48));
        ASSERT_NE(blocks.back(), nullptr);
        listed.push_back(h.cached_blocks() - base);
    }
    // Refills of 1, 2, 4, then 8 blocks (the batch): each hands out the first of its run and
    // lists the rest, which the next allocates take in address order.
    const std::size_t expected[] = {0, 1, 0, 3, 2, 1, 0, 7, 6, 5, 4, 3, 2, 1, 0, 7};
    for (std::size_t i = 0; i < std::size(expected); ++i) EXPECT_EQ(listed[i], expected[i]) << i;
    for (std::size_t i = 1; i < 7; ++i) {
        if (i == 1 || i == 3) continue;  // a new run may start anywhere
        EXPECT_EQ(static_cast<char*>(blocks[i]) - static_cast<char*>(blocks[i - 1]), 64);
    }
    for (std::size_t i = 8; i < 15; ++i)
        EXPECT_EQ(static_cast<char*>(blocks[i]) - static_cast<char*>(blocks[i - 1]), 64);
    // Listed blocks are neither live nor allocations; each run's blocks are TLSF blocks.
    EXPECT_EQ(h.stats().live_count, 40u);
    EXPECT_EQ(h.stats().total_count, 40u);
    EXPECT_TRUE(h.check());
    for (void* p : blocks) h.deallocate(p, 48);
    EXPECT_EQ(h.stats().live_count, 0u);
    EXPECT_EQ(h.stats().used, 0u);
    EXPECT_LE(h.cached_blocks() - base, 32u);  // the list's capacity bounds what it holds
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, RefillRunsAreCappedByWhatTheListCanHoldAndOffWithBatchOne) {
    rt_heap_options o = small_segments();
    o.cache_depth = 32;
    o.cache_class_bytes = 3500;  // 1000-byte blocks: 3 on a list
    o.refill_runs = rt_heap_options::run_start::always;
    rt_heap h{o};
    std::vector<void*> blocks;
    for (int i = 0; i < 20; ++i) {
        blocks.push_back(h.allocate(1000));
        ASSERT_NE(blocks.back(), nullptr);
        EXPECT_LE(h.cached_blocks(), 3u);
    }
    EXPECT_TRUE(h.check());
    for (void* p : blocks) h.deallocate(p, 1000);
    EXPECT_EQ(h.stats().used, 0u);

    o.refill_batch = 1;
    rt_heap plain{o};
    for (int i = 0; i < 20; ++i) {
        void* p = plain.allocate(48);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(plain.cached_blocks(), 0u);  // every miss is one TLSF block
    }
    EXPECT_EQ(plain.stats().total_count, 20u);
    EXPECT_TRUE(plain.check());
}

TEST(RtHeap, BlocksOnTheListsGoBackToTlsfBeforeTheHeapGrows) {
    rt_heap_options o = small_segments();
    o.cache_depth = 64;
    o.cache_class_bytes = 1u << 20;
    o.refill_runs = rt_heap_options::run_start::always;
    rt_heap h{o};
    void* blocks[60];  // ~60 KiB: most of the first 64 KiB segment
    for (auto& p : blocks) ASSERT_NE(p = h.allocate(1000), nullptr);
    for (void* p : blocks) h.deallocate(p, 1000);
    EXPECT_GE(h.cached_blocks(), 60u);  // and what the last refill run left listed
    EXPECT_LE(h.cached_blocks(), 64u);
    EXPECT_EQ(h.segments_used(), 1u);
    void* p = h.allocate(50000);  // only the listed blocks, coalesced, hold it
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(h.segments_used(), 1u);
    EXPECT_EQ(h.cached_blocks(), 0u);
    h.deallocate(p, 50000);
    EXPECT_EQ(h.stats().total_count, 61u);
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, SecondFreeOfABlockOnAListOrInTheQueueIsReported) {
    if constexpr (rtmem::check_level < 1) GTEST_SKIP() << "needs RTMEM_CHECKS >= 1";
    rtmem::testing::violation_recorder rec;
    rt_heap h{small_segments()}, other{small_segments()};
    void* p = h.allocate(64);
    void* q = h.allocate(64);
    h.deallocate(p, 64);
    h.deallocate(p, 64);  // p waits on its size-class list
    EXPECT_EQ(rec.count(violation_kind::double_free), 1u);
    EXPECT_EQ(h.reallocate(p, 64, 128), nullptr);  // resizing a freed block
    EXPECT_EQ(rec.count(violation_kind::double_free), 2u);
    other.deallocate(other.allocate(16), 16);  // binds this thread to `other`
    h.deallocate(q, 64);  // not bound to h: the cross-thread path, into h's queue
    // Bound to h again by an allocate its list serves (a miss would take q back first).
    EXPECT_EQ(h.allocate(64), p);  // the list is intact
    h.deallocate(q, 64);           // the owner frees a queued block
    EXPECT_EQ(rec.count(violation_kind::double_free), 3u);
    EXPECT_EQ(rec.count(), 3u);
    h.deallocate(p, 64);
    h.collect();
    EXPECT_EQ(h.stats().live_count, 0u);
    EXPECT_TRUE(h.check());
    EXPECT_TRUE(other.check());
}

TEST(RtHeap, ReallocateInPlaceAcrossSegmentsAndFromAnotherHeap) {
    rt_heap h{small_segments()};
    auto* p = static_cast<unsigned char*>(h.allocate(100));
    for (int i = 0; i < 100; ++i) p[i] = static_cast<unsigned char>(i);
    auto* q = static_cast<unsigned char*>(h.reallocate(p, 100, 40));
    EXPECT_EQ(q, p);                                               // shrinking stays in place
    q = static_cast<unsigned char*>(h.reallocate(q, 40, 200000));  // more than a segment
    ASSERT_NE(q, nullptr);
    for (int i = 0; i < 40; ++i) ASSERT_EQ(q[i], i);
    {
        rtmem::testing::violation_recorder rec;
        EXPECT_EQ(h.reallocate(q, 200000, rtmem::tlsf_allocator::max_pool_bytes + 1), nullptr);
        EXPECT_EQ(rec.count(violation_kind::bad_size), 1u);
        // > the 64 MiB reservation, yet a size TLSF accepts on 32-bit words too
        EXPECT_EQ(h.reallocate(q, 200000, std::size_t{256} << 20), nullptr);
        EXPECT_EQ(rec.count(), 1u);  // exhaustion is not a violation
    }
    for (int i = 0; i < 40; ++i) ASSERT_EQ(q[i], i);
    h.deallocate(q, 200000);
    void* r = h.reallocate(nullptr, 0, 64);
    ASSERT_NE(r, nullptr);
    h.deallocate(r, 64);
    EXPECT_EQ(h.stats().live_count, 0u);
    EXPECT_TRUE(h.check());
}

TEST(RtHeap, GrowsBySegmentsAndOwnsOnlyGrantedOnes) {
    rt_heap h{small_segments()};
    EXPECT_EQ(h.segments_used(), 0u);
    EXPECT_EQ(h.stats().capacity, 0u);
    void* p = h.allocate(100);
    EXPECT_EQ(h.segments_used(), 1u);
    EXPECT_TRUE(h.owns(p));
    EXPECT_FALSE(h.owns(static_cast<std::byte*>(p) + (64u << 10)));  // next segment: not granted
    h.deallocate(p, 100);
    EXPECT_EQ(h.stats().used, 0u);
    EXPECT_GT(h.stats().capacity, 60000u);
}

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__)) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// In a child process: kill it with SIGSYS on any system call that maps or unmaps memory, then
// fill the heap to exhaustion, free everything, fill again. Exit 0 when every call returned.
int child_without_memory_syscalls(rt_heap& h) {
    if (!h.attach()) return 3;
    const std::uint32_t killed[] = {SYS_mmap, SYS_munmap, SYS_mprotect,
                                    SYS_brk,  SYS_mremap, SYS_madvise};
    struct sock_filter filter[2 + 2 * 6 + 1];
    unsigned n = 0;
    filter[n++] = BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (std::uint32_t nr : killed) {
        filter[n++] = BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
        filter[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    }
    filter[n++] = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {static_cast<unsigned short>(n), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 4;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) return 5;
    static void* blocks[1 << 16];
    for (int round = 0; round < 2; ++round) {
        std::size_t got = 0;
        while (got < std::size(blocks)) {
            void* p = h.allocate(40 + (got * 97) % 3000);
            if (p == nullptr) break;
            blocks[got++] = p;
        }
        if (got == 0 || got == std::size(blocks)) return 6;
        for (std::size_t i = 0; i < got; ++i) h.deallocate(blocks[i], 40 + (i * 97) % 3000);
    }
    return h.stats().live_count == 0 ? 0 : 7;
}

int status_of_child(rt_heap& h) {
    const pid_t pid = fork();
    if (pid == 0) _exit(child_without_memory_syscalls(h));
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

TEST(RtHeap, RealTimeModeMakesNoMemorySystemCallAfterConstruction) {
    rt_heap_options o = rt_heap_options::real_time_with(4u << 20);
    o.segment_bytes = 64u << 10;
    rt_heap rt{o};
    ASSERT_TRUE(rt.ready());
    const int status = status_of_child(rt);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 4 || WEXITSTATUS(status) == 5))
        GTEST_SKIP() << "this system refuses a seccomp filter (a container's policy?)";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    // The test can fail: without real-time mode, growing commits a segment (mprotect).
    rt_heap lazy{small_segments(4u << 20)};
    const int lazy_status = status_of_child(lazy);
    EXPECT_TRUE(WIFSIGNALED(lazy_status) && WTERMSIG(lazy_status) == SIGSYS)
        << "status " << lazy_status;
}
#endif

}  // namespace
