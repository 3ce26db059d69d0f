// The mixed replay: advised sites use their advised rtmem allocators, the others the baseline.
#include <algorithm>

#include "rtmem/core/violation.hpp"
#include "site_allocator.hpp"

namespace rtmem::analyze {
namespace {

thread_local site_violations* current_site = nullptr;
thread_local std::uint64_t unattributed_reports = 0;

/// Violations the rtmem allocators themselves report are counted, never fatal, during the replay.
void count_violation(const rtmem::violation&) {
    if (current_site != nullptr)
        ++current_site->reported;
    else
        ++unattributed_reports;
}

class mixed_backend final : public replay_backend {
  public:
    mixed_backend(std::unique_ptr<replay_backend> baseline,
                  std::vector<std::unique_ptr<detail::site_allocator>> sites,
                  std::vector<site_violations>* out)
        : baseline_(std::move(baseline)), sites_(std::move(sites)), out_(out) {
        violations_.resize(sites_.size());
        for (std::uint32_t s = 0; s < violations_.size(); ++s) violations_[s].site = s;
        previous_ = rtmem::set_violation_handler(count_violation);
    }
    ~mixed_backend() override {
        rtmem::set_violation_handler(previous_);
        if (out_ == nullptr) return;
        out_->clear();
        for (auto& v : violations_) {
            if (sites_[v.site] != nullptr) out_->push_back(v);
        }
    }
    mixed_backend(const mixed_backend&) = delete;
    mixed_backend& operator=(const mixed_backend&) = delete;

    void* allocate(replay_call c, std::size_t size, std::size_t align,
                   std::uint32_t& tag) noexcept override {
        if (c.site < sites_.size() && sites_[c.site] != nullptr) {
            site_violations& v = violations_[c.site];
            current_site = &v;
            void* p = sites_[c.site]->allocate(c.thread, size, align, tag, v);
            current_site = nullptr;
            if (p != nullptr) return p;
            ++v.fallbacks;
        }
        void* p = baseline_->allocate(c, size, align, tag);
        tag = 0;
        return p;
    }
    void deallocate(replay_call c, void* p, std::size_t size, std::size_t align,
                    std::uint32_t tag) noexcept override {
        if (tag != 0 && c.site < sites_.size() && sites_[c.site] != nullptr) {
            site_violations& v = violations_[c.site];
            if (c.cross_thread) ++v.cross_thread;
            current_site = &v;
            sites_[c.site]->deallocate(c.thread, p, size, align, tag, v);
            current_site = nullptr;
            return;
        }
        baseline_->deallocate(c, p, size, align, 0);
    }
    void* reallocate(replay_call from, replay_call to, void* p, std::size_t old_size,
                     std::size_t size, std::size_t align, std::uint32_t& tag) noexcept override {
        if (tag != 0 && from.site == to.site && from.site < sites_.size() &&
            sites_[from.site] != nullptr) {
            site_violations& v = violations_[from.site];
            current_site = &v;
            std::uint32_t t = tag;
            void* q = sites_[from.site]->reallocate(to.thread, p, old_size, size, align, t, v);
            current_site = nullptr;
            if (q != nullptr) {
                tag = t;
                return q;
            }
            if (t == 0) {  // the old block was released but the new one did not fit
                ++v.fallbacks;
                tag = 0;
                return baseline_->allocate(to, size, align, tag);
            }
        }
        return replay_backend::reallocate(from, to, p, old_size, size, align, tag);
    }
    void next_frame() noexcept override {
        for (auto& s : sites_) {
            if (s != nullptr) s->next_frame();
        }
        baseline_->next_frame();
    }
    std::size_t footprint_base() noexcept override { return baseline_->footprint_base(); }
    std::size_t footprint() noexcept override {
        std::size_t total = baseline_->footprint();
        for (auto& s : sites_) {
            if (s != nullptr) total += s->footprint();
        }
        return total;
    }

