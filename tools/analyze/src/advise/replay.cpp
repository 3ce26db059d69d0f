// The replay engine: compiles a trace into dense operations, then times every call.
#include "rtmem/analyze/replay.hpp"

#include "rtmem/analyze/decoder.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace rtmem::analyze {

void* replay_backend::allocate_zeroed(replay_call c, std::size_t size, std::size_t align,
                                      std::uint32_t& tag) noexcept {
    void* p = allocate(c, size, align, tag);
    if (p != nullptr) std::memset(p, 0, size);
    return p;
}

void* replay_backend::reallocate(replay_call from, replay_call to, void* p, std::size_t old_size,
                                 std::size_t size, std::size_t align, std::uint32_t& tag) noexcept {
    std::uint32_t new_tag = 0;
    void* q = allocate(to, size, align, new_tag);
    if (q == nullptr) return nullptr;
    if (p != nullptr) {
        std::memcpy(q, p, std::min(old_size, size));
        deallocate(from, p, old_size, align, tag);
    }
    tag = new_tag;
    return q;
}

const backend_factory* find_backend(const std::vector<backend_factory>& all,
                                    const std::string& name) {
    for (const auto& b : all) {
        if (b.name == name) return &b;
    }
    return nullptr;
}

namespace {

std::uint8_t align_log2(std::uint64_t align) {
    if (align <= 16) return 0;  // malloc's own alignment: no special request
    std::uint8_t l = 0;
    while ((std::uint64_t{1} << l) < align && l < 63) ++l;
    return l;
}

// The replay's view of the decoded events (decoder.hpp): every live block gets a dense slot
// (live_block::tag), reused once the block is freed.
class compiler : public decode_handler {
  public:
    compiler(replay_program& prog, const site_map& sites) : prog_(prog), sites_(sites) {}

    void on_event(const event&, std::uint64_t) { ++prog_.events; }
    void on_frame(const event&) {
        replay_op o;
        o.kind = replay_op::frame;
        prog_.ops.push_back(o);
    }
    void on_allocation(const event& e, live_block& b, std::uint64_t) {
        replay_op o = acquire(e, b);
        o.kind = e.kind == op::calloc ? replay_op::allocate_zeroed : replay_op::allocate;
        prog_.ops.push_back(o);
    }
    void on_free(const event& e, const live_block& b, std::uint64_t) {
        replay_op o = release(e, b);
        o.kind = replay_op::deallocate;
        prog_.ops.push_back(o);
    }
    void on_unknown_free(const event&, std::uint64_t) { ++prog_.unknown_frees; }
    void on_realloc(const event& e, const live_block* old, live_block* fresh, std::uint64_t) {
        replay_op before;
        if (old != nullptr) before = release(e, *old);
        if (fresh == nullptr) {  // realloc(p, 0) freed, or failed
            if (old != nullptr) {
                before.kind = replay_op::deallocate;
                prog_.ops.push_back(before);
            }
            return;
        }
        replay_op o = acquire(e, *fresh);
        if (old != nullptr) {  // the new block keeps the old block's bytes; size is the new size
            o.kind = replay_op::reallocate;
            o.old_slot = before.slot;
            o.cross_thread = before.cross_thread;
        } else {
            o.kind = replay_op::allocate;
        }
        prog_.ops.push_back(o);
    }

  private:
    replay_op acquire(const event& e, live_block& b) {
        replay_op o;
        o.slot = take_slot();
        b.tag = o.slot;
        o.site = sites_.site_of(b.stack);
        o.thread = static_cast<std::uint16_t>(e.thread);
        o.size = e.size;
        o.align_log2 = align_log2(e.align);
        live_bytes_ += e.size;
        if (live_bytes_ > prog_.peak_live_bytes) {
            prog_.peak_live_bytes = live_bytes_;
            prog_.peak_live_op = prog_.ops.size();  // the operation being built
        }
        return o;
    }
    replay_op release(const event& e, const live_block& b) {
        replay_op o;
        o.old_slot = b.tag;
        o.slot = b.tag;
        o.site = sites_.site_of(b.stack);
        o.thread = static_cast<std::uint16_t>(b.thread);
        o.size = b.size;
        o.cross_thread = e.thread != b.thread;
        live_bytes_ -= b.size;
        free_slots_.push_back(b.tag);
        return o;
    }
    std::uint32_t take_slot() {
        if (!free_slots_.empty()) {
            const std::uint32_t s = free_slots_.back();
            free_slots_.pop_back();
            return s;
        }
        return prog_.slots++;
    }

