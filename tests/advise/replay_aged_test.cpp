// Replay on an aged heap: the litter is made of the program's own sizes, a given part of it
// stays allocated through the replay, and every block is returned at the end.
#include "rtmem/analyze/replay_aged.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::mixed_trace;

/// Counts what reaches it; memory from malloc so the replay can run through it.
class counting final : public replay_backend {
  public:
    struct counts {
        std::uint64_t allocations = 0, frees = 0;
        std::int64_t live = 0;
        std::size_t footprint = 0;
    };
    explicit counting(counts& c) : c_(c) {}
    void* allocate(replay_call, std::size_t size, std::size_t, std::uint32_t& tag) noexcept override {
        ++c_.allocations;
        ++c_.live;
        c_.footprint += size;
        tag = 7;
        return std::malloc(std::max<std::size_t>(size, 1));
    }
    void deallocate(replay_call, void* p, std::size_t, std::size_t,
                    std::uint32_t tag) noexcept override {
        EXPECT_EQ(tag, 7u);
        ++c_.frees;
        --c_.live;
        std::free(p);
    }
    std::size_t footprint() noexcept override { return c_.footprint; }

  private:
    counts& c_;
};

class Aged : public ::testing::Test {
  protected:
    mixed_trace m;
    site_map sites{m.trace};
    replay_program prog = compile_replay(m.trace, sites);
};

TEST_F(Aged, LitterUsesTheProgramsSizesAndPeakLiveCount) {
    const litter_plan l = make_litter(prog, {});
    EXPECT_EQ(l.sizes.size(), prog.slots - 1);
    std::set<std::uint64_t> sizes;
    for (const auto& op : prog.ops)
        if (op.kind == replay_op::allocate || op.kind == replay_op::reallocate)
            sizes.insert(op.size);
    for (auto s : l.sizes) EXPECT_TRUE(sizes.count(s)) << s;
    EXPECT_EQ(l.free_order.size(), (l.sizes.size() + 1) / 2);  // keep 0.5, rounded
    std::set<std::uint32_t> unique(l.free_order.begin(), l.free_order.end());
    EXPECT_EQ(unique.size(), l.free_order.size());
    EXPECT_LT(*unique.rbegin(), l.sizes.size());
    // Deterministic for a seed; another seed litters differently.
    EXPECT_EQ(make_litter(prog, {}).sizes, l.sizes);
    litter_options other;
    other.seed = 2;
    EXPECT_NE(make_litter(prog, other).sizes, l.sizes);
    litter_options all_kept;
    all_kept.keep = 1.0;
    EXPECT_TRUE(make_litter(prog, all_kept).free_order.empty());
    litter_options none_kept;
    none_kept.blocks = 100;
    none_kept.keep = 0.0;
    EXPECT_EQ(make_litter(prog, none_kept).free_order.size(), 100u);
}

TEST_F(Aged, KeptBlocksStayThroughTheReplayAndAreReturnedAfter) {
    counting::counts c;
    backend_factory inner{"counting", [&c] { return std::make_unique<counting>(c); }, ""};
    litter_options o;
    o.blocks = 1000;
    o.keep = 0.3;
    auto litter = std::make_shared<const litter_plan>(make_litter(prog, o));
    const backend_factory f = aged_backend(inner, litter);
    EXPECT_EQ(f.name, "counting");
    EXPECT_NE(f.note.find("aged: 1000 blocks littered, 300 kept"), std::string::npos) << f.note;
    {
        auto b = f.make();
        EXPECT_EQ(c.allocations, 1000u);
        EXPECT_EQ(c.frees, 700u);
        EXPECT_EQ(c.live, 300);
        EXPECT_EQ(b->footprint_base(), c.footprint);  // growth is measured over the litter
        std::uint32_t tag = 0;
        void* p = b->allocate(replay_call{}, 64, 0, tag);
        EXPECT_EQ(c.live, 301);
        b->deallocate(replay_call{}, p, 64, 0, tag);
    }
    EXPECT_EQ(c.live, 0);  // the kept litter went back when the backend was destroyed
    // A whole replay through it: every operation served, the litter still there meanwhile.
    c = {};
    const backend_result r = replay_through(prog, f, 1);
    EXPECT_TRUE(r.available);
    EXPECT_EQ(r.failures, 0u);
    EXPECT_EQ(c.live, 0);
    EXPECT_GT(c.allocations, 2 * 1000u);  // two backends made (untimed and timed), each littered
}

TEST_F(Aged, EveryWholeProgramBackendReplaysAged) {
    auto litter = std::make_shared<const litter_plan>(make_litter(prog, {}));
    for (const auto& b : whole_program_backends()) {
        if (!b.make) continue;
        const backend_result r = replay_through(prog, aged_backend(b, litter), 1);
        EXPECT_TRUE(r.available) << b.name;
        EXPECT_EQ(r.failures, 0u) << b.name;
        EXPECT_NE(r.note.find("aged"), std::string::npos) << b.name;
    }
}

TEST_F(Aged, ReplayOptionsPrepareEveryBackendIncludingTheMixedBaseline) {
    replay_options o;
    o.repetitions = 1;
    o.backends = {"glibc", "tlsf"};
    auto litter = std::make_shared<const litter_plan>(make_litter(prog, {}));
    o.prepare = [litter](backend_factory b) { return aged_backend(std::move(b), litter); };
    const advice a = advise(classify(m.trace, sites));
    const replay_report r = replay(prog, &a, o);
    ASSERT_GE(r.results.size(), 3u);
    for (const auto& b : r.results) {
        if (b.name.rfind("mixed", 0) == 0) continue;
        EXPECT_NE(b.note.find("aged"), std::string::npos) << b.name;
    }
}

}  // namespace
