// rtmem_analyze on synthetic traces whose right answers are known by hand: the reader (merge,
// stacks, modules, bad input), the report numbers, diff, and the CLI's exit status on bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "rtmem/analyze/diff.hpp"
#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "scratch_dir_test.hpp"
#include "trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace rtmem::analyze;
using rtmem::testing::trace_writer;

class analyze_test : public rtmem::testing::scratch_dir_test {
  protected:
    // The scenario worked out in the comments of `scenario_numbers`.
    std::string write_scenario(const std::string& name, bool with_end = true) {
        std::string p = path(name);
        trace_writer w(p);
        w.module("/synthetic/lib.so", 0x1000, 0x9000, 0x1000);
        w.stack(1, {0x1100, 0x1200});
        w.stack(2, {0x2100});
        w.stack(3, {0x3100, 0x3200, 0x3300});
        w.event(0, op::malloc, 10, 0xa0, 100, 1, 0, 7);  // A
        w.event(0, op::new_scalar, 20, 0xb0, 200, 2);    // B
        w.event(0, op::free, 30, 0xa0, 0, 0, 0, 3);      // free A (lifetime 20)
        w.event(0, op::malloc, 40, 0xc0, 50, 1);         // C
        w.event(0, op::free, 45, 0xc0, 0);               // free C: a temporary
        w.event(1, op::delete_scalar, 50, 0xb0, 200);    // B freed by another thread
        w.event(1, op::new_array, 60, 0xd0, 1000, 2);    // D, leaked
        w.event(0, op::malloc, 70, 0xe0, 10, 1);         // E
        w.event(0, op::realloc, 80, 0xf0, 30, 3, 0xe0);  // E -> F, leaked
        w.event(0, op::free, 90, 0x999, 0);              // unknown pointer
        w.event(0, op::malloc, 95, 0, 1u << 30, 1);      // failed
        w.finish(rtmem::trace_format::end_reason::exit, with_end);
        return p;
    }
};

TEST_F(analyze_test, realloc_in_place_counts_only_calls_returning_their_block) {
    std::string p = path("r.rtt");
    {
        trace_writer w(p);
        w.stack(1, {0x1100});
        w.event(0, op::malloc, 10, 0xa0, 16, 1);
        w.event(0, op::realloc, 20, 0xa0, 32, 1, 0xa0);  // grown in place
        w.event(0, op::realloc, 30, 0xb0, 4096, 1, 0xa0);  // moved
        w.event(0, op::realloc, 40, 0xc0, 8, 1);          // realloc(nullptr, 8): no block given
        w.event(0, op::realloc, 50, 0xc0, 4, 1, 0xc0);    // shrunk in place
        w.finish();
    }
    trace_reader r(p);
    report_data d = analyze_events(r);
    EXPECT_EQ(d.calls[static_cast<std::size_t>(op::realloc)], 4u);
    EXPECT_EQ(d.reallocs_in_place, 2u);
    site_names names(r, nullptr);
    std::ostringstream text;
    print_text(text, describe(r), d, names, 5);
    EXPECT_NE(text.str().find("realloc in place 2 of 4"), std::string::npos) << text.str();
    EXPECT_EQ(to_json(describe(r), d, names, 5)["totals"]["reallocs_in_place"], 2u);
}

