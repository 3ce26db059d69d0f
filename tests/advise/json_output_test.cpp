// `rtmem advise --json` and `rtmem replay --json` parsed back: every field equals the in-memory
// structure it was written from (names, types and values), so the JSON cannot drift from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "rtmem/analyze/replay.hpp"
#include "synthetic_trace.hpp"

namespace {

using namespace rtmem::analyze;
using json = nlohmann::json;
using rtmem::testing::mixed_trace;

/// A namer whose names need escaping: quotes, a backslash, a newline and invalid UTF-8.
std::string awkward_name(std::uint32_t site) {
    return "f\"" + std::to_string(site) + "\\\n\xff";
}

/// The keys of `j`, to check that no field is missing and none is unexpected.
std::set<std::string> keys(const json& j) {
    std::set<std::string> out;
    for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
    return out;
}

void expect_spread(const json& j, const spread& s) {
    EXPECT_DOUBLE_EQ(j.at("median").get<double>(), s.median);
    EXPECT_DOUBLE_EQ(j.at("min").get<double>(), s.min);
    EXPECT_DOUBLE_EQ(j.at("max").get<double>(), s.max);
}

void expect_site(const json& s, const recommendation& r, const site_profile& p) {
    EXPECT_EQ(s.at("site").get<std::uint32_t>(), r.site);
    EXPECT_EQ(s.at("name").get<std::string>(), "f\"" + std::to_string(r.site) + "\\\n\xEF\xBF\xBD");
    EXPECT_EQ(s.at("class").get<std::string>(), to_string(r.cls));
    EXPECT_EQ(s.at("allocator").get<std::string>(), r.allocator);
    EXPECT_EQ(s.at("config").get<std::string>(), r.config);
    EXPECT_EQ(s.at("capacity_bytes").get<std::uint64_t>(), r.capacity_bytes);
    EXPECT_EQ(s.at("capacity_blocks").get<std::uint64_t>(), r.capacity_blocks);
    EXPECT_EQ(s.at("block_size").get<std::uint64_t>(), r.block_size);
    EXPECT_EQ(s.at("frames").get<std::uint32_t>(), r.frames);
    EXPECT_EQ(s.at("calls").get<std::uint64_t>(), r.calls);
    EXPECT_EQ(s.at("calls_saved").get<std::uint64_t>(), r.calls_saved);
    EXPECT_EQ(s.at("frees_removed").get<std::uint64_t>(), r.frees_removed);
    EXPECT_DOUBLE_EQ(s.at("baseline_ns").get<double>(), r.baseline_ns);
    EXPECT_DOUBLE_EQ(s.at("advised_ns").get<double>(), r.advised_ns);
    EXPECT_EQ(s.contains("measured_saved_ns"), r.measured);
    if (r.measured) expect_spread(s.at("measured_saved_ns"), r.measured_saved_ns);
    EXPECT_EQ(s.at("evidence").get<std::string>(), r.evidence);
    EXPECT_EQ(s.at("sketch").get<std::string>(), r.sketch);
    EXPECT_EQ(s.at("shared_across_threads").get<bool>(), p.shared_across_threads());
    const json& q = s.at("profile");
    EXPECT_EQ(keys(q).size(), 21u);
    EXPECT_EQ(q.at("allocations").get<std::uint64_t>(), p.allocations);
    EXPECT_EQ(q.at("frees").get<std::uint64_t>(), p.frees);
    EXPECT_EQ(q.at("reallocs").get<std::uint64_t>(), p.reallocs);
    EXPECT_EQ(q.at("bytes").get<std::uint64_t>(), p.bytes);
    EXPECT_EQ(q.at("min_size").get<std::uint64_t>(), p.min_size);
    EXPECT_EQ(q.at("max_size").get<std::uint64_t>(), p.max_size);
    EXPECT_EQ(q.at("max_live_count").get<std::uint64_t>(), p.max_live_count);
    EXPECT_EQ(q.at("max_live_bytes").get<std::uint64_t>(), p.max_live_bytes);
    EXPECT_EQ(q.at("lifo_frees").get<std::uint64_t>(), p.lifo_frees);
    EXPECT_EQ(q.at("bulk_frees").get<std::uint64_t>(), p.bulk_frees);
    EXPECT_EQ(q.at("bulk_runs").get<std::uint64_t>(), p.bulk_runs);
    EXPECT_EQ(q.at("drains").get<std::uint64_t>(), p.drains);
    EXPECT_EQ(q.at("bump_peak").get<std::uint64_t>(), p.bump_peak);
    EXPECT_EQ(q.at("linear_bad").get<bool>(), p.linear_bad);
    EXPECT_EQ(q.at("linear_satisfactory").get<bool>(), p.linear_satisfactory);
    EXPECT_DOUBLE_EQ(q.at("period_ns").get<double>(), p.period_ns);
    EXPECT_EQ(q.at("frame_fit").get<std::uint64_t>(), p.frame_fit);
    EXPECT_EQ(q.at("frame_peak_bytes").get<std::uint64_t>(), p.frame_peak_bytes);
    EXPECT_EQ(q.at("live_at_end").get<std::uint64_t>(), p.live_at_end);
    EXPECT_EQ(q.at("cross_thread_frees").get<std::uint64_t>(), p.cross_thread_frees);
    EXPECT_EQ(q.at("multi_thread").get<bool>(), p.multi_thread);
}

void expect_advice(const json& j, const advice& a) {
    const auto& c = a.result;
    std::set<std::string> want = {"events",      "allocations", "frees",
                                  "frames",      "duration_ns", "unknown_frees",
                                  "sample_interval",
                                  "recorded_ns", "estimated_ns", "estimated_saved_ns",
                                  "ranking",     "thresholds",  "sites"};
    if (a.measured) want.insert("measurement");
    EXPECT_EQ(keys(j), want);
    EXPECT_EQ(j.at("events").get<std::uint64_t>(), c.events);
    EXPECT_EQ(j.at("allocations").get<std::uint64_t>(), c.allocations);
    EXPECT_EQ(j.at("frees").get<std::uint64_t>(), c.frees);
    EXPECT_EQ(j.at("frames").get<std::uint64_t>(), c.frames);
    EXPECT_EQ(j.at("duration_ns").get<std::uint64_t>(), c.duration_ns);
    EXPECT_EQ(j.at("unknown_frees").get<std::uint64_t>(), c.unknown_frees);
    EXPECT_EQ(j.at("sample_interval").get<std::uint64_t>(), c.sample_interval);
    EXPECT_EQ(j.at("recorded_ns").get<std::uint64_t>(), c.recorded_ns);
    EXPECT_DOUBLE_EQ(j.at("estimated_ns").get<double>(), a.baseline_ns);
    EXPECT_DOUBLE_EQ(j.at("estimated_saved_ns").get<double>(), a.saved_ns);
    EXPECT_EQ(j.at("ranking").get<std::string>(), a.measured ? "replay" : "model estimate");
    if (a.measured) {
        const json& m = j.at("measurement");
        EXPECT_EQ(m.at("baseline").get<std::string>(), a.measurement.baseline);
        EXPECT_EQ(m.at("repetitions").get<unsigned>(), a.measurement.repetitions);
        EXPECT_EQ(m.at("applied").get<std::size_t>(), a.measurement.applied);
        expect_spread(m.at("baseline_ns"), a.measurement.baseline_ns);
        expect_spread(m.at("dispatch_ns"), a.measurement.dispatch_ns);
        expect_spread(m.at("advised_ns"), a.measurement.advised_ns);
    }
    // Every threshold, by the names --set takes, with its value.
    const json& t = j.at("thresholds");
    const auto names = threshold_names();
    EXPECT_EQ(keys(t).size(), names.size());
    for (auto n : names) {
        ASSERT_TRUE(t.contains(std::string(n))) << n;
        thresholds probe = c.limits;
        EXPECT_TRUE(set_threshold(probe, n, t.at(std::string(n)).get<double>())) << n;
        EXPECT_EQ(std::memcmp(&probe, &c.limits, sizeof probe), 0) << n << " differs";
    }
    const json& sites = j.at("sites");
    ASSERT_EQ(sites.size(), a.ranked.size());
    for (std::size_t i = 0; i < a.ranked.size(); ++i) {
        const recommendation& r = a.ranked[i];
        const site_profile* p = nullptr;
        for (const auto& q : c.sites) {
            if (q.site == r.site) p = &q;
        }
        ASSERT_NE(p, nullptr);
        expect_site(sites[i], r, *p);
    }
}

TEST(AdviseJson, EveryFieldMatchesTheAdvice) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const advice a = advise(classify(m.trace, sites));
    const json j = json::parse(format_json(a, awkward_name));
    expect_advice(j, a);
}

