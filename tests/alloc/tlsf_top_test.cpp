// The top fast path of tlsf_allocator: requests carved from the remainder the last split left
// behind, and every way that remainder can stop being a free block (taken, merged, grown into,
// cut for alignment, moved). check() verifies the cached top after each step: a stale top (a
// block that is no longer free, or whose size class changed) fails it.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "rtmem/alloc/tlsf.hpp"
#include "violation_recorder.hpp"

namespace {

struct top_heap {
    top_heap() : bytes(new std::byte[64 << 10]), t(std::span<std::byte>(bytes.get(), 64 << 10)) {}
    void* get(std::size_t n, std::size_t align = 16) {
        void* p = t.allocate(n, align);
        EXPECT_NE(p, nullptr);
        EXPECT_TRUE(t.check());
        return p;
    }
    void put(void* p, std::size_t n) {
        t.deallocate(p, n);
        EXPECT_TRUE(t.check());
    }
    static std::byte* after(void* p) {  // where the physically next block's user area starts
        return static_cast<std::byte*>(p) + rtmem::tlsf_allocator::usable_size(p) +
               rtmem::detail::tlsf_block::overhead;
    }
    std::unique_ptr<std::byte[]> bytes;
    rtmem::tlsf_allocator t;
};

TEST(TlsfTop, CarvesConsecutiveBlocksFromTheRemainder) {
    rtmem::testing::violation_recorder rec;
    top_heap h;
    void* prev = h.get(100);
    for (std::size_t n : {16u, 1000u, 24u, 512u, 300u, 17u}) {
        void* p = h.get(n);
        EXPECT_EQ(p, top_heap::after(prev)) << n;  // packed: each one from the top's front
        prev = p;
    }
    EXPECT_EQ(h.t.stats().live_count, 7u);
    EXPECT_EQ(rec.count(), 0u);
}

TEST(TlsfTop, SmallerFreeBlockBelowTheTopIsPreferred) {
    rtmem::testing::violation_recorder rec;
    top_heap h;
    void* a = h.get(48);
    void* guard = h.get(48);
    h.put(a, 48);             // a hole in a small class below the top's
    EXPECT_EQ(h.get(40), a);  // the hole, not the top: good fit as TLSF would choose
    void* c = h.get(48);      // the hole is gone: from the top again
    EXPECT_EQ(c, top_heap::after(guard));
    EXPECT_EQ(rec.count(), 0u);
}

TEST(TlsfTop, FreeingTheTopsNeighbourMergesItAway) {
    rtmem::testing::violation_recorder rec;
    top_heap h;
    void* a = h.get(200);
    void* b = h.get(200);
    void* c = h.get(200);
    h.put(c, 200);  // forward merge into the top: c's header is the top now
    EXPECT_EQ(h.get(200), c);
    h.put(a, 200);  // a free hole before b
    h.put(c, 200);  // c merges with the top again
    h.put(b, 200);  // both neighbours free: a, b, c and the top become one block
    EXPECT_EQ(h.get(8), a);
    EXPECT_EQ(rec.count(), 0u);
}

TEST(TlsfTop, ReallocateGrowingIntoOrShrinkingBackToTheTop) {
    rtmem::testing::violation_recorder rec;
    top_heap h;
    void* a = h.get(64);
    void* b = h.get(64);  // the top follows b
    void* grown = h.t.reallocate(b, 64, 4000);
    EXPECT_EQ(grown, b);  // grew into the top
    EXPECT_TRUE(h.t.check());
    void* c = h.get(64);
    EXPECT_EQ(c, top_heap::after(b));
    h.put(c, 64);
    void* shrunk = h.t.reallocate(b, 4000, 32);  // tail given back, merged with the top
    EXPECT_EQ(shrunk, b);
    EXPECT_TRUE(h.t.check());
    EXPECT_EQ(h.get(64), top_heap::after(b));
    h.put(a, 64);
    EXPECT_EQ(rec.count(), 0u);
}

TEST(TlsfTop, AlignedRequestsAndExactFitsTakeTheTop) {
    rtmem::testing::violation_recorder rec;
    top_heap h;
    void* a = h.get(100);
    void* big = h.get(300, 4096);  // cuts a free block off the top's front
    EXPECT_TRUE(rtmem::is_aligned(big, 4096));
    void* b = h.get(100);  // from the remainder after the aligned block or the gap
    EXPECT_NE(b, nullptr);
    // Take everything that is left, block by block, until the heap is full.
    std::vector<void*> all;
    while (void* p = h.t.allocate(1000)) {
        all.push_back(p);
        ASSERT_TRUE(h.t.check());
    }
    while (void* p = h.t.allocate(24)) {  // the last fragments, the last top included
        all.push_back(p);
        ASSERT_TRUE(h.t.check());
    }
    for (void* p : all) h.put(p, 24);
    h.put(big, 300);
    h.put(a, 100);
    h.put(b, 100);
    EXPECT_EQ(h.t.stats().live_count, 0u);
    EXPECT_EQ(rec.count(), 0u);
}

TEST(TlsfTop, MoveCarriesTheTop) {
    rtmem::testing::violation_recorder rec;
    top_heap h;
    void* a = h.get(100);
    rtmem::tlsf_allocator u = std::move(h.t);
    EXPECT_TRUE(u.check());
    void* b = u.allocate(100);
    EXPECT_EQ(b, top_heap::after(a));
    EXPECT_TRUE(u.check());
    EXPECT_EQ(h.t.allocate(16), nullptr);  // moved-from: no pool, no top
    EXPECT_TRUE(h.t.check());
    u.deallocate(a, 100);
    u.deallocate(b, 100);
    EXPECT_TRUE(u.check());
    EXPECT_EQ(rec.count(), 0u);
}

}  // namespace
