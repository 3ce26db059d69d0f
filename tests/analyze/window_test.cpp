// Time windows: trace_reader::set_window (seeking with the end chunk's index, or decoding and
// filtering without one), analyze_window (with and without the memory live at the start),
// parse_ns and `rtmem report --from/--to`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "rtmem/analyze/report.hpp"
#include "rtmem/analyze/report_output.hpp"
#include "rtmem/analyze/trace_reader.hpp"
#include "scratch_dir_test.hpp"
#include "trace_writer.hpp"

namespace {

namespace fs = std::filesystem;
using namespace rtmem::analyze;
using rtmem::testing::trace_writer;

constexpr std::uint32_t threads = 3;
constexpr std::uint64_t steps = 30000;  // per thread: ~7 chunks of 4096 events each

class window_test : public rtmem::testing::scratch_dir_test {
  protected:
    // Three threads allocating and freeing blocks with long and short lifetimes, some freed
    // by another thread, times interleaved; `with_end` false = a killed process (no index).
    std::string write_busy(const std::string& name, bool with_end) const {
        std::string p = path(name);
        trace_writer w(p);
        w.module("/synthetic/lib.so", 0x1000, 0x9000, 0x1000);
        for (std::uint32_t s = 1; s <= 8; ++s) w.stack(s, {0x1000 + s * 0x10});
        std::mt19937_64 rng(7);
        std::vector<std::vector<std::uint64_t>> live(threads);
        std::uint64_t next_ptr = 0x10000;
        for (std::uint64_t i = 0; i < steps; ++i) {
            for (std::uint32_t t = 0; t < threads; ++t) {
                std::uint64_t time = 1000 + i * 100 + t * 7 + rng() % 5;
                auto& mine = live[(t + (i % 17 == 0 ? 1 : 0)) % threads];  // some cross-thread
                if (!mine.empty() && rng() % 2 == 0) {
                    std::size_t k = rng() % mine.size();
                    w.event(t, op::free, time, mine[k], 0);
                    mine[k] = mine.back();
                    mine.pop_back();
                } else {
                    std::uint64_t size = 16 + rng() % 4000;
                    auto stack = static_cast<std::uint32_t>(1 + rng() % 8);
                    w.event(t, i % 5 == 0 ? op::new_scalar : op::malloc, time, next_ptr, size,
                            stack);
                    live[t].push_back(next_ptr);
                    next_ptr += 4096;
                }
            }
        }
        w.finish(rtmem::trace_format::end_reason::exit, with_end);
        return p;
    }
};

struct flat_event {
    event e;
    bool operator==(const flat_event& o) const {
        return e.time_ns == o.e.time_ns && e.ptr == o.e.ptr && e.old_ptr == o.e.old_ptr &&
               e.size == o.e.size && e.thread == o.e.thread && e.stack == o.e.stack &&
               e.align == o.e.align && e.kind == o.e.kind;
    }
};

std::vector<flat_event> read_all_events(trace_reader& r) {
    std::vector<flat_event> out;
    event e;
    while (r.next(e)) out.push_back({e});
    return out;
}

std::vector<flat_event> filtered(const std::vector<flat_event>& all, time_window w) {
    std::vector<flat_event> out;
    for (const auto& f : all) {
        if (f.e.time_ns >= w.from_ns && f.e.time_ns < w.to_ns) out.push_back(f);
    }
    return out;
}

const std::vector<time_window> windows = {
    {0, ~std::uint64_t{0}},       {1500000, 1600000}, {1500003, 1500010}, {0, 1200000},
    {2900000, ~std::uint64_t{0}}, {5000000, 6000000}, {1000, 1001},       {1234567, 2345678},
};

TEST_F(window_test, indexed_window_reads_equal_a_filtered_full_read_and_skip_chunks) {
    trace_reader r(write_busy("busy.rtt", true));
    ASSERT_TRUE(r.indexed());
    auto all = read_all_events(r);
    ASSERT_EQ(all.size(), threads * steps);
    std::uint64_t chunks_full = r.chunks_decoded();
    for (time_window w : windows) {
        std::uint64_t before = r.chunks_decoded();
        r.set_window(w);
        auto got = read_all_events(r);
        EXPECT_EQ(got, filtered(all, w)) << w.from_ns << ".." << w.to_ns;
        r.rewind();  // rewinding stays in the window
        EXPECT_EQ(read_all_events(r).size(), got.size());
        if (w.to_ns - w.from_ns <= 100000) {
            // At most two chunks per thread hold a 100 us window (a chunk spans ~400 us).
            EXPECT_LE((r.chunks_decoded() - before) / 2, 2 * threads) << w.from_ns;
        }
    }
    EXPECT_EQ(chunks_full, threads * ((steps + 4095) / 4096));
}

TEST_F(window_test, windows_of_a_trace_without_index_equal_a_filtered_full_read) {
    trace_reader r(write_busy("killed.rtt", false));
    EXPECT_FALSE(r.complete());
    EXPECT_FALSE(r.indexed());
    auto all = read_all_events(r);
    ASSERT_EQ(all.size(), threads * steps);
    for (time_window w : windows) {
        r.set_window(w);
        EXPECT_EQ(read_all_events(r), filtered(all, w)) << w.from_ns << ".." << w.to_ns;
    }
}

TEST_F(window_test, indexed_and_scanned_traces_give_the_same_window_report) {
    trace_reader indexed(write_busy("a.rtt", true)), scanned(write_busy("b.rtt", false));
    for (bool live : {false, true}) {
        time_window w{1500000, 1900000};
        report_data a = analyze_window(indexed, w, live), b = analyze_window(scanned, w, live);
        EXPECT_EQ(a.events, b.events);
        EXPECT_EQ(a.peak_live_bytes, b.peak_live_bytes);
        EXPECT_EQ(a.unknown_frees, b.unknown_frees);
        EXPECT_EQ(a.leaked_bytes, b.leaked_bytes);
        EXPECT_EQ(a.live_at_start_bytes, b.live_at_start_bytes);
    }
}

// The report of a window equals the report of the filtered events (without the memory live at
// the start: to the report, blocks from before the window do not exist).
class vector_source final : public event_source {
  public:
    vector_source(std::vector<flat_event> ev, const event_source& stacks)
        : ev_(std::move(ev)), stacks_(stacks) {}
    bool next(event& e) override {
        if (pos_ == ev_.size()) return false;
        e = ev_[pos_++].e;
        return true;
    }
    void rewind() override { pos_ = 0; }
    std::span<const std::uint64_t> stack(std::uint32_t id) const override {
        return stacks_.stack(id);
    }
    std::size_t stack_count() const override { return stacks_.stack_count(); }

