// The rtmem memory policy: the same game, with each kind of memory from the allocator that fits
// its lifetime. Every byte these allocators take from the system goes through one tracked<>
// upstream, charged to the subsystem's tag, so the demo can print memory by tag.
//
//   world       long-lived entities, names, tables   arena (bulk-freed at exit)
//   particles   bodies constructed once, reused       object_pool<particle_body> (grows by chunks)
//               hot state as columns                  soa_vector<particle_row>
//   render      commands, read by the render thread   frame_allocator<2> (reset two frames later)
//   levels      decompression buffers | assets        double_ended_allocator per slot:
//                                                      bottom = temporary, top = the chunk's assets
//   temporaries visibility lists, sort scratch,       temp_scope over the thread's arena
//               strings, neighbour lists
#pragma once
#include <cstdint>
#include <cstdio>
#include <memory>
#include <memory_resource>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "game.hpp"
#include "metered.hpp"
#include "particles.hpp"
#include "rtmem/adapt/pmr.hpp"
#include "rtmem/adapt/temporary.hpp"
#include "rtmem/adapt/typed.hpp"
#include "rtmem/alloc/arena.hpp"
#include "rtmem/alloc/double_ended.hpp"
#include "rtmem/alloc/frame.hpp"
#include "rtmem/containers/object_pool.hpp"
#include "rtmem/containers/soa_vector.hpp"
#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/diag/tag.hpp"
#include "rtmem/diag/tracked.hpp"

namespace demo {

/// A particle as SoA columns: the update loop streams through position/velocity/age/lifetime;
/// the body (cold, pooled) is only touched on spawn, death and drawing.
template <template <class> class F>
struct particle_row {
    F<vec3> position;
    F<vec3> velocity;
    F<float> age;
    F<float> lifetime;
    F<std::uint32_t> id;  // what drawing needs, kept hot so it never visits the body
    F<const emitter*> owner;
    F<rtmem::pooled_ptr<particle_body>> body;
};

class rtmem_memory {
  public:
    static constexpr std::string_view name = "rtmem";
    using system_t = rtmem::tracked<rtmem::malloc_allocator>;

    /// Every block an rtmem allocator takes from the system, charged to one subsystem's tag.
    class tagged_upstream {
      public:
        static constexpr std::string_view name = "tagged_upstream";
        tagged_upstream(system_t& system, std::string_view tag) : system_(&system), tag_(tag) {}
        [[nodiscard]] void* allocate(std::size_t size,
                                     std::size_t align = rtmem::default_alignment) noexcept {
            return system_->allocate(size, align, tag_);
        }
        void deallocate(void* p, std::size_t size,
                        std::size_t align = rtmem::default_alignment) noexcept {
            system_->deallocate(p, size, align);
        }
        rtmem::tag tag() const noexcept { return tag_; }

      private:
        system_t* system_;
        rtmem::tag tag_;
    };

    explicit rtmem_memory(const config& cfg)
        : world_(rtmem::arena_options{.chunk_size = 256 * 1024}, world_up_),
          // Commands of one frame: each visible object in every view, with its parameters.
          frames_(std::size_t{cfg.entities} * cfg.views * 128 + (1u << 20), render_up_) {
        levels_.reserve(cfg.resident_chunks);
        for (std::uint32_t i = 0; i < cfg.resident_chunks; ++i) {
            levels_.emplace_back(level_slot_bytes, levels_up_);
            if (levels_.back().capacity() == 0) throw std::bad_alloc();
        }
        level_temps_.assign(cfg.resident_chunks, 0);
    }
    rtmem_memory(const rtmem_memory&) = delete;
    rtmem_memory& operator=(const rtmem_memory&) = delete;

    // ---- temporaries: the game thread's temp arena, rewound when each scope ends ----------------
    using scope = rtmem::temp_scope;
    static scope temp_scope() { return {}; }
    template <class T>
    std::pmr::vector<T> temp_vector() {
        return std::pmr::vector<T>(&temp_resource_);
    }
    std::pmr::string temp_string() { return std::pmr::string(&temp_resource_); }

    // ---- long-lived objects: one arena, freed in bulk at exit ----------------------------------
    using string = std::pmr::string;
    template <class T>
    using vector = std::pmr::vector<T>;
    string make_string(std::string_view s) { return string(s, &world_resource_); }
    template <class T>
    vector<T> make_vector() {
        return vector<T>(&world_resource_);
    }
    template <class T, class... Args>
    T* create(Args&&... args) {
        return rtmem::make<T>(world_metered_, std::forward<Args>(args)...);
    }
    template <class T>
    void destroy(T* p) {
        rtmem::destroy(world_metered_, p);
    }

