// rtmem replay: runs a trace's allocation calls (same sizes, same order) through allocators
// and measures time per site and in total, peak footprint and fragmentation.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rtmem/analyze/advise.hpp"
#include "rtmem/analyze/replay_backend.hpp"

namespace rtmem::analyze {

/// The trace compiled for replay: blocks renamed to dense slots, unknown frees dropped.
struct replay_op {
    enum kind_t : std::uint8_t { allocate, allocate_zeroed, deallocate, reallocate, frame };
    std::uint64_t size = 0;      ///< new size (allocate, reallocate); the block's size otherwise
    std::uint32_t slot = 0;      ///< block allocated (or freed)
    std::uint32_t old_slot = 0;  ///< reallocate: block resized
    std::uint32_t site = 0;      ///< the block's allocation site
    std::uint16_t thread = 0;    ///< the thread that allocated the block
    kind_t kind = allocate;
    std::uint8_t align_log2 = 0;  ///< 0: default alignment
    bool cross_thread = false;    ///< freed by another thread than the one that allocated it
};

struct replay_program {
    std::vector<replay_op> ops;
    std::uint32_t slots = 0;   ///< most blocks live at once (+1)
    std::uint32_t sites = 0;   ///< site ids are < sites
    std::uint64_t events = 0;  ///< events read from the trace
    std::uint64_t unknown_frees = 0;
    std::uint64_t peak_live_bytes = 0;  ///< requested bytes, the floor for any footprint
    std::uint64_t peak_live_op = 0;     ///< index of the operation that reached peak_live_bytes
};

[[nodiscard]] replay_program compile_replay(event_source& source, const site_map& sites);

struct replay_options {
    unsigned repetitions = 5;
    std::vector<std::string> backends;      ///< names to run; empty = every available one
    bool mixed = true;                      ///< also the mixed replay (needs advice)
    std::string baseline = "glibc";         ///< what the mixed replay uses for the other sites
    std::size_t apply_top = 20;             ///< mixed: the N advised sites ranked first (0 = all)
    std::function<void(std::size_t done, std::size_t total)> progress;  ///< after each pass
    /// Applied to every whole-program backend (and so the mixed baseline), e.g. aged_backend.
    std::function<backend_factory(backend_factory)> prepare;
};


struct site_violations {
    std::uint32_t site = 0;
    std::string allocator;
    std::uint64_t non_lifo = 0, overflow = 0, wrong_size = 0, expired = 0, cross_thread = 0,
                  reported = 0, fallbacks = 0;
    [[nodiscard]] std::uint64_t total() const noexcept {
        return non_lifo + overflow + wrong_size + expired + cross_thread + reported;
    }
};

struct backend_result {
    std::string name;
    bool available = true;
    std::string note;                         ///< why unavailable, or what was approximated
    double total_ns = 0;                      ///< median over repetitions of the time inside calls
    spread total;                             ///< total_ns with its min and max
    double wall_ns = 0;                       ///< median time of the whole replay loop
    double events_per_second = 0;             ///< replayed operations / wall time (median)
    std::vector<double> site_ns;              ///< median time inside calls, per site id
    std::vector<spread> site_spread;          ///< site_ns with its min and max, per site id
    std::uint64_t peak_footprint = 0;         ///< bytes held from the system at the sampled peak
                                              ///< (one untimed pass of its own)
    double fragmentation = 0;                 ///< peak footprint / peak live bytes - 1
    std::uint64_t failures = 0;               ///< allocations that returned nullptr
    std::vector<site_violations> violations;  ///< mixed replay: advice broken per site
    std::vector<double> repetition_ns;        ///< total_ns of each repetition
};

struct replay_report {
    std::uint64_t ops = 0, events = 0, unknown_frees = 0, peak_live_bytes = 0;
    unsigned repetitions = 0;
    std::vector<backend_result> results;
    std::vector<recommendation> advised;  ///< the advice the mixed replay applied
};

/// The replay loop's own cost (the null allocator's), subtracted from every backend's times.
struct replay_floor {
    double wall_ns = 0;
    std::vector<double> site_ns;
};

struct replay_hooks {
    const replay_floor* floor = nullptr;  ///< measured once per replay; nullptr: measured here
    std::uint64_t min_sample_period = 1U << 14;  ///< footprint: at most one periodic read per N ops
    std::function<void()> pass_done;             ///< after every pass over the program
};

/// Passes over the program that replay() makes: what `progress` counts to.
[[nodiscard]] std::size_t replay_passes(std::size_t backends, unsigned repetitions);

[[nodiscard]] replay_floor measure_replay_floor(const replay_program& program,
                                                unsigned repetitions,
                                                const replay_hooks& hooks = {});

/// Replays `program` through one backend, `repetitions` times, with medians; the footprint in
/// one more, untimed pass.
[[nodiscard]] backend_result replay_through(const replay_program& program,
                                            const backend_factory& factory, unsigned repetitions,
                                            const replay_hooks& hooks = {});

/// A site's measured saving: the baseline's median time minus the mixed replay's, with the
/// widest range their repetitions allow (min: baseline's min - mixed's max).
[[nodiscard]] spread measured_saving(const backend_result& baseline, const backend_result& mixed,
                                     std::uint32_t site);

/// The whole-program replays plus, when `advice` is given, the mixed replay.
[[nodiscard]] replay_report replay(const replay_program& program, const advice* a,
                                   const replay_options& o);

/// Ranks `a` by what the replay `r` (with its mixed replay) measured per advised site, and
/// records the whole-program figures; false (and `a` unchanged) when `r` has no mixed replay or
/// no `baseline` result.
bool rank_by_replay(advice& a, const replay_report& r, const std::string& baseline = "glibc");

[[nodiscard]] std::string format_replay_text(const replay_report& r, const site_namer& name,
                                             std::size_t top = 10);
[[nodiscard]] std::string format_replay_json(const replay_report& r, const site_namer& name);

}  // namespace rtmem::analyze