    replay_program& prog_;
    const site_map& sites_;
    std::vector<std::uint32_t> free_slots_;
    std::uint64_t live_bytes_ = 0;
};

}  // namespace

replay_program compile_replay(event_source& source, const site_map& sites) {
    replay_program prog;
    prog.sites = static_cast<std::uint32_t>(sites.size());
    compiler c(prog, sites);
    decoder d;
    source.rewind();
    d.run(source, c);
    prog.slots = std::max<std::uint32_t>(prog.slots, 1);
    return prog;
}

namespace {

inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

struct slot_state {
    void* p = nullptr;
    std::uint64_t size = 0;
    std::uint32_t tag = 0;
    std::uint32_t site = 0;
    std::uint16_t thread = 0;
    std::uint8_t align_log2 = 0;
};

std::size_t alignment_of(std::uint8_t log2) noexcept {
    return log2 == 0 ? 16 : std::size_t{1} << log2;
}

struct rep_result {
    double total_ns = 0, wall_ns = 0;
    std::vector<double> site_ns;
    std::uint64_t peak_footprint = 0, failures = 0;
};

/// When the footprint pass reads the footprint: right after the operation that reaches the
/// program's peak live bytes, at new highs of the live bytes in steps of 1/16 of that peak (at
/// least 16 KiB), and every 1/16 of the operations (at least `min_period`): about 35 reads
/// whatever the trace's length. glibc's mallinfo2 walks every free chunk (~7 ms each on a
/// cc1plus heap): read every 16,384 operations in every repetition, it was 60% of the replay.
struct sample_plan {
    std::uint64_t live_step = 0, period = 0, peak_op = 0;
    sample_plan(const replay_program& prog, std::uint64_t min_period) {
        live_step = std::max<std::uint64_t>(prog.peak_live_bytes / 16, 16 * 1024);
        period = std::max<std::uint64_t>(prog.ops.size() / 16, std::max<std::uint64_t>(min_period, 1));
        peak_op = prog.peak_live_op;
    }
};

enum class pass_kind { untimed, timed, footprint };

/// One pass over the program. Timed: per-call ticks per site. Untimed: only the loop's wall
/// time, for the totals (no timer inside the loop). Footprint: no timing, the footprint read at
/// the points of `sample_plan` (a pass of its own, so reading it never disturbs a timing).
template <pass_kind Kind>
rep_result run_once(const replay_program& prog, replay_backend& b, const sample_plan& plan) {
    constexpr bool Timed = Kind == pass_kind::timed;
    rep_result r;
    std::vector<slot_state> slots(prog.slots);
    std::vector<std::uint64_t> site_ticks(Timed ? std::max<std::uint32_t>(prog.sites, 1) : 0, 0);
    const std::size_t base = Kind == pass_kind::footprint ? b.footprint_base() : 0;
    std::size_t peak = base;
    std::uint64_t all_ticks = 0, live = 0, next_sample = 0, next_periodic = plan.period;

    const auto wall0 = std::chrono::steady_clock::now();
    const std::uint64_t t0 = ticks();
    std::uint64_t i = 0;
    for (const replay_op& o : prog.ops) {
        const replay_call call{o.site, o.thread, o.cross_thread};
        std::uint64_t freed = 0;
        const std::uint64_t c0 = Timed ? ticks() : 0;
        switch (o.kind) {
            case replay_op::allocate:
            case replay_op::allocate_zeroed: {
                slot_state& s = slots[o.slot];
                s.size = o.size;
                s.site = o.site;
                s.thread = o.thread;
                s.align_log2 = o.align_log2;
                s.p = o.kind == replay_op::allocate
                          ? b.allocate(call, o.size, alignment_of(o.align_log2), s.tag)
                          : b.allocate_zeroed(call, o.size, alignment_of(o.align_log2), s.tag);
                if (s.p == nullptr) ++r.failures;
                break;
            }
            case replay_op::deallocate: {
                slot_state& s = slots[o.slot];
                if (s.p != nullptr)
                    b.deallocate(call, s.p, s.size, alignment_of(s.align_log2), s.tag);
                s.p = nullptr;
                freed = 2 * o.size;  // o.size is the block's size: net change -size
                break;
            }
            case replay_op::reallocate: {
                slot_state old = slots[o.old_slot];
                slots[o.old_slot].p = nullptr;
                freed = old.size;
                slot_state& s = slots[o.slot];
                std::uint32_t tag = old.tag;
                void* q = b.reallocate(replay_call{old.site, old.thread, o.cross_thread}, call,
                                       old.p, old.size, o.size, alignment_of(o.align_log2), tag);
                if (q == nullptr) {
                    ++r.failures;
                    if (old.p != nullptr)
                        b.deallocate(replay_call{old.site, old.thread}, old.p, old.size,
                                     alignment_of(old.align_log2), old.tag);
                }
                s = slot_state{q, o.size, tag, o.site, o.thread, o.align_log2};
                break;
            }
            case replay_op::frame:
                b.next_frame();
                break;  // size 0
        }
        if constexpr (Timed) {
            const std::uint64_t c1 = ticks();
            const std::uint64_t d = c1 - c0;
            site_ticks[o.site] += d;
            all_ticks += d;
        } else if constexpr (Kind == pass_kind::footprint) {
            live += o.size - freed;  // unsigned: wraps back exactly on frees
            ++i;
            if ((o.kind != replay_op::deallocate && live > next_sample) || i == next_periodic ||
                i == plan.peak_op + 1) {
                peak = std::max(peak, b.footprint());
                if (live > next_sample) next_sample = live + plan.live_step;
                if (i == next_periodic) next_periodic += plan.period;
            }
        }
    }
    const std::uint64_t t1 = ticks();
    const auto wall1 = std::chrono::steady_clock::now();
    if (Kind == pass_kind::footprint) peak = std::max(peak, b.footprint());

    for (slot_state& s : slots) {  // blocks the program never freed (untimed)
        if (s.p != nullptr)
            b.deallocate(replay_call{s.site, s.thread}, s.p, s.size, alignment_of(s.align_log2),
                         s.tag);
    }
    r.wall_ns = std::chrono::duration<double, std::nano>(wall1 - wall0).count();
    const double ns_per_tick = t1 > t0 ? r.wall_ns / static_cast<double>(t1 - t0) : 1.0;
    r.total_ns = static_cast<double>(all_ticks) * ns_per_tick;
    r.site_ns.resize(site_ticks.size());
    for (std::size_t s = 0; s < site_ticks.size(); ++s)
        r.site_ns[s] = static_cast<double>(site_ticks[s]) * ns_per_tick;
    r.peak_footprint = peak > base ? peak - base : 0;
    return r;
}

/// The floor: the replay loop with an allocator that does nothing, subtracted from totals.
class null_backend final : public replay_backend {
  public:
    void* allocate(replay_call, std::size_t, std::size_t, std::uint32_t& tag) noexcept override {
        tag = 0;
        return &byte_;
    }
    void* allocate_zeroed(replay_call c, std::size_t size, std::size_t align,
                          std::uint32_t& tag) noexcept override {
        return allocate(c, size, align, tag);
    }
    void deallocate(replay_call, void*, std::size_t, std::size_t, std::uint32_t) noexcept override {
    }
    void* reallocate(replay_call, replay_call, void*, std::size_t, std::size_t, std::size_t,
                     std::uint32_t&) noexcept override {
        return &byte_;
    }

