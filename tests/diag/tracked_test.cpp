#include "rtmem/diag/tracked.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "conformance.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "violation_recorder.hpp"

namespace {
using tracked_malloc = rtmem::tracked<rtmem::malloc_allocator>;

static_assert(rtmem::allocator<tracked_malloc>);
static_assert(rtmem::stats_allocator<tracked_malloc>);

TEST(Tracked, PassesConformance) {
    rtmem::malloc_allocator up;
    rtmem::testing::conformance_options o;
    o.max_size = 1024;
    o.max_align = 256;
    o.expect_no_exhaustion = true;
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        tracked_malloc t{up};
        o.seed = seed;
        const auto r = rtmem::testing::run_conformance(t, o);
        EXPECT_GT(r.allocations, o.operations / 4);
        EXPECT_EQ(t.stats().live_count, 0u);
        EXPECT_EQ(t.stats(rtmem::tag{}).allocations, r.allocations);
        EXPECT_EQ(t.stats(rtmem::tag{}).deallocations, r.frees);
    }
}

TEST(Tracked, CountsPerTagWithScopesAndExplicitTags) {
    rtmem::malloc_allocator up;
    tracked_malloc t{up};
    const rtmem::tag textures{"render/textures"}, meshes{"render/meshes"}, render{"render"};
    void* a;
    void* b;
    void* c;
    {
        rtmem::tag_scope scope{textures};
        a = t.allocate(1000);
        b = t.allocate(500);
    }
    c = t.allocate(300, 16, meshes);
    void* untagged = t.allocate(7);

    EXPECT_EQ(t.stats(textures).allocations, 2u);
    EXPECT_EQ(t.stats(textures).live_bytes, 1500u);
    EXPECT_EQ(t.stats(meshes).live_bytes, 300u);
    EXPECT_EQ(t.stats(render).live_bytes, 1800u) << "parents include their children";
    EXPECT_EQ(t.stats(render).self_live_bytes, 0u);
    EXPECT_EQ(t.stats(render).allocations, 0u);
    EXPECT_EQ(t.stats(rtmem::tag{}).live_bytes, 1807u) << "the root counts everything";

    t.deallocate(a, 1000);
    EXPECT_EQ(t.stats(textures).live_bytes, 500u);
    EXPECT_EQ(t.stats(textures).peak_bytes, 1500u);
    EXPECT_EQ(t.stats(textures).deallocations, 1u);
    t.deallocate(b, 500);
    t.deallocate(c, 300, 16);
    t.deallocate(untagged, 7);
    EXPECT_EQ(t.stats(render).live_bytes, 0u);
    EXPECT_EQ(t.stats(render).peak_bytes, 1800u);
    EXPECT_EQ(t.stats().live_count, 0u);
    EXPECT_EQ(t.stats().used, 0u);
    EXPECT_EQ(t.stats().total_count, 4u);
}

TEST(Tracked, BudgetsCallTheCallbackWhichMayDeny) {
    rtmem::malloc_allocator up;
    tracked_malloc t{up};
    const rtmem::tag audio{"audio"}, music{"audio/music"};
    t.set_budget(audio, 1000);
    std::vector<rtmem::budget_event> events;
    rtmem::budget_action answer = rtmem::budget_action::deny;
    t.set_budget_callback([&](const rtmem::budget_event& e) {
        events.push_back(e);
        return answer;
    });
    void* p = t.allocate(800, 8, music);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(events.empty());
    const int line = __LINE__ + 1;
    EXPECT_EQ(t.allocate(300, 8, music), nullptr) << "denied: 1100 > 1000 in the parent";
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].tag, audio);
    EXPECT_EQ(events[0].requested_in, music);
    EXPECT_EQ(events[0].budget, 1000u);
    EXPECT_EQ(events[0].live_bytes, 1100u);
    EXPECT_EQ(events[0].request, 300u);
    EXPECT_EQ(events[0].where.line(), static_cast<unsigned>(line));
    EXPECT_EQ(t.stats(audio).live_bytes, 800u) << "a denied allocation is rolled back";
    EXPECT_EQ(t.stats(music).self_live_bytes, 800u);
    EXPECT_EQ(t.stats(music).peak_bytes, 800u) << "a denied request never counts in a peak";
    EXPECT_EQ(t.stats(audio).peak_bytes, 800u);

    answer = rtmem::budget_action::allow;
    void* q = t.allocate(300, 8, music);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(events.size(), 2u);
    EXPECT_EQ(t.stats(audio).live_bytes, 1100u);
    t.deallocate(q, 300, 8);
    t.deallocate(p, 800, 8);
}

TEST(Tracked, WithoutACallbackABudgetOverrunIsAViolation) {
    rtmem::testing::violation_recorder rec;
    rtmem::malloc_allocator up;
    tracked_malloc t{up};
    const rtmem::tag ui{"ui"};
    t.set_budget(ui, 64);
    EXPECT_EQ(t.allocate(100, 8, ui), nullptr);
    ASSERT_EQ(rec.count(), 1u);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::budget_exceeded);
    EXPECT_NE(rec.last().message.find("\"ui\""), std::string::npos) << rec.last().message;
    EXPECT_EQ(t.stats(ui).live_bytes, 0u);
    EXPECT_EQ(t.stats(ui).peak_bytes, 0u);
}

