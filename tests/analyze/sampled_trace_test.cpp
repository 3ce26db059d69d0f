// A sampled trace through the reader and the report: the interval and the exact counts
// round-trip through the file, and every figure is weighted by the inverse sampling
// probability 1 / (1 - exp(-size / interval)), with its error.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "rtmem/analyze/classify.hpp"
#include "rtmem/analyze/diff.hpp"
#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/sample_weight.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "scratch_dir_test.hpp"
#include "trace_writer.hpp"

namespace {

using namespace rtmem::analyze;
using rtmem::testing::trace_writer;
namespace fmt = rtmem::trace_format;

class sampled_trace_test : public rtmem::testing::scratch_dir_test {};

constexpr std::uint64_t interval = 1000;

std::string write(const std::string& p, bool with_counts = true) {
    trace_writer w(p, 4242, true, 1, fmt::trace_version, interval);
    w.stack(1, {0x1100});
    w.stack(2, {0x2100});
    // Site 1: ten recorded 100-byte blocks (each stands for 1/(1-e^-0.1) = 10.508 blocks),
    // five freed. Site 2: one 50000-byte block (weight 1.0000000000000000002: itself).
    for (std::uint64_t i = 0; i < 10; ++i) w.event(0, op::malloc, 10 + i, 0x1000 + 0x100 * i, 100, 1);
    for (std::uint64_t i = 0; i < 5; ++i) w.event(0, op::free, 100 + i, 0x1000 + 0x100 * i, 0);
    w.event(0, op::malloc, 200, 0x9000, 50000, 2);
    if (with_counts) {
        fmt::call_counts c{};
        c.calls[static_cast<std::size_t>(op::malloc)] = 107;
        c.bytes[static_cast<std::size_t>(op::malloc)] = 60500;
        c.calls[static_cast<std::size_t>(op::free)] = 52;
        w.counts(c);
    }
    w.finish();
    return p;
}

TEST_F(sampled_trace_test, interval_and_exact_counts_round_trip) {
    trace_reader r(write(path("s.rtt")));
    EXPECT_EQ(r.sample_interval(), interval);
    ASSERT_NE(r.exact_counts(), nullptr);
    EXPECT_EQ(r.exact_counts()->calls[static_cast<std::size_t>(op::malloc)], 107u);
    EXPECT_EQ(r.exact_counts()->bytes[static_cast<std::size_t>(op::malloc)], 60500u);
    EXPECT_EQ(r.exact_counts()->calls[static_cast<std::size_t>(op::free)], 52u);
    EXPECT_EQ(r.event_count(), 16u);
    trace_reader without(write(path("n.rtt"), false));
    EXPECT_EQ(without.exact_counts(), nullptr);
}

TEST_F(sampled_trace_test, the_report_weights_each_block_by_its_inverse_probability) {
    trace_reader r(write(path("s.rtt")));
    report_data rep = analyze_events(r);
    const double w = 1 / (1 - std::exp(-0.1));  // 10.508
    EXPECT_NEAR(sample_weight(100, interval), w, 1e-9);
    EXPECT_EQ(rep.sample_interval, interval);
    EXPECT_TRUE(rep.exact_calls);
    EXPECT_EQ(rep.calls[static_cast<std::size_t>(op::malloc)], 107u);  // exact, not 11 events
    EXPECT_EQ(rep.exact_bytes[static_cast<std::size_t>(op::malloc)], 60500u);
    // Bytes: each 100-byte block to the nearest byte, the large block itself.
    const auto b100 = static_cast<std::uint64_t>(std::llround(100 * w));
    EXPECT_EQ(rep.bytes_allocated, 10 * b100 + 50000);
    EXPECT_EQ(rep.leaked_bytes, 5 * b100 + 50000);
    // Counts: each block 10 or 11 (stochastic rounding of 10.508), the large one 1.
    EXPECT_GE(rep.allocations, 10u * 10 + 1);
    EXPECT_LE(rep.allocations, 10u * 11 + 1);
    // Variances: sum of w (w - 1) x^2, the large block adding nothing.
    EXPECT_NEAR(rep.bytes_allocated_variance, 10 * w * (w - 1) * 100 * 100, 1e-6);
    EXPECT_NEAR(rep.leaked_bytes_variance, 5 * w * (w - 1) * 100 * 100, 1e-6);
    EXPECT_NEAR(rep.allocations_variance, 10 * w * (w - 1), 1e-9);
    EXPECT_EQ(rep.temporaries, 0u) << "not measurable on a sample";
    auto sites = top_sites(rep, site_order::bytes, 2);
    ASSERT_EQ(sites.size(), 2u);
    EXPECT_EQ(sites[0].bytes, 50000u);
    EXPECT_NEAR(sites[0].bytes_variance, 0, 1e-6);
    EXPECT_EQ(sites[1].bytes, 10 * b100);
    EXPECT_NEAR(sites[1].bytes_variance, 10 * w * (w - 1) * 100 * 100, 1e-6);
    EXPECT_NEAR(sites[1].calls_variance, 10 * w * (w - 1), 1e-9);
}

TEST_F(sampled_trace_test, advise_weights_the_blocks_and_knows_the_trace_is_sampled) {
    trace_reader r(write(path("s.rtt")));
    site_map sites(r);
    classification c = classify(r, sites);
    EXPECT_EQ(c.sample_interval, interval);
    std::uint64_t bytes = 0;
    for (const auto& p : c.sites) bytes += p.bytes;
    const auto b100 = static_cast<std::uint64_t>(std::llround(100 / (1 - std::exp(-0.1))));
    EXPECT_EQ(bytes, 10 * b100 + 50000);
}

TEST_F(sampled_trace_test, a_full_trace_is_unweighted) {
    EXPECT_EQ(sample_weight(100, 0), 1.0);
    EXPECT_EQ(weighted_count(1.0, 1, 2), 1u);
    EXPECT_EQ(weighted_bytes(1.0, 123), 123u);
}

TEST_F(sampled_trace_test, diff_labels_the_sampled_side_as_estimates) {
    trace_reader a(write(path("s.rtt")));
    trace_writer w(path("full.rtt"), 4242, true, 1, fmt::trace_version, 0);
    w.stack(1, {0x1100});
    w.event(0, op::malloc, 10, 0x1000, 100, 1);
    w.finish();
    trace_reader b(path("full.rtt"));
    const trace_diff d = diff_traces(a, b, false);
    std::ostringstream text;
    print_diff(text, d, 10);
    EXPECT_NE(text.str().find("A is a sampled trace"), std::string::npos) << text.str();
    EXPECT_EQ(text.str().find("B is a sampled trace"), std::string::npos) << text.str();
    // The note says A's allocation total is exact: it is its counts chunk's, not the estimate.
    EXPECT_NE(text.str().find("allocations 107 -> 1 "), std::string::npos) << text.str();
    const auto j = diff_json(d, 10);
    EXPECT_EQ(j["a"]["allocations"].get<std::uint64_t>(), 107u);
    EXPECT_NE(d.a.allocations, 107u) << "the estimate, to tell the two apart";
    EXPECT_TRUE(j["a"]["estimated"].get<bool>());
    EXPECT_EQ(j["a"]["sample_interval"].get<std::uint64_t>(), interval);
    const auto ci = j["a"]["bytes_allocated_interval"];
    ASSERT_EQ(ci.size(), 2u);
    EXPECT_LT(ci[0].get<double>(), j["a"]["bytes_allocated"].get<double>());
    EXPECT_GT(ci[1].get<double>(), j["a"]["bytes_allocated"].get<double>());
    EXPECT_FALSE(j["b"]["estimated"].get<bool>());
    EXPECT_FALSE(j["b"].contains("bytes_allocated_interval"));
}

}  // namespace