replay_report small_replay(mixed_trace& m, const site_map& sites, const advice& a) {
    const auto prog = compile_replay(m.trace, sites);
    replay_options o;
    o.repetitions = 3;
    o.backends = {"glibc", "tlsf"};
    o.apply_top = 0;
    return replay(prog, &a, o);
}

TEST(AdviseJson, MeasuredAdviceCarriesTheReplaysFigures) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    advice a = advise(classify(m.trace, sites));
    const replay_report r = small_replay(m, sites, a);
    ASSERT_TRUE(rank_by_replay(a, r, "glibc"));
    ASSERT_TRUE(a.measured);
    EXPECT_EQ(a.measurement.applied, r.advised.size());
    // Replayed sites first, by measured saving, largest first.
    bool past_measured = false;
    for (std::size_t i = 0; i < a.ranked.size(); ++i) {
        if (!a.ranked[i].measured) past_measured = true;
        EXPECT_FALSE(past_measured && a.ranked[i].measured) << "measured site after unmeasured";
        if (i > 0 && a.ranked[i].measured) {
            EXPECT_GE(a.ranked[i - 1].measured_saved_ns.median, a.ranked[i].measured_saved_ns.median);
        }
        if (a.ranked[i].measured) {
            EXPECT_LE(a.ranked[i].measured_saved_ns.min, a.ranked[i].measured_saved_ns.median);
            EXPECT_GE(a.ranked[i].measured_saved_ns.max, a.ranked[i].measured_saved_ns.median);
        }
    }
    const json j = json::parse(format_json(a, awkward_name));
    expect_advice(j, a);
    const std::string text = format_text(a, awkward_name);
    EXPECT_NE(text.find("saved (measured)"), std::string::npos);
    EXPECT_NE(text.find("Measured by replay (glibc, median of 3"), std::string::npos);
}