  private:
    std::vector<flat_event> ev_;
    std::size_t pos_ = 0;
    const event_source& stacks_;
};

TEST_F(window_test, window_report_equals_the_report_of_the_filtered_events) {
    trace_reader r(write_busy("busy.rtt", true));
    auto all = read_all_events(r);
    time_window w{1500000, 2000000};
    vector_source filtered_source(filtered(all, w), r);
    report_data expect = analyze_events(filtered_source);
    report_data got = analyze_window(r, w, false);
    EXPECT_TRUE(got.windowed);
    EXPECT_FALSE(got.live_at_start_included);
    EXPECT_EQ(got.events, expect.events);
    EXPECT_EQ(got.calls, expect.calls);
    EXPECT_EQ(got.allocations, expect.allocations);
    EXPECT_EQ(got.deallocations, expect.deallocations);
    EXPECT_EQ(got.bytes_allocated, expect.bytes_allocated);
    EXPECT_EQ(got.peak_live_bytes, expect.peak_live_bytes);
    EXPECT_EQ(got.peak_time_ns, expect.peak_time_ns);
    EXPECT_EQ(got.leaked_bytes, expect.leaked_bytes);
    EXPECT_EQ(got.unknown_frees, expect.unknown_frees);
    EXPECT_GT(got.unknown_frees, 0u) << "blocks from before the window are freed in it";
    EXPECT_EQ(got.cross_thread_frees, expect.cross_thread_frees);
    EXPECT_EQ(got.temporaries, expect.temporaries);
    EXPECT_EQ(got.sizes.buckets, expect.sizes.buckets);
    EXPECT_EQ(got.lifetimes_ns.buckets, expect.lifetimes_ns.buckets);
    ASSERT_EQ(got.sites.size(), expect.sites.size());
    for (std::size_t i = 0; i < got.sites.size(); ++i) {
        EXPECT_EQ(got.sites[i].calls, expect.sites[i].calls);
        EXPECT_EQ(got.sites[i].peak_bytes, expect.sites[i].peak_bytes);
    }
    // The timeline covers the window, not the time before it.
    ASSERT_FALSE(got.timeline.empty());
    EXPECT_EQ(got.timeline.front().time_ns, w.from_ns);
    EXPECT_LT(got.timeline.back().time_ns, w.to_ns);
    EXPECT_GE(got.timeline.size(), 100u);
}

// With the memory live at the start, the peak is that of the whole program within the window:
// checked against a replay of every event that tracks live bytes.
TEST_F(window_test, live_at_start_gives_the_programs_real_peak_within_the_window) {
    trace_reader r(write_busy("busy.rtt", true));
    auto all = read_all_events(r);
    for (time_window w : {time_window{1500000, 2000000}, time_window{2500000, 2500500}}) {
        std::map<std::uint64_t, std::uint64_t> live;
        std::uint64_t bytes = 0, peak = 0, at_start = 0, blocks_at_start = 0, frees = 0;
        bool opened = false;
        for (const auto& f : all) {
            if (f.e.time_ns >= w.to_ns) break;
            if (!opened && f.e.time_ns >= w.from_ns) {
                opened = true;
                at_start = peak = bytes;
                blocks_at_start = live.size();
            }
            if (is_allocation(f.e.kind)) {
                live[f.e.ptr] = f.e.size;
                bytes += f.e.size;
            } else if (is_deallocation(f.e.kind)) {
                bytes -= live.at(f.e.ptr);
                live.erase(f.e.ptr);
                frees += opened ? 1 : 0;
            }
            if (opened) peak = std::max(peak, bytes);
        }
        report_data got = analyze_window(r, w, true);
        EXPECT_TRUE(got.live_at_start_included);
        EXPECT_EQ(got.live_at_start_bytes, at_start);
        EXPECT_EQ(got.live_at_start_blocks, blocks_at_start);
        EXPECT_EQ(got.peak_live_bytes, peak);
        EXPECT_EQ(got.deallocations, frees);
        EXPECT_EQ(got.unknown_frees, 0u);
        EXPECT_EQ(got.leaked_bytes, bytes);  // live when the window closes
        std::uint64_t site_peaks = 0;
        for (const auto& s : got.sites) site_peaks += s.peak_bytes;
        EXPECT_EQ(site_peaks, peak);
    }
}

// A thread's chunks written out of time order (e.g. by the writer thread and by the owner):
// the index puts them back in order, so the events merge as if written in order.
TEST_F(window_test, index_restores_the_time_order_of_chunks_written_out_of_order) {
    namespace fmt = rtmem::trace_format;
    std::string in_order = path("ordered.rtt");
    {
        trace_writer w(in_order);
        for (std::uint64_t i = 0; i < 3 * 4096; ++i) {
            w.event(0, op::malloc, 10 * i, 0x1000 + 16 * i, 8);
            if (i % 3 == 0) w.event(1, op::malloc, 10 * i + 5, 0x900000 + 16 * i, 8);
        }
        w.finish();
    }
    std::ifstream in(in_order, std::ios::binary);
    std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    // Find the chunks, then write thread 0's events chunks in reverse order.
    struct span {
        std::size_t at, size;
        fmt::chunk_header h;
    };
    std::vector<span> chunks;
    for (std::size_t off = sizeof(fmt::file_header); off < bytes.size();) {
        span c{off, 0, {}};
        std::memcpy(&c.h, bytes.data() + off, sizeof c.h);
        c.size = sizeof c.h + c.h.stored_size;
        chunks.push_back(c);
        off += c.size;
    }
    std::vector<std::size_t> t0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        if (chunks[i].h.type == fmt::chunk_type::events && chunks[i].h.thread == 0) t0.push_back(i);
    }
    ASSERT_EQ(t0.size(), 3u);
    std::vector<std::size_t> order(chunks.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t k = 0; k < t0.size(); ++k) order[t0[k]] = t0[t0.size() - 1 - k];
    std::vector<char> out(bytes.begin(), bytes.begin() + sizeof(fmt::file_header));
    std::map<std::uint64_t, std::uint64_t> moved;  // old offset -> new offset
    for (std::size_t i : order) {
        moved[chunks[i].at] = out.size();
        out.insert(out.end(), bytes.begin() + static_cast<long>(chunks[i].at),
                   bytes.begin() + static_cast<long>(chunks[i].at + chunks[i].size));
    }
    const span& end = chunks.back();
    ASSERT_EQ(end.h.type, fmt::chunk_type::end);
    std::size_t entries = moved[end.at] + sizeof end.h + sizeof(fmt::end_record);
    for (std::uint32_t k = 0; k < end.h.count; ++k) {
        fmt::index_entry e{};
        std::memcpy(&e, out.data() + entries + k * sizeof e, sizeof e);
        e.offset = moved.at(e.offset);
        std::memcpy(out.data() + entries + k * sizeof e, &e, sizeof e);
    }
    std::string shuffled = path("shuffled.rtt");
    std::ofstream(shuffled, std::ios::binary).write(out.data(), static_cast<long>(out.size()));

