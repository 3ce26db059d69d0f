// The containers take any rtmem allocator as their upstream; here they run inside a TLSF heap
// over a caller buffer and must give every byte back.
#include <gtest/gtest.h>

#include <vector>

#include "rtmem/alloc/tlsf.hpp"
#include "rtmem/containers/handle_heap.hpp"
#include "rtmem/containers/object_pool.hpp"
#include "rtmem/containers/soa_vector.hpp"

namespace {

template <template <class> class F>
struct body {
    F<double> mass;
    F<float> x;
    F<int> id;
};

struct widget {
    int value = 0;
};

TEST(ContainerUpstreams, AllThreeRunInsideTlsfAndReturnEverything) {
    alignas(64) static std::byte buffer[1 << 20];
    rtmem::tlsf_allocator tlsf{std::span<std::byte>(buffer)};
    {
        rtmem::soa_vector<body, rtmem::tlsf_allocator> bodies{tlsf};
        for (int i = 0; i < 5000; ++i) bodies.emplace_back(1.0 * i, 0.5f, i);
        EXPECT_EQ(bodies[4999].id, 4999);
        EXPECT_TRUE(rtmem::is_aligned(bodies.column<1>().data(), 64));

        rtmem::object_pool<widget, rtmem::notifier_rules::all, rtmem::no_notifier,
                           rtmem::no_notifier, rtmem::tlsf_allocator>
            widgets{16, rtmem::pool_growth::chunks, tlsf};
        std::vector<rtmem::pooled_ptr<widget>> held;
        for (int i = 0; i < 100; ++i) held.push_back(widgets.acquire());
        EXPECT_EQ(widgets.capacity(), 112u);

        rtmem::handle_heap<rtmem::tlsf_allocator> heap{64 * 1024, 32, tlsf};
        rtmem::handle h = heap.allocate(1000, 256);
        EXPECT_TRUE(rtmem::is_aligned(heap.resolve(h), 256));
        EXPECT_GT(tlsf.stats().used, 0u);
        EXPECT_TRUE(tlsf.check());
    }
    EXPECT_EQ(tlsf.stats().used, 0u);
    EXPECT_EQ(tlsf.stats().live_count, 0u);
    EXPECT_TRUE(tlsf.check());
}

}  // namespace