// heaptrack's definition: a block released (free, or realloc, in place or not) by its thread
// with no other allocation or release by that thread since it was allocated.
TEST_F(analyze_test, temporaries_are_blocks_released_right_after_their_allocation) {
    std::string p = path("t.rtt");
    {
        trace_writer w(p);
        w.stack(1, {0x1100});
        w.stack(2, {0x2100});
        w.event(0, op::malloc, 10, 0xa0, 16, 1);
        w.event(0, op::realloc, 20, 0xb0, 32, 1, 0xa0);  // a moved: temporary
        w.event(0, op::realloc, 30, 0xb0, 64, 1, 0xb0);  // b grown in place: temporary
        w.event(0, op::free, 40, 0xb0, 0);               // c: temporary
        w.event(0, op::malloc, 50, 0xc0, 8, 2);
        w.event(0, op::malloc, 60, 0xd0, 8, 2);
        w.event(0, op::free, 70, 0xc0, 0);  // another allocation since: not
        w.event(0, op::free, 80, 0xd0, 0);  // another release since: not
        w.event(0, op::malloc, 90, 0xe0, 8, 2);
        w.event(1, op::malloc, 95, 0xf0, 8, 2);  // another thread's allocation does not count
        w.event(0, op::free, 100, 0xe0, 0);      // temporary
        w.event(0, op::free, 110, 0x999, 0);     // unknown pointer
        w.event(1, op::free, 120, 0xf0, 0);      // temporary: an unknown free is no release
        w.finish();
    }
    trace_reader r(p);
    report_data d = analyze_events(r);
    EXPECT_EQ(d.temporaries, 5u);
    for (const auto& s : d.sites) EXPECT_EQ(s.temporaries, s.stack == 1 ? 3u : 2u) << s.stack;
}

TEST_F(analyze_test, reader_merges_threads_in_time_order_and_loads_stacks_and_modules) {
    trace_reader r(write_scenario("s.rtt"));
    EXPECT_EQ(r.program(), "/synthetic/program");
    EXPECT_EQ(r.pid(), 4242u);
    EXPECT_EQ(r.thread_count(), 2u);
    EXPECT_EQ(r.event_count(), 11u);
    EXPECT_TRUE(r.complete());
    ASSERT_EQ(r.modules().size(), 1u);
    EXPECT_EQ(r.modules()[0].path, "/synthetic/lib.so");
    ASSERT_EQ(r.stack(3).size(), 3u);
    EXPECT_EQ(r.stack(3)[2], 0x3300u);
    EXPECT_TRUE(r.stack(77).empty());
    std::vector<std::uint64_t> times;
    event e;
    while (r.next(e)) times.push_back(e.time_ns);
    EXPECT_EQ(times, (std::vector<std::uint64_t>{10, 20, 30, 40, 45, 50, 60, 70, 80, 90, 95}));
    r.rewind();
    ASSERT_TRUE(r.next(e));
    EXPECT_EQ(e.time_ns, 10u);
    EXPECT_EQ(r.last_duration_ns(), 7u);
}

TEST_F(analyze_test, scenario_numbers) {
    trace_reader r(write_scenario("s.rtt"));
    report_data d = analyze_events(r);
    EXPECT_EQ(d.events, 11u);
    EXPECT_EQ(d.allocations, 6u);    // A B C D E F
    EXPECT_EQ(d.deallocations, 4u);  // A C B E(realloc)
    EXPECT_EQ(d.bytes_allocated, 1390u);
    // live: 100 300 200 250 200 0 1000 1010 1030(F replaces E) -> peak 1030 at t=80
    EXPECT_EQ(d.peak_live_bytes, 1030u);
    EXPECT_EQ(d.peak_time_ns, 80u);
    EXPECT_EQ(d.leaked_blocks, 2u);
    EXPECT_EQ(d.leaked_bytes, 1030u);
    EXPECT_EQ(d.temporaries, 2u);  // C, and E (reallocated right after its allocation)
    EXPECT_EQ(d.cross_thread_frees, 1u);
    EXPECT_EQ(d.cross_thread_bytes, 200u);
    EXPECT_EQ(d.unknown_frees, 1u);
    EXPECT_EQ(d.failed, 1u);
    EXPECT_EQ(d.time_ns, 10u);
    EXPECT_EQ(d.calls[static_cast<std::size_t>(op::new_array)], 1u);
    EXPECT_EQ(d.calls[static_cast<std::size_t>(op::delete_scalar)], 1u);
    auto find = [&](std::uint32_t stack) {
        for (const auto& s : d.sites) {
            if (s.stack == stack) return s;
        }
        return site_stats{};
    };
    EXPECT_EQ(find(1).calls, 3u);
    EXPECT_EQ(find(1).bytes, 160u);
    EXPECT_EQ(find(1).peak_bytes, 0u);  // A, C and E were all gone at the peak
    EXPECT_EQ(find(1).time_ns, 10u);    // A's malloc (7) and its free (3)
    EXPECT_EQ(find(2).calls, 2u);
    EXPECT_EQ(find(2).peak_bytes, 1000u);
    EXPECT_EQ(find(2).live_bytes, 1000u);
    EXPECT_EQ(find(3).peak_bytes, 30u);
    EXPECT_EQ(top_sites(d, site_order::bytes, 1).at(0).stack, 2u);
    EXPECT_EQ(top_sites(d, site_order::calls, 1).at(0).stack, 1u);
    // Lifetimes: A 20, C 5, B 30, E 10 ns -> buckets <=31 (A, B), <=7 (C), <=15 (E).
    EXPECT_EQ(d.lifetimes_ns.buckets[5], 2u);
    EXPECT_EQ(d.lifetimes_ns.buckets[3], 1u);
    EXPECT_EQ(d.lifetimes_ns.buckets[4], 1u);
    ASSERT_EQ(d.threads.size(), 2u);
    EXPECT_EQ(d.threads[0].allocations, 5u);
    EXPECT_EQ(d.threads[1].allocations, 1u);
    EXPECT_EQ(d.threads[1].deallocations, 1u);
    std::uint64_t max_live = 0;
    for (const auto& p : d.timeline) max_live = std::max(max_live, p.live_bytes);
    EXPECT_EQ(max_live, 1030u);
}