    trace_reader a(in_order), b(shuffled);
    EXPECT_TRUE(b.indexed());
    auto expect = read_all_events(a);
    EXPECT_EQ(read_all_events(b), expect);
    time_window w{20000, 90000};
    b.set_window(w);
    EXPECT_EQ(read_all_events(b), filtered(expect, w));
}

TEST(parse_ns, accepts_ns_and_unit_suffixes) {
    EXPECT_EQ(parse_ns("0"), 0u);
    EXPECT_EQ(parse_ns("1500000"), 1500000u);
    EXPECT_EQ(parse_ns("20ns"), 20u);
    EXPECT_EQ(parse_ns("30us"), 30000u);
    EXPECT_EQ(parse_ns("200ms"), 200000000u);
    EXPECT_EQ(parse_ns("1.5s"), 1500000000u);
    EXPECT_EQ(parse_ns(" 2.25 ms "), 2250000u);
    EXPECT_EQ(parse_ns(".5us"), 500u);
    EXPECT_EQ(parse_ns("1.000000000s"), 1000000000u);
    EXPECT_EQ(parse_ns("18446744073709551615"), ~std::uint64_t{0});
}

TEST(parse_ns, rejects_what_is_not_a_whole_number_of_ns) {
    for (const char* bad : {"", " ", "s", "ms", ".", "-3", "+3", "1.5", "1.5x", "1e9", "3 sec",
                            "1,5s", "0.0000000001s", "18446744073709551616", "18446744073709552s",
                            "2h", "1..2ms", "1.2.3s"}) {
        EXPECT_FALSE(parse_ns(bad).has_value()) << '"' << bad << '"';
    }
}

