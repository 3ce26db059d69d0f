// The baseline memory policy: what a game gets by default. Every object from global new, raw
// buffers from malloc, std:: containers with std::allocator.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "game.hpp"
#include "heap_counters.hpp"
#include "particles.hpp"

namespace demo {

struct baseline_memory {
    static constexpr std::string_view name = "baseline";
    explicit baseline_memory(const config&) {}
    std::string tags_json() const { return "[]"; }  // no tags: the heap does not know who asked

    // ---- temporaries: plain std:: containers, freed by their destructors -------------------
    struct scope {};
    scope temp_scope() { return {}; }
    template <class T>
    std::vector<T> temp_vector() {
        return {};
    }
    std::string temp_string() { return {}; }

    // ---- long-lived objects ------------------------------------------------------------------
    using string = std::string;
    template <class T>
    using vector = std::vector<T>;
    string make_string(std::string_view s) { return string(s); }
    template <class T>
    vector<T> make_vector() {
        return {};
    }
    template <class T, class... Args>
    T* create(Args&&... args) {
        return new T(std::forward<Args>(args)...);
    }
    template <class T>
    void destroy(T* p) {
        delete p;
    }

    // ---- render commands: one new per command and per parameter block, freed by the render
    //      thread (cross-thread frees) ----------------------------------------------------------
    class command_queue {
      public:
        using command = draw_command<std::vector<float>>;
        explicit command_queue(baseline_memory&) {}
        DEMO_FUNCTION command& push(std::uint32_t nparams) {
            auto cmd = std::make_unique<command>();
            cmd->params.resize(nparams);
            commands_.push_back(std::move(cmd));
            return *commands_.back();
        }
        template <class F>
        void for_each(F&& f) const {
            for (const auto& cmd : commands_) f(*cmd);
        }
        void retire() { commands_.clear(); }
        std::size_t size() const { return commands_.size(); }

      private:
        std::vector<std::unique_ptr<command>> commands_;
    };
    void begin_frame(command_queue&) {}

    // ---- particles: one heap object each (state and body together), killed by swap-remove ----
    class particle_store {
      public:
        explicit particle_store(baseline_memory&) {}
        particle_store(const particle_store&) = delete;
        particle_store& operator=(const particle_store&) = delete;
        ~particle_store() {
            for (particle* p : live_) delete p;
        }
        DEMO_FUNCTION void spawn(emitter& e, std::uint32_t id, std::uint64_t seed,
                                 const particle_state& s) {
            live_.push_back(new particle{s, particle_body(e, id, seed)});
        }
        void update(float dt) {
            for (std::size_t i = 0; i < live_.size();) {
                particle_state& s = live_[i]->state;
                if (step(s.position, s.velocity, s.age, s.lifetime, dt)) {
                    ++i;
                    continue;
                }
                delete live_[i];
                live_[i] = live_.back();
                live_.pop_back();
            }
        }
        template <class F>
        void for_each(F&& f) const {
            for (const particle* p : live_) f(p->state, p->body.id(), p->body.owner());
        }
        std::size_t size() const { return live_.size(); }

      private:
        struct particle {
            particle_state state;
            particle_body body;
        };
        std::vector<particle*> live_;
    };

    // ---- level streaming: malloc'd decompression buffers, a new per asset --------------------
    DEMO_FUNCTION void* level_temp(std::uint32_t, std::size_t n) { return heap::counted_malloc(n); }
    void level_temp_free(std::uint32_t, void* p, std::size_t) { heap::counted_free(p); }
    DEMO_FUNCTION void* level_asset(std::uint32_t, std::size_t n) { return ::operator new(n); }
    void level_asset_free(std::uint32_t, void* p, std::size_t n) { ::operator delete(p, n); }
    void level_unload(std::uint32_t) {}
};

}  // namespace demo