    // ---- render commands: frame memory, never freed one by one ---------------------------------
    class command_queue {
      public:
        using command = draw_command<std::span<float>>;
        explicit command_queue(rtmem_memory& m) : mem_(&m), commands_(&m.frame_resource_) {}
        DEMO_FUNCTION command& push(std::uint32_t nparams) {
            auto* cmd = rtmem::make<command>(mem_->frame_metered_);
            cmd->params = rtmem::make_array<float>(mem_->frame_metered_, nparams);
            commands_.push_back(cmd);
            return *cmd;
        }
        template <class F>
        void for_each(F&& f) const {
            for (const command* cmd : commands_) f(*cmd);
        }
        void retire() {}  // the frame allocator takes everything back two frames from now
        std::size_t size() const { return commands_.size(); }

      private:
        friend class rtmem_memory;
        rtmem_memory* mem_;
        std::pmr::vector<command*> commands_;
    };
    static_assert(std::is_trivially_destructible_v<command_queue::command>,
                  "frame memory is reset, never destroyed: commands must not own anything");

    /// The render thread finished with this queue's frame two frames ago: start a new frame
    /// (resetting that frame's buffer) and give the queue a list sized like last time's.
    void begin_frame(command_queue& q) {
        const std::size_t last = q.commands_.size();
        std::pmr::vector<command_queue::command*>(&frame_resource_).swap(q.commands_);
        frames_.next_frame();
        q.commands_.reserve(last + last / 8 + 64);
    }

    // ---- particles: bodies from an object pool, hot state in SoA columns -----------------------
    class particle_store {
      public:
        explicit particle_store(rtmem_memory& m)
            : mem_(&m),
              bodies_(8192, rtmem::pool_growth::chunks, m.particles_up_),
              rows_(m.particle_metered_) {
            m.particles_ = this;
        }
        ~particle_store() { mem_->particles_ = nullptr; }
        particle_store(const particle_store&) = delete;
        particle_store& operator=(const particle_store&) = delete;

        DEMO_FUNCTION void spawn(emitter& e, std::uint32_t id, std::uint64_t seed,
                                 const particle_state& s) {
            rtmem::pooled_ptr<particle_body> body = metered_call([&] { return bodies_.acquire(); });
            if (!body) throw std::bad_alloc();
            body->activate(e, id, seed);
            rows_.emplace_back(s.position, s.velocity, s.age, s.lifetime, id, &e, std::move(body));
        }
        void update(float dt) {
            auto position = rows_.column<0>();
            auto velocity = rows_.column<1>();
            auto age = rows_.column<2>();
            auto lifetime = rows_.column<3>();
            auto body = rows_.column<6>();
            for (std::size_t i = 0; i < rows_.size();) {
                if (step(position[i], velocity[i], age[i], lifetime[i], dt)) {
                    ++i;
                    continue;
                }
                body[i]->deactivate();
                metered_call([&] { body[i].release(); });
                rows_.swap_erase(i);
            }
        }
        template <class F>
        void for_each(F&& f) const {
            const auto c = rows_.columns();
            for (std::size_t i = 0; i < rows_.size(); ++i) {
                f(particle_state{c.position[i], c.velocity[i], c.age[i], c.lifetime[i]}, c.id[i],
                  c.owner[i]);
            }
        }
        std::size_t size() const { return rows_.size(); }
        std::size_t pool_capacity() const { return bodies_.capacity(); }

      private:
        // Bodies are constructed once and reused; activate/deactivate do the per-particle work
        // (called by the store, outside the timed acquire/release).
        using pool_t = rtmem::object_pool<particle_body, rtmem::notifier_rules::none,
                                          rtmem::no_notifier, rtmem::no_notifier, tagged_upstream>;
        rtmem_memory* mem_;
        pool_t bodies_;
        rtmem::soa_vector<particle_row, metered<tagged_upstream>> rows_;
    };