int run(const std::string& cmd) {
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
std::string slurp(const std::string& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(window_test, cli_reports_a_window_and_exits_2_on_bad_times) {
    std::string trace = write_busy("busy.rtt", true);
    std::string cli = std::string(RTMEM_CLI) + " report " + trace + " --no-symbols";
    ASSERT_EQ(run(cli + " --from 1.5ms --to 2ms --json >" + path("w.json")), 0);
    std::string json = slurp(path("w.json"));
    EXPECT_NE(json.find("\"from_ns\": 1500000"), std::string::npos) << json.substr(0, 400);
    EXPECT_NE(json.find("\"to_ns\": 2000000"), std::string::npos);
    EXPECT_NE(json.find("\"live_at_start_included\": false"), std::string::npos);
    ASSERT_EQ(run(cli + " --from 1.5ms --to 2ms >" + path("span.txt")), 0);
    {
        // The span is the window's, not the time since the start of recording.
        trace_reader r(trace);
        r.set_window({1500000, 2000000});
        auto got = analyze_events(r);
        ASSERT_GT(got.duration_ns, 1500000u);
        std::string label = "over " + rtmem::analyze::human_ns(got.duration_ns - 1500000) +
                            " since the window opened";
        std::string text = slurp(path("span.txt"));
        EXPECT_NE(text.find(label), std::string::npos) << label << "\n" << text.substr(0, 600);
    }
    ASSERT_EQ(run(cli + " --from 1500us --live-at-start >" + path("w.txt")), 0);
    std::string text = slurp(path("w.txt"));
    EXPECT_NE(text.find("window 1500.0 us to the end; live when it opened: "), std::string::npos)
        << text.substr(0, 600);
    EXPECT_NE(text.find("live at window end"), std::string::npos);
    ASSERT_EQ(run(cli + " --to 2ms --html " + path("w.html") + " 2>/dev/null"), 0);
    std::string html = slurp(path("w.html"));
    EXPECT_NE(html.find("<td>time window</td><td>window 0 ns to 2000.0 us; counts only blocks"),
              std::string::npos);
    EXPECT_NE(html.find("<td>live at window end</td>"), std::string::npos);
    struct bad_case {
        const char* args;
        const char* message;
    };
    for (bad_case c : {bad_case{"--from 1.5x", "--from 1.5x: not a time"},
                       bad_case{"--to=-3ms", "--to -3ms: not a time"},
                       bad_case{"--from 2ms --to 1ms", "--from 2ms is not before --to 1ms"},
                       bad_case{"--live-at-start", "--live-at-start needs --from or --to"}}) {
        EXPECT_EQ(run(cli + " " + c.args + " >/dev/null 2>" + path("err.txt")), 2) << c.args;
        std::string err = slurp(path("err.txt"));
        EXPECT_NE(err.find(std::string("rtmem: error: ") + c.message), std::string::npos) << err;
    }
}

}  // namespace
