// SoA vs AoS (Kaltenbrunn, Listing 5.1 and Fig. 6.9): update linear_velocity from linear_force,
// then position from linear_velocity, for 5000 and 1,000,000 particles of 128 bytes.
//   aos_vector     std::vector<Particle> (the thesis struct, 2 cache lines per particle)
//   hand_soa       a hand-written struct of std::vectors (the floor)
//   soa_rows       rtmem::soa_vector with AoS syntax: v[i].linear_velocity += ...
//   soa_range_for  rtmem::soa_vector, for (auto p : v) p.linear_velocity += ...
//   soa_columns    rtmem::soa_vector through named column spans
//   *_all_fields   the counter-case: every field updated (AoS vs soa_vector rows)
// Target: soa_vector within 1.05x of hand_soa, and faster than aos_vector. The ratios are printed
// after the run (medians when --benchmark_repetitions is given).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common.hpp"
#include "rtmem/containers/soa_vector.hpp"

namespace {

struct Vector3 {
    float x = 0, y = 0, z = 0;
    Vector3& operator+=(const Vector3& o) {
        x += o.x, y += o.y, z += o.z;
        return *this;
    }
    friend Vector3 operator*(const Vector3& v, float s) { return {v.x * s, v.y * s, v.z * s}; }
};
class ParticleSystem;

// Listing 5.1, aligned to the cache line as in the thesis: 128 bytes, 2 lines.
struct alignas(64) Particle {
    float age = 0;
    float max_age = 0;
    bool pending_kill = false;
    Vector3 position{};
    Vector3 rotation{};
    Vector3 scale{};
    Vector3 linear_velocity{};
    Vector3 angular_velocity{};
    Vector3 linear_force{};
    Vector3 torque{};
    int color = 0;
    int texture_handle = 0;
    ParticleSystem* parent = nullptr;
    void* user_ptr = nullptr;
    std::uint64_t flags = 0;
};
static_assert(sizeof(Particle) == 128);

// The same record for soa_vector: written once over a field wrapper.
template <template <class> class F>
struct particle {
    F<float> age;
    F<float> max_age;
    F<bool> pending_kill;
    F<Vector3> position;
    F<Vector3> rotation;
    F<Vector3> scale;
    F<Vector3> linear_velocity;
    F<Vector3> angular_velocity;
    F<Vector3> linear_force;
    F<Vector3> torque;
    F<int> color;
    F<int> texture_handle;
    F<ParticleSystem*> parent;
    F<void*> user_ptr;
    F<std::uint64_t> flags;
};

// What a programmer writes by hand for SoA (thesis Listing 6.4).
struct hand_soa {
    std::vector<float> age, max_age;
    std::vector<bool> pending_kill_unused;  // kept out of the loop, like every other field
    std::vector<Vector3> position, rotation, scale, linear_velocity, angular_velocity, linear_force,
        torque;
    std::vector<int> color, texture_handle;
    std::vector<ParticleSystem*> parent;
    std::vector<void*> user_ptr;
    std::vector<std::uint64_t> flags;
    std::size_t size() const { return position.size(); }
};

constexpr float dt = 1.0f / 60.0f;

Vector3 force_of(std::size_t i) {
    const auto f = static_cast<float>(i % 97);
    return {f * 0.01f, -f * 0.02f, 0.5f};
}

void BM_aos_vector(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    std::vector<Particle> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i].linear_force = force_of(i);
    for (auto _ : state) {
        for (auto& p : v) {
            p.linear_velocity += p.linear_force * dt;
            p.position += p.linear_velocity * dt;
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_hand_soa(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    hand_soa s;
    s.age.resize(n), s.max_age.resize(n), s.pending_kill_unused.resize(n);
    s.position.resize(n), s.rotation.resize(n), s.scale.resize(n), s.linear_velocity.resize(n);
    s.angular_velocity.resize(n), s.linear_force.resize(n), s.torque.resize(n);
    s.color.resize(n), s.texture_handle.resize(n), s.parent.resize(n), s.user_ptr.resize(n);
    s.flags.resize(n);
    for (std::size_t i = 0; i < n; ++i) s.linear_force[i] = force_of(i);
    for (auto _ : state) {
        for (std::size_t i = 0; i < s.size(); ++i) {
            s.linear_velocity[i] += s.linear_force[i] * dt;
            s.position[i] += s.linear_velocity[i] * dt;
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

rtmem::soa_vector<particle> make_soa(std::size_t n) {
    rtmem::soa_vector<particle> v;
    v.resize(n);
    for (std::size_t i = 0; i < n; ++i) v[i].linear_force = force_of(i);
    return v;
}

void BM_soa_rows(benchmark::State& state) {
    auto v = make_soa(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        for (std::size_t i = 0; i < v.size(); ++i) {
            v[i].linear_velocity += v[i].linear_force * dt;
            v[i].position += v[i].linear_velocity * dt;
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_soa_range_for(benchmark::State& state) {
    auto v = make_soa(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        for (auto p : v) {
            p.linear_velocity += p.linear_force * dt;
            p.position += p.linear_velocity * dt;
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_soa_columns(benchmark::State& state) {
    auto v = make_soa(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        auto c = v.columns();
        for (std::size_t i = 0; i < c.position.size(); ++i) {
            c.linear_velocity[i] += c.linear_force[i] * dt;
            c.position[i] += c.linear_velocity[i] * dt;
        }
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The counter-case: a loop that touches every field. SoA now streams 15 columns where AoS
// streams one array, so its advantage disappears (docs/data-layout.md, "when SoA loses").
template <class P>
void touch_all(P&& p) {
    p.age += dt;
    p.pending_kill = p.age > p.max_age;
    p.linear_velocity += p.linear_force * dt;
    p.position += p.linear_velocity * dt;
    p.rotation += p.angular_velocity * dt;
    p.angular_velocity += p.torque * dt;
    p.scale += p.scale * 0.0f;
    p.color += 1;
    p.texture_handle ^= 1;
    p.flags += p.parent == nullptr && p.user_ptr == nullptr ? 1u : 2u;
}

void BM_aos_all_fields(benchmark::State& state) {
    std::vector<Particle> v(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        for (auto& p : v) touch_all(p);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_soa_all_fields(benchmark::State& state) {
    auto v = make_soa(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        for (auto p : v) touch_all(p);
        benchmark::ClobberMemory();
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_aos_vector)->Arg(5000)->Arg(1000000);
BENCHMARK(BM_hand_soa)->Arg(5000)->Arg(1000000);
BENCHMARK(BM_soa_rows)->Arg(5000)->Arg(1000000);
BENCHMARK(BM_soa_range_for)->Arg(5000)->Arg(1000000);
BENCHMARK(BM_soa_columns)->Arg(5000)->Arg(1000000);
BENCHMARK(BM_aos_all_fields)->Arg(5000)->Arg(1000000);
BENCHMARK(BM_soa_all_fields)->Arg(5000)->Arg(1000000);

// Console output plus, at the end, each variant's time relative to the hand-written SoA.
class ratio_reporter : public rtmem::bench::table_reporter {
  protected:
    void record(const Run& r) override {
        times_[r.run_name.args][r.run_name.function_name] = r.GetAdjustedCPUTime();
    }
    void print_table() override {
        std::printf("\nCPU time relative to hand_soa (lower is faster; target soa_* <= 1.05):\n");
        for (auto& [n, by_name] : times_) {
            const double floor = by_name["BM_hand_soa"];
            if (floor <= 0) continue;
            std::printf("  n=%-8s", n.c_str());
            for (const char* name :
                 {"BM_aos_vector", "BM_soa_rows", "BM_soa_range_for", "BM_soa_columns"}) {
                if (by_name.count(name)) std::printf("  %s %.3f", name + 3, by_name[name] / floor);
            }
            if (by_name.count("BM_aos_vector") && by_name.count("BM_soa_rows"))
                std::printf("  | aos/soa_rows %.2fx",
                            by_name["BM_aos_vector"] / by_name["BM_soa_rows"]);
            if (by_name.count("BM_aos_all_fields") && by_name.count("BM_soa_all_fields"))
                std::printf("  | every field: aos/soa %.2fx",
                            by_name["BM_aos_all_fields"] / by_name["BM_soa_all_fields"]);
            std::printf("\n");
        }
    }

  private:
    std::map<std::string, std::map<std::string, double>> times_;
};

}  // namespace

int main(int argc, char** argv) {
    return rtmem::bench::run_with_reporter<ratio_reporter>(argc, argv);
}
