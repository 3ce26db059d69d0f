#include "rtmem/containers/object_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "violation_recorder.hpp"

namespace {
using rtmem::notifier_rules;
using rtmem::pool_growth;
using rtmem::violation_kind;

// Counts constructions and the thesis's member notifiers.
struct counted {
    static inline int constructed = 0;
    static inline int destroyed = 0;
    int value = 0;
    bool active = true;
    int exits = 0;
    int enters = 0;
    counted() { ++constructed; }
    explicit counted(int v) : value(v) { ++constructed; }
    ~counted() { ++destroyed; }
    void on_exit_free_list() { active = true, ++exits; }
    void on_enter_free_list() { active = false, ++enters; }
    static void reset_counts() { constructed = destroyed = 0; }
};

struct plain {
    int value = 0;
};

// A member notifier that re-initialises from the acquire arguments.
struct spawnable {
    float x = 0;
    int spawned = 0;
    explicit spawnable(float start) : x(start) {}
    void on_exit_free_list(float start) { x = start, ++spawned; }
};

TEST(PooledPtr, IsOnePointerWide) {
    static_assert(sizeof(rtmem::pooled_ptr<counted>) == sizeof(void*));
    static_assert(!std::is_copy_constructible_v<rtmem::pooled_ptr<counted>>);
    static_assert(std::is_nothrow_move_constructible_v<rtmem::pooled_ptr<counted>>);
}

TEST(ObjectPool, ConstructsOnceAndReuses) {
    counted::reset_counts();
    {
        rtmem::object_pool<counted> pool{4};
        counted* first = nullptr;
        {
            auto p = pool.acquire();
            first = p.get();
            p->value = 42;
            EXPECT_EQ(pool.size(), 1u);
            EXPECT_EQ(p->exits, 1);  // a fresh object leaves the pool too (every exit notifies)
        }
        EXPECT_EQ(pool.size(), 0u);
        EXPECT_EQ(first->enters, 1);
        EXPECT_FALSE(first->active);
        auto again = pool.acquire();
        EXPECT_EQ(again.get(), first);  // same object back (LIFO free list)
        EXPECT_EQ(again->value, 42);    // not reconstructed: state kept
        EXPECT_EQ(again->exits, 2);     // notified again on leaving the free list
        EXPECT_TRUE(again->active);
        EXPECT_EQ(counted::constructed, 1);
        EXPECT_EQ(counted::destroyed, 0);
    }
    EXPECT_EQ(counted::destroyed, 1);  // destroyed once, with the pool
}

TEST(ObjectPool, FunctionObjectNotifiers) {
    int acquired = 0;
    int released = 0;
    auto pool = rtmem::make_object_pool<plain>(
        8, pool_growth::fixed, [&](plain& p) { ++acquired, p.value = 1; },
        [&](plain& p) { ++released, p.value = -1; });
    auto a = pool.acquire();
    plain* raw = a.get();
    a.release();  // early give-back
    EXPECT_FALSE(a);
    EXPECT_EQ(released, 1);
    EXPECT_EQ(raw->value, -1);
    EXPECT_EQ(acquired, 1);  // the fresh object's exit
    auto b = pool.acquire();
    EXPECT_EQ(acquired, 2);
    EXPECT_EQ(b->value, 1);
}

TEST(ObjectPool, RulesTurnNotifierKindsOff) {
    int calls = 0;
    auto count = [&](counted&) { ++calls; };
    rtmem::object_pool<counted, notifier_rules::function_objects, decltype(count), decltype(count)>
        functions_only{2, pool_growth::fixed, count, count};
    rtmem::object_pool<counted, notifier_rules::member_functions, decltype(count), decltype(count)>
        members_only{2, pool_growth::fixed, count, count};
    rtmem::object_pool<counted, notifier_rules::none> silent{2};
    counted* f = functions_only.acquire().get();  // released at end of statement
    counted* m = members_only.acquire().get();
    counted* s = silent.acquire().get();
    EXPECT_EQ(calls, 2);      // only functions_only called its function objects (exit, entry)
    EXPECT_EQ(f->enters, 0);  // ... and not the member
    EXPECT_EQ(m->enters, 1);
    EXPECT_EQ(m->exits, 1);
    EXPECT_EQ(f->exits, 0);
    EXPECT_EQ(s->enters, 0);
}

TEST(ObjectPool, ArgumentsConstructFreshAndReachTheExitNotifierOnReuse) {
    rtmem::object_pool<spawnable> pool{2};
    auto a = pool.acquire(1.0f);
    EXPECT_FLOAT_EQ(a->x, 1.0f);
    EXPECT_EQ(a->spawned, 1);  // constructed from the arguments, then notified with them
    a.release();
    auto b = pool.acquire(5.0f);
    EXPECT_FLOAT_EQ(b->x, 5.0f);  // reused object re-initialised from the arguments
    EXPECT_EQ(b->spawned, 2);
}

TEST(ObjectPool, PrewarmConstructsAheadIntoTheFreeList) {
    counted::reset_counts();
    rtmem::object_pool<counted> pool{16};
    EXPECT_EQ(pool.prewarm(10, 7), 10u);
    EXPECT_EQ(counted::constructed, 10);
    EXPECT_EQ(pool.constructed(), 10u);
    EXPECT_EQ(pool.size(), 0u);
    std::vector<rtmem::pooled_ptr<counted>> held;
    for (int i = 0; i < 10; ++i) held.push_back(pool.acquire());
    EXPECT_EQ(counted::constructed, 10);  // every acquire reused a prewarmed object
    EXPECT_EQ(held[0]->value, 7);
    EXPECT_EQ(held[0]->enters, 1);
    EXPECT_EQ(held[0]->exits, 1);
    EXPECT_EQ(pool.prewarm(100), 6u);  // a fixed pool stops at its capacity
}

TEST(ObjectPool, FixedPoolRunsOutGrowingPoolAddsChunksWithoutMoving) {
    rtmem::object_pool<plain> fixed{3};
    auto a = fixed.acquire(), b = fixed.acquire(), c = fixed.acquire();
    EXPECT_FALSE(fixed.acquire());
    EXPECT_EQ(fixed.capacity(), 3u);

    rtmem::object_pool<plain> growing{4, pool_growth::chunks};
    std::vector<rtmem::pooled_ptr<plain>> held;
    std::vector<plain*> addresses;
    for (int i = 0; i < 100; ++i) {
        held.push_back(growing.acquire());
        ASSERT_TRUE(held.back());
        held.back()->value = i;
        addresses.push_back(held.back().get());
    }
    EXPECT_EQ(growing.capacity(), 100u);
    EXPECT_EQ(growing.size(), 100u);
    for (int i = 0; i < 100; ++i) {  // objects never moved
        EXPECT_EQ(held[static_cast<std::size_t>(i)].get(), addresses[static_cast<std::size_t>(i)]);
        EXPECT_EQ(addresses[static_cast<std::size_t>(i)]->value, i);
    }
}

TEST(ObjectPool, IteratesLiveObjectsOnly) {
    rtmem::object_pool<plain> pool{4, pool_growth::chunks};
    std::vector<rtmem::pooled_ptr<plain>> held;
    for (int i = 0; i < 10; ++i) {
        held.push_back(pool.acquire());
        held.back()->value = i;
    }
    for (int i = 0; i < 10; i += 3) held[static_cast<std::size_t>(i)].release();
    std::multiset<int> seen;
    for (plain& p : pool) seen.insert(p.value);
    EXPECT_EQ(seen, (std::multiset<int>{1, 2, 4, 5, 7, 8}));
    int sum = 0;
    pool.for_each([&](plain& p) { sum += p.value; });
    EXPECT_EQ(sum, 27);
}

TEST(ObjectPool, HandlesDetectReuse) {
    rtmem::testing::violation_recorder rec;
    rtmem::object_pool<plain> pool{2};
    auto p = pool.acquire();
    const auto h = p.handle();
    EXPECT_TRUE(h);
    EXPECT_EQ(pool.handle_of(*p), h);
    EXPECT_EQ(pool.resolve(h), p.get());
    EXPECT_TRUE(pool.alive(h));
    p.release();
    auto q = pool.acquire();  // same slot, new owner
    EXPECT_FALSE(pool.alive(h));
    EXPECT_EQ(rec.count(), 0u);
    EXPECT_EQ(pool.resolve(h), nullptr);  // never the new owner's object
    ASSERT_EQ(rec.count(violation_kind::stale_handle), 1u);
    EXPECT_NE(rec.last().message.find("no longer refers to a live object"), std::string::npos);
    EXPECT_EQ(pool.resolve(q.handle()), q.get());
    EXPECT_EQ(pool.resolve(rtmem::pool_handle<plain>{}), nullptr);  // empty handle
}

TEST(ObjectPool, DoubleReleaseAndForeignObjectAreViolations) {
    rtmem::testing::violation_recorder rec;
    rtmem::object_pool<plain> pool{4};
    rtmem::object_pool<plain> other{4};
    plain* raw = pool.acquire().detach();
    EXPECT_EQ(pool.size(), 1u);
    pool.release(raw);
    EXPECT_EQ(pool.size(), 0u);
    pool.release(raw);  // twice
    EXPECT_EQ(rec.count(violation_kind::double_free), 1u);
    EXPECT_EQ(pool.size(), 0u);  // free list untouched: the next two acquires differ
    auto a = pool.acquire(), b = pool.acquire();
    EXPECT_NE(a.get(), b.get());

    plain stack_object;
    pool.release(&stack_object);
    plain* theirs = other.acquire().detach();
    pool.release(theirs);
    pool.release(reinterpret_cast<plain*>(reinterpret_cast<std::byte*>(a.get()) + 1));
    EXPECT_EQ(rec.count(violation_kind::foreign_pointer), 3u);
    EXPECT_EQ(other.size(), 1u);
    other.release(theirs);
    EXPECT_FALSE(pool.owns(&stack_object));
    EXPECT_TRUE(pool.owns(a.get()));
}

TEST(ObjectPool, AdoptedPointerReturnsTwiceIsReported) {
    rtmem::testing::violation_recorder rec;
    rtmem::object_pool<plain> pool{2};
    plain* raw = pool.acquire().detach();
    { auto p = rtmem::pooled_ptr<plain>::adopt(raw); }
    { auto p = rtmem::pooled_ptr<plain>::adopt(raw); }  // misuse: already back in the pool
    EXPECT_EQ(rec.count(violation_kind::double_free), 1u);
    EXPECT_EQ(pool.size(), 0u);
}

TEST(ObjectPool, MoveKeepsOutstandingPointersValid) {
    rtmem::object_pool<plain> a{4};
    auto p = a.acquire();
    rtmem::object_pool<plain> b = std::move(a);
    p->value = 3;
    p.release();  // goes back to the pool now owned by b
    EXPECT_EQ(b.size(), 0u);
    EXPECT_EQ(b.acquire()->value, 3);
}

TEST(ObjectPool, RandomAcquireReleaseKeepsCountsAndIdentity) {
    rtmem::object_pool<plain> pool{64, pool_growth::chunks};
    std::vector<rtmem::pooled_ptr<plain>> held;
    std::mt19937 rng(3);
    int next = 0;
    for (int step = 0; step < 20000; ++step) {
        if (held.empty() || rng() % 3 != 0) {
            held.push_back(pool.acquire());
            held.back()->value = next++;
        } else {
            const auto i = rng() % held.size();
            std::swap(held[i], held.back());
            held.pop_back();
        }
        ASSERT_EQ(pool.size(), held.size());
    }
    std::set<int> values;
    for (auto& p : held) values.insert(p->value);
    EXPECT_EQ(values.size(), held.size());  // no object handed to two owners
    std::size_t live = 0;
    for ([[maybe_unused]] plain& p : pool) ++live;
    EXPECT_EQ(live, held.size());
}

TEST(ObjectPool, DestroyedWithLiveObjectsIsReportedAndStaysSafe) {
    rtmem::testing::violation_recorder rec;
    rtmem::pooled_ptr<plain> survivor;
    {
        rtmem::object_pool<plain> pool{2};
        survivor = pool.acquire();
    }
    EXPECT_EQ(rec.count(violation_kind::bad_argument), 1u);
    survivor->value = 1;  // memory kept alive ...
    survivor.release();   // ... until the last object comes back, which frees it (ASan: no leak)
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(ObjectPoolDeathTest, DoubleReleaseAbortsByDefault) {
    EXPECT_DEATH(
        {
            rtmem::object_pool<plain> pool{2};
            plain* raw = pool.acquire().detach();
            pool.release(raw);
            pool.release(raw);
        },
        "object_pool: double_free violation");
}
#endif

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(ObjectPoolDeathTest, StaleHandleAbortsByDefault) {
    EXPECT_DEATH(
        {
            rtmem::object_pool<plain> pool{2};
            auto h = pool.acquire().handle();
            (void)pool.resolve(h);
        },
        "object_pool: stale_handle violation");
}
#endif

}  // namespace

namespace {
// Hands out a fixed number of blocks, then nothing.
struct limited_upstream {
    rtmem::malloc_allocator inner;
    int remaining;
    void* allocate(std::size_t n, std::size_t a) noexcept {
        return remaining-- > 0 ? inner.allocate(n, a) : nullptr;
    }
    void deallocate(void* p, std::size_t n, std::size_t a) noexcept { inner.deallocate(p, n, a); }
};

TEST(ObjectPool, GrowthStopsCleanlyWhenTheUpstreamIsExhausted) {
    limited_upstream up{{}, 3};  // core + chunk table + first chunk
    rtmem::object_pool<plain, notifier_rules::all, rtmem::no_notifier, rtmem::no_notifier,
                       limited_upstream>
        pool{2, pool_growth::chunks, up};
    auto a = pool.acquire(), b = pool.acquire();
    EXPECT_TRUE(a && b);
    EXPECT_FALSE(pool.acquire());  // no chunk to grow into: empty, not a crash
    EXPECT_EQ(pool.capacity(), 2u);
    a.release();
    EXPECT_TRUE(pool.acquire());
}

TEST(ObjectPool, FunctionNotifierReceivesAcquireArguments) {
    auto pool = rtmem::make_object_pool<counted>(
        4, pool_growth::fixed, [](counted& c, int v) { c.value = v; }, rtmem::no_notifier{});
    auto a = pool.acquire(3);  // fresh: counted(3)
    EXPECT_EQ(a->value, 3);
    a.release();
    auto b = pool.acquire(17);  // reused: the function object gets 17, the member is called too
    EXPECT_EQ(b->value, 17);
    EXPECT_EQ(b->exits, 2);  // the fresh acquire and the reuse
}
}  // namespace

namespace {
struct alignas(64) cache_line_object {
    float data[5] = {};
};

TEST(ObjectPool, OverAlignedObjectsKeepTheirAlignment) {
    rtmem::object_pool<cache_line_object> pool{3, pool_growth::chunks};
    std::vector<rtmem::pooled_ptr<cache_line_object>> held;
    for (int i = 0; i < 10; ++i) {
        held.push_back(pool.acquire());
        ASSERT_TRUE(rtmem::is_aligned(held.back().get(), 64));
    }
    EXPECT_TRUE(pool.owns(held[7].get()));
}
}  // namespace
