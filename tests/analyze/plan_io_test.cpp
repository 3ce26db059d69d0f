// plan.json: a plan survives a round trip, and every malformed field is rejected by name.
#include <gtest/gtest.h>

#include "rtmem/analyze/plan.hpp"

namespace rtmem::analyze {
namespace {

plan sample_plan() {
    plan p;
    p.program = "/usr/bin/python3";
    p.trace = "python3.rtt";
    p.depth = 2;
    plan_site s;
    s.id = 7;
    s.label = "PyList_New (listobject.c:160)";
    s.frames = {{"/usr/bin/python3.11", 0x4f2a10}, {"/usr/bin/python3.11", 0x51}};
    s.strategy = plan_strategy::pool;
    s.reason = "one size, high churn";
    s.block_size = 48;
    s.block_align = 16;
    s.allocations = 1000;
    s.bytes = 48000;
    s.expected_saved_ns = 12.5;
    p.sites.push_back(s);
    plan_site r = s;
    r.id = 8;
    r.strategy = plan_strategy::region;
    r.block_size = 0;
    r.block_align = 0;
    r.chunk_bytes = 65536;
    r.whole_stack = true;
    r.frame_chunks = true;
    r.placement_only = true;
    p.sites.push_back(r);
    return p;
}

TEST(PlanIo, RoundTripKeepsEveryField) {
    const plan p = sample_plan();
    const plan q = plan_from_json(plan_to_json(p));
    EXPECT_EQ(q.program, p.program);
    EXPECT_EQ(q.trace, p.trace);
    EXPECT_EQ(q.depth, 2u);
    ASSERT_EQ(q.sites.size(), 2u);
    EXPECT_EQ(q.sites[0].frames, p.sites[0].frames);
    EXPECT_EQ(q.sites[0].strategy, plan_strategy::pool);
    EXPECT_EQ(q.sites[0].block_size, 48u);
    EXPECT_EQ(q.sites[0].block_align, 16u);
    EXPECT_DOUBLE_EQ(q.sites[0].expected_saved_ns, 12.5);
    EXPECT_EQ(q.sites[1].strategy, plan_strategy::region);
    EXPECT_EQ(q.sites[1].chunk_bytes, 65536u);
    EXPECT_FALSE(q.sites[0].whole_stack);
    EXPECT_FALSE(q.sites[0].frame_chunks);
    EXPECT_TRUE(q.sites[1].whole_stack);
    EXPECT_TRUE(q.sites[1].frame_chunks);
    EXPECT_FALSE(q.sites[0].placement_only);
    EXPECT_TRUE(q.sites[1].placement_only);
    EXPECT_NE(plan_to_json(p).find("\"0x4f2a10\""), std::string::npos);
}

void expect_rejected(const std::string& text, const std::string& needle) {
    try {
        (void)plan_from_json(text);
        FAIL() << "accepted: " << text;
    } catch (const plan_error& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

TEST(PlanIo, RejectsBadInputByName) {
    expect_rejected("{not json", "not valid JSON");
    expect_rejected("[]", "top level");
    expect_rejected(R"({"format":"other","version":1,"sites":[]})", "\"format\"");
    expect_rejected(R"({"format":"rtmem-plan","version":9,"sites":[]})", "version 9");
    expect_rejected(R"({"format":"rtmem-plan","version":1})", "missing \"sites\"");
    const std::string head = R"({"format":"rtmem-plan","version":1,"sites":[)";
    const std::string frame = R"("frames":[{"module":"a.out","offset":"0x10"}])";
    expect_rejected(head + R"({"strategy":"magic",)" + frame + "}]}", "unknown \"strategy\"");
    expect_rejected(head + R"({"strategy":"pool",)" + frame + "}]}", "block_size");
    expect_rejected(head + R"({"strategy":"region",)" + frame + "}]}", "chunk_bytes");
    expect_rejected(head + R"({"strategy":"heap","frames":[]}]})", "non-empty");
    expect_rejected(head + R"({"strategy":"heap","whole_stack":1,)" + frame + "}]}",
                    "\"whole_stack\" must be true or false");
    expect_rejected(head + R"({"strategy":"heap","frames":[{"module":"a","offset":16}]}]})",
                    "hex string");
    expect_rejected(head + R"({"strategy":"heap","frames":[{"module":"a","offset":"0xzz"}]}]})",
                    "non-hex");
    expect_rejected(head + R"({"strategy":"pool","block_size":-1,)" + frame + "}]}",
                    "non-negative");
    expect_rejected(head + R"({"strategy":"pool","block_size":8,"block_align":3,)" + frame + "}]}",
                    "power of two");
}

TEST(PlanIo, MissingFileIsAClearError) {
    EXPECT_THROW((void)read_plan_file("/nonexistent/plan.json"), plan_error);
}

}  // namespace
}  // namespace rtmem::analyze