TEST_F(analyze_test, text_and_json_carry_the_numbers) {
    trace_reader r(write_scenario("s.rtt"));
    report_data d = analyze_events(r);
    site_names names(r, nullptr);
    auto j = to_json(describe(r), d, names, 5);
    EXPECT_EQ(j["totals"]["peak_live_bytes"], 1030u);
    EXPECT_EQ(j["totals"]["calls"]["new[]"], 1u);
    EXPECT_EQ(j["top_sites"]["peak"][0]["peak_bytes"], 1000u);
    std::ostringstream text;
    print_text(text, describe(r), d, names, 5);
    EXPECT_NE(text.str().find("peak live 1.0 KiB (1030 B)"), std::string::npos) << text.str();
    EXPECT_NE(text.str().find("cross-thread frees 1"), std::string::npos);
}

TEST_F(analyze_test, raw_and_packed_event_chunks_read_the_same) {
    auto read = [](const std::string& p) {
        trace_reader r(p);
        std::vector<std::uint64_t> v;
        event e;
        while (r.next(e)) {
            for (std::uint64_t x : {e.time_ns, e.ptr, e.old_ptr, e.size, std::uint64_t{e.stack},
                                    std::uint64_t{e.align}, std::uint64_t(e.kind)}) {
                v.push_back(x);
            }
        }
        return v;
    };
    for (bool packed : {false, true}) {
        trace_writer w(path(packed ? "p.rtt" : "r.rtt"), 1, packed);
        w.event(0, op::malloc, 5, 0x7fff00001000, 24, 3);
        w.event(0, op::realloc, 9, 0x1000, 1u << 20, 4, 0x7fff00001000);
        w.event(0, op::free, 12, 0x1000, 0);
        w.finish();
    }
    auto raw = read(path("r.rtt"));
    EXPECT_EQ(raw.size(), 21u);
    EXPECT_EQ(raw, read(path("p.rtt")));
}

TEST_F(analyze_test, a_trace_without_end_record_is_read_up_to_its_last_chunk) {
    trace_reader r(write_scenario("killed.rtt", false));
    EXPECT_FALSE(r.complete());
    EXPECT_EQ(analyze_events(r).events, 11u);
}