TEST(AdviseJson, UnmeasuredAdviceIsLabelledAModelEstimate) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const advice a = advise(classify(m.trace, sites));
    const std::string text = format_text(a, awkward_name);
    EXPECT_NE(text.find("saved (model)"), std::string::npos);
    EXPECT_NE(text.find("Savings below are model estimates"), std::string::npos);
    EXPECT_NE(format_html(a, awkward_name).find("saved (model estimate)"), std::string::npos);
}

TEST(ReplayJson, EveryFieldMatchesTheReport) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const advice a = advise(classify(m.trace, sites));
    const replay_report r = small_replay(m, sites, a);
    const json j = json::parse(format_replay_json(r, awkward_name));
    EXPECT_EQ(keys(j), (std::set<std::string>{"ops", "events", "unknown_frees", "peak_live_bytes",
                                              "repetitions", "backends", "baseline",
                                              "advised_saved"}));
    EXPECT_EQ(j.at("ops").get<std::uint64_t>(), r.ops);
    EXPECT_EQ(j.at("events").get<std::uint64_t>(), r.events);
    EXPECT_EQ(j.at("unknown_frees").get<std::uint64_t>(), r.unknown_frees);
    EXPECT_EQ(j.at("peak_live_bytes").get<std::uint64_t>(), r.peak_live_bytes);
    EXPECT_EQ(j.at("repetitions").get<unsigned>(), r.repetitions);
    const json& backends = j.at("backends");
    ASSERT_EQ(backends.size(), r.results.size());
    ASSERT_GE(r.results.size(), 4u);  // glibc, tlsf, the dispatch alone, the mixed replay
    for (std::size_t i = 0; i < r.results.size(); ++i) {
        const backend_result& b = r.results[i];
        const json& o = backends[i];
        EXPECT_EQ(keys(o), (std::set<std::string>{"name", "available", "note", "total_ns",
                                                  "total_min_ns", "total_max_ns", "wall_ns",
                                                  "ops_per_second", "peak_footprint",
                                                  "fragmentation", "failures", "repetition_ns",
                                                  "sites", "violations"}));
        EXPECT_EQ(o.at("name").get<std::string>(), b.name);
        EXPECT_EQ(o.at("available").get<bool>(), b.available);
        EXPECT_EQ(o.at("note").get<std::string>(), b.note);
        EXPECT_DOUBLE_EQ(o.at("total_ns").get<double>(), b.total_ns);
        EXPECT_DOUBLE_EQ(o.at("total_min_ns").get<double>(), b.total.min);
        EXPECT_DOUBLE_EQ(o.at("total_max_ns").get<double>(), b.total.max);
        EXPECT_LE(b.total.min, b.total_ns);
        EXPECT_GE(b.total.max, b.total_ns);
        EXPECT_DOUBLE_EQ(o.at("wall_ns").get<double>(), b.wall_ns);
        EXPECT_DOUBLE_EQ(o.at("ops_per_second").get<double>(), b.events_per_second);
        EXPECT_EQ(o.at("peak_footprint").get<std::uint64_t>(), b.peak_footprint);
        EXPECT_DOUBLE_EQ(o.at("fragmentation").get<double>(), b.fragmentation);
        EXPECT_EQ(o.at("failures").get<std::uint64_t>(), b.failures);
        EXPECT_EQ(o.at("repetition_ns").get<std::vector<double>>(), b.repetition_ns);
        const json& s = o.at("sites");
        ASSERT_EQ(s.size(), r.advised.size());
        for (std::size_t k = 0; k < r.advised.size(); ++k) {
            const std::uint32_t site = r.advised[k].site;
            EXPECT_EQ(s[k].at("site").get<std::uint32_t>(), site);
            EXPECT_DOUBLE_EQ(s[k].at("ns").get<double>(), b.site_ns[site]);
            EXPECT_DOUBLE_EQ(s[k].at("min_ns").get<double>(), b.site_spread[site].min);
            EXPECT_DOUBLE_EQ(s[k].at("max_ns").get<double>(), b.site_spread[site].max);
        }
        const json& v = o.at("violations");
        ASSERT_EQ(v.size(), b.violations.size());
        for (std::size_t k = 0; k < b.violations.size(); ++k) {
            const site_violations& w = b.violations[k];
            EXPECT_EQ(v[k].at("site").get<std::uint32_t>(), w.site);
            EXPECT_EQ(v[k].at("non_lifo").get<std::uint64_t>(), w.non_lifo);
            EXPECT_EQ(v[k].at("overflow").get<std::uint64_t>(), w.overflow);
            EXPECT_EQ(v[k].at("wrong_size").get<std::uint64_t>(), w.wrong_size);
            EXPECT_EQ(v[k].at("expired").get<std::uint64_t>(), w.expired);
            EXPECT_EQ(v[k].at("cross_thread").get<std::uint64_t>(), w.cross_thread);
            EXPECT_EQ(v[k].at("reported").get<std::uint64_t>(), w.reported);
            EXPECT_EQ(v[k].at("fallbacks").get<std::uint64_t>(), w.fallbacks);
        }
    }
    EXPECT_EQ(j.at("baseline").get<std::string>(), "glibc");
    const json& saved = j.at("advised_saved");
    ASSERT_EQ(saved.size(), r.advised.size());
    for (std::size_t k = 0; k < r.advised.size(); ++k) {
        const recommendation& rec = r.advised[k];
        EXPECT_EQ(saved[k].at("site").get<std::uint32_t>(), rec.site);
        EXPECT_EQ(saved[k].at("allocator").get<std::string>(), rec.allocator);
        expect_spread(saved[k].at("saved_ns"),
                      measured_saving(r.results.front(), r.results.back(), rec.site));
        EXPECT_DOUBLE_EQ(saved[k].at("model_saved_ns").get<double>(), rec.saved_ns());
    }
}