  private:
    unsigned char byte_ = 0;
};

void pass_done(const replay_hooks& h) {
    if (h.pass_done) h.pass_done();
}

}  // namespace

replay_floor measure_replay_floor(const replay_program& prog, unsigned repetitions,
                                  const replay_hooks& hooks) {
    const sample_plan plan(prog, 0);
    std::vector<double> w;
    std::vector<std::vector<double>> per_site;
    for (unsigned k = 0; k < std::max(repetitions, 1U); ++k) {
        null_backend n;
        w.push_back(run_once<pass_kind::untimed>(prog, n, plan).wall_ns);
        pass_done(hooks);
        per_site.push_back(run_once<pass_kind::timed>(prog, n, plan).site_ns);
        pass_done(hooks);
    }
    replay_floor f;
    f.wall_ns = median(w);
    f.site_ns.resize(per_site.front().size());
    std::vector<double> column(per_site.size());
    for (std::size_t s = 0; s < f.site_ns.size(); ++s) {
        for (std::size_t k = 0; k < per_site.size(); ++k) column[k] = per_site[k][s];
        f.site_ns[s] = median(column);
    }
    return f;
}

spread measured_saving(const backend_result& base, const backend_result& mixed,
                       std::uint32_t site) {
    spread s;
    if (site >= base.site_ns.size() || site >= mixed.site_ns.size()) return s;
    s.median = base.site_ns[site] - mixed.site_ns[site];
    s.min = s.median;
    s.max = s.median;
    if (site < base.site_spread.size() && site < mixed.site_spread.size()) {
        s.min = base.site_spread[site].min - mixed.site_spread[site].max;
        s.max = base.site_spread[site].max - mixed.site_spread[site].min;
    }
    return s;
}

