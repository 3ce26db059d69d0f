// rtmem tune PLAN -o TUNED [--rounds N] [--margin PCT] [--by cpu|wall] [--stdin FILE]
//                 -- PROGRAM ARGS...
// Times the plan's sites in the program against rt_heap alone and keeps only what measurably
// pays. The advisor plans some sites only for where their blocks go ([placement]), which a trace
// cannot confirm; a run can. Steps (analyze::tune_steps): the sites the trace justifies, then
// every planned site; each is timed in paired rounds against the best so far (rt_heap alone to
// begin with) and kept when it is faster by the sign test and the margin (analyze::
// judge_rounds). Sites of a step that is not faster go to the heap in TUNED, with the figures.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "count_option.hpp"
#include "plan_file.hpp"
#include "rtmem/analyze/paired_rounds.hpp"
#include "rtmem/analyze/plan.hpp"
#include "rtmem/analyze/plan_tune.hpp"
#include "rtmem/analyze/spread.hpp"
#include "timed_run.hpp"

namespace {

namespace fs = std::filesystem;
namespace analyze = rtmem::analyze;
using rtmem::cli::usage_error;

struct tune_args {
    std::string plan, out, stdin_path, by = "cpu";
    std::size_t rounds = 15;
    int exit_status = 0;     // what every run must exit with
    std::size_t repeat = 0;  // runs per measurement; 0: enough for min_time
    double min_time = 1.0;
    double margin_percent = analyze::paired_rule{}.margin * 100;
    std::vector<std::string> command;
};

// One way of running the program: `rtmem run [--plan FILE] -- PROGRAM ARGS`.
struct config {
    std::string name;
    std::string plan_file;  // empty: rt_heap alone
    std::vector<std::size_t> sites;
};

struct tuner {
    const tune_args& a;
    std::string self;
    bool warned_output = false;
    std::uint64_t reference_digest = 0;
    std::size_t runs_per_measurement = 1;

    std::vector<std::string> argv(const config& c) const {
        std::vector<std::string> v{self, "run"};
        if (!c.plan_file.empty()) v.insert(v.end(), {"--plan", c.plan_file});
        v.push_back("--");
        v.insert(v.end(), a.command.begin(), a.command.end());
        return v;
    }

    rtmem::cli::timed_result run(const config& c) const {
        auto r = rtmem::cli::run_timed(argv(c), a.stdin_path);
        const bool interrupted = r.exit_code == 128 + SIGINT || r.exit_code == 128 + SIGQUIT;
        if (interrupted && r.exit_code != a.exit_status)
            throw usage_error("interrupted: no plan written");
        if (r.exit_code != a.exit_status)
            throw usage_error(a.command[0] + " exited with " + std::to_string(r.exit_code) +
                              " under " + c.name + " (rtmem tune needs a command that exits with " +
                              std::to_string(a.exit_status) +
                              " every time it runs: "
                              "--exit-status); its stderr ended with:\n" +
                              r.stderr_tail);
        return r;
    }

    static double measure(const rtmem::cli::timed_result& r, const std::string& by) {
        return by == "wall" ? r.wall_s : r.cpu_s;
    }

    // One measurement: the program run runs_per_measurement times back to back, times summed
    // (a short program's run-to-run noise averages out; the pairing handles slow drifts).
    double time(const config& c) {
        double total = 0;
        for (std::size_t k = 0; k < runs_per_measurement; ++k) {
            const auto r = run(c);
            if (r.output_digest != reference_digest && !warned_output) {
                warned_output = true;
                std::cerr << "rtmem tune: warning: " << a.command[0] << " printed something else "
                          << "under " << c.name
                          << " than on its first run, under rt_heap alone "
                             "(a program whose output varies from run to run, or a plan that "
                             "changes what it does: compare them)\n";
            }
            total += measure(r, a.by);
        }
        return total;
    }