TEST_F(analyze_test, diff_matches_sites_across_different_load_addresses) {
    std::string a = path("a.rtt"), b = path("b.rtt");
    {
        trace_writer w(a);
        w.module("/synthetic/lib.so", 0x1000, 0x9000, 0x1000);
        w.stack(1, {0x1100});
        w.stack(2, {0x1500});
        for (std::uint64_t i = 0; i < 10; ++i) w.event(0, op::malloc, i, 0x100 + i * 16, 8, 1);
        w.event(0, op::malloc, 20, 0x900, 64, 2);
        w.finish();
    }
    {
        trace_writer w(b);  // same program, loaded 0x40000 higher, site 1 called 5 more times
        w.module("/synthetic/lib.so", 0x41000, 0x49000, 0x41000);
        w.stack(7, {0x41100});
        w.stack(8, {0x41500});
        for (std::uint64_t i = 0; i < 15; ++i) w.event(0, op::malloc, i, 0x100 + i * 16, 8, 7);
        w.event(0, op::malloc, 20, 0x900, 64, 8);
        w.finish();
    }
    trace_reader ra(a), rb(b);
    trace_diff d = diff_traces(ra, rb, false);
    ASSERT_EQ(d.sites.size(), 1u) << "the unchanged site matches and drops out";
    EXPECT_EQ(d.sites[0].key, "lib.so+0x100");
    EXPECT_EQ(d.sites[0].calls_a, 10u);
    EXPECT_EQ(d.sites[0].calls_b, 15u);
    EXPECT_EQ(d.sites[0].bytes_b - d.sites[0].bytes_a, 40u);
}

// ---- bad input
// -----------------------------------------------------------------------------------

std::vector<char> read_all(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
void write_all(const std::string& p, const std::vector<char>& bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Opens and reads to the end; returns the error (or "" if the file read cleanly).
std::string read_error(const std::string& p, std::uint64_t* offset = nullptr) {
    try {
        trace_reader r(p);
        (void)analyze_events(r);
    } catch (const trace_error& e) {
        if (offset != nullptr) *offset = e.offset();
        EXPECT_EQ(e.file(), p);
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << "the message names the file";
        return e.what();
    }
    return "";
}

TEST_F(analyze_test, empty_missing_and_foreign_files_are_named_errors) {
    write_all(path("empty.rtt"), {});
    EXPECT_NE(read_error(path("empty.rtt")).find("empty file"), std::string::npos);
    EXPECT_NE(read_error(path("missing.rtt")).find("cannot open"), std::string::npos);
    write_all(path("text.rtt"), std::vector<char>(100, 'x'));
    EXPECT_NE(read_error(path("text.rtt")).find("not an rtmem trace"), std::string::npos);
}

TEST_F(analyze_test, wrong_version_names_the_version_field) {
    auto bytes = read_all(write_scenario("s.rtt"));
    bytes[8] = 99;
    write_all(path("v.rtt"), bytes);
    std::uint64_t off = 0;
    EXPECT_NE(read_error(path("v.rtt"), &off).find("unsupported trace version 99"),
              std::string::npos);
    EXPECT_EQ(off, 8u);
}

// Three calls on one thread: a malloc timed at 5 ns, an untimed (v1: measured 0 ns) malloc,
// a free timed at 2 ns. Returns what last_duration_ns() reports for each.
std::vector<std::uint64_t> durations_of_three_calls(const std::string& file,
                                                    std::uint32_t timing_period,
                                                    std::uint32_t version,
                                                    std::uint32_t* period_read = nullptr) {
    {
        rtmem::testing::trace_writer w(file, 4242, true, timing_period, version);
        w.stack(1, {0x1000});
        w.event(0, op::malloc, 10, 0x100, 8, 1, 0, 5);
        w.event(0, op::malloc, 20, 0x200, 8, 1, 0, 0);
        w.event(0, op::free, 30, 0x100, 0, 0, 0, 2);
        w.finish();
    }
    trace_reader r(file);
    if (period_read != nullptr) *period_read = r.timing_period();
    std::vector<std::uint64_t> durations;
    event e;
    while (r.next(e)) durations.push_back(r.last_duration_ns());
    return durations;
}

TEST_F(analyze_test, sampled_durations_are_scaled_by_the_timing_period) {
    // Version 2: one call in 16 timed. A timed call stands for 16 calls' worth of time, the
    // untimed ones for none, so a site's sum estimates its total.
    std::uint32_t period = 0;
    EXPECT_EQ(
        durations_of_three_calls(path("t.rtt"), 16, rtmem::trace_format::trace_version, &period),
        (std::vector<std::uint64_t>{80, 0, 32}));
    EXPECT_EQ(period, 16u);
    trace_reader r(path("t.rtt"));
    EXPECT_EQ(analyze_events(r).time_ns, 112u);
}

TEST_F(analyze_test, version_1_traces_timed_every_call_and_still_read) {
    std::uint32_t period = 0;
    EXPECT_EQ(durations_of_three_calls(path("v1.rtt"), 1, 1, &period),
              (std::vector<std::uint64_t>{5, 0, 2}));  // the second measured as 0 ns
    EXPECT_EQ(period, 1u);
}

TEST_F(analyze_test, calls_the_tracer_could_not_record_are_reported) {
    {
        rtmem::testing::trace_writer w(path("d.rtt"));
        w.event(0, op::malloc, 10, 0x100, 8);
        w.finish(rtmem::trace_format::end_reason::exit, true, 3);
    }
    trace_reader r(path("d.rtt"));
    EXPECT_EQ(r.dropped_events(), 3u);
    EXPECT_EQ(rtmem::analyze::describe(r).dropped, 3u);
    std::ostringstream text;
    rtmem::analyze::site_names names(r, nullptr);
    rtmem::analyze::print_text(text, rtmem::analyze::describe(r), analyze_events(r), names, 5);
    EXPECT_NE(text.str().find("3 calls were not recorded"), std::string::npos) << text.str();
}

TEST_F(analyze_test, every_truncation_is_an_error_or_a_clean_prefix) {
    auto bytes = read_all(write_scenario("s.rtt"));
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        write_all(path("t.rtt"),
                  std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(cut)));
        std::uint64_t off = 0;
        std::string err = read_error(path("t.rtt"), &off);
        if (err.empty()) {
            trace_reader r(path("t.rtt"));  // cut at a chunk boundary: readable, not complete
            EXPECT_FALSE(r.complete()) << "cut at " << cut;
        } else {
            EXPECT_LE(off, cut) << err;
        }
    }
}

