// A particle system with rtmem containers: emitters live in an object_pool (constructed once,
// reused, notified when they leave or re-enter the pool), particles in a soa_vector (each field
// its own column, read and written with ordinary struct syntax).
#include <array>
#include <cstdio>
#include <cstdlib>

#include "rtmem/containers/object_pool.hpp"
#include "rtmem/containers/soa_vector.hpp"

namespace {

struct vec3 {
    float x = 0, y = 0, z = 0;
    vec3& operator+=(vec3 o) {
        x += o.x, y += o.y, z += o.z;
        return *this;
    }
    friend vec3 operator*(vec3 v, float s) { return {v.x * s, v.y * s, v.z * s}; }
};

// Written once over a field wrapper: particle<rtmem::soa_value> is the plain struct, and a
// soa_vector row is the same struct made of references into the columns.
template <template <class> class F>
struct particle {
    F<vec3> position;
    F<vec3> velocity;
    F<float> age;
    F<float> lifetime;

    [[nodiscard]] bool expired() const { return age >= lifetime; }
};
using particle_data = particle<rtmem::soa_value>;

// An emitter registers with the "renderer" once, in its constructor; while it waits in the
// pool it is only switched off (the thesis's enter/exit notifiers, found by concept).
struct emitter {
    static inline int registrations = 0;
    vec3 origin;
    float rate = 0;
    bool enabled = true;
    explicit emitter(vec3 at, float per_second) : origin(at), rate(per_second) { ++registrations; }
    void on_exit_free_list(vec3 at, float per_second) {
        origin = at, rate = per_second, enabled = true;
    }
    void on_enter_free_list() { enabled = false; }
};

}  // namespace

int main() {
    rtmem::object_pool<emitter> emitters{8};
    rtmem::soa_vector<particle> particles;
    particles.reserve(4096);

    constexpr float dt = 1.0f / 60.0f;
    std::size_t spawned = 0;
    for (int frame = 0; frame < 240; ++frame) {
        // Every 60 frames the level swaps its emitters: the old ones go back to the pool, the
        // new ones are the same objects, re-aimed by on_exit_free_list.
        std::array<rtmem::pooled_ptr<emitter>, 3> active;
        for (int e = 0; e < 3; ++e)
            active[static_cast<std::size_t>(e)] =
                emitters.acquire(vec3{static_cast<float>(e + frame / 60), 0, 0}, 120.0f);

        for (auto& e : active) {
            for (int k = 0; k < 2; ++k, ++spawned) {
                particles.push_back(particle_data{e->origin,
                                                  {0, 2.0f, 0.1f * static_cast<float>(k)},
                                                  0,
                                                  0.5f + 0.01f * static_cast<float>(spawned % 50)});
            }
        }
        // AoS syntax over SoA storage.
        for (auto p : particles) {
            p.velocity += vec3{0, -9.81f, 0} * dt;
            p.position += p.velocity * dt;
            p.age += dt;
        }
        // Remove expired particles in O(1) each (order does not matter for particles); the
        // record's member function expired() runs on the row proxy as on the plain struct.
        for (std::size_t i = 0; i < particles.size();) {
            if (particles[i].expired()) {
                particles.swap_erase(i);
            } else {
                ++i;
            }
        }
    }

    // A SIMD-friendly pass over one column: contiguous and 64-byte aligned.
    float oldest = 0;
    for (float age : particles.column<2>()) oldest = age > oldest ? age : oldest;

    std::printf("spawned %zu particles, %zu alive, oldest %.2f s\n", spawned, particles.size(),
                static_cast<double>(oldest));
    std::printf(
        "emitters: %zu slots, %zu constructed, %d constructor registrations for %d "
        "acquisitions\n",
        emitters.capacity(), emitters.constructed(), emitter::registrations, 240 * 3);
    // Emitters were reused, not rebuilt: 3 constructions served all 720 acquisitions.
    if (emitter::registrations != 3 || particles.empty() || particles.size() > spawned)
        return EXIT_FAILURE;
    return EXIT_SUCCESS;
}