struct refusing_upstream {
    static constexpr std::string_view name = "refusing";
    void* allocate(std::size_t, std::size_t) noexcept { return nullptr; }
    void deallocate(void*, std::size_t, std::size_t) noexcept {}
};

TEST(Tracked, AnUpstreamFailureNeverCountsInAPeak) {
    refusing_upstream up;
    rtmem::tracked<refusing_upstream> t{up};
    const rtmem::tag io{"io"};
    EXPECT_EQ(t.allocate(100, 8, io), nullptr);
    EXPECT_EQ(t.stats(io).live_bytes, 0u);
    EXPECT_EQ(t.stats(io).peak_bytes, 0u);
}

TEST(Tracked, ReportAsTableAndJson) {
    rtmem::malloc_allocator up;
    tracked_malloc t{up};
    const rtmem::tag tex{"report/textures"}, q{"report/quote\"d"};
    t.set_budget(tex, 1 << 20);
    void* p = t.allocate(4096, 64, tex);
    void* r = t.allocate(10, 8, q);
    const std::string table = t.report();
    EXPECT_NE(table.find("textures"), std::string::npos) << table;
    EXPECT_NE(table.find("4096"), std::string::npos) << table;
    EXPECT_NE(table.find("1048576"), std::string::npos) << table;
    EXPECT_LT(table.find("report "), table.find("  textures")) << "children under parents\n"
                                                               << table;
    const std::string json = t.report_json();
    EXPECT_NE(json.find("{\"tag\":\"report/textures\",\"allocations\":1,\"deallocations\":0,"
                        "\"live_bytes\":4096,\"peak_bytes\":4096,\"self_live_bytes\":4096,"
                        "\"budget\":1048576}"),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"report/quote\\\"d\""), std::string::npos) << "escaped: " << json;
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.back(), '}');
    EXPECT_NE(json.find("\"live_blocks\":2"), std::string::npos) << json;
    t.deallocate(p, 4096, 64);
    t.deallocate(r, 10, 8);
}

// A test upstream that never gives memory back to the heap, so leaked blocks are not heap leaks.
class bump {
  public:
    static constexpr std::string_view name = "bump";
    void* allocate(std::size_t size, std::size_t align) noexcept {
        const std::size_t at = rtmem::align_up(used_, align);
        if (at + size > buffer_.size()) return nullptr;
        used_ = at + size;
        return buffer_.data() + at;
    }
    void deallocate(void*, std::size_t, std::size_t) noexcept {}

  private:
    alignas(64) std::array<std::byte, 8192> buffer_{};
    std::size_t used_ = 0;
};

TEST(Tracked, LeakReportListsSizeTagAndCallSite) {
    bump up;
    std::string report;
    int line = 0;
    {
        rtmem::tracked<bump> t{up};
        t.set_leak_sink([&](std::string_view text) { report = text; });
        void* freed = t.allocate(10, 8);
        {
            rtmem::tag_scope scope{rtmem::tag{"leaks/here"}};
            line = __LINE__ + 1;
            (void)t.allocate(123, 8);
        }
        t.deallocate(freed, 10, 8);
        EXPECT_EQ(t.live_blocks().size(), 1u);
        EXPECT_EQ(t.live_blocks()[0].size, 123u);
    }
    EXPECT_NE(report.find("1 live block (123 bytes)"), std::string::npos) << report;
    EXPECT_NE(report.find("123 bytes at"), std::string::npos) << report;
    EXPECT_NE(report.find("[leaks/here]"), std::string::npos) << report;
    EXPECT_NE(report.find("tracked_test.cpp:" + std::to_string(line)), std::string::npos) << report;
#if defined(__cpp_lib_source_location)
    EXPECT_NE(report.find("LeakReportListsSizeTagAndCallSite"), std::string::npos) << report;
#else  // rtmem::source_location's __builtin_FUNCTION gives the bare name, not the test's class
    EXPECT_NE(report.find("TestBody"), std::string::npos) << report;
#endif
}

TEST(Tracked, NoLeakReportWhenEverythingWasFreed) {
    rtmem::malloc_allocator up;
    bool called = false;
    {
        tracked_malloc t{up};
        t.set_leak_sink([&](std::string_view) { called = true; });
        t.deallocate(t.allocate(5, 1), 5, 1);
        EXPECT_EQ(t.leak_report(), "");
    }
    EXPECT_FALSE(called);
}

TEST(Tracked, MisuseIsReportedAndIgnored) {
    rtmem::testing::violation_recorder rec;
    rtmem::malloc_allocator up;
    tracked_malloc t{up};
    void* p = t.allocate(64, 16);
    t.deallocate(p, 32, 16);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::size_mismatch);
    EXPECT_EQ(t.stats().live_count, 1u) << "not freed";
    alignas(16) std::array<std::byte, 256> foreign{};
    t.deallocate(foreign.data() + 128, 8, 16);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::foreign_pointer);
    EXPECT_EQ(t.allocate(8, 3), nullptr);
    EXPECT_EQ(rec.last().kind, rtmem::violation_kind::bad_alignment);
    t.deallocate(p, 64, 16);
    EXPECT_EQ(t.stats().live_count, 0u);
    EXPECT_EQ(rec.count(), 3u);
}
}  // namespace