backend_result replay_through(const replay_program& prog, const backend_factory& factory,
                              unsigned repetitions, const replay_hooks& hooks) {
    backend_result out;
    out.name = factory.name;
    out.note = factory.note;
    if (!factory.make) {
        out.available = false;
        return out;
    }
    repetitions = std::max(repetitions, 1U);
    const replay_floor own_floor =
        hooks.floor != nullptr ? replay_floor{} : measure_replay_floor(prog, repetitions);
    const replay_floor& floor = hooks.floor != nullptr ? *hooks.floor : own_floor;
    const sample_plan plan(prog, hooks.min_sample_period);
    {  // the footprint, in a pass of its own (allocators here are deterministic: once is enough)
        auto b = factory.make();
        if (!b) {
            out.available = false;
            return out;
        }
        const rep_result f = run_once<pass_kind::footprint>(prog, *b, plan);
        out.peak_footprint = f.peak_footprint;
        out.failures = f.failures;
        pass_done(hooks);
    }
    std::vector<rep_result> reps;
    for (unsigned k = 0; k < repetitions; ++k) {
        auto untimed = factory.make();
        if (!untimed) {
            out.available = false;
            return out;
        }
        rep_result r = run_once<pass_kind::untimed>(prog, *untimed, plan);
        untimed.reset();
        pass_done(hooks);
        auto timed = factory.make();
        r.site_ns = run_once<pass_kind::timed>(prog, *timed, plan).site_ns;
        timed.reset();
        pass_done(hooks);
        for (std::size_t s = 0; s < r.site_ns.size() && s < floor.site_ns.size(); ++s)
            r.site_ns[s] -= floor.site_ns[s];  // < 0 is noise
        r.total_ns = std::max(r.wall_ns - floor.wall_ns, 0.0);
        reps.push_back(std::move(r));
    }
    std::vector<double> totals, walls, column(reps.size());
    for (const auto& r : reps) {
        totals.push_back(r.total_ns);
        walls.push_back(r.wall_ns);
        out.failures = std::max(out.failures, r.failures);
    }
    out.repetition_ns = totals;
    out.total = spread_of(totals);
    out.total_ns = out.total.median;
    out.wall_ns = median(walls);
    out.events_per_second =
        out.wall_ns > 0 ? static_cast<double>(prog.ops.size()) * 1e9 / out.wall_ns : 0;
    out.site_ns.resize(reps.front().site_ns.size());
    out.site_spread.resize(out.site_ns.size());
    for (std::size_t s = 0; s < out.site_ns.size(); ++s) {
        for (std::size_t k = 0; k < reps.size(); ++k) column[k] = reps[k].site_ns[s];
        out.site_spread[s] = spread_of(column);
        out.site_ns[s] = out.site_spread[s].median;
    }
    out.fragmentation =
        prog.peak_live_bytes > 0 && out.peak_footprint > 0
            ? static_cast<double>(out.peak_footprint) / static_cast<double>(prog.peak_live_bytes) -
                  1.0
            : 0.0;
    return out;
}

}  // namespace rtmem::analyze
