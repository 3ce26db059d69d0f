// The stack walk of `rtmem run --plan` (tools/malloc/plan/recognition_*), outside the preload so
// that ASan and TSan see it: a recognition table built from sites named by several frames, walked
// over a stack laid out by hand (return addresses at the distances the nodes hold, as learned
// ones would be). Built without libunwind: a distance not learned yet is then unusable, and the
// walk falls back to the site frame 0 names alone (speed, never correctness).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../../tools/malloc/plan/plan_router.hpp"
#include "../../../tools/malloc/plan/recognition_build.hpp"

namespace {

using namespace rtmem::site_plan;

constexpr std::uintptr_t frame0 = 0x401000, other0 = 0x401800;
constexpr std::uintptr_t f1 = 0x402010, f1_other = 0x402020;
constexpr std::uintptr_t f2 = 0x403030, f2_other = 0x403040, f2_third = 0x403050;

// Sites by index (their strategies are pools whose spans name them):
//   0: frame0 alone                1: frame0, f1           2: frame0, f1, f2
//   3: frame0, f1, f2_other        4: frame0, f1_other, f2_third
//   5: other0 alone (a site whose frame 0 needs no walk)
struct planned {
    site_group group;
    planned_site sites[6];
    std::vector<std::vector<std::uintptr_t>> frames{{frame0},
                                                    {frame0, f1},
                                                    {frame0, f1, f2},
                                                    {frame0, f1, f2_other},
                                                    {frame0, f1_other, f2_third},
                                                    {other0}};
    const recognition_table* table = nullptr;

    planned() {
        group.init(sites, 6);
        EXPECT_TRUE(group.reserve(std::size_t{64} << 20));
        std::vector<resolved_site> resolved;
        for (std::uint32_t i = 0; i < 6; ++i) {
            sites[i].configure(&group, i, strategy::pool, 64, 0);
            resolved.push_back({static_cast<std::uint32_t>(frames[i].size()), frames[i].data(), true});
        }
        table = build_recognition_table(resolved.data(), 6, sites);
    }
    ~planned() { group.release(); }
    planned(const planned&) = delete;
    planned& operator=(const planned&) = delete;

    const recognition_node* root() const {
        for (std::size_t j = 0; j <= table->mask; ++j)
            if (table->slots[j].ra == frame0) return &table->nodes[table->slots[j].node];
        return nullptr;
    }
    // The node of `ra` above `parent` (a node the walk learns a distance for).
    void set_delta(std::uint32_t node, std::int32_t d) const {
        const_cast<std::atomic<std::int32_t>&>(table->nodes[node].delta).store(d);
    }
    std::uint32_t id(const recognition_node* n) const { return static_cast<std::uint32_t>(n - table->nodes); }

    // A call whose frames above frame 0 are `callers`: frame 0's slot at stack[0], each caller
    // 2 words above the previous one. Returns the site that served it (-1: none, rt_heap's).
    int call(const std::vector<std::uintptr_t>& callers) {
        std::uintptr_t stack[16] = {};
        stack[0] = frame0;
        for (std::size_t k = 0; k < callers.size(); ++k) stack[2 * (k + 1)] = callers[k];
        void* p = allocate_walked(root(), 48, 0, &stack[1], table);
        if (p == nullptr) return -1;
        const int site = static_cast<int>(site_of(p));
        sites[site].deallocate(p);
        return site;
    }
    // Every distance the walk takes: 2 words.
    void learn_all() const {
        constexpr auto two_words = static_cast<std::int32_t>(2 * sizeof(std::uintptr_t));
        const recognition_node* r = root();
        set_delta(id(r), two_words);
        for (std::uintptr_t ra : {f1, f1_other}) {
            const std::uint32_t n = child_of(table, id(r), ra);
            ASSERT_NE(n, 0u);
            if (table->nodes[n].delta.load() != leaf_delta) set_delta(n, two_words);
        }
    }
};

TEST(RecognitionWalk, TheTableHoldsEveryFrame) {
    planned p;
    ASSERT_NE(p.table, nullptr);
    const recognition_node* r = p.root();
    ASSERT_NE(r, nullptr);
    const std::uint32_t n1 = child_of(p.table, p.id(r), f1);
    const std::uint32_t n1o = child_of(p.table, p.id(r), f1_other);
    ASSERT_NE(n1, 0u);
    ASSERT_NE(n1o, 0u);
    EXPECT_NE(child_of(p.table, n1, f2), 0u);
    EXPECT_NE(child_of(p.table, n1, f2_other), 0u);
    EXPECT_EQ(child_of(p.table, n1, f2_third), 0u);  // that one is above f1_other only
    EXPECT_NE(child_of(p.table, n1o, f2_third), 0u);
    EXPECT_EQ(child_of(p.table, p.id(r), f2), 0u);  // not a caller of frame 0
    // Leaves end the walk; nodes with callers above wait for their distance.
    EXPECT_EQ(p.table->nodes[child_of(p.table, n1, f2)].delta.load(), leaf_delta);
    EXPECT_EQ(p.table->nodes[n1].delta.load(), 0);
}

TEST(RecognitionWalk, TheDeepestMatchingSiteWins) {
    planned p;
    p.learn_all();
    EXPECT_EQ(p.call({f1, f2}), 2);
    EXPECT_EQ(p.call({f1, f2_other}), 3);
    EXPECT_EQ(p.call({f1_other, f2_third}), 4);
}

TEST(RecognitionWalk, AShorterSiteAnswersForCallersNoDeeperSiteNames) {
    planned p;
    p.learn_all();
    EXPECT_EQ(p.call({f1, 0x9999}), 1);         // above f1: no deeper site, so frame0+f1's
    EXPECT_EQ(p.call({0x7777, f2}), 0);         // frame 0's own site
    EXPECT_EQ(p.call({f1_other, f2}), 0);       // f1_other names no site of its own
}

TEST(RecognitionWalk, ADistanceNotLearnedFallsBackToFrameZerosSite) {
    planned p;  // no distance learned, and no unwinder to learn one: frame 0's site
    EXPECT_EQ(p.call({f1, f2}), 0);
    const recognition_node* r = p.root();
    EXPECT_LT(p.table->nodes[p.id(r)].delta.load(), 0);  // marked unusable, not retried
    EXPECT_EQ(p.call({f1, f2}), 0);                        // the same answer without learning
}

TEST(RecognitionWalk, AMisreadWordCostsSpeedNotCorrectness) {
    planned p;
    p.learn_all();
    std::uintptr_t stack[16] = {};
    stack[0] = frame0;
    stack[2] = f1;
    stack[4] = 0x5a5a5a5a;  // anything at all but f2 or f2_other: the walk stops at f1's node
    void* q = allocate_walked(p.root(), 48, 0, &stack[1], p.table);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(site_of(q), 1u);
    p.sites[1].deallocate(q);
}

TEST(RecognitionWalk, AStrategyThatDeclinesLeavesTheRequestToTheHeap) {
    planned p;
    p.learn_all();
    std::uintptr_t stack[16] = {};
    stack[0] = frame0;
    stack[2] = f1;
    stack[4] = f2;
    EXPECT_EQ(allocate_walked(p.root(), 4096, 0, &stack[1], p.table), nullptr);  // > the pool's
}

}  // namespace
