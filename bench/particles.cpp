// The thesis's particle scenario (Kaltenbrunn §6.2.2): every frame kills and spawns thousands
// of particles whose constructor is not trivial — it registers the particle with a rendering
// "subsystem" (and the destructor unregisters it). Arguments: live population, particles killed
// and spawned per frame, registration kind (0 dense array slot, 1 plus an id map entry).
//   new_delete    new Particle(...) / delete
//   make_unique   std::make_unique<Particle>(...) / unique_ptr reset
//   pool_alloc    rtmem::pool_allocator + placement new, owned by a unique_ptr with a deleter
//                 that knows the pool: cheap memory, but the constructor still runs each time.
//   object_pool   rtmem::object_pool<Particle>, prewarmed: constructed and registered once,
//                 then only notified (on_exit_free_list(args) / on_enter_free_list()).
// Each benchmark iteration is one frame; counters give the per-frame time distribution
// (frame_p50_ns, frame_p99_ns, frame_max_ns). Ratios against new_delete are printed at the end.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "common.hpp"
#include "rtmem/alloc/pool.hpp"
#include "rtmem/containers/object_pool.hpp"

namespace {

struct vec3 {
    float x = 0, y = 0, z = 0;
};

struct particle;

// Stands in for a renderer or physics world that keeps a list of its particles. Two kinds of
// registration (benchmark argument 3): 0 = a slot in a dense array (cheap: push_back and
// swap-remove), 1 = also an entry in an id -> particle map, as an entity registry keeps
// (a hash-node allocation per registration).
struct subsystem {
    explicit subsystem(bool registry) : with_registry(registry) {}
    bool with_registry;
    std::vector<particle*> registered;
    std::unordered_map<std::uint32_t, particle*> by_id;
    std::uint32_t next_id = 0;
    std::size_t active = 0;
    void add(particle* p);
    void remove(particle* p);
};

struct particle {
    subsystem* owner;
    std::size_t slot = 0;  // index in owner->registered
    std::uint32_t id = 0;
    bool active = true;
    vec3 position, velocity, color;
    float age = 0, max_age = 0;
    std::uint64_t payload[8]{};  // a 128-byte-class object, like the thesis's Particle

    particle(subsystem& s, vec3 pos, vec3 vel, float life)
        : owner(&s), position(pos), velocity(vel), color{1, 1, 1}, max_age(life) {
        s.add(this);  // the expensive part a pool avoids repeating
        ++s.active;
    }
    ~particle() {
        owner->remove(this);
        --owner->active;
    }
    particle(const particle&) = delete;
    particle& operator=(const particle&) = delete;

    // object_pool notifiers (detected by concept, called directly)
    void on_exit_free_list(subsystem&, vec3 pos, vec3 vel, float life) {
        position = pos, velocity = vel, age = 0, max_age = life, active = true;
        ++owner->active;
    }
    void on_enter_free_list() {
        active = false;
        --owner->active;
    }
};

void subsystem::add(particle* p) {
    p->slot = registered.size();
    registered.push_back(p);
    if (with_registry) {
        p->id = next_id++;
        by_id.emplace(p->id, p);
    }
}
void subsystem::remove(particle* p) {
    if (with_registry) by_id.erase(p->id);
    particle* last = registered.back();
    registered[p->slot] = last;
    last->slot = p->slot;
    registered.pop_back();
}

// The frame script: which live particles die each frame (indices into the live list, drawn
// from one seed so every variant does the same work) and the spawn parameters.
struct script {
    std::size_t population;
    std::size_t churn;
    std::mt19937 rng{12345};
    std::size_t victim(std::size_t live) { return rng() % live; }
    vec3 spawn_position() {
        return {static_cast<float>(rng() % 100), static_cast<float>(rng() % 100), 0};
    }
};

template <class Owner, class Spawn>
void run_frames(benchmark::State& state, subsystem& sys, Spawn spawn) {
    script s{static_cast<std::size_t>(state.range(0)), static_cast<std::size_t>(state.range(1))};
    sys.registered.reserve(s.population + s.churn);
    sys.by_id.reserve(s.population + s.churn);
    std::vector<Owner> live;
    live.reserve(s.population + s.churn);
    for (std::size_t i = 0; i < s.population; ++i) live.push_back(spawn(sys, s));
    auto frame = [&] {
        for (std::size_t k = 0; k < s.churn; ++k) {  // kill
            const std::size_t i = s.victim(live.size());
            std::swap(live[i], live.back());
            live.pop_back();
        }
        for (std::size_t k = 0; k < s.churn; ++k) live.push_back(spawn(sys, s));  // spawn
    };
    for (int warm = 0; warm < 20; ++warm) frame();
    std::vector<double> frame_ns;
    frame_ns.reserve(4096);
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        frame();
        const auto t1 = std::chrono::steady_clock::now();
        frame_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    if (sys.active != s.population) state.SkipWithError("population drifted");
    std::sort(frame_ns.begin(), frame_ns.end());
    auto at = [&](double q) {
        return frame_ns[std::min(
            frame_ns.size() - 1,
            static_cast<std::size_t>(q * static_cast<double>(frame_ns.size())))];
    };
    state.counters["frame_p50_ns"] = at(0.50);
    state.counters["frame_p99_ns"] = at(0.99);
    state.counters["frame_max_ns"] = frame_ns.back();
    state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(2 * s.churn));
}