TEST_F(analyze_test, corrupted_bytes_are_detected_with_the_chunk_offset) {
    auto bytes = read_all(write_scenario("s.rtt"));
    std::size_t detected = 0, flips = 0;
    for (std::size_t at = 64; at < bytes.size(); at += 7) {
        auto copy = bytes;
        copy[at] = static_cast<char>(copy[at] ^ 0x5a);
        write_all(path("c.rtt"), copy);
        std::uint64_t off = 0;
        ++flips;
        if (!read_error(path("c.rtt"), &off).empty()) {
            ++detected;
            EXPECT_LE(off, at);
        }
    }
    // Headers are checksummed and compressed payloads carry zstd checksums; only flips in
    // uncompressed metadata (program name, module path) can go unnoticed.
    EXPECT_GT(detected * 10, flips * 7) << detected << " of " << flips;
}

TEST_F(analyze_test, cli_exits_2_with_file_and_offset_on_bad_input) {
    auto bytes = read_all(write_scenario("s.rtt"));
    ASSERT_GT(bytes.size(), 9u);
    bytes.erase(bytes.end() - 9, bytes.end());
    write_all(path("cut.rtt"), bytes);
    std::string cmd = std::string(RTMEM_CLI) + " report " + path("cut.rtt") + " 2>" +
                      path("err.txt") + " >/dev/null";
    int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    auto err = read_all(path("err.txt"));
    std::string msg(err.begin(), err.end());
    EXPECT_NE(msg.find(path("cut.rtt") + ": offset "), std::string::npos) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

}  // namespace