    // ---- levels: one double-ended slot per resident chunk --------------------------------------
    DEMO_FUNCTION void* level_temp(std::uint32_t slot, std::size_t n) {
        void* p = metered_call([&] { return levels_[slot].allocate(n, 16, rtmem::side::bottom); });
        if (p == nullptr) throw std::bad_alloc();
        ++level_temps_[slot];
        return p;
    }
    /// The load's temporaries are done when the last one is given back: rewind the bottom.
    void level_temp_free(std::uint32_t slot, void*, std::size_t) {
        if (--level_temps_[slot] == 0)
            metered_call([&] { levels_[slot].reset(rtmem::side::bottom); });
    }
    DEMO_FUNCTION void* level_asset(std::uint32_t slot, std::size_t n) {
        void* p = metered_call([&] { return levels_[slot].allocate(n, 16, rtmem::side::top); });
        if (p == nullptr) throw std::bad_alloc();
        return p;
    }
    void level_asset_free(std::uint32_t, void*, std::size_t) {}  // freed with the whole chunk
    void level_unload(std::uint32_t slot) {
        metered_call([&] { levels_[slot].reset(rtmem::side::top); });
    }

    // ---- memory by tag
    // -----------------------------------------------------------------------------
    /// One row per subsystem: bytes its allocators hold from the system (live, peak), calls
    /// that reached the system, and how full the allocators actually got.
    std::string tags_json() const {
        std::string out = "[";
        auto row = [&](std::string_view tag, std::size_t live, std::size_t peak,
                       std::uint64_t calls, const std::string& detail) {
            char buf[512];
            std::snprintf(buf, sizeof buf,
                          "%s{\"tag\": \"%.*s\", \"live\": %zu, \"peak\": %zu, \"calls\": %llu, "
                          "\"detail\": \"%s\"}",
                          out.size() > 1 ? ", " : "", static_cast<int>(tag.size()), tag.data(),
                          live, peak, static_cast<unsigned long long>(calls), detail.c_str());
            out += buf;
        };
        auto tracked_row = [&](const tagged_upstream& up, std::string_view tag,
                               const std::string& detail) {
            const rtmem::tag_stats s = system_.stats(up.tag());
            row(tag, s.live_bytes, s.peak_bytes, s.allocations + s.deallocations, detail);
        };
        tracked_row(world_up_, "world", "arena, " + mib(world_.stats().peak) + " used");
        tracked_row(particles_up_, "particles",
                    "object_pool (" + std::to_string(particles_ ? particles_->pool_capacity() : 0) +
                        " bodies) + soa_vector columns");
        tracked_row(render_up_, "render/commands",
                    "frame_allocator<2>, busiest frame " + mib(frames_.stats().peak));
        std::size_t level_peak = 0;
        for (const auto& slot : levels_) level_peak = std::max(level_peak, slot.stats().peak);
        tracked_row(levels_up_, "levels",
                    "double_ended x" + std::to_string(levels_.size()) + " of " +
                        mib(level_slot_bytes) + " (the largest possible chunk), fullest " +
                        mib(level_peak));
        const rtmem::arena& temp = rtmem::temporary_allocator();
        row("temporaries", temp.reserved_bytes(), temp.reserved_bytes(), temp.chunk_count(),
            "temp_scope arena (malloc upstream, untracked), " + mib(temp.stats().peak) + " used");
        return out + "]";
    }

  private:
    static std::string mib(std::size_t bytes) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / 1048576.0);
        return buf;
    }

    rtmem::malloc_allocator malloc_;
    system_t system_{malloc_};
    tagged_upstream world_up_{system_, "world"};
    tagged_upstream particles_up_{system_, "particles"};
    tagged_upstream render_up_{system_, "render/commands"};
    tagged_upstream levels_up_{system_, "levels"};
    const particle_store* particles_ = nullptr;  // for the tag report

    rtmem::arena world_;
    metered<rtmem::arena> world_metered_{world_};
    rtmem::resource<metered<rtmem::arena>> world_resource_{world_metered_};

    rtmem::frame_allocator<2> frames_;
    metered<rtmem::frame_allocator<2>> frame_metered_{frames_};
    rtmem::resource<metered<rtmem::frame_allocator<2>>> frame_resource_{frame_metered_};

    metered<tagged_upstream> particle_metered_{particles_up_};

    std::vector<rtmem::double_ended_allocator> levels_;  // sized once at start
    std::vector<std::uint32_t> level_temps_;

    metered<rtmem::arena> temp_metered_{rtmem::temporary_allocator()};  // the game thread's
    rtmem::resource<metered<rtmem::arena>> temp_resource_{temp_metered_};
};

}  // namespace demo