// Owners for new/delete: a raw pointer that deletes on destruction of the owner slot.
struct raw_owner {
    particle* p = nullptr;
    explicit raw_owner(particle* q) : p(q) {}
    raw_owner(raw_owner&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
    raw_owner& operator=(raw_owner&& o) noexcept {
        std::swap(p, o.p);
        return *this;
    }
    ~raw_owner() { delete p; }
};

void BM_new_delete(benchmark::State& state) {
    subsystem sys(state.range(2) != 0);
    run_frames<raw_owner>(state, sys, [](subsystem& owner, script& s) {
        return raw_owner(new particle(owner, s.spawn_position(), {0, 1, 0}, 2.0f));
    });
}

void BM_make_unique(benchmark::State& state) {
    subsystem sys(state.range(2) != 0);
    run_frames<std::unique_ptr<particle>>(state, sys, [](subsystem& owner, script& s) {
        return std::make_unique<particle>(owner, s.spawn_position(), vec3{0, 1, 0}, 2.0f);
    });
}

struct pool_deleter {
    rtmem::pool_allocator<>* pool;
    void operator()(particle* p) const noexcept {
        p->~particle();
        pool->deallocate(p, sizeof(particle), alignof(particle));
    }
};
using pool_owned = std::unique_ptr<particle, pool_deleter>;  // two pointers wide

void BM_pool_alloc(benchmark::State& state) {
    rtmem::pool_allocator<> pool{sizeof(particle), alignof(particle), 4096};
    subsystem sys(state.range(2) != 0);
    run_frames<pool_owned>(state, sys, [&](subsystem& owner, script& s) {
        void* mem = pool.allocate(sizeof(particle), alignof(particle));
        if (mem == nullptr) throw std::bad_alloc();
        return pool_owned(::new (mem) particle(owner, s.spawn_position(), vec3{0, 1, 0}, 2.0f),
                          pool_deleter{&pool});
    });
}

void BM_object_pool(benchmark::State& state) {
    const auto population = static_cast<std::size_t>(state.range(0));
    const auto churn = static_cast<std::size_t>(state.range(1));
    // The pool's objects register here once, when prewarmed, and stay registered.
    subsystem sys(state.range(2) != 0);
    sys.registered.reserve(population + churn);
    sys.by_id.reserve(population + churn);
    rtmem::object_pool<particle> pool{population + churn};
    pool.prewarm(population + churn, sys, vec3{}, vec3{}, 0.0f);
    run_frames<rtmem::pooled_ptr<particle>>(state, sys, [&](subsystem& owner, script& s) {
        return pool.acquire(owner, s.spawn_position(), vec3{0, 1, 0}, 2.0f);
    });
}

// population, churn per frame, registration kind
#define PARTICLE_ARGS              \
    Args({10000, 1000, 0})         \
        ->Args({10000, 5000, 0})   \
        ->Args({100000, 10000, 0}) \
        ->Args({10000, 1000, 1})   \
        ->Args({10000, 5000, 1})   \
        ->Args({100000, 10000, 1})
BENCHMARK(BM_new_delete)->PARTICLE_ARGS;
BENCHMARK(BM_make_unique)->PARTICLE_ARGS;
BENCHMARK(BM_pool_alloc)->PARTICLE_ARGS;
BENCHMARK(BM_object_pool)->PARTICLE_ARGS;

class ratio_reporter : public rtmem::bench::table_reporter {
  protected:
    void record(const Run& r) override {
        auto& row = rows_[r.run_name.args][r.run_name.function_name];
        row[0] = r.GetAdjustedCPUTime();
        for (std::size_t k = 0; k < 3; ++k) {
            const char* name = k == 0 ? "frame_p50_ns" : k == 1 ? "frame_p99_ns" : "frame_max_ns";
            auto it = r.counters.find(name);
            row[k + 1] = it == r.counters.end() ? 0.0 : static_cast<double>(it->second);
        }
    }
    void print_table() override {
        std::printf("\nnew_delete / variant (higher = variant faster): cpu, frame p50, p99, max\n");
        for (auto& [args, by] : rows_) {
            const auto& base = by["BM_new_delete"];
            for (const char* name : {"BM_make_unique", "BM_pool_alloc", "BM_object_pool"}) {
                if (!by.count(name)) continue;
                const auto& v = by[name];
                std::printf("  %-14s %-16s %6.2fx %6.2fx %6.2fx %6.2fx\n", args.c_str(), name + 3,
                            base[0] / v[0], base[1] / v[1], base[2] / v[2], base[3] / v[3]);
            }
        }
    }

  private:
    std::map<std::string, std::map<std::string, std::array<double, 4>>> rows_;
};

}  // namespace

int main(int argc, char** argv) {
    return rtmem::bench::run_with_reporter<ratio_reporter>(argc, argv);
}
