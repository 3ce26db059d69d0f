// This file defines the global operator new/delete for the whole rtmem_adapt_tests binary
// (routed to malloc unless a test installs a route), so the routing is exercised by every test
// of the binary, not only these.
#define RTMEM_DEFINE_GLOBAL_NEW
#include "rtmem/adapt/global_new.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "rtmem/diag/tracked.hpp"
#include "rtmem/sync/locked.hpp"
#include "test_allocators.hpp"

namespace {
using routed_type = rtmem::tracked<rtmem::locked<rtmem::malloc_allocator, rtmem::spin_mutex>>;

// Lives for the whole program: blocks allocated through a route are freed through it later.
routed_type& routed() {
    static auto* upstream = new rtmem::locked<rtmem::malloc_allocator, rtmem::spin_mutex>();
    static auto* t = new routed_type(*upstream);
    return *t;
}
const rtmem::global_route& route() {
    static const rtmem::global_route r = rtmem::route_to(routed());
    return r;
}

class route_scope {
  public:
    explicit route_scope(const rtmem::global_route& r) { rtmem::set_global_route(&r); }
    ~route_scope() { rtmem::set_global_route(nullptr); }
};

// Keeps the compiler from eliding a new/delete pair (allowed for new-expressions).
template <class T>
void escape(T* p) {
    asm volatile("" : : "g"(p) : "memory");
}

TEST(GlobalNew, RoutedNewIsChargedToTheCurrentTag) {
    const rtmem::tag tag{"test/global_new"};
    const auto before = routed().stats(tag);
    rtmem::tag_stats during;
    int* early = new int(1);  // before routing: malloc
    escape(early);
    {
        // No gtest assertion in here: its messages would be allocated in the tag too.
        route_scope scope{route()};
        rtmem::tag_scope ts{tag};
        auto* x = new int(42);
        auto* arr = new double[100];
        auto* s = new std::string(200, 'q');
        escape(x);
        escape(arr);
        escape(s);
        during = routed().stats(tag);
        delete x;
        delete[] arr;
        delete s;
        delete early;  // allocated through malloc's route, freed there
    }
    const auto after = routed().stats(tag);
    EXPECT_EQ(during.allocations - before.allocations, 4u) << "int, array, string and its buffer";
    EXPECT_GE(during.live_bytes - before.live_bytes,
              sizeof(int) + 100 * sizeof(double) + sizeof(std::string) + 201);
    EXPECT_EQ(after.deallocations - before.deallocations, 4u);
    EXPECT_EQ(after.live_bytes, before.live_bytes);
}

TEST(GlobalNew, BlocksOutliveTheRouteSwitch) {
    std::vector<int>* v = nullptr;
    const auto before = routed().stats();
    {
        route_scope scope{route()};
        v = new std::vector<int>(1000, 7);
    }
    EXPECT_EQ(routed().stats().live_count, before.live_count + 2);
    delete v;  // after the switch back: still freed through the tracked route
    EXPECT_EQ(routed().stats().live_count, before.live_count);
}

TEST(GlobalNew, AlignedNewIsAligned) {
    struct alignas(256) page_aligned {
        char c[256];
    };
    route_scope scope{route()};
    auto* p = new page_aligned;
    EXPECT_TRUE(rtmem::is_aligned(p, 256));
    delete p;
    auto* q = new page_aligned[3];
    EXPECT_TRUE(rtmem::is_aligned(q, 256));
    delete[] q;
}

TEST(GlobalNew, ExhaustedRouteThrowsOrReturnsNullForNothrow) {
    static rtmem::testing::counting_allocator small{64};
    static const rtmem::global_route tiny = rtmem::route_to(small);
    route_scope scope{tiny};
    void* p = ::operator new(1000, std::nothrow);
    EXPECT_EQ(p, nullptr);
    bool threw = false;
    try {
        (void)::operator new(1000);
    } catch (const std::bad_alloc&) {
        threw = true;
    }
    rtmem::set_global_route(nullptr);
    EXPECT_TRUE(threw);
}

#if GTEST_HAS_DEATH_TEST  // forks a child: not on WebAssembly
TEST(GlobalNew, DeletingAForeignPointerIsAViolation) {
    rtmem::set_violation_handler([](const rtmem::violation& v) {
        if (v.kind == rtmem::violation_kind::foreign_pointer) std::_Exit(3);
    });
    alignas(64) static std::byte not_from_new[64] = {};
    void* volatile foreign = not_from_new + 32;  // hidden from the compiler's own check
    EXPECT_EXIT(::operator delete(foreign), ::testing::ExitedWithCode(3), "");
    rtmem::set_violation_handler(nullptr);
}
#endif
}  // namespace