    // Paired rounds, which config runs first alternating, until the verdict is settled.
    analyze::paired_verdict compare(const config& base, const config& cand, std::vector<double>& tb,
                                    std::vector<double>& tc) {
        analyze::paired_rule rule;
        rule.max_rounds = a.rounds;
        rule.min_rounds = std::min<std::size_t>(rule.min_rounds, a.rounds);
        rule.margin = a.margin_percent / 100;
        for (std::size_t r = 0;; ++r) {
            if (r % 2 == 0) {
                tb.push_back(time(base));
                tc.push_back(time(cand));
            } else {
                tc.push_back(time(cand));
                tb.push_back(time(base));
            }
            const auto v = analyze::judge_rounds(tb, tc, rule);
            if (v.settled) return v;
        }
    }
};

std::string fixed(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string spread_text(const std::vector<double>& t) {
    const analyze::spread s = analyze::spread_of(t);
    return fixed(s.median, 3) + " s (" + fixed(s.min, 3) + "-" + fixed(s.max, 3) + ")";
}

std::string verdict_text(const analyze::paired_verdict& v, const std::string& base) {
    return fixed(v.median_ratio, 2) + "x " + base + " (median of " + std::to_string(v.rounds) +
           " paired rounds, faster in " + std::to_string(v.wins) +
           ", sign test p = " + fixed(v.p_value, 3) + ")";
}

int run_tune(const tune_args& a) {
    if (a.command.empty())
        throw usage_error("no program given (rtmem tune PLAN -o OUT -- PROGRAM ARGS...)");
    if (a.by != "cpu" && a.by != "wall") throw usage_error("--by " + a.by + ": cpu or wall");
    rtmem::cli::check_plan_writable("-o", a.out);
    analyze::plan p;
    try {
        p = analyze::read_plan_file(a.plan);
    } catch (const analyze::plan_error& e) {
        throw usage_error(e.what());
    }
    const auto steps = analyze::tune_steps(p);
    if (steps.empty()) {
        rtmem::cli::write_plan_file(p, "-o", a.out);
        std::cout << "rtmem tune: " << a.plan << " routes no site: nothing to time; wrote it "
                  << "unchanged to " << a.out << "\n";
        return 0;
    }
    std::error_code ec;
    tuner t{a, fs::read_symlink("/proc/self/exe", ec).string()};
    if (ec) throw usage_error("cannot find the rtmem executable: " + ec.message());
    char dir_template[] = "/tmp/rtmem-tune.XXXXXX";
    if (mkdtemp(dir_template) == nullptr) throw usage_error("cannot create a temporary directory");
    const fs::path dir(dir_template);
    struct remove_dir {
        fs::path d;
        ~remove_dir() {
            std::error_code e;
            fs::remove_all(d, e);
        }
    } cleanup{dir};

    config best{"rt_heap alone", "", {}};
    const auto first = t.run(best);  // also warms the caches
    t.reference_digest = first.output_digest;
    const double first_s = std::max(tuner::measure(first, a.by), 1e-3);
    t.runs_per_measurement =
        a.repeat != 0 ? a.repeat
                      : std::clamp<std::size_t>(
                            static_cast<std::size_t>(std::ceil(a.min_time / first_s)), 1, 50);
    if (analyze::sign_test_p(a.rounds, a.rounds) > analyze::paired_rule{}.alpha)
        std::cerr << "rtmem tune: warning: --rounds " << a.rounds << " cannot show a step "
                  << "faster (the sign test needs 5 rounds, all won, at 5%): every planned site "
                     "will be left on rt_heap\n";
    std::cout << "rtmem tune: " << a.plan << ": " << a.by << " time of " << a.command[0]
              << ", paired rounds against the best so far; a measurement is "
              << t.runs_per_measurement << " run" << (t.runs_per_measurement == 1 ? "" : "s")
              << " (the first took " << fixed(first_s, 3) << " s)\n";
    std::string kept_why, dropped_why;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        config cand{steps[i].name + " (" + std::to_string(steps[i].sites.size()) + ")",
                    (dir / ("step" + std::to_string(i) + ".plan.json")).string(), steps[i].sites};
        rtmem::cli::write_plan_file(analyze::plan_keeping(p, cand.sites, "", ""), "-o",
                                    cand.plan_file);
        std::vector<double> tb, tc;
        const auto v = t.compare(best, cand, tb, tc);
        const std::string text = verdict_text(v, best.name);
        std::cout << "  " << best.name << ": " << spread_text(tb) << "\n  " << cand.name << ": "
                  << spread_text(tc) << "  " << text << ": " << (v.faster ? "kept" : "not kept")
                  << "\n";
        if (v.faster) {
            best = cand;
            kept_why = "rtmem tune: kept, " + text;
        } else {
            dropped_why = "rtmem tune: left on rt_heap, not faster by " +
                          fixed(a.margin_percent, 0) + "% with significance: " + text;
        }
    }
    rtmem::cli::write_plan_file(analyze::plan_keeping(p, best.sites, kept_why, dropped_why), "-o",
                                a.out);
    const std::size_t routed = steps.back().sites.size();
    std::cout << "rtmem tune: wrote " << a.out << ": " << best.sites.size() << " of " << routed
              << " planned site" << (routed == 1 ? "" : "s") << " kept"
              << (best.sites.empty()
                      ? " (none measurably pays: run the program with `rtmem run` alone)"
                      : "")
              << "\n";
    return 0;
}

const bool registered = rtmem::cli::register_command(
    {"tune", "Time a plan's sites in the program and keep only those that make it faster",
     [](CLI::App& sub, std::function<int()>& run) {
         auto a = std::make_shared<tune_args>();
         sub.add_option("plan", a->plan, "Plan written by rtmem advise --plan")->required();
         sub.add_option("-o,--output", a->out, "Where to write the tuned plan")->required();
         sub.add_option("--rounds", a->rounds,
                        "At most N paired rounds per step (default 15; at least 5 unless N is "
                        "smaller; each round runs the program twice)")
             ->check(rtmem::cli::at_least(1));
         sub.add_option(
                "--margin", a->margin_percent,
                "Keep a step only if its median per-round time ratio to the best so far is at "
                "least PCT% below 1 (default 5)")
             ->check(CLI::Range(0.0, 50.0));
         sub.add_option("--by", a->by, "What to compare: cpu (user + system, default) or wall");
         sub.add_option("--stdin", a->stdin_path, "Feed FILE to the program's stdin on every run");
         sub.add_option("--repeat", a->repeat,
                        "Runs of the program per measurement, times summed (default: enough "
                        "for --min-time by the first run, at most 50)")
             ->check(rtmem::cli::at_least(1));
         sub.add_option("--min-time", a->min_time,
                        "With no --repeat: seconds a measurement should take (default 1)")
             ->check(CLI::Range(0.0, 3600.0));
         sub.add_option("--exit-status", a->exit_status,
                        "The exit status every run must have (default 0; e.g. 1 for a grep that "
                        "finds nothing)")
             ->check(CLI::Range(0, 255));
         sub.add_option("command", a->command, "Program and arguments (after --)")->required();
         run = [a] { return run_tune(*a); };
     }});

}  // namespace