  private:
    std::unique_ptr<replay_backend> baseline_;
    std::vector<std::unique_ptr<detail::site_allocator>> sites_;
    std::vector<site_violations> violations_;
    std::vector<site_violations>* out_;
    rtmem::violation_handler previous_ = nullptr;
};

}  // namespace

std::size_t replay_passes(std::size_t backends, unsigned repetitions) {
    const std::size_t reps = std::max(repetitions, 1U);
    return 2 * reps + backends * (1 + 2 * reps);  // the floor; per backend footprint + timings
}

replay_report replay(const replay_program& program, const advice* a, const replay_options& o) {
    replay_report r;
    r.ops = program.ops.size();
    r.events = program.events;
    r.unknown_frees = program.unknown_frees;
    r.peak_live_bytes = program.peak_live_bytes;
    r.repetitions = std::max(o.repetitions, 1U);
    auto all = whole_program_backends();
    if (o.prepare)
        for (auto& b : all) b = o.prepare(std::move(b));
    std::vector<const backend_factory*> chosen;
    for (const auto& b : all) {
        if (o.backends.empty() ||
            std::find(o.backends.begin(), o.backends.end(), b.name) != o.backends.end() ||
            b.name == o.baseline) {
            chosen.push_back(&b);
        }
    }
    const bool mixed_too = o.mixed && a != nullptr;
    std::size_t runs = 0;  // backends that replay (unavailable ones make no pass)
    for (const auto* b : chosen) runs += b->make ? 1 : 0;
    const std::size_t total = replay_passes(runs + (mixed_too ? 2 : 0), r.repetitions);
    std::size_t done = 0;
    replay_hooks hooks;
    hooks.pass_done = [&] {
        if (o.progress) o.progress(++done, total);
    };
    const replay_floor floor = measure_replay_floor(program, r.repetitions, hooks);
    hooks.floor = &floor;
    for (const auto* b : chosen) r.results.push_back(replay_through(program, *b, r.repetitions, hooks));
    if (!mixed_too) return r;

    const backend_factory* base = find_backend(all, o.baseline);
    backend_result mixed;
    mixed.name = "mixed (advised sites + " + o.baseline + ")";
    if (base == nullptr || !base->make) {
        mixed.available = false;
        mixed.note = "baseline " + o.baseline + " unavailable";
        r.results.push_back(mixed);
        return r;
    }
    bool have_frames = false;
    for (const auto& op : program.ops) {
        if (op.kind == replay_op::frame) {
            have_frames = true;
            break;
        }
    }
    // Which sites get an allocator, and why the others do not.
    std::vector<const recommendation*> by_site(program.sites, nullptr);
    std::string notes;
    for (const auto& rec : a->ranked) {
        if (rec.cls == site_class::general || rec.site >= program.sites) continue;
        if (o.apply_top != 0 && r.advised.size() == o.apply_top) break;
        std::string why;
        if (detail::make_site_allocator(rec, have_frames, why) == nullptr) {
            if (notes.find(why) == std::string::npos) notes += (notes.empty() ? "" : "; ") + why;
            continue;
        }
        by_site[rec.site] = &rec;
        r.advised.push_back(rec);
    }
    std::vector<std::pair<std::uint32_t, std::uint32_t>> site_threads;  // advised (site, thread)
    {
        std::vector<std::vector<std::uint32_t>> seen(program.sites);
        for (const auto& op : program.ops) {
            if (op.kind == replay_op::frame || by_site[op.site] == nullptr) continue;
            auto& threads = seen[op.site];
            if (std::find(threads.begin(), threads.end(), op.thread) == threads.end()) {
                threads.push_back(op.thread);
                site_threads.emplace_back(op.site, op.thread);
            }
        }
    }
    std::vector<site_violations> last_violations;
    backend_factory f;
    f.name = mixed.name;
    f.make = [&]() -> std::unique_ptr<replay_backend> {
        std::vector<std::unique_ptr<detail::site_allocator>> sites(program.sites);
        for (std::uint32_t s = 0; s < program.sites; ++s) {
            std::string why;
            if (by_site[s] != nullptr)
                sites[s] = detail::make_site_allocator(*by_site[s], have_frames, why);
        }
        for (const auto& [site, thread] : site_threads) sites[site]->prepare(thread);
        return std::make_unique<mixed_backend>(base->make(), std::move(sites), &last_violations);
    };
    // The same layering with no site advised: what the mixed replay's own dispatch costs, so the
    // saving is measured against it and not against the bare baseline.
    backend_factory layer;
    layer.name = "mixed, no advice (" + o.baseline + ")";
    layer.make = [&]() -> std::unique_ptr<replay_backend> {
        return std::make_unique<mixed_backend>(
            base->make(), std::vector<std::unique_ptr<detail::site_allocator>>(program.sites),
            nullptr);
    };
    r.results.push_back(replay_through(program, layer, r.repetitions, hooks));
    mixed = replay_through(program, f, r.repetitions, hooks);
    mixed.note = notes;
    mixed.violations = last_violations;
    r.results.push_back(std::move(mixed));
    return r;
}

}  // namespace rtmem::analyze
