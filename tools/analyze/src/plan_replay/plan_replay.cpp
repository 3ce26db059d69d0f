// The plan's strategies as a replay backend: planned blocks in a span arena (the preload's
// classes), everything else and every realloc'd planned block on the general backend.
#include "rtmem/analyze/plan_replay.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "site_strategies.hpp"

namespace rtmem::analyze {

namespace {

namespace sp = rtmem::site_plan;

constexpr std::size_t arena_bytes = std::size_t{4} << 30;  // as librtmem-malloc

sp::strategy strategy_of(plan_strategy s) {
    return s == plan_strategy::pool ? sp::strategy::pool : sp::strategy::region;
}

struct plan_counts {
    std::uint64_t served = 0, declined = 0;
};

class plan_backend final : public replay_backend {
  public:
    plan_backend(const plan& p, const plan_routing& routing,
                 std::unique_ptr<replay_backend> general, plan_counts* counts)
        : general_(std::move(general)), counts_(counts),
          sites_(p.sites.size()) {
        group_.init(sites_.data(), static_cast<std::uint32_t>(sites_.size()));
        if (!group_.reserve(arena_bytes)) {
            group_.release();
            throw std::runtime_error("cannot reserve the span arena");
        }
        for (std::size_t i = 0; i < p.sites.size(); ++i) {
            const plan_site& s = p.sites[i];
            if (s.strategy == plan_strategy::heap) continue;
            sites_[i].configure(&group_, static_cast<std::uint32_t>(i), strategy_of(s.strategy),
                                s.strategy == plan_strategy::pool ? s.block_size : s.chunk_bytes,
                                s.max_request);
            planned_.push_back(i);
        }
        // One lookup per call: the planned site of each replayed site, or null.
        std::vector<bool> planned(p.sites.size(), false);
        for (std::size_t i : planned_) planned[i] = true;
        site_of_.assign(routing.plan_site_of.size(), nullptr);
        for (std::size_t s = 0; s < site_of_.size(); ++s) {
            const int ps = routing.plan_site_of[s];
            if (ps >= 0 && planned[static_cast<std::size_t>(ps)])
                site_of_[s] = &sites_[static_cast<std::size_t>(ps)];
        }
    }
    ~plan_backend() override {
        if (counts_ != nullptr) {
            *counts_ = {};
            for (std::size_t i : planned_) {
                const sp::site_counters c = sites_[i].counters();
                counts_->served += c.served;
                counts_->declined += c.declined;
            }
        }
        group_.release();
    }
    plan_backend(const plan_backend&) = delete;
    plan_backend& operator=(const plan_backend&) = delete;

    void* allocate(replay_call c, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        if (sp::planned_site* site = c.site < site_of_.size() ? site_of_[c.site] : nullptr) {
            if (void* p = site->allocate(size, align)) {
                tag = 0;
                return p;
            }
        }
        return general_->allocate(c, size, align, tag);
    }
    void deallocate(replay_call c, void* p, std::size_t size, std::size_t align,
                    std::uint32_t tag) noexcept override {
        if (group_.arena().owns(p)) return sites_[sp::site_of(p)].deallocate(p);
        general_->deallocate(c, p, size, align, tag);
    }
    // As librtmem-malloc: a planned block moves to the general heap; a general block stays.
    void* reallocate(replay_call from, replay_call to, void* p, std::size_t old_size,
                     std::size_t size, std::size_t align, std::uint32_t& tag) noexcept override {
        if (p == nullptr || !group_.arena().owns(p))
            return general_->reallocate(from, to, p, old_size, size, align, tag);
        void* q = general_->allocate(to, size, align, tag);
        if (q == nullptr) return nullptr;
        std::memcpy(q, p, std::min(old_size, size));
        sites_[sp::site_of(p)].deallocate(p);
        return q;
    }
    void next_frame() noexcept override { general_->next_frame(); }
    std::size_t footprint() noexcept override {
        return general_->footprint() + group_.arena().spans_used() * sp::span_bytes;
    }
    std::size_t footprint_base() noexcept override { return general_->footprint_base(); }

