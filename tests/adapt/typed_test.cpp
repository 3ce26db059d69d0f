#include "rtmem/adapt/typed.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "test_allocators.hpp"
#include "violation_recorder.hpp"

namespace {
using rtmem::testing::counting_allocator;

// Records construction and destruction order.
struct probe {
    static inline std::vector<int> log;
    static inline int throw_at = -1;
    int id;
    std::string name;
    explicit probe(int i, std::string n = "probe") : id(i), name(std::move(n)) {
        if (i == throw_at) throw std::runtime_error("constructor failed");
        log.push_back(i);
    }
    probe(const probe&) = delete;
    ~probe() { log.push_back(-id - 1000); }
};

struct counter {
    static inline int next = 0;
    int value;
    counter() : value(next++) {
        if (value == probe::throw_at) throw std::runtime_error("element failed");
    }
    ~counter() { probe::log.push_back(value); }
};

class Typed : public ::testing::Test {
  protected:
    void SetUp() override {
        probe::log.clear();
        probe::throw_at = -1;
        counter::next = 0;
    }
    void TearDown() override {
        EXPECT_EQ(a.live_blocks(), 0u);
        EXPECT_EQ(a.mismatched_frees, 0u);
        EXPECT_EQ(a.bad_frees, 0u);
    }
    counting_allocator a;
};

TEST_F(Typed, MakeConstructsFromArgumentsAndDestroyFrees) {
    probe* p = rtmem::make<probe>(a, 7, std::string("rock"));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->id, 7);
    EXPECT_EQ(p->name, "rock");
    EXPECT_EQ(a.live_bytes, sizeof(probe));
    rtmem::destroy(a, p);
    EXPECT_EQ(probe::log, (std::vector<int>{7, -1007}));
    rtmem::destroy(a, static_cast<probe*>(nullptr));
}

TEST_F(Typed, MakeFreesTheMemoryWhenTheConstructorThrows) {
    probe::throw_at = 3;
    EXPECT_THROW((void)rtmem::make<probe>(a, 3), std::runtime_error);
    EXPECT_EQ(a.allocations, 1u);
    EXPECT_EQ(a.live_blocks(), 0u);
}

TEST_F(Typed, ExhaustionThrowsBadAlloc) {
    a.set_limit(8);
    EXPECT_THROW((void)rtmem::make<probe>(a, 1), std::bad_alloc);
    EXPECT_THROW((void)rtmem::make_array<int>(a, 100), std::bad_alloc);
    EXPECT_THROW((void)rtmem::make_unique<probe>(a, 1), std::bad_alloc);
    EXPECT_THROW((void)rtmem::allocate_shared<probe>(a, 1), std::bad_alloc);
    EXPECT_TRUE(probe::log.empty()) << "nothing was constructed";
}

TEST_F(Typed, MakeArrayConstructsInOrderBehindACountAndDestroysInReverse) {
    std::span<counter> arr = rtmem::make_array<counter>(a, 5);
    ASSERT_EQ(arr.size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(arr[i].value, static_cast<int>(i));
    // One block: the count header plus the elements, nothing else (no new[] cookie).
    EXPECT_EQ(a.allocations, 1u);
    EXPECT_EQ(a.live_bytes, rtmem::detail::array_header<counter> + 5 * sizeof(counter));
    rtmem::destroy_array(a, arr);
    EXPECT_EQ(probe::log, (std::vector<int>{4, 3, 2, 1, 0}));
}

TEST_F(Typed, MakeArrayCopiesTheSameArgumentsIntoEveryElement) {
    auto names = rtmem::make_array<std::string>(a, 3, std::size_t{4}, 'x');
    for (const auto& s : names) EXPECT_EQ(s, "xxxx");
    rtmem::destroy_array(a, names.data());  // the pointer form reads the count
}

TEST_F(Typed, MakeArrayUndoesPartialConstruction) {
    probe::throw_at = 3;  // the fourth element throws
    EXPECT_THROW((void)rtmem::make_array<counter>(a, 10), std::runtime_error);
    EXPECT_EQ(probe::log, (std::vector<int>{2, 1, 0})) << "built elements destroyed in reverse";
    EXPECT_EQ(a.live_blocks(), 0u);
}

TEST_F(Typed, MakeArrayRejectsOverflowingCounts) {
    EXPECT_THROW((void)rtmem::make_array<std::uint64_t>(a, static_cast<std::size_t>(-1) / 4),
                 std::bad_array_new_length);
    EXPECT_THROW((void)rtmem::make_array<char>(a, static_cast<std::size_t>(-1) - 2),
                 std::bad_array_new_length)
        << "the count header must not wrap around either";
    EXPECT_EQ(a.allocations, 0u);
}

TEST_F(Typed, MakeArrayOfZeroAndOveralignedElements) {
    auto empty = rtmem::make_array<int>(a, 0);
    EXPECT_EQ(empty.size(), 0u);
    EXPECT_NE(empty.data(), nullptr);
    rtmem::destroy_array(a, empty);

    struct alignas(64) line {
        int x = 5;
    };
    auto lines = rtmem::make_array<line>(a, 3);
    for (auto& l : lines) {
        EXPECT_TRUE(rtmem::is_aligned(&l, 64));
        EXPECT_EQ(l.x, 5);
    }
    rtmem::destroy_array(a, lines);
}

TEST_F(Typed, DestroyArrayWithTheWrongSpanIsASizeMismatch) {
    rtmem::testing::violation_recorder rec;
    auto arr = rtmem::make_array<int>(a, 8, 1);
    rtmem::destroy_array(a, arr.first(4));
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::size_mismatch);
    EXPECT_EQ(a.live_blocks(), 1u) << "nothing freed";
    rtmem::destroy_array(a, arr);
}

TEST_F(Typed, MakeUniqueHasAOnePointerDeleterAndFreesThroughTheAllocator) {
    static_assert(sizeof(rtmem::unique_ptr<probe, counting_allocator>) == 2 * sizeof(void*));
    {
        auto p = rtmem::make_unique<probe>(a, 11);
        EXPECT_EQ(p->id, 11);
        EXPECT_EQ(a.live_blocks(), 1u);
        auto q = std::move(p);
        EXPECT_EQ(&q.get_deleter().underlying(), &a);
    }
    EXPECT_EQ(probe::log, (std::vector<int>{11, -1011}));
}

TEST_F(Typed, AllocateSharedPutsObjectAndControlBlockInOneAllocation) {
    std::shared_ptr<probe> p = rtmem::allocate_shared<probe>(a, 21);
    EXPECT_EQ(a.allocations, 1u);
    EXPECT_GT(a.live_bytes, sizeof(probe)) << "the control block is in the same block";
    std::weak_ptr<probe> w = p;
    auto copy = p;
    p.reset();
    EXPECT_EQ(a.live_blocks(), 1u);
    copy.reset();
    EXPECT_EQ(probe::log, (std::vector<int>{21, -1021}));
    EXPECT_TRUE(w.expired());
    EXPECT_EQ(a.live_blocks(), 1u) << "a weak_ptr keeps the control block";
    w.reset();
}
}  // namespace