TEST(ReplaySpread, MedianLiesInsideTheRangeOfTheRepetitions) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const auto prog = compile_replay(m.trace, sites);
    const auto all = whole_program_backends();
    const auto* glibc = find_backend(all, "glibc");
    ASSERT_NE(glibc, nullptr);
    const auto r = replay_through(prog, *glibc, 4);
    ASSERT_EQ(r.repetition_ns.size(), 4u);
    EXPECT_EQ(r.total.min, *std::min_element(r.repetition_ns.begin(), r.repetition_ns.end()));
    EXPECT_EQ(r.total.max, *std::max_element(r.repetition_ns.begin(), r.repetition_ns.end()));
    EXPECT_DOUBLE_EQ(r.total.median, r.total_ns);
    ASSERT_EQ(r.site_spread.size(), r.site_ns.size());
    for (std::size_t s = 0; s < r.site_ns.size(); ++s) {
        EXPECT_LE(r.site_spread[s].min, r.site_ns[s]);
        EXPECT_GE(r.site_spread[s].max, r.site_ns[s]);
    }
    EXPECT_GT(r.peak_footprint, 0u);  // read in the footprint pass
}

TEST(ReplayProgress, CountsEveryPassUpToTheAnnouncedTotal) {
    mixed_trace m(1, 100);
    site_map sites(m.trace);
    const advice a = advise(classify(m.trace, sites));
    const auto prog = compile_replay(m.trace, sites);
    replay_options o;
    o.repetitions = 2;
    o.backends = {"glibc", "tlsf"};
    std::size_t calls = 0, last_done = 0, announced = 0;
    o.progress = [&](std::size_t done, std::size_t total) {
        ++calls;
        EXPECT_EQ(done, last_done + 1);
        last_done = done;
        announced = total;
    };
    (void)replay(prog, &a, o);
    // The floor (2 passes per repetition), then per backend (glibc, tlsf, dispatch, mixed) one
    // footprint pass and two per repetition.
    EXPECT_EQ(announced, replay_passes(4, 2));
    EXPECT_EQ(announced, 2u * 2 + 4 * (1 + 2 * 2));
    EXPECT_EQ(calls, announced);
}

}  // namespace