  private:
    std::unique_ptr<replay_backend> general_;
    plan_counts* counts_;
    sp::site_group group_;
    std::vector<sp::planned_site> sites_;
    std::vector<std::size_t> planned_;
    std::vector<sp::planned_site*> site_of_;
};

const module* module_named(const std::vector<module>& modules, const std::string& path) {
    for (const auto& m : modules)
        if (m.path == path) return &m;
    return nullptr;
}

}  // namespace

plan_routing route_plan(const plan& p, const trace_reader& trace, const site_map& sites) {
    // Each plan site's frames as absolute addresses of this trace (unresolvable: skipped).
    std::vector<std::vector<std::uint64_t>> absolute(p.sites.size());
    for (std::size_t i = 0; i < p.sites.size(); ++i) {
        for (const auto& f : p.sites[i].frames) {
            const module* m = module_named(trace.modules(), f.module);
            if (m == nullptr) {
                absolute[i].clear();
                break;
            }
            absolute[i].push_back(m->bias + f.offset);
        }
    }
    plan_routing r;
    r.plan_site_of.assign(sites.size(), -1);
    std::vector<bool> used(p.sites.size(), false);
    for (std::uint32_t s = 1; s < sites.size(); ++s) {
        const auto frames = sites.frames(s);
        std::size_t best_depth = 0;
        for (std::size_t i = 0; i < p.sites.size(); ++i) {
            const auto& a = absolute[i];
            if (a.empty() || a.size() > frames.size() || a.size() <= best_depth) continue;
            if (!std::equal(a.begin(), a.end(), frames.begin())) continue;
            r.plan_site_of[s] = static_cast<int>(i);
            best_depth = a.size();
        }
        if (r.plan_site_of[s] >= 0) used[static_cast<std::size_t>(r.plan_site_of[s])] = true;
    }
    r.plan_sites_matched = static_cast<std::size_t>(std::count(used.begin(), used.end(), true));
    return r;
}

plan_replay_result replay_plan(const replay_program& program, const plan& p,
                               const plan_routing& routing, const std::string& general,
                               unsigned repetitions) {
    const auto all = whole_program_backends();
    const backend_factory* g = find_backend(all, general);
    if (g == nullptr || !g->make)
        throw std::runtime_error("general heap '" + general + "' is not available");
    plan_replay_result r;
    r.plan_sites = p.sites.size();
    r.plan_sites_matched = routing.plan_sites_matched;
    r.general = replay_through(program, *g, repetitions);
    auto counts = std::make_shared<plan_counts>();
    backend_factory planned{"plan + " + general,
                            [&p, &routing, g, counts]() -> std::unique_ptr<replay_backend> {
                                return std::make_unique<plan_backend>(p, routing, g->make(),
                                                                      counts.get());
                            },
                            ""};
    r.planned = replay_through(program, planned, repetitions);
    r.served = counts->served;
    r.declined = counts->declined;
    return r;
}

std::string format_plan_replay(const plan_replay_result& r) {
    char line[400];
    std::string out;
    std::snprintf(line, sizeof line,
                  "plan: %zu of %zu sites matched this trace; the strategies served %llu "
                  "allocations, passed %llu to the general heap\n\n",
                  r.plan_sites_matched, r.plan_sites, static_cast<unsigned long long>(r.served),
                  static_cast<unsigned long long>(r.declined));
    out += line;
    std::snprintf(line, sizeof line, "%-22s %16s %16s %14s\n", "allocator", "time in calls ms",
                  "peak footprint", "vs general");
    out += line;
    for (const backend_result* b : {&r.general, &r.planned}) {
        std::snprintf(line, sizeof line, "%-22s %16.3f %13.1f MiB %13.2fx\n", b->name.c_str(),
                      b->total_ns / 1e6, static_cast<double>(b->peak_footprint) / 1048576.0,
                      r.general.total_ns > 0 ? b->total_ns / r.general.total_ns : 0.0);
        out += line;
    }
    return out;
}

}  // namespace rtmem::analyze
